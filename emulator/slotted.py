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
recorder calls as those of `emulator.server`, so the policies run unchanged.

Per slot the clock does O(arrivals + busy servers) Python work: the servers
keep a shared set of busy ids, and capacities are drawn for all servers at once
in numpy batches (so every policy sees the same capacity at the same server and
slot: common random numbers).
"""

from __future__ import annotations

import itertools
from bisect import bisect_right
from collections import deque
from collections.abc import Generator, Iterator
from fractions import Fraction
from typing import Any

import numpy as np
import simpy
from simpy.events import URGENT, Timeout

from .dispatcher import Dispatcher
from .job import Job
from .metrics import Recorder
from .server import Server
from .streams import BATCH, Uniforms

ROWS = 1024  # slots of capacities drawn per numpy batch


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
        job.server = self.id  # set even if blocked: with batch dispatch the slot's other arrivals follow it
        if self.capacity is not None and self.length >= self.capacity:
            self._block(job)
            return
        now = self.env._now
        job.at_server = now
        self.queue.append(job)
        self.length += 1
        self.recorder.enter(now)
        self.busy.add(self.id)
        if self.observer is not None:
            self.observer.arrive(self.length, now)
        if self.on_arrive is not None:
            self.on_arrive(self, job)

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
                self.on_depart(self)
        if not queue:
            self.busy.discard(self.id)


# -- random inputs per slot ---------------------------------------------------------------
def arrival_counts(kind: str, rate: float, rng: np.random.Generator, *, burstiness: float = 2.0,
                   switch_rate: float = 0.1, mean_batch: float = 2.0) -> Iterator[int]:
    """Arrivals per slot, an endless iterator, with mean ``rate`` (λN).

    Parameters
    ----------
    kind : str
        ``poisson``: Poisson(rate) per slot. ``batch_poisson``: a Poisson number of
        batches (mean rate/mean_batch) of geometric size (mean ``mean_batch``):
        variance rate (2 mean_batch - 1). ``mmpp2``: Poisson with mean b rate (high
        state) or rate/b (low); at each boundary the high state is left with
        probability (b+1) switch_rate and the low one with (b+1) switch_rate / b,
        so a fraction 1/(b+1) of slots is high, as in continuous time.
        ``deterministic``: floor((t+1) rate) - floor(t rate) in slot t (rate as a
        fraction with denominator at most 10^6), so the count by the end of slot t
        is floor((t+1) rate).

    Examples
    --------
    >>> list(itertools.islice(arrival_counts("deterministic", 1.5, np.random.default_rng(0)), 4))
    [1, 2, 1, 2]
    """
    if kind == "poisson":
        return itertools.chain.from_iterable(iter(lambda: rng.poisson(rate, BATCH).tolist(), None))
    if kind == "batch_poisson":
        return _batch_poisson(rng, rate, mean_batch)
    if kind == "mmpp2":
        return _mmpp2(rng, rate, burstiness, switch_rate)
    if kind == "deterministic":
        return _evenly(Fraction(rate).limit_denominator(1_000_000))
    raise ValueError(f"arrivals '{kind}' have no slotted form")


def _evenly(rate: Fraction) -> Iterator[int]:
    p, q = rate.numerator, rate.denominator
    for t in itertools.count():
        yield (t + 1) * p // q - t * p // q


def _batch_poisson(rng: np.random.Generator, rate: float, mean_batch: float) -> Iterator[int]:
    while True:
        batches = rng.poisson(rate / mean_batch, BATCH)
        sizes = rng.geometric(1.0 / mean_batch, int(batches.sum()))
        slot = np.repeat(np.arange(BATCH), batches)
        yield from np.bincount(slot, weights=sizes, minlength=BATCH).astype(np.int64).tolist()


def _mmpp2(rng: np.random.Generator, rate: float, b: float, cycles: float) -> Iterator[int]:
    leave = ((b + 1.0) * cycles, (b + 1.0) * cycles / b)  # per-slot exit probabilities, high and low
    means = (b * rate, rate / b)
    state = 0 if rng.random() < 1.0 / (b + 1.0) else 1  # start in the stationary law
    while True:
        states = np.empty(BATCH, dtype=np.int64)
        for i, u in enumerate(rng.random(BATCH).tolist()):
            states[i] = state
            if u < leave[state]:
                state = 1 - state
        yield from rng.poisson(np.take(means, states)).tolist()


def capacities(kind: str, mus: list[float], rng: np.random.Generator) -> Iterator[list[int]]:
    """Each slot's service capacities, one per server: constant (``deterministic``) or Poisson(μ_i).

    Drawn for every server in every slot, busy or not, so that the capacity at a
    given server and slot does not depend on the policy.
    """
    if kind == "deterministic":
        return itertools.repeat([round(mu) for mu in mus])
    rates = np.asarray(mus)
    return itertools.chain.from_iterable(
        iter(lambda: rng.poisson(rates, (ROWS, len(mus))).tolist(), None))


class _Boundary(simpy.Event):
    """The end of the current slot, scheduled ahead of every other event due at that time."""

    def __init__(self, env: simpy.Environment) -> None:
        super().__init__(env)
        self._ok = True
        self._value = None
        env.schedule(self, URGENT, 1.0)


def clock(env: simpy.Environment, counts: Iterator[int], caps: Iterator[list[int]],
          servers: list[SlottedServer], busy: set[int], dispatchers: list[Dispatcher],
          split: Uniforms | None, recorder: Recorder, same_slot: bool,
          batch: bool = False, bounds: list[float] | None = None) -> Generator[simpy.Event, Any, None]:
    """The slot clock process: arrivals of each slot, then its service phase (see the module docstring).

    With ``batch``, only the first arrival of the slot at each dispatcher goes
    through the policy; the others follow it to the same server (one decision per
    slot and dispatcher, as in the discrete-time models that route a slot's
    arrivals together).
    """
    job_id = 0
    single = dispatchers[0]
    first, end = recorder.warmup, recorder.warmup + recorder.jobs
    next_count = counts.__next__
    leader: dict[int, Job] = {}  # batch: each dispatcher's first job of the slot
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
                target = dispatchers[split.randrange(len(dispatchers))]
            else:  # unequal shares, as in continuous time
                target = dispatchers[bisect_right(bounds, split.random())]
            if batch:
                head = leader.get(target.id)
                if head is not None:
                    target.send(job, servers[head.server])
                    continue
                leader[target.id] = job
            target.receive(job)
        leader.clear()
        yield _Boundary(env)
        capacity = next(caps)
        for sid in sorted(busy):
            servers[sid].serve(capacity[sid], same_slot)
        # Timers due at this boundary were scheduled before this point: they run before
        # the next slot's arrivals.
        yield Timeout(env, 0.0)
