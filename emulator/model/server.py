"""Servers: a FIFO single server (one SimPy process each) and an infinite-server pool.

A server knows nothing of policies. A policy's server side attaches two hooks:
``on_arrive(server, job)`` after every job that reaches the server (accepted or
blocked, ``job.blocked`` tells) and ``on_depart(server)`` after every departure;
``length`` is already updated when they run. At the same moments, whenever the
length changes, the server tells its ``observer`` (an `Occupancy`, if any).

Hot path: ``env._now`` rather than the ``env.now`` property (same value; the
property costs a Python call, and these lines run several times per job).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator
from typing import Any

import simpy
from simpy.events import NORMAL, Timeout

from ..measure.occupancy import Occupancy
from ..measure.recorder import Recorder
from .job import Job


class Server:
    """Common state: identity, speed, capacity, length and the policy hooks."""

    discipline = ""

    def __init__(self, env: simpy.Environment, id: int, speed: float, capacity: int | None,
                 recorder: Recorder) -> None:
        self.env = env
        self.id = id
        self.speed = speed
        self.inv_speed = 1.0 / speed
        self.capacity = capacity
        self.recorder = recorder
        self.length = 0  # jobs here: in service plus waiting
        self.on_arrive: Callable[[Server, Job], None] | None = None
        self.on_depart: Callable[[Server], None] | None = None
        self.observer: Occupancy | None = None  # told of every length change

    def accept(self, job: Job) -> None:
        raise NotImplementedError

    def _block(self, job: Job) -> None:
        job.blocked = True
        self.recorder.block(job)
        if self.on_arrive is not None:
            self.on_arrive(self, job)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id}, length={self.length})"


class _Wake(simpy.Event):
    """What an idle server process waits for: the end of the service of the job that ends its idling.

    Triggering it for a time in the future, as `simpy.Timeout` does for a new event,
    costs one scheduled event per busy period's first job, where waking the process
    now and then starting a timeout would cost two.
    """

    def after(self, delay: float) -> None:
        self._ok = True
        self._value = None
        self.env.schedule(self, NORMAL, delay)


class FifoServer(Server):
    """One server, first come first served; its SimPy process serves the queue.

    With a ``capacity``, a job that finds ``capacity`` jobs (in service plus
    waiting) is blocked.
    """

    discipline = "fifo"

    def __init__(self, env: simpy.Environment, id: int, speed: float, capacity: int | None,
                 recorder: Recorder) -> None:
        super().__init__(env, id, speed, capacity, recorder)
        self.queue: deque[Job] = deque()
        self._wake: _Wake | None = None
        self.process = env.process(self._serve())

    def accept(self, job: Job) -> None:
        if self.capacity is not None and self.length >= self.capacity:
            self._block(job)
            return
        now = self.env._now
        job.at_server = now
        job.server = self.id
        self.queue.append(job)
        self.length += 1
        self.recorder.enter(now)
        if self.observer is not None:
            self.observer.arrive(self.length, now)
        if self._wake is not None:  # idle: service starts now and the process wakes at its end
            wake, self._wake = self._wake, None
            job.start = now
            wake.after(job.size * self.inv_speed)
        if self.on_arrive is not None:
            self.on_arrive(self, job)

    def _serve(self) -> Generator[simpy.Event, Any, None]:
        env, queue, recorder = self.env, self.queue, self.recorder
        while True:
            if queue:
                job = queue[0]
                job.start = env._now
                yield Timeout(env, job.size * self.inv_speed)
            else:
                # Idle: the first job of the next busy period starts its service in `accept`,
                # which schedules this event for the end of it.
                self._wake = _Wake(env)
                yield self._wake
            job = queue.popleft()
            self.length -= 1
            recorder.leave(job, env._now)
            if self.observer is not None:
                self.observer.depart(self.length, env._now)
            if self.on_depart is not None:
                self.on_depart(self)


class PoolServer(Server):
    """A server pool: every task is served at once at the pool's speed (infinite-server).

    With a ``capacity`` B, a task that finds B tasks is discarded (blocked), as in
    Mukherjee et al. Completions are timeout callbacks rather than one process per
    task: a task never waits, so a process would only add an event per task.
    """

    discipline = "pool"

    def accept(self, job: Job) -> None:
        if self.capacity is not None and self.length >= self.capacity:
            self._block(job)
            return
        now = self.env.now
        job.at_server = job.start = now
        job.server = self.id
        self.length += 1
        self.recorder.enter(now)
        if self.observer is not None:
            self.observer.arrive(self.length, now)
        Timeout(self.env, job.size * self.inv_speed).callbacks.append(
            lambda _event: self._complete(job))
        if self.on_arrive is not None:
            self.on_arrive(self, job)

    def _complete(self, job: Job) -> None:
        self.length -= 1
        self.recorder.leave(job, self.env.now)
        if self.observer is not None:
            self.observer.depart(self.length, self.env.now)
        if self.on_depart is not None:
            self.on_depart(self)


SERVERS: dict[str, type[Server]] = {"fifo": FifoServer, "pool": PoolServer}
