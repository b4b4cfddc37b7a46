"""Servers: a FIFO single server, a processor-sharing single server and an infinite-server pool.

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
from collections.abc import Callable
from heapq import heappop, heappush

import simpy
from simpy.events import NORMAL, EventPriority, Timeout

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
        self.leaving: Job | None = None  # the job whose departure on_depart follows (None: no departure)

    def accept(self, job: Job) -> None:
        raise NotImplementedError

    def _block(self, job: Job) -> None:
        job.blocked = True
        self.recorder.block(job)
        if self.on_arrive is not None:
            self.on_arrive(self, job)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id}, length={self.length})"


class Alarm(simpy.Event):
    """One event object scheduled again and again, each time with the same callback ``then``.

    For what happens one at a time, over and over: a FIFO server's next departure, the
    next arrival. Scheduling it takes the place in the event order that creating a
    `simpy.Timeout` would (time, priority, then the order of scheduling), without a new
    object, and its callback runs where a process waiting on that timeout would be
    resumed, at the cost of one call. The run loop (`emulator.model.guard.run`) knows an
    alarm by its type and calls ``then`` itself, without the callback list a SimPy event
    needs; every way of scheduling one sets its ``callbacks``, for `Environment.step`.
    """

    def __init__(self, env: simpy.Environment, then: Callable[[simpy.Event], None]) -> None:
        super().__init__(env)
        self._ok = True
        self._value = None
        self._then = (then,)  # a tuple: `Environment.step` only iterates over the callbacks

    def after(self, delay: float, priority: EventPriority = NORMAL) -> None:
        """Schedule the callback ``delay`` from now (`Environment.schedule`, inlined: it runs per job)."""
        env = self.env
        self.callbacks = self._then  # type: ignore[assignment]
        heappush(env._queue, (env._now + delay, priority, next(env._eid), self))


class FifoQueue(Server):
    """What the FIFO servers share: the queue of jobs here, the head in service.

    With a ``capacity``, a job that finds ``capacity`` jobs (in service plus
    waiting) is blocked.
    """

    discipline = "fifo"

    def __init__(self, env: simpy.Environment, id: int, speed: float, capacity: int | None,
                 recorder: Recorder) -> None:
        super().__init__(env, id, speed, capacity, recorder)
        self.queue: deque[Job] = deque()


class FifoServer(FifoQueue):
    """One server, first come first served.

    Its departures are callbacks of one `Alarm` rather than a SimPy process: resuming
    a generator through `simpy.Process` costs more than the departure itself. The
    event order is that of a process that waits on a `simpy.Timeout` per service: the
    service of a job that finds the server idle is scheduled when it arrives, that of
    the next job when the previous one has left (after the departure's hooks).
    """

    def __init__(self, env: simpy.Environment, id: int, speed: float, capacity: int | None,
                 recorder: Recorder) -> None:
        super().__init__(env, id, speed, capacity, recorder)
        self.idle = True  # no service under way: the next job to arrive starts its own
        self._departure = Alarm(env, self._depart)
        # When the last job here will leave: the same float operations as the departures' times,
        # so ``end - now`` is the work left exactly as the server will do it (`work`).
        self.end = 0.0

    def accept(self, job: Job) -> None:
        if self.capacity is not None and self.length >= self.capacity:
            self._block(job)
            return
        env = self.env
        now = env._now
        job.at_server = now
        job.server = self.id
        self.queue.append(job)
        self.length += 1
        # `Recorder.enter`, inlined: this runs per job.
        recorder = self.recorder
        recorder.area += recorder.in_system * (now - recorder.last)
        recorder.last = now
        recorder.in_system += 1.0
        if self.observer is not None:
            self.observer.arrive(self.length, now)
        service = job.size * self.inv_speed
        if self.idle:  # service starts now, and ends with the departure scheduled here
            self.idle = False
            job.start = now
            end = self.end = now + service
            # `Alarm.after`, inlined: this runs per job.
            departure = self._departure
            departure.callbacks = departure._then  # type: ignore[assignment]
            heappush(env._queue, (end, NORMAL, next(env._eid), departure))
        else:
            self.end += service
        # (Read once, then called: a call of an instance's attribute that is no method of the class
        # is not specialised by Python 3.11, its read is.)
        on_arrive = self.on_arrive
        if on_arrive is not None:
            on_arrive(self, job)

    def _depart(self, _event: simpy.Event) -> None:
        queue, env = self.queue, self.env
        now = env._now
        job = queue.popleft()
        self.length -= 1
        recorder = self.recorder
        if recorder.own_leave:
            # `Recorder.account_leave`, written out while nothing replaced `Recorder.leave`: this runs
            # per job, and a call costs more than these lines.
            recorder.area += recorder.in_system * (now - recorder.last)
            recorder.last = now
            recorder.in_system -= 1.0
            if job.measured:
                response = now - job.arrival
                wait = job.start - job.at_server
                recorder.sum_response += response
                recorder.sum_wait += wait
                if wait > 0.0:
                    recorder.waited += 1
                buffered = recorder.buffered  # (a local: see `accept`)
                buffered(response)
                if recorder.series is not None:
                    recorder.series.add(job.id, response)
                finished = recorder.finished + 1
                recorder.finished = finished
                if finished >= recorder.due:
                    recorder._turn()
        else:
            recorder.leave(job, now)
        if self.observer is not None:
            self.observer.depart(self.length, now)
        on_depart = self.on_depart  # (read once, then called: see `accept`)
        if on_depart is not None:
            self.leaving = job
            on_depart(self)
        # After the hooks, as a process would look at its queue again: a job they sent here
        # waits its turn rather than starting a second service.
        if queue:
            job = queue[0]
            job.start = now
            # `Alarm.after`, inlined: this runs per job.
            departure = self._departure
            departure.callbacks = departure._then  # type: ignore[assignment]
            heappush(env._queue, (now + job.size * self.inv_speed, NORMAL, next(env._eid), departure))
        else:
            self.idle = True

    def work(self) -> float:
        """Unfinished work, in time at this server's speed: the remaining service times of the jobs here.

        The time until its last job leaves if no other came: never negative, and 0 only when idle
        (or when its last departure is due now).
        """
        return self.end - self.env._now if self.length else 0.0


class PoolServer(Server):
    """A server pool: every task is served at once at the pool's speed (infinite-server).

    With a ``capacity`` B, a task that finds B tasks is discarded (blocked), as in
    Mukherjee et al. Completions are timeout callbacks rather than one process per
    task: a task never waits, so a process would only add an event per task.
    """

    discipline = "pool"

    def __init__(self, env: simpy.Environment, id: int, speed: float, capacity: int | None,
                 recorder: Recorder) -> None:
        super().__init__(env, id, speed, capacity, recorder)
        self.ends = 0.0  # the sum of the tasks' completion times, set to 0 exactly whenever the pool empties
        self.last = 0.0  # the latest completion time of a task here (tasks complete in that order)

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
        delay = job.size * self.inv_speed
        end = now + delay  # the completion's time, as `Timeout` computes it
        self.ends += end
        self.last = max(self.last, end)
        Timeout(self.env, delay).callbacks.append(
            lambda _event: self._complete(job))
        if self.on_arrive is not None:
            self.on_arrive(self, job)

    def _complete(self, job: Job) -> None:
        self.length -= 1
        # The task ends now: its completion time leaves the sum (the whole sum, with no round-off left
        # over, when the pool empties).
        self.ends = self.ends - self.env.now if self.length else 0.0
        self.recorder.leave(job, self.env.now)
        if self.observer is not None:
            self.observer.depart(self.length, self.env.now)
        if self.on_depart is not None:
            self.leaving = job
            self.on_depart(self)

    def work(self) -> float:
        """Unfinished work, in time at this pool's speed: the sum of its tasks' remaining service times.

        The running sum of their completion times less ``length`` times now; its round-off (of
        order ``length`` ulps of now, since the pool last emptied) can never make the answer less
        than the longest task's remaining time, which is exact.
        """
        if not self.length:
            return 0.0
        now = self.env.now
        return max(self.ends - self.length * now, self.last - now)



class PsServer(Server):
    """One server, egalitarian processor sharing: each of the n jobs here is served at speed / n.

    Exact and event-driven, by virtual time: ``virtual`` is the work each job here has
    received since the server was last idle, updated at every change (arrival, departure)
    from the time since the last one. A job that arrives when it is ``V`` has virtual
    finish ``V + size``; the job with the least one leaves first (ties: the earliest to
    arrive), so the jobs are a heap by (virtual finish, arrival), and one completion
    event is pending: the heap's first, rescheduled at every change (O(log n) each). A
    superseded completion still fires, and does nothing. At a departure the virtual
    time is set to the leaving job's finish (no round-off carried over), and to 0.0
    when the server empties (so a job alone throughout leaves after size / speed,
    exactly as at a FIFO server). The compiled engine (`emulator.compiled.ps`) makes the
    same float operations in the same order.

    There is no waiting room, so a job's ``start`` says how much it was slowed down: the
    time lost to sharing, response at the server minus size / speed, is ``start -
    at_server`` (0.0 for a job that was alone at the server throughout). `Recorder.leave`
    reads ``mean_wait`` and ``prob_wait`` from it (docs/configuration-notes.md).
    """

    discipline = "ps"

    def __init__(self, env: simpy.Environment, id: int, speed: float, capacity: int | None,
                 recorder: Recorder) -> None:
        super().__init__(env, id, speed, capacity, recorder)
        self.virtual = 0.0  # work received by each job here since the server was last idle
        self.last = 0.0  # time of the last change
        self.jobs: list[tuple[float, int, Job]] = []  # heap of (virtual finish, arrival order, job)
        self.order = 0  # arrivals so far: ties between equal finishes go to the earliest
        self.alone: Job | None = None  # the job that found the server idle, while no other has come
        self.pending: Timeout | None = None  # the completion that counts; earlier ones are superseded

    def accept(self, job: Job) -> None:
        if self.capacity is not None and self.length >= self.capacity:
            self._block(job)
            return
        now = self.env._now
        job.at_server = now
        job.server = self.id
        if self.length > 0:
            self._advance(now)
            self.alone = None
        else:
            self.alone = job
        self.last = now
        heappush(self.jobs, (self.virtual + job.size, self.order, job))
        self.order += 1
        self.length += 1
        self.recorder.enter(now)
        if self.observer is not None:
            self.observer.arrive(self.length, now)
        self._schedule()
        if self.on_arrive is not None:
            self.on_arrive(self, job)

    def _advance(self, now: float) -> None:
        """The virtual time at ``now``: no further than the first finish, which round-off could pass."""
        virtual = self.virtual + (now - self.last) / (self.length * self.inv_speed)
        first = self.jobs[0][0]
        self.virtual = first if virtual > first else virtual

    def _schedule(self) -> None:
        """Schedule the completion of the job with the least virtual finish (earlier ones are superseded)."""
        delay = (self.jobs[0][0] - self.virtual) * self.length * self.inv_speed
        event = self.pending = Timeout(self.env, delay)
        event.callbacks.append(self._complete)

    def _complete(self, event: simpy.Event) -> None:
        if event is not self.pending:
            return  # superseded by a later change
        now = self.env._now
        finish, _, job = heappop(self.jobs)
        self.virtual = finish
        self.last = now
        # The time lost to sharing (none for a job alone throughout), as the recorder reads it.
        job.start = job.at_server if job is self.alone else now - job.size * self.inv_speed
        self.alone = None
        self.length -= 1
        if self.length == 0:
            self.virtual = 0.0
            self.pending = None
        self.recorder.leave(job, now)
        if self.observer is not None:
            self.observer.depart(self.length, now)
        if self.on_depart is not None:
            self.leaving = job
            self.on_depart(self)
        if self.length > 0:  # after the hooks, as a FIFO server schedules its next service
            self._schedule()


SERVERS: dict[str, type[Server]] = {"fifo": FifoServer, "pool": PoolServer, "ps": PsServer}
