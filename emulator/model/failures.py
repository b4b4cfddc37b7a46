"""Servers that fail: a FIFO server that alternates up and down periods (docs/faults.md).

Each server draws its up and down periods from streams of its own (``up.<id>``
and ``down.<id>``), so the failures do not depend on the policy: with the same
seed every policy faces the same breakdowns. Every server starts up, at the
beginning of an up period.

While down a server serves nothing, answers no query (the channel loses every
message that reaches it) and sends nothing: its policy hooks wait until it is up
again. Then it runs ``on_arrive`` for each job that reached it while down, in
order, and ``on_depart`` once, as after a departure: a JIQ server that is idle
sends a token, a JBT-d server below the threshold reports. That is how a
dispatcher hears of the failure's end; of the failure itself it hears nothing.

``hold``: the jobs stay, and the job in service resumes where it stopped when
the server is up again (preemptive resume); its ``start`` stays the moment its
service first began. ``lose``: the jobs present when the server fails, and
every job that reaches it while down, are lost (`Recorder.lose`).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

import simpy
from simpy.events import Timeout

from ..measure.recorder import Recorder
from .job import Job
from .server import FifoQueue


class FailingFifoServer(FifoQueue):
    """A FIFO server with breakdowns; see the module docstring for the rules.

    Parameters
    ----------
    ups, downs : iterator of float
        The lengths of its up and down periods.
    lose : bool
        ``on_down: lose`` (else ``hold``).
    """

    def __init__(self, env: simpy.Environment, id: int, speed: float, capacity: int | None,
                 recorder: Recorder, ups: Iterator[float], downs: Iterator[float], lose: bool) -> None:
        self.up = True
        self.lose = lose
        self.missed: list[Job] = []  # jobs that reached it while down: their hooks run at recovery
        self.idle: simpy.Event | None = None  # what the process waits on when it cannot serve
        self.serving = False
        self.left: float | None = None  # the head job's remaining service time, once begun
        self.began = 0.0  # when the current stretch of service began
        super().__init__(env, id, speed, capacity, recorder)
        # A process, unlike `FifoServer`: a failure interrupts the service under way.
        self.process = env.process(self._serve())
        env.process(self._cycle(ups, downs))

    def accept(self, job: Job) -> None:
        if not self.up and self.lose:
            job.server = self.id  # it reached its server (the arrival source waits for that)
            self.recorder.lose(job, present=False)
            self.missed.append(job)
            return
        if self.capacity is not None and self.length >= self.capacity:
            job.blocked = True
            self.recorder.block(job)
            self._arrived(job)
            return
        now = self.env._now
        job.at_server = now
        job.server = self.id
        self.queue.append(job)
        self.length += 1
        self.recorder.enter(now)
        if self.observer is not None:
            self.observer.arrive(self.length, now)
        self._wake_up()
        self._arrived(job)

    def _arrived(self, job: Job) -> None:
        if not self.up:
            self.missed.append(job)
        elif self.on_arrive is not None:
            self.on_arrive(self, job)

    def _wake_up(self) -> None:
        if self.up and self.idle is not None and self.queue:
            idle, self.idle = self.idle, None
            idle.succeed()

    def _serve(self) -> Generator[simpy.Event, Any, None]:
        env, queue, recorder = self.env, self.queue, self.recorder
        while True:
            if not (self.up and queue):
                self.idle = env.event()
                yield self.idle
                continue
            job = queue[0]
            if self.left is None:
                job.start = env._now
                self.left = job.size * self.inv_speed
            self.began = env._now
            self.serving = True
            try:
                yield Timeout(env, self.left)
            except simpy.Interrupt:  # the server failed: `_cycle` has kept what is left
                continue
            self.serving = False
            self.left = None
            queue.popleft()
            self.length -= 1
            recorder.leave(job, env._now)
            if self.observer is not None:
                self.observer.depart(self.length, env._now)
            if self.on_depart is not None:
                self.on_depart(self)

    def _cycle(self, ups: Iterator[float], downs: Iterator[float]) -> Generator[simpy.Event, Any, None]:
        env = self.env
        while True:
            yield Timeout(env, next(ups))
            self.up = False
            if self.serving:
                self.left -= env._now - self.began  # type: ignore[operator]
                self.serving = False
                self.process.interrupt()
            if self.lose:
                self.left = None
                while self.queue:
                    job = self.queue.popleft()
                    self.length -= 1
                    self.recorder.lose(job, present=True)
                    if self.observer is not None:
                        self.observer.depart(self.length, env._now)
            yield Timeout(env, next(downs))
            self.up = True
            missed, self.missed = self.missed, []
            if self.on_arrive is not None:
                for job in missed:
                    self.on_arrive(self, job)
            if self.on_depart is not None:
                self.on_depart(self)
            self._wake_up()
