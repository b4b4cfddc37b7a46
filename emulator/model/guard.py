"""The run loop's watch: a run whose simulated work stops advancing fails in one line instead of hanging.

SimPy processes events one by one; nothing in it notices a model that keeps
processing events without getting anywhere. `run` steps the environment in
chunks of `CHUNK` events and, between chunks, `Watch.check` compares a few
counters of the recorder with their values at the last check (a few attribute
reads per chunk: nothing per event). It fails the run with `StalledRun` when

- no job moved for `Watch.idle_limit` events, and the clock advanced less than
  `QUIET_GAPS` mean gaps between arrivals meanwhile: none was sent to a server,
  and none reached, left or was lost at one at a new time (timers or failure
  cycles far faster than the arrivals, a policy that sends nothing). A quiet
  stretch of bursty arrivals (an MMPP's low state, a trace's pause) may hold
  that many events, but spread over many gaps;
- the clock stood still for `Watch.still_limit` events (at a time so large that
  ``t + delay == t`` in floating point, or a zero-delay loop);
- after the measurement window closed, `Watch.late_limit` jobs were sent without
  one measured job finishing (the measured jobs wait for something that takes
  many runs' length: a timeout or a down period of 1e300, a job a policy kept).

The limits are derived from the point (servers N, dispatchers D, jobs) so that a
correct run does not reach them; see `Watch.__init__`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from heapq import heapify, heappop, heappush
from itertools import repeat
from typing import Any

import simpy
from simpy.core import EmptySchedule, StopSimulation

from ..errors import StalledRun
from .server import Alarm

CHUNK = 4096
"""Events processed between two checks: the check's cost is spread over this many events."""
QUIET_GAPS = 10.0
"""Mean gaps between arrivals that `Watch.idle_limit` events without a job moving must span at least."""


class Aside:
    """One event's entry held beside SimPy's event queue while `run` steps the model: the next arrival.

    A push and a pop per arrival in a queue that holds every busy server's departure cost
    SQ(2) at N = 100 about a tenth of its CPU. While ``held`` (inside `run`, and only there),
    the arrival source puts the entry `Environment.schedule` would push, ``(time, priority,
    event id, event)``, in ``due`` instead, and `run` takes it in its turn: event ids are
    unique, so one comparison with the queue's first entry orders it exactly as the queue
    would. `release` puts it back in the queue, so a model stepped otherwise
    (``env.run(until=...)``) sees every event where SimPy keeps it. ``then`` is the event's one
    callback, which `run` calls directly when the event's turn comes (one that always succeeds,
    as an `emulator.model.server.Alarm` does); the event's ``callbacks`` are left as they are
    meanwhile (neither set when an entry is held nor cleared when it is processed: two stores
    per arrival fewer), and `release` gives them back.
    """

    __slots__ = ("event", "then", "held", "due")

    def __init__(self, event: simpy.Event | None = None,
                 then: Callable[[simpy.Event], None] | None = None) -> None:
        self.event = event  # the event whose entries are held
        self.then = then
        self.held = False
        self.due: tuple[float, int, int, simpy.Event] | None = None

    def hold(self, queue: list[Any]) -> None:
        """Take the event's entry out of ``queue``, if it is there; hold its entries until `release`."""
        for i, entry in enumerate(queue):
            if entry[3] is self.event:
                self.due = entry
                del queue[i]
                heapify(queue)
                break
        self.held = True

    def release(self, queue: list[Any]) -> None:
        """Put the held entry, if any, back in ``queue``; entries go there again from now on.

        Its event gets its callback back: while held, the event's ``callbacks`` are not kept.
        """
        self.held = False
        if self.due is not None:
            self.due[3].callbacks = [self.then]  # type: ignore[list-item]  # (held: an event and its callback)
            heappush(queue, self.due)
            self.due = None


class Watch:
    """Counters of a run at the last check, and the limits of a run that still advances.

    Parameters
    ----------
    env : simpy.Environment
    recorder : Recorder
        Its ``transfers``, ``last`` (time of the last job entering or leaving a
        server), ``finished`` and ``window`` are read.
    servers, dispatchers : int
    jobs : int
        Warm-up plus measured jobs: the run's own arrivals.
    rate : float
        The arrival rate (jobs per unit time).
    suspect : callable
        Called with the stall's kind (``idle``, ``still``, ``late``) and the time;
        returns the scenario key most likely at fault, as a phrase, or "".
    """

    def __init__(self, env: simpy.Environment, recorder: Any, servers: int, dispatchers: int, jobs: int,
                 rate: float, suspect: Callable[[str, float], str]) -> None:
        self.env = env
        self.recorder = recorder
        self.suspect = suspect
        # Between two job events (a job sent, reaching or leaving a server) a correct run processes
        # the messages of the jobs in flight, at most about 2 (N + D) per job (a query and a reply
        # to every server and dispatcher), and the timers and up/down cycles of one gap between
        # arrivals: JBT-d's updates are bounded at 1,000 messages per arriving job. 1,000 times
        # that needs a gap of hundreds of mean gaps (probability below e^-100), or timers or
        # failure cycles hundreds of times as frequent as the arrivals. Arrivals may pause for many
        # mean gaps (an MMPP's low state, a batch process, a trace), so that many events count as a
        # stall only when they also spanned fewer than QUIET_GAPS mean gaps: a correct run's events
        # over 1,000 gaps' worth, packed 100 times as densely.
        self.idle_limit = 1_000 * (2 * (servers + dispatchers) + 1_000)
        self.quiet = QUIET_GAPS / rate
        # At one instant a correct run processes what the jobs arriving then send: a batch (or a
        # slot's arrivals), at most all its jobs, each with its messages. Any more is a clock that
        # cannot move.
        self.still_limit = self.idle_limit + 4 * jobs * (servers + dispatchers + 1)
        # Once the window has closed, later arrivals only keep the system loaded while the measured
        # jobs finish; a measured job still waiting after 100 runs' worth of arrivals waits for
        # something 100 times the run's length (a latency draw of that size has probability at most
        # 1% even when its mean is the whole run, the largest latency accepted).
        self.late_limit = 100 * jobs
        self.time = env.now
        self.transfers = recorder.transfers
        self.last = recorder.last
        self.finished = recorder.finished
        self.idle = 0  # events since a job last moved, or since `moved` if that was long ago
        self.moved = env.now  # when the count of `idle` began
        self.still = 0  # events since the clock last moved
        self.since = recorder.transfers  # transfers when a measured job last finished

    def check(self, events: int) -> None:
        """Account for ``events`` more events; raise `StalledRun` if the run stopped advancing."""
        recorder, now = self.recorder, self.env.now
        if now != self.time:
            self.time, self.still = now, 0
        else:
            self.still += events
        transfers, last = recorder.transfers, recorder.last
        if transfers != self.transfers or last != self.last:
            self.transfers, self.last, self.idle, self.moved = transfers, last, 0, now
        else:
            self.idle += events
        if recorder.finished != self.finished or len(recorder.window) < 2:
            self.finished, self.since = recorder.finished, transfers
        if self.idle > self.idle_limit and now - self.moved >= self.quiet and math.ulp(now) < 1e-6 * self.quiet:
            # A quiet stretch: count anew. Not on a clock too coarse to resolve the gaps between arrivals
            # (past t = 1e300 a period moves it, a job's service does not): there, only events count.
            self.idle, self.moved = 0, now
        if self.idle > self.idle_limit:
            standing = ", the clock standing still" if self.still >= self.idle else ""
            self.fail("idle", f"no job was sent, reached a server or left one for {self.idle:,} events{standing}")
        if self.still > self.still_limit:
            self.fail("still", f"the clock stood still for {self.still:,} events (t + delay == t in floating "
                               f"point, or events that schedule each other without delay)")
        if transfers - self.since > self.late_limit:
            self.fail("late", f"{recorder.jobs - recorder.finished:,} measured job(s) unfinished while "
                              f"{transfers - self.since:,} later jobs came, 100 times the run's own")

    def fail(self, kind: str, what: str) -> None:
        """Raise `StalledRun`: ``what`` stopped (a phrase), with the key `suspect` names for ``kind``."""
        now = self.env.now
        suspect = self.suspect(kind, now)
        raise StalledRun(f"the run stopped advancing at t={now:.6g}: {what}"
                         + (f"; check {suspect}" if suspect else ""))


def run(env: simpy.Environment, done: simpy.Event, watch: Watch,
        progress: Callable[[], None] | None = None, every: float = float("inf"),
        aside: Aside | None = None) -> None:
    """Process events until ``done`` is processed, checking ``watch`` every `CHUNK` events.

    ``aside``'s event, if given, is held beside the queue meanwhile (`Aside`), and
    processed in its turn among the queue's.

    ``progress``, if given, is called between chunks once the clock has advanced
    ``every`` since its last call, and at the end. Stopping exactly when ``done`` is processed (as
    ``env.run(until=done)`` does) leaves every later event unprocessed, so the
    metrics are those of an unwatched run.
    """
    if done.callbacks is None:  # processed already
        return
    done.callbacks.append(StopSimulation.callback)
    queue = env._queue
    report = env.now + every
    aside = Aside() if aside is None else aside
    then = aside.then
    aside.hold(queue)
    try:
        while True:
            for _ in repeat(None, CHUNK):  # repeat: the cheapest loop of a fixed count
                # `Environment.step`, inlined (one call fewer per event: 2-4% of a plain run's CPU):
                # the same order, callbacks, and failure of an event that nothing defused. Only a
                # StopSimulation differs: step would reschedule the event's later callbacks, but the
                # run ends there, and `done`'s stop is the last callback of its event.
                due = aside.due
                if due is not None and (not queue or due < queue[0]):
                    # The held event: its one callback, called directly; it cannot fail.
                    aside.due = None
                    env._now, _, _, event = due
                    then(event)  # type: ignore[misc]  # (an Aside holds entries only of its own event)
                    continue
                try:
                    env._now, _, _, event = heappop(queue)
                except IndexError:
                    raise EmptySchedule from None
                if type(event) is Alarm:
                    # A FIFO departure, mostly: its one callback, called directly (it cannot fail), and
                    # its callbacks left as they are (it sets them anew whenever it is scheduled).
                    fire = event._then[0]
                    fire(event)
                    continue
                callbacks, event.callbacks = event.callbacks, None  # type: ignore[assignment]
                for callback in callbacks:
                    callback(event)
                if not event._ok and not hasattr(event, "_defused"):
                    _fail(event)
            watch.check(CHUNK)
            if progress is not None and env.now >= report:
                progress()
                report = env.now + every
    except StopSimulation:
        if progress is not None:  # the last word: the run's end
            progress()
        return
    except EmptySchedule:
        watch.fail("empty", f"no event is left, with {watch.recorder.finished:,} of "
                            f"{watch.recorder.jobs:,} measured jobs finished")
    finally:
        aside.release(queue)


def _fail(event: simpy.Event) -> None:
    """Raise a failed event's exception, as `Environment.step` does: a copy, caused by the original."""
    exc = type(event._value)(*event._value.args)
    exc.__cause__ = event._value
    raise exc
