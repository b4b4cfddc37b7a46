"""Streaming statistics of one replication: memory does not grow with the number of jobs.

The measurement window opens when job number ``warmup`` arrives and closes when
job number ``warmup + jobs`` arrives, so exactly ``jobs`` jobs arrive in it.
Time averages and message counts cover the window; response statistics cover
the jobs that arrived in it, followed until they leave.
"""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from .messages import KINDS

if TYPE_CHECKING:
    import simpy
from .occupancy import OCCUPANCY_METRICS, Occupancy
from .series import Series

METRICS: tuple[str, ...] = (
    "jobs", "warmup_jobs", "mean_response", "mean_wait", "p50_response", "p90_response", "p99_response",
    "prob_wait", "mean_queue_length", "messages_per_job",
    *(f"messages_per_job_{kind}" for kind in KINDS),
    *(f"delivered_per_job_{kind}" for kind in KINDS), *(f"lost_per_job_{kind}" for kind in KINDS),
    "messages_per_server_time", "blocked_fraction", "lost_fraction", "sim_time", "wall_seconds",
    *OCCUPANCY_METRICS,
)
"""The metric columns of runs.csv and summary.csv, in order.

Every per-kind column comes from `KINDS`: a new message kind gets its sent,
delivered and lost columns without more code.
"""


class QuantileSketch:
    """Quantiles from a log-spaced histogram: memory bounded, relative error below 0.5%.

    Values are buffered and folded into bins of ratio 1.01 (bin i holds
    [1e-9 * 1.01^i, 1e-9 * 1.01^(i+1))). The bins kept are those between the
    smallest and the largest value seen, so any positive finite value is binned
    correctly; all floats together span fewer than 150,000 bins.

    >>> sketch = QuantileSketch()
    >>> for x in range(1, 1001):
    ...     sketch.add(float(x))
    >>> abs(sketch.quantile(0.5) / 500 - 1) < 0.005
    True
    >>> sketch = QuantileSketch()
    >>> for x in (1e-300, 1e300, 1e308):
    ...     sketch.add(x)
    >>> [abs(sketch.quantile(q) / x - 1) < 0.005 for q, x in ((0.3, 1e-300), (0.6, 1e300), (1, 1e308))]
    [True, True, True]
    """

    RATIO = 1.01
    LOW = 1e-9  # the origin of the bin grid
    FLUSH = 8192  # values buffered before they are binned
    TINY = 5e-324  # a zero is binned with the smallest positive float

    def __init__(self) -> None:
        self.buffer: list[float] = []
        self.first = 0  # the bin index of counts[0]
        self.counts = np.zeros(0, dtype=np.int64)

    def add(self, x: float) -> None:
        self.buffer.append(x)
        if len(self.buffer) >= self.FLUSH:
            self.flush()

    def flush(self) -> None:
        if not self.buffer:
            return
        self.fold(np.asarray(self.buffer))
        self.buffer.clear()

    def fold(self, values: np.ndarray) -> None:
        """Bin an array of values at once (the compiled engine hands its batches here)."""
        values = np.maximum(values, self.TINY)
        with np.errstate(over="ignore"):
            scaled = values / self.LOW
        finite = np.isfinite(scaled)
        if finite.all():  # the usual case: one log per value, computed in place
            logs = np.log(scaled, out=scaled)
        else:  # values / LOW overflows above about 1.8e299: take the difference of logs there instead
            logs = np.where(finite, np.log(scaled), np.log(values) - math.log(self.LOW))
        np.divide(logs, math.log(self.RATIO), out=logs)
        index = np.floor(logs, out=logs).astype(np.int64)
        low, high = int(index.min()), int(index.max())
        size = self.counts.size
        if size == 0 or low < self.first or high >= self.first + size:  # widen the kept range
            if size:
                low, high = min(low, self.first), max(high, self.first + size - 1)
            grown = np.zeros(high - low + 1, dtype=np.int64)
            grown[self.first - low:self.first - low + size] = self.counts
            self.counts, self.first = grown, low
        self.counts += np.bincount(index - self.first, minlength=self.counts.size)

    def quantile(self, q: float) -> float:
        """The q-quantile (the value of rank ceil(q n)), as the bin's geometric centre."""
        self.flush()
        total = int(self.counts.sum())
        if total == 0:
            return math.nan
        rank = max(1, math.ceil(q * total))
        index = self.first + int(np.searchsorted(np.cumsum(self.counts), rank))
        top = math.log(sys.float_info.max)
        if (index + 0.5) * math.log(self.RATIO) < top:
            return float(self.LOW * self.RATIO ** (index + 0.5))
        # Values above about 1e299: RATIO ** (index + 0.5) alone would overflow.
        exponent = math.log(self.LOW) + (index + 0.5) * math.log(self.RATIO)
        return math.exp(exponent) if exponent < top else sys.float_info.max


class Recorder:
    """Counters, running sums and time-weighted areas of one replication.

    The channel adds to ``counts`` (control messages sent, by kind) and
    ``transfers``, and reports each lost message (`lose_message`); the servers
    call `enter`, `leave`, `block` and `lose`; the arrival source calls `edge`
    and `exhausted`. ``done`` fires when every measured job has left (or was
    blocked) and the window is closed.
    """

    def __init__(self, env: simpy.Environment, servers: int, warmup: int, jobs: int) -> None:
        self.env = env
        self.servers = servers
        self.warmup = warmup
        self.jobs = jobs
        self.done = env.event()
        self.counts = [0] * len(KINDS)
        self.lost = [0] * len(KINDS)  # of those sent, lost (in the network, or at a down server)
        self.transfers = 0
        self.in_system = 0  # jobs at servers, summed over servers
        self.last = 0.0
        self.area = 0.0  # time integral of in_system
        self.window: list[tuple[float, float, list[int]]] = []  # (time, area, counts + lost) at open/close
        self.finished = 0  # measured jobs that left or were blocked
        self.blocked = 0
        self.lost_jobs = 0  # measured jobs lost at a failing server
        self.sum_response = 0.0
        self.sum_wait = 0.0
        self.waited = 0
        self.responses = QuantileSketch()
        self.occupancy: Occupancy | None = None  # the servers' observer, if lengths are streamed
        self.series: Series | None = None  # batch sums of the responses in arrival order, if wanted

    # -- called by the arrival source ------------------------------------------------
    def exhausted(self) -> None:
        """The arrival stream ended (a finite trace): close the window now."""
        if len(self.window) == 1:
            self.edge()

    def edge(self) -> None:
        """The window opens or closes now: job ``warmup`` or ``warmup + jobs`` arrives."""
        now = self.env.now
        self.area += self.in_system * (now - self.last)
        self.last = now
        self.window.append((now, self.area, self.counts + self.lost))
        if self.occupancy is not None:
            self.occupancy.edge(now)
        self._check_done()

    # -- called by the servers -------------------------------------------------------
    def enter(self, now: float) -> None:
        self.area += self.in_system * (now - self.last)
        self.last = now
        self.in_system += 1

    def leave(self, job: Any, now: float) -> None:
        self.area += self.in_system * (now - self.last)
        self.last = now
        self.in_system -= 1
        if job.measured:
            response = now - job.arrival
            wait = job.start - job.at_server
            self.sum_response += response
            self.sum_wait += wait
            if wait > 0.0:
                self.waited += 1
            # `QuantileSketch.add`, inlined: this runs once per job.
            buffer = self.responses.buffer
            buffer.append(response)
            if len(buffer) >= QuantileSketch.FLUSH:
                self.responses.flush()
            if self.series is not None:
                self.series.add(job.id, response)
            self.finished += 1
            if self.finished == self.jobs:
                self._check_done()

    def block(self, job: Any) -> None:
        if job.measured:
            self.blocked += 1
            self.finished += 1
            if self.finished == self.jobs:
                self._check_done()

    def lose(self, job: Any, present: bool) -> None:
        """``job`` is lost at a failing server; ``present``: it was there (counted by `enter`)."""
        if present:
            now = self.env._now
            self.area += self.in_system * (now - self.last)
            self.last = now
            self.in_system -= 1
        if job.measured:
            self.lost_jobs += 1
            self.finished += 1
            if self.finished == self.jobs:
                self._check_done()

    # -- called by the channel -------------------------------------------------------
    def lose_message(self, kind: int, phase: int) -> None:
        """A control message of ``kind`` is lost now; ``phase`` was ``len(window)`` when it was sent.

        The window counts the messages sent in it, and delivered = sent - lost over
        those same messages (docs/results.md). A message lost at a down server is lost
        when it arrives, possibly after an edge that its sending preceded: it is then
        added to the lost counts of the snapshots taken since, as if it had been lost
        when it was sent. So a message sent before the window opened is never lost
        inside it, and one sent inside it is lost inside it even after it closed.
        """
        self.lost[kind] += 1
        offset = len(self.counts)
        for _, _, snapshot in self.window[phase:]:
            snapshot[offset + kind] += 1

    def _check_done(self) -> None:
        if self.finished == self.jobs and len(self.window) == 2 and not self.done.triggered:
            self.done.succeed()

    # -- results ---------------------------------------------------------------------
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
