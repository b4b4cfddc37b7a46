"""Streaming statistics of one replication: memory does not grow with the number of jobs.

The measurement window opens when job number ``warmup`` arrives and closes when
job number ``warmup + jobs`` arrives, so exactly ``jobs`` jobs arrive in it.
Time averages and message counts cover the window; response statistics cover
the jobs that arrived in it, followed until they leave.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .messages import KINDS
from .occupancy import OCCUPANCY_METRICS, Occupancy
from .result import RunResult
from .series import Series
from .sketch import QuantileSketch

if TYPE_CHECKING:
    import simpy

METRICS: tuple[str, ...] = (
    "jobs", "warmup_jobs", "mean_response", "mean_wait", "p50_response", "p90_response", "p99_response",
    "prob_wait", "mean_queue_length", "messages_per_job",
    *(f"messages_per_job_{kind}" for kind in KINDS),
    *(f"delivered_per_job_{kind}" for kind in KINDS), *(f"lost_per_job_{kind}" for kind in KINDS),
    "messages_per_server_time", "blocked_fraction", "lost_fraction", "sim_time", "wall_seconds",
    *OCCUPANCY_METRICS, "copies_per_job", "wasted_work_per_job",
)
"""The metric columns of runs.csv and summary.csv, in order.

Every per-kind column comes from `KINDS`: a new message kind gets its sent,
delivered and lost columns without more code.
"""
FLUSH = QuantileSketch.FLUSH  # bound once: `Recorder.leave` reads it per job


class Recorder:
    """Counters, running sums and time-weighted areas of one replication.

    The channel adds to ``counts`` (control messages sent, by kind) and
    ``transfers``, and reports each lost message (`lose_message`); the servers
    call `enter`, `leave`, `block` and `lose` (and, for copies of a job, `withdraw`
    and `drop`); the arrival source calls `edge` and `exhausted`. ``done`` fires
    when every measured job has left (or was blocked), every copy of one is gone,
    and the window is closed.
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
        # Jobs at servers, summed over servers: a float (a count, exact), so that the area's product
        # is float by float, an operation Python 3.11 specialises (int by float it does not).
        self.in_system = 0.0
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
        # `QuantileSketch.add`, spread over `leave` (it runs once per job): the buffer's own append,
        # and its flush looked at only when ``finished`` reaches ``due``, at most FLUSH values later,
        # where `leave` looks for the run's end as well. A flush changes no count, whenever it comes.
        self.buffered = self.responses.buffer.append
        self.due = min(FLUSH, jobs)
        self.leaving: Callable[[Any, float], None] = self.account_leave  # see `leave`
        self.own_leave = True  # `leave` is `account_leave`: nothing replaced it
        self.occupancy: Occupancy | None = None  # the servers' observer, if lengths are streamed
        self.series: Series | None = None  # batch sums of the responses in arrival order, if wanted
        # Jobs sent as several copies (`emulator.model.copies`): the extra copies of measured jobs, the
        # work their copies other than the first to finish received, and those copies not yet gone.
        self.extra_copies = 0
        self.wasted_work = 0.0
        self.unsettled = 0

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
        """A job enters a server now. `emulator.model.server.FifoServer.accept` writes these lines out: keep both
        alike."""
        self.area += self.in_system * (now - self.last)
        self.last = now
        self.in_system += 1.0

    @property
    def leave(self) -> Callable[[Any, float], None]:
        """What a server calls when ``job`` leaves it at ``now``: `account_leave`, or what replaced it.

        A seam: what wraps it (`emulator.model.trace`, a test) sets it, and every server calls the
        replacement from then on. Setting it clears `own_leave`, which a FIFO server reads to write
        `account_leave` out (it runs per job) while nothing has replaced it.
        """
        return self.leaving

    @leave.setter
    def leave(self, leave: Callable[[Any, float], None]) -> None:
        self.leaving = leave
        self.own_leave = False

    def account_leave(self, job: Any, now: float) -> None:
        """A job leaves its server now. `emulator.model.server.FifoServer._depart` writes these lines out
        while `own_leave`: keep both alike."""
        self.area += self.in_system * (now - self.last)
        self.last = now
        self.in_system -= 1.0
        if job.measured:
            response = now - job.arrival
            wait = job.start - job.at_server
            self.sum_response += response
            self.sum_wait += wait
            if wait > 0.0:
                self.waited += 1
            buffered = self.buffered  # (a local: a call of an instance's attribute is not specialised)
            buffered(response)
            if self.series is not None:
                self.series.add(job.id, response)
            finished = self.finished + 1
            self.finished = finished
            if finished >= self.due:
                self._turn()

    def _turn(self) -> None:
        """``finished`` reached ``due``: flush the sketch's buffer, or find the run's end."""
        self.responses.flush()
        self.due = min(self.finished + FLUSH, self.jobs)
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
            self.in_system -= 1.0
        if job.measured:
            self.lost_jobs += 1
            self.finished += 1
            if self.finished == self.jobs:
                self._check_done()

    def withdraw(self, job: Any, now: float, work: float) -> None:
        """A copy leaves without finishing its job: cancelled there (after ``work`` of service), or done after
        another copy finished it (``work`` its size)."""
        self.area += self.in_system * (now - self.last)
        self.last = now
        self.in_system -= 1.0
        self._settle(job, work)

    def drop(self, job: Any) -> None:
        """A copy is dropped as it arrives: its cancel came first, so it never was at the server."""
        self._settle(job, 0.0)

    def _settle(self, job: Any, work: float) -> None:
        """A copy other than the first to finish is gone, after ``work`` of service."""
        if job.measured:
            self.wasted_work += work
            self.unsettled -= 1
            if self.unsettled == 0:
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
        if self.finished == self.jobs and not self.unsettled and len(self.window) == 2 and not self.done.triggered:
            self.done.succeed()

    # -- results ---------------------------------------------------------------------
    def result(self) -> RunResult:
        """The replication's measurements as the plain value both engines return."""
        return RunResult(self.servers, self.warmup, self.jobs, self.window, self.finished, self.blocked, self.lost_jobs,
                         self.waited, self.sum_response, self.sum_wait, self.responses,
                         None if self.occupancy is None else self.occupancy.result(), self.extra_copies,
                         self.wasted_work)

    def metrics(self) -> dict[str, float]:
        """The metric columns (docs/results.md) for this replication: `RunResult.metrics`."""
        return self.result().metrics()
