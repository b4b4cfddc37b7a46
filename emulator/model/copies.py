"""Jobs sent as several copies (redundancy): the copies, their FIFO servers, and how a copy is cancelled.

A job sent as d copies is d `Copy` objects, one per target server, sharing one
`Group`. The first copy to finish service finishes the job: it leaves through
`Recorder.leave` (its response and wait are the job's). Every other copy leaves
without finishing anything, through `Recorder.withdraw` with the service it
received (wasted work): cancelled while waiting (none) or in service (what it
got so far), or done after another copy finished the job (all of its size). A
copy whose cancel reaches its server before it does is dropped on arrival and
never joins the queue.

The servers know nothing of why a copy is cancelled: a policy attaches
``on_start(server, copy)`` and ``on_finish(server, copy)`` and delivers cancels
with `CopyServer.cancel` (`emulator.policies.redundancy`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import simpy
from simpy.events import Timeout

from ..measure.recorder import Recorder
from .job import Job
from .server import FifoQueue

ON_WAY, WAITING, SERVING, GONE, DROPPED = range(5)
"""A copy's states: sent, at its server waiting, in service, left, cancelled before it arrived."""


class Group:
    """The copies of one job, and what they share: whether one has started, or finished the job."""

    __slots__ = ("job", "copies", "on_way", "started", "done")

    def __init__(self, job: Job) -> None:
        self.job = job
        self.copies: list[Copy] = []
        self.on_way = 0  # copies not yet at their server (nor dropped)
        self.started = False
        self.done = False

    def reached(self, server: int) -> None:
        """One more copy reached a server (or was dropped there).

        Once all have, the job itself takes ``server``: the arrival source waits for that
        before it stops arrivals, since a copy on its way can still be queued behind later jobs.
        """
        self.on_way -= 1
        if self.on_way == 0:
            self.job.server = server


class Copy(Job):
    """One copy of a job: the job's identity and arrival, its own size, server and timestamps."""

    __slots__ = ("group", "target", "state")

    group: Group
    target: Any  # the server it is sent to
    state: int


class Copier:
    """Makes a job's copies, one per target; extra copies' sizes come from their own stream.

    Parameters
    ----------
    recorder : Recorder
        Counts the extra copies of measured jobs, and holds them unsettled until each is gone.
    sizes : callable
        Draws an extra copy's size from the service law: the ``copies`` stream, drawn in the
        order the copies are made (the first copy has the job's own size).
    """

    def __init__(self, recorder: Recorder, sizes: Callable[[], float]) -> None:
        self.recorder = recorder
        self.sizes = sizes

    def __call__(self, job: Job, targets: Sequence[Any], identical: bool) -> list[Copy]:
        """The copies of ``job``, one per target server; ``identical``: all of the job's size, drawing nothing."""
        group = Group(job)
        for i, target in enumerate(targets):
            size = job.size if i == 0 or identical else self.sizes()
            copy = Copy(job.id, job.arrival, size, job.measured)
            copy.group, copy.target, copy.state = group, target, ON_WAY
            group.copies.append(copy)
        group.on_way = len(targets)
        if job.measured:
            self.recorder.extra_copies += len(targets) - 1
            self.recorder.unsettled += len(targets) - 1  # all but the one that finishes the job
        return group.copies


class CopyServer(FifoQueue):
    """A FIFO server of copies, any of which may be cancelled while it waits or is served.

    A cancelled waiting copy stays in the queue, marked gone, and is skipped when it
    reaches the head: removing it from the middle would cost the queue's length. Each
    service is its own timeout; cancelling the copy in service makes that timeout stale
    (``serial`` moves on), and the next copy starts at once. Capacity is not modelled
    (the policy refuses it).
    """

    def __init__(self, env: simpy.Environment, id: int, speed: float, capacity: int | None,
                 recorder: Recorder) -> None:
        super().__init__(env, id, speed, capacity, recorder)
        self.idle = True
        self.serial = 0  # the service under way; a timeout of an earlier one is stale
        self.on_start: Callable[[CopyServer, Copy], None] | None = None
        self.on_finish: Callable[[CopyServer, Copy], None] | None = None

    def accept(self, job: Job) -> None:
        copy: Copy = job  # type: ignore[assignment]
        group = copy.group
        if copy.state == DROPPED:  # its cancel came first
            group.reached(self.id)
            self.recorder.drop(copy)
            return
        now = self.env._now
        copy.at_server = now
        copy.server = self.id
        copy.state = WAITING
        self.queue.append(copy)
        self.length += 1
        self.recorder.enter(now)
        if self.observer is not None:
            self.observer.arrive(self.length, now)
        group.reached(self.id)
        if self.idle:
            self._serve_next(now)
        if self.on_arrive is not None:
            self.on_arrive(self, copy)

    def cancel(self, copy: Copy) -> None:
        """A cancel for ``copy`` arrives here: it leaves now if it is here, or is dropped when it comes."""
        state = copy.state
        if state == ON_WAY:
            copy.state = DROPPED
            return
        if state not in (WAITING, SERVING):  # gone already: it finished before its cancel came
            return
        now = self.env._now
        copy.state = GONE
        self.length -= 1
        work = (now - copy.start) * self.speed if state == SERVING else 0.0
        self.recorder.withdraw(copy, now, work)
        if self.observer is not None:
            self.observer.depart(self.length, now)
        if state == SERVING:
            self.queue.popleft()
            self.serial += 1
            self.idle = True
            self._serve_next(now)

    def _serve_next(self, now: float) -> None:
        """Start the first copy in the queue not cancelled, if any."""
        queue = self.queue
        while queue and queue[0].state == GONE:  # type: ignore[attr-defined]
            queue.popleft()
        if not queue:
            self.idle = True
            return
        copy: Copy = queue[0]  # type: ignore[assignment]
        self.idle = False
        copy.start = now
        copy.state = SERVING
        self.serial += 1
        serial = self.serial
        Timeout(self.env, copy.size * self.inv_speed).callbacks.append(lambda _event: self._finish(serial))
        if self.on_start is not None:
            self.on_start(self, copy)

    def _finish(self, serial: int) -> None:
        if serial != self.serial:  # that copy was cancelled in service
            return
        now = self.env._now
        copy: Copy = self.queue.popleft()  # type: ignore[assignment]
        copy.state = GONE
        self.length -= 1
        group = copy.group
        first = not group.done
        if first:
            group.done = True
            self.recorder.leave(copy, now)
        else:  # another copy finished the job while this one was served: all its work was wasted
            self.recorder.withdraw(copy, now, copy.size)
        if self.observer is not None:
            self.observer.depart(self.length, now)
        if first and self.on_finish is not None:
            self.on_finish(self, copy)
        if self.on_depart is not None:
            self.on_depart(self)
        self._serve_next(now)
