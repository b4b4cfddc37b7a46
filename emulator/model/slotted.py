"""Slotted time: a slot clock drives arrivals, dispatching and service in whole slots.

Slot t is the interval [t, t+1) of simulated time; the time unit is the slot.
At each slot boundary t, in this order:

1. the service phase of slot t-1 (at time t, before anything else due then):
   each busy server, in increasing id order, completes up to its capacity for
   that slot; each departure is recorded at time t and calls the server's
   ``on_depart`` hook once, so idle tokens and below-threshold reports go out
   after the service phase, before the next arrivals;
2. timers due at t run (JBT-d's threshold update every ``period`` slots), so
   an update samples the lengths left by the service phase;
3. the arrivals of slot t: their number is drawn, and each job arrives at time t
   and goes through the policy and the channel, one by one.

A job that arrives in slot t and leaves in slot u has response ``u - t + 1``
(the slots it spends in the system, both ends counted) and wait ``u - t`` (the
slots before its service slot). With ``system.slot.same_slot: false`` a job is
served from slot t+1 on. The servers expose the same ``length``, hooks and
recorder calls as those of `emulator.model.server`, so the policies run unchanged.

Per slot the clock does O(arrivals + busy servers) Python work: the servers
keep a shared set of busy ids, and capacities are drawn for all servers at once
in numpy batches (so every policy sees the same capacity at the same server and
slot: common random numbers).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Generator, Iterator
from typing import Any

import simpy
from simpy.events import URGENT, Timeout

from ..measure.messages import Kind
from ..measure.recorder import Recorder
from .channels import Channel
from .dispatcher import Dispatcher
from .job import Job
from .server import Server


class SlottedServer(Server):
    """A FIFO server that completes up to its capacity per slot, when the slot clock says so.

    ``busy`` is the set of ids of servers with jobs, shared with the clock. With a
    ``capacity`` (a buffer), a job that finds ``capacity`` jobs is blocked.
    """

    discipline = "fifo"

    def __init__(self, env: simpy.Environment, id: int, speed: float, capacity: int | None,
                 recorder: Recorder, busy: set[int]) -> None:
        super().__init__(env, id, speed, capacity, recorder)
        self.queue: deque[Job] = deque()
        self.busy = busy

    def accept(self, job: Job) -> None:
        self._enter(job)
        if self.on_arrive is not None:
            self.on_arrive(self, job)

    def accept_all(self, jobs: list[Job]) -> None:
        """Accept a slot's jobs routed together, then run the hook once per job.

        The policy's server side judges the server once all of them are here: a
        server that has just received the whole batch is no longer below a
        threshold, whichever job of the batch the hook runs for.
        """
        for job in jobs:
            self._enter(job)
        if self.on_arrive is not None:
            for job in jobs:
                self.on_arrive(self, job)

    def _enter(self, job: Job) -> None:
        job.server = self.id
        if self.capacity is not None and self.length >= self.capacity:
            job.blocked = True
            self.recorder.block(job)
            return
        now = self.env._now
        job.at_server = now
        self.queue.append(job)
        self.length += 1
        self.recorder.enter(now)
        self.busy.add(self.id)
        if self.observer is not None:
            self.observer.arrive(self.length, now)

    def serve(self, capacity: int, same_slot: bool) -> None:
        """Complete up to ``capacity`` jobs of the slot that ends now, first come first served."""
        end = self.env._now
        start = end - 1.0
        queue = self.queue
        for _ in range(capacity):
            if not queue or (not same_slot and queue[0].at_server >= start):
                break
            job = queue.popleft()
            job.start = start
            self.length -= 1
            self.recorder.leave(job, end)
            if self.observer is not None:
                self.observer.depart(self.length, end)
            if self.on_depart is not None:
                self.leaving = job
                self.on_depart(self)
        if not queue:
            self.busy.discard(self.id)


class SlotDispatcher(Dispatcher):
    """A dispatcher that routes all of a slot's arrivals with one decision (``dispatch: slot``).

    The clock sets ``followers`` to the slot's other arrivals here and hands the
    first to the policy; wherever the policy sends it, the followers go with it,
    in one transfer of the whole batch.
    """

    def __init__(self, id: int, channel: Channel, servers: list[Any]) -> None:
        super().__init__(id, channel, servers)
        self.followers: list[Job] = []

    def send(self, job: Job, server: Any) -> None:
        jobs = [job, *self.followers]
        self.followers = []
        now = self.env._now
        for each in jobs:
            each.dispatched = now
            each.dispatcher = self.id
        self.channel.transfer_all(jobs, server)


class SlotChannel(Channel):
    """Slotted transport whose pull messages (idle tokens, reports) reach the decisions late.

    A pull message sent at time t (the service phase at the end of slot t - 1, or
    during slot t) is counted at once and delivered after the decisions of slot
    t + delay - 1, so the first decision that can use it is that of slot t + delay.
    """

    def __init__(self, env: simpy.Environment, recorder: Recorder, delay: int) -> None:
        super().__init__(env, recorder, None)
        self.delay = delay
        self.held: deque[tuple[int, Callable[..., Any], tuple[Any, ...]]] = deque()

    def send(self, kind: Kind, deliver: Callable[..., Any], *args: Any) -> None:
        if kind is Kind.IDLE or kind is Kind.REPORT:
            self.counts[kind] += 1
            self.held.append((int(self.env._now) + self.delay - 1, deliver, args))
        else:
            super().send(kind, deliver, *args)

    def release(self, slot: int) -> None:
        """Deliver what is due once the decisions of ``slot`` are made."""
        held = self.held
        while held and held[0][0] <= slot:
            _, deliver, args = held.popleft()
            deliver(*args)


class _Boundary(simpy.Event):
    """The end of the current slot, scheduled ahead of every other event due at that time."""

    def __init__(self, env: simpy.Environment) -> None:
        super().__init__(env)
        self._ok = True
        self._value = None
        env.schedule(self, URGENT, 1.0)


def clock(env: simpy.Environment, counts: Iterator[int], caps: Iterator[list[int]],
          servers: list[SlottedServer], busy: set[int], dispatchers: list[Dispatcher],
          split: Callable[[], float] | None, recorder: Recorder, same_slot: bool,
          bounds: list[float] | None = None) -> Generator[simpy.Event, Any, None]:
    """The slot clock process: arrivals of each slot, then its service phase (see the module docstring).

    With `SlotDispatcher` dispatchers (``dispatch: slot``) the slot's arrivals are
    first gathered per dispatcher, in arrival order; then each dispatcher, in the
    order of its first arrival, makes one decision for its batch (one decision per
    slot and dispatcher, as in the discrete-time models that route a slot's
    arrivals together).
    """
    job_id = 0
    single = dispatchers[0]
    first, end = recorder.warmup, recorder.warmup + recorder.jobs
    next_count = counts.__next__
    batch = isinstance(single, SlotDispatcher)
    release = single.channel.release if isinstance(single.channel, SlotChannel) else None
    batches: dict[Dispatcher, list[Job]] = {}  # batch: each dispatcher's arrivals of the slot
    while True:
        now = env._now
        for _ in range(next_count()):
            if job_id == first or job_id == end:
                recorder.edge()
            job = Job(job_id, now, 1.0, first <= job_id < end)
            job_id += 1
            if split is None:
                target = single
            elif bounds is None:
                target = dispatchers[int(split() * len(dispatchers))]
            else:  # unequal shares, as in continuous time
                target = dispatchers[bisect_right(bounds, split())]
            if batch:
                batches.setdefault(target, []).append(job)
            else:
                target.receive(job)
        if batches:
            for target, jobs in batches.items():
                target.followers = jobs[1:]  # type: ignore[attr-defined]
                target.receive(jobs[0])
            batches.clear()
        if release is not None:
            release(int(now))
        yield _Boundary(env)
        capacity = next(caps)
        for sid in sorted(busy):
            servers[sid].serve(capacity[sid], same_slot)
        # Timers due at this boundary were scheduled before this point: they run before
        # the next slot's arrivals.
        yield Timeout(env, 0.0)
