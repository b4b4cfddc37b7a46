"""The servers' lengths, streamed: occupancy fractions, total jobs and the spread of the lengths.

The servers call `Occupancy.arrive` and `Occupancy.depart` whenever a length
changes (the moments the policies' hooks see). Each call is O(1): it moves one
server between two length classes and integrates over time, lazily, only the
two counts that change, plus the total number of jobs and the spread
``max_k Q_k - min_k Q_k``. Memory grows with the longest queue and the largest
total seen, never with the number of jobs. The exact definitions are in
``docs/occupancy.md``.
"""

from __future__ import annotations

import math
from typing import Any

from .result import OCCUPANCY_METRICS, OccupancyResult, ks_exponential

__all__ = ["ARRIVAL_SCV", "OCCUPANCY_METRICS", "THEORY_MEAN", "Occupancy", "ks_exponential", "theory_mean"]

THEORY_MEAN = 1.0
"""The mean of the heavy-traffic exponential limit of ε × total jobs (Poisson arrivals, exp(1) service)."""
ARRIVAL_SCV = {"poisson": 1.0, "deterministic": 0.0}
"""Squared coefficient of variation of the inter-arrival gaps, for the renewal arrival processes."""


def theory_mean(scenario: Any) -> float:
    """The mean of the heavy-traffic limit of ε × total jobs, (c_a² + c_s²) / 2 (Kingman); NaN where unknown.

    It holds for FIFO servers of equal speed in continuous time with renewal
    arrivals (Poisson: c_a² = 1, evenly spaced: 0) and a service law of finite
    variance: 1 for Poisson arrivals and exponential service (`THEORY_MEAN`).
    Elsewhere (slotted time, pools, bursty or traced arrivals, unequal or drawn
    speeds) no mean is derived, and ``ks_exponential_theory`` is NaN.
    """
    system, workload = scenario.system, scenario.workload
    speeds = system.speeds
    equal = speeds is None or (isinstance(speeds, tuple) and len(set(speeds)) == 1)
    c_a = ARRIVAL_SCV.get(workload.arrivals.kind)
    if system.time != "continuous" or system.discipline != "fifo" or not equal or c_a is None:
        return math.nan
    mean = (c_a + workload.service.law().scv) / 2.0
    return mean if 0.0 < mean < math.inf else math.nan


class Occupancy:
    """Counts of servers at each length and their time integrals, over the measurement window.

    Parameters
    ----------
    servers : int
        N; every server starts empty.
    epsilon : float
        ``1 - load``: the scale of the heavy-traffic statistics (NaN metrics if <= 0).
    mean : float
        The mean of the exponential law that ``ks_exponential_theory`` compares with
        (`theory_mean`; NaN: none).
    """

    __slots__ = ("servers", "epsilon", "mean", "count", "since", "area", "total", "total_area", "high", "high_since",
                 "high_area", "low", "low_since", "low_area", "last", "window")

    def __init__(self, servers: int, epsilon: float, mean: float = THEORY_MEAN) -> None:
        self.servers = servers
        self.epsilon = epsilon
        self.mean = mean
        self.count = [servers]  # count[k]: servers holding k jobs
        self.since = [0.0]  # when count[k] last changed
        self.area = [0.0]  # integral of count[k] over time, up to since[k]
        self.total = 0  # jobs at the servers
        self.total_area = [0.0]  # total_area[n]: time spent with total == n, up to last
        self.high = 0  # the longest length (max_k Q_k)
        self.high_since = 0.0
        self.high_area = 0.0  # integral of high, up to high_since
        self.low = 0  # the shortest length (min_k Q_k)
        self.low_since = 0.0
        self.low_area = 0.0  # integral of low, up to low_since
        self.last = 0.0
        self.window: list[tuple[float, list[float], list[float], float]] = []

    def arrive(self, length: int, now: float) -> None:
        """A server went from ``length - 1`` to ``length`` jobs at time ``now``."""
        total = self.total
        total_area = self.total_area
        total_area[total] += now - self.last
        self.last = now
        total += 1
        self.total = total
        if total == len(total_area):
            total_area.append(0.0)
        count, since, area = self.count, self.since, self.area
        k = length - 1
        area[k] += count[k] * (now - since[k])
        since[k] = now
        count[k] -= 1
        if length == len(count):
            count.append(1)
            since.append(now)
            area.append(0.0)
        else:
            area[length] += count[length] * (now - since[length])
            since[length] = now
            count[length] += 1
        if length > self.high:
            self._move_high(length, now)
        if k == self.low and not count[k]:  # the server left the shortest class, now empty
            self._move_low(length, now)

    def depart(self, length: int, now: float) -> None:
        """A server went from ``length + 1`` to ``length`` jobs at time ``now``."""
        total = self.total
        self.total_area[total] += now - self.last
        self.last = now
        self.total = total - 1
        count, since, area = self.count, self.since, self.area
        k = length + 1
        area[k] += count[k] * (now - since[k])
        since[k] = now
        count[k] -= 1
        area[length] += count[length] * (now - since[length])
        since[length] = now
        count[length] += 1
        if k == self.high and not count[k]:  # the server left the longest class, now empty
            self._move_high(length, now)
        if length < self.low:
            self._move_low(length, now)

    # The spread's integral is that of high minus that of low; each changes rarely,
    # so it is integrated only when it changes.
    def _move_high(self, high: int, now: float) -> None:
        self.high_area += self.high * (now - self.high_since)
        self.high_since = now
        self.high = high

    def _move_low(self, low: int, now: float) -> None:
        self.low_area += self.low * (now - self.low_since)
        self.low_since = now
        self.low = low

    def edge(self, now: float) -> None:
        """The measurement window opens or closes now: bring every integral up to ``now`` and keep it."""
        count, since, area = self.count, self.since, self.area
        for k in range(len(count)):
            area[k] += count[k] * (now - since[k])
            since[k] = now
        self.total_area[self.total] += now - self.last
        self.last = now
        self._move_high(self.high, now)
        self._move_low(self.low, now)
        self.window.append((now, list(area), list(self.total_area), self.high_area - self.low_area))

    # -- results ---------------------------------------------------------------------
    def result(self) -> OccupancyResult:
        """The window's snapshots, as the plain value both engines return."""
        return OccupancyResult(self.servers, self.epsilon, self.mean, self.window)
