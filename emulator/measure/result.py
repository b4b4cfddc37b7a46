"""One replication's measurements as plain data: what both engines return, and how it becomes a row.

The SimPy engine's `Recorder` and `Occupancy` stream the statistics as the model
runs and hand them over as a `RunResult` (`Recorder.result`); the compiled engine
fills the same value from its kernel's arrays. The row (`RunResult.metrics`) and
the per-replication distributions (`RunResult.arrays`) are computed here, once,
for both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .messages import KINDS
from .sketch import QuantileSketch

OCCUPANCY_METRICS: tuple[str, ...] = (
    "mean_spread", "mean_scaled_total", "ks_exponential_theory", "ks_exponential_fitted")
"""Scalar metrics of one replication's occupancy (columns of runs.csv and summary.csv)."""


@dataclass
class OccupancyResult:
    """The servers' lengths over the window: snapshots at its opening and closing.

    Each of ``window``'s two entries is ``(time, area by length, area by total, spread
    area)``: the integrals, up to that time, of the number of servers holding k jobs
    (by k), of the indicator that the total is n (by n), and of max - min length.
    """

    servers: int
    epsilon: float  # 1 - load: the heavy-traffic scale (NaN metrics if <= 0)
    mean: float  # the exponential law's mean that ks_exponential_theory compares with (NaN: none)
    window: list[tuple[float, list[float], list[float], float]]

    def _differences(self) -> tuple[float, np.ndarray, np.ndarray, float]:
        (t0, area0, total0, spread0), (t1, area1, total1, spread1) = self.window
        by_length = np.asarray(area1) - np.pad(area0, (0, len(area1) - len(area0)))
        by_total = np.asarray(total1) - np.pad(total0, (0, len(total1) - len(total0)))
        return t1 - t0, by_length, by_total, spread1 - spread0

    def fractions(self) -> list[float]:
        """s_i, i = 0 .. the longest length held in the window: time-average fraction of servers with >= i jobs."""
        span, by_length, _, _ = self._differences()
        if span <= 0:
            return []
        held = np.flatnonzero(by_length > 0)
        top = int(held[-1]) if len(held) else 0
        tail = np.cumsum(by_length[: top + 1][::-1])[::-1]
        return (tail / (self.servers * span)).tolist()

    def total_distribution(self) -> tuple[int, list[float]]:
        """``(first, p)``: the time-weighted distribution of the total, ``p[j] = P(total = first + j)``."""
        span, _, by_total, _ = self._differences()
        held = np.flatnonzero(by_total > 0)
        if span <= 0 or not len(held):
            return 0, []
        first, last = int(held[0]), int(held[-1])
        return first, (by_total[first: last + 1] / span).tolist()

    def metrics(self) -> dict[str, float]:
        """`OCCUPANCY_METRICS` of this replication."""
        span, _, by_total, spread = self._differences()
        nan = math.nan
        if span <= 0:
            return dict.fromkeys(OCCUPANCY_METRICS, nan)
        p = by_total / span
        eps = self.epsilon
        scaled = eps * float(np.arange(len(p)) @ p) if eps > 0 else nan
        return {
            "mean_spread": spread / span,
            "mean_scaled_total": scaled,
            "ks_exponential_theory": ks_exponential(p, eps, self.mean) if eps > 0 and self.mean > 0 else nan,
            "ks_exponential_fitted": ks_exponential(p, eps, scaled) if eps > 0 and scaled > 0 else nan,
        }



@dataclass
class RunResult:
    """The measurements of one replication (docs/results.md), as both engines return them.

    ``window`` holds ``(time, area, counts + lost)`` when the window opened and when
    it closed: the time integral of jobs at servers, and control messages sent and
    lost by kind (`KINDS` order). The other fields count the measured jobs.
    """

    servers: int
    warmup: int  # the jobs before the window
    jobs: int
    window: list[tuple[float, float, list[int]]]
    finished: int  # measured jobs that left, were blocked or were lost
    blocked: int
    lost_jobs: int
    waited: int
    sum_response: float
    sum_wait: float
    responses: QuantileSketch
    occupancy: OccupancyResult | None = None
    extra_copies: int = 0  # copies of measured jobs beyond the first (redundancy)
    wasted_work: float = 0.0  # service those copies received without finishing their job

    def metrics(self) -> dict[str, float]:
        """The metric columns (docs/results.md) for this replication."""
        (t0, area0, counts0), (t1, area1, counts1) = self.window
        span = t1 - t0
        served = self.finished - self.blocked - self.lost_jobs
        k = len(KINDS)
        both = [b - a for a, b in zip(counts0, counts1, strict=True)]
        messages, lost = both[:k], both[k:]
        per_job = {f"messages_per_job_{kind}": n / self.jobs for kind, n in zip(KINDS, messages, strict=True)}
        delivered = {f"delivered_per_job_{kind}": (n - m) / self.jobs
                     for kind, n, m in zip(KINDS, messages, lost, strict=True)}
        lost_per_job = {f"lost_per_job_{kind}": m / self.jobs for kind, m in zip(KINDS, lost, strict=True)}
        nan = math.nan
        return {
            "jobs": self.jobs,
            "warmup_jobs": self.warmup,
            "mean_response": self.sum_response / served if served else nan,
            "mean_wait": self.sum_wait / served if served else nan,
            "p50_response": self.responses.quantile(0.50),
            "p90_response": self.responses.quantile(0.90),
            "p99_response": self.responses.quantile(0.99),
            "prob_wait": self.waited / served if served else nan,
            "mean_queue_length": (area1 - area0) / span / self.servers if span > 0 else nan,
            "messages_per_job": sum(messages) / self.jobs,
            **per_job,
            **delivered,
            **lost_per_job,
            "messages_per_server_time": sum(messages) / (self.servers * span) if span > 0 else nan,
            "blocked_fraction": self.blocked / self.jobs,
            "lost_fraction": self.lost_jobs / self.jobs,
            "sim_time": span,
            **(self.occupancy.metrics() if self.occupancy is not None
               else dict.fromkeys(OCCUPANCY_METRICS, nan)),
            "copies_per_job": 1.0 + self.extra_copies / self.jobs,
            "wasted_work_per_job": self.wasted_work / self.jobs,
        }

    def arrays(self) -> dict[str, Any]:
        """The per-replication distributions (JSON-ready): see `emulator.experiment.profiles`.

        ``response_bins``: ``[[bin, count], ...]`` of the non-empty bins of the
        response-time sketch; with an observer, also ``occupancy`` (s_i by i) and
        ``total_jobs``: ``[first, [P(total = first), P(total = first + 1), ...]]``.
        """
        self.responses.flush()
        bins = np.flatnonzero(self.responses.counts)
        first = self.responses.first  # counts[0] is bin `first`
        arrays: dict[str, Any] = {"response_bins": [[first + int(b), int(self.responses.counts[b])] for b in bins]}
        if self.occupancy is not None:
            arrays["occupancy"] = self.occupancy.fractions()
            arrays["total_jobs"] = list(self.occupancy.total_distribution())
        return arrays


def ks_exponential(p: Any, scale: float, mean: float) -> float:
    """Kolmogorov-Smirnov distance between ``scale × T`` and the exponential law of mean ``mean``.

    ``T`` takes the value n with probability ``p[n]`` (n = 0, 1, ...). The
    distribution function F of ``scale × T`` is a step function with jumps at
    ``x_n = scale × n``; the exponential's G is continuous and increasing, so
    ``sup_x |F(x) - G(x)|`` is reached at a jump, from one side or the other:
    ``max_n max(|F(x_n) - G(x_n)|, |F(x_n-) - G(x_n)|)``, with
    ``F(x_n) = p[0] + ... + p[n]`` and ``F(x_n-) = F(x_{n-1})`` (0 for n = 0).
    Past the last jump F = 1 and ``1 - G`` falls, so nothing larger lies there.

    Examples
    --------
    A geometric T, ``p[n] = (1 - r) r^n``, against the exponential of mean
    ``-scale / ln r``: then ``G(x_n) = 1 - r^n = F(x_n-)``, so the distance is
    the largest jump, ``p[0] = 1 - r``.

    >>> r = 0.9
    >>> p = (1 - r) * r ** np.arange(400)
    >>> round(ks_exponential(p, 0.1, -0.1 / math.log(r)), 12)
    0.1
    """
    p = np.asarray(p, dtype=float)
    if not len(p):
        return math.nan
    after = np.cumsum(p)
    before = np.concatenate(([0.0], after[:-1]))
    g = -np.expm1(-scale * np.arange(len(p)) / mean)
    return float(max(np.max(np.abs(after - g)), np.max(np.abs(before - g))))
