"""build_model(): the one place where workload, dispatchers, channel, servers and policy are wired."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from heapq import heappush
from itertools import accumulate

import simpy
from simpy.events import NORMAL, URGENT

from ..measure.occupancy import Occupancy, theory_mean
from ..measure.recorder import Recorder
from ..measure.result import RunResult
from ..policies import BUILT_IN, REGISTRY
from ..policies.base import Policy
from ..scenario.schema import ResolvedPolicy, SlotConfig
from ..scenario.sweep import Point
from ..workload import slots
from ..workload.blocks import arrival_gaps, dispatcher_split, job_sizes, slot_arrivals
from ..workload.failures import periods
from ..workload.speeds import draw_speeds
from ..workload.streams import Uniforms, generator, values
from . import guard, policing, slotted
from .channels import Channel
from .copies import Copier, CopyServer
from .dispatcher import Dispatcher, dispatcher_for
from .failures import FailingFifoServer
from .job import Job
from .server import SERVERS, Alarm, Server


@dataclass
class Model:
    """A wired model of one replication, ready to run."""

    env: simpy.Environment
    recorder: Recorder
    channel: Channel
    servers: list[Server]
    dispatchers: list[Dispatcher]
    uniforms: Uniforms  # the policy stream
    rate: float  # arrival rate
    watch: guard.Watch
    policy: Policy | None = None
    copier: Copier | None = None  # makes a job's copies, for a policy that sends several (redundancy)
    aside: guard.Aside | None = None  # the next arrival, held beside SimPy's queue while `record` runs

    def record(self, progress: Callable[[int], None] | None = None) -> RunResult:
        """Run until every measured job has left; return the measurements (`RunResult`).

        ``progress``, if given, is called with the measured jobs finished so far,
        about every 5,000 arrivals' worth of simulated time. A run that stops
        advancing raises `emulator.errors.StalledRun` (`emulator.model.guard`).
        """
        recorder = self.recorder
        report = None if progress is None else (lambda: progress(recorder.finished))
        guard.run(self.env, recorder.done, self.watch, report, 5_000 / self.rate, self.aside)
        return recorder.result()

    def run(self, progress: Callable[[int], None] | None = None) -> dict[str, float]:
        """`record`, and the row's metrics."""
        return self.record(progress).metrics()


def build_model(point: Point, policy: ResolvedPolicy, seed: int) -> Model:
    """Wire one replication of ``policy`` at ``point`` with replication seed ``seed``."""
    scenario = point.scenario
    system, workload = scenario.system, scenario.workload
    env = simpy.Environment()
    recorder = Recorder(env, system.servers, scenario.run.fixed_warmup, scenario.run.jobs)
    network = scenario.network
    latency = network.latency
    slot = system.slot or SlotConfig()
    # No loss, no draw: the loss stream exists only when messages can be lost.
    draws = Uniforms(generator(seed, "loss")).random if network.loss > 0 else None
    channel: Channel
    if system.time == "slotted" and slot.pull_delay:
        channel = slotted.SlotChannel(env, recorder, slot.pull_delay)  # no loss: refused in slotted time
    else:
        channel = Channel(env, recorder, None if latency.mean == 0
                          else latency.law().sampler(generator(seed, "network")),
                          network.loss, draws, network.timeout, system.failures is not None)
    speeds, rate = draw_speeds(point, policy, seed)
    busy: set[int] = set()  # slotted time: the ids of servers with jobs, shared with the slot clock
    servers: list[Server]
    if system.time == "slotted":
        servers = [slotted.SlottedServer(env, i, speed, system.capacity, recorder, busy)
                   for i, speed in enumerate(speeds)]
    elif system.failures is not None:  # FIFO in continuous time: the schema refuses the rest
        failures = system.failures
        servers = [FailingFifoServer(env, i, speed, system.capacity, recorder, *periods(failures, seed, i),
                                     failures.on_down == "lose")
                   for i, speed in enumerate(speeds)]
    else:
        copies = getattr(REGISTRY[policy.name], "copies", False)  # its servers may cancel a job's copies
        server_class = CopyServer if copies else SERVERS[system.discipline]
        servers = [server_class(env, i, speed, system.capacity, recorder) for i, speed in enumerate(speeds)]
    if scenario.run.occupancy:
        recorder.occupancy = Occupancy(system.servers, 1.0 - point.load, theory_mean(scenario))
        for server in servers:
            server.observer = recorder.occupancy
    slot_dispatch = system.time == "slotted" and slot.dispatch == "slot"
    dispatcher_class = slotted.SlotDispatcher if slot_dispatch else dispatcher_for(channel)
    dispatchers = [dispatcher_class(i, channel, servers) for i in range(system.dispatchers)]
    watch = guard.Watch(env, recorder, system.servers, system.dispatchers, scenario.run.total_jobs,
                        rate, lambda kind, now: _suspect(point, kind, now))
    model = Model(env, recorder, channel, servers, dispatchers, Uniforms(generator(seed, "policy")), rate, watch)
    if getattr(REGISTRY[policy.name], "copies", False):  # extra copies' sizes: a stream of their own
        model.copier = Copier(recorder, workload.service.law().sampler(generator(seed, "copies")).__next__)
    model.policy = REGISTRY[policy.name](model, policy.config)
    for dispatcher in dispatchers:
        dispatcher.follow(model.policy)
    if policy.name not in BUILT_IN:  # the built-in policies are tested to send every job once
        policing.watch(dispatchers, channel, servers, policy.name)

    arrival = workload.arrivals
    split = values(dispatcher_split(seed)).__next__ if len(dispatchers) > 1 else None
    shares = system.dispatcher_shares
    # Unequal shares: the dispatcher whose cumulative share first exceeds the uniform draw.
    bounds = None if shares is None else [*accumulate(shares[:-1]), math.inf]
    if system.time == "slotted":
        counts = slot_arrivals(arrival, rate, seed)
        mus = [speed / workload.service.mean for speed in speeds]
        caps = slots.capacities(workload.service.kind, mus, generator(seed, "capacities"))
        env.process(slotted.clock(env, counts, caps, servers, busy, dispatchers,  # type: ignore[arg-type]
                                  split, recorder, slot.same_slot, bounds))
        return model
    source = BatchSource if model.policy.whole_batches else Source
    model.aside = source(env, values(arrival_gaps(arrival, rate, seed)), values(job_sizes(workload, seed)),
                         dispatchers, split, recorder, bounds).aside
    return model


new_object = object.__new__  # a bare instance of a class, no `__init__` (see `Source._arrive`)


class Source:
    """The arrival process: draws each job, then hands it to a random dispatcher.

    The dispatcher is uniform, or with ``bounds`` (cumulative shares, the last
    infinite) the first whose bound exceeds one uniform draw of the same stream
    (``split``: its next uniform).

    Arrivals stop once the window has closed and every measured job has reached its
    server (or was blocked). From then on no later job can change a measured job's
    response: a FIFO server serves later jobs after it, and a pool serves every job
    on its own; window metrics were fixed when it closed. So stopping changes no
    metric, and an unstable run (``allow_unstable``) ends once its backlog drains
    instead of admitting arrivals for as long as that takes.

    Each arrival is the callback of one `Alarm`, scheduled a gap after the last, in the
    order a SimPy process waiting on a timeout per gap would see; it starts as a process
    would, with an urgent event at time 0 (`simpy.events.Initialize`). While the run loop
    holds ``aside`` (`guard.Aside`), the next arrival waits there rather than in SimPy's queue.
    """

    def __init__(self, env: simpy.Environment, gaps: Iterator[float], sizes: Iterator[float],
                 dispatchers: list[Dispatcher], split: Callable[[], float] | None,
                 recorder: Recorder, bounds: list[float] | None = None) -> None:
        self.env = env
        self.gaps = gaps
        self.sizes = sizes  # read with `next` (a specialised call) rather than through a bound `__next__`
        self.dispatchers = dispatchers
        self.split = split
        self.single = dispatchers[0] if split is None else None  # the dispatcher of every job, if one
        self.recorder = recorder
        self.bounds = bounds
        self.job_id = 0  # the next job's
        # With latency, measured jobs may still be on their way when the window closes: keep
        # those that may be, pruned from the left now and then. Without, a job sent is at its server.
        self.track = not dispatchers[0].channel.instant
        self.recent: deque[Job] = deque()
        # Jobs first .. end - 1 are measured; the arrivals of jobs first and end open and close
        # the measurement window.
        self.first, self.end = recorder.warmup, recorder.warmup + recorder.jobs
        # The next job whose arrival is more than a job's (`_passes`): first, then end and each after it.
        # One comparison per job rather than two.
        self.mark = self.first
        self.measuring = False  # first <= the next job's id < end
        self.tracking = False  # track and measuring: the next job goes into `recent`
        self.alarm = Alarm(env, self._arrive)
        self.aside = guard.Aside(self.alarm, self._arrive)
        Alarm(env, self._start).after(0.0, URGENT)

    def draw(self) -> Dispatcher:
        """The dispatcher of the next job, of several: the next ``split`` uniform, over equal shares or
        ``bounds``."""
        assert self.split is not None
        if self.bounds is None:
            return self.dispatchers[int(self.split() * len(self.dispatchers))]
        return self.dispatchers[bisect_right(self.bounds, self.split())]

    def _start(self, _event: simpy.Event) -> None:
        """Wait for the first gap (a first job with none arrives at once)."""
        gap = next(self.gaps, None)
        if gap is None:
            self.recorder.exhausted()
        elif gap > 0.0:
            self.alarm.after(gap)
        else:
            self._arrive(_event)

    def _arrive(self, _event: simpy.Event) -> None:
        """The next job arrives now, and each after it with no gap (a batch); then wait for the next gap.

        One method, all of it, since it runs per job; the loop stops early once arrivals
        have stopped (see the class).
        """
        # (One assignment each: four names assigned at once build and unpack a tuple.)
        env = self.env
        gaps = self.gaps
        sizes = self.sizes
        job_id = self.job_id
        while True:
            if job_id >= self.mark and self._passes(job_id):
                return
            # `Job.__init__`, written out: a class call runs its `__init__` from C in a frame of its
            # own, which costs SQ(2) at N = 100 about 3% of its CPU. The same fields, in its order
            # (tests/test_hot_path.py compares them).
            job = new_object(Job)
            job.id = job_id
            job.arrival = env._now  # _now: no property call
            job.size = next(sizes)
            job.measured = self.measuring
            job.via_list = job.blocked = False
            if self.tracking:
                self.recent.append(job)
                if not job_id & 63:
                    _all_arrived(self.recent, 0, 0)  # prunes
            job_id += 1
            self.job_id = job_id
            # (One dispatcher: no call per job to choose it, and a test of None rather than of its truth.)
            # (Read, then called: `receive` is an instance's attribute, read by a specialised instruction.)
            dispatcher = self.single
            if dispatcher is None:
                dispatcher = self.draw()
            receive = dispatcher.receive
            receive(job)
            gap = next(gaps, None)
            if gap is None:
                self.recorder.exhausted()
                return
            if gap > 0.0:
                # `Alarm.after`, inlined (one call fewer per job), beside the queue while held. There
                # the run loop calls the callback itself and leaves the alarm's callbacks as they are.
                alarm, aside = self.alarm, self.aside
                entry = (env._now + gap, NORMAL, next(env._eid), alarm)
                if aside.held:
                    aside.due = entry
                else:
                    alarm.callbacks = alarm._then  # type: ignore[assignment]
                    heappush(env._queue, entry)
                return

    def _passes(self, job_id: int) -> bool:
        """Job ``job_id``, at `mark`, opens or closes the window or comes after it: whether arrivals stop here."""
        recorder = self.recorder
        if job_id < self.end:  # the first measured job
            recorder.edge()
            self.measuring = True
            self.tracking = self.track
            self.mark = self.end
            return False
        self.measuring = self.tracking = False
        if job_id == self.end:
            recorder.edge()
        return _all_arrived(self.recent if self.track else None, recorder.transfers, job_id)


class BatchSource(Source):
    """`Source`, with the jobs that arrive together (gap 0) handed over as one batch.

    The batch's jobs are drawn first (sizes in order, the window's edges at the same
    jobs), then go to one dispatcher, with one split draw per batch; each carries
    ``batch``, their number, and they reach the dispatcher one after the other in
    this step. Arrivals stop (see `Source`) only between batches, so a policy always
    sees whole batches; the jobs after the window that this adds change no metric.
    """

    def _arrive(self, _event: simpy.Event) -> None:
        """The batch that starts now: its jobs, its dispatcher; then wait for the next gap."""
        recorder, first, end, track = self.recorder, self.first, self.end, self.track
        if self.job_id >= end and _all_arrived(self.recent if track else None, recorder.transfers, self.job_id):
            if self.job_id == end:
                recorder.edge()
            return
        jobs: list[Job] = []
        more = True
        while more:
            job_id = self.job_id
            if job_id == first or job_id == end:
                recorder.edge()
            job = Job(job_id, self.env._now, next(self.sizes), first <= job_id < end)
            if track and job.measured:
                self.recent.append(job)
                if not job_id & 63:
                    _all_arrived(self.recent, 0, 0)  # prunes
            self.job_id = job_id + 1
            jobs.append(job)
            gap = next(self.gaps, None)
            if gap is not None and gap > 0.0:
                self.alarm.after(gap)
            more = gap == 0.0
        self._hand_over(jobs)
        if gap is None:  # as `Source`: the last job is handed over, then the arrivals end
            recorder.exhausted()

    def _hand_over(self, jobs: list[Job]) -> None:
        """Send the batch to one dispatcher, drawn as `Source` draws one per job."""
        target = self.dispatchers[0] if self.split is None else self.draw()
        for job in jobs:
            job.batch = len(jobs)
            target.receive(job)


def _all_arrived(recent: deque[Job] | None, transfers: int, created: int) -> bool:
    """Whether every measured job has reached its server (or was blocked).

    ``recent``: the measured jobs that may be on their way, pruned here; None when
    messages are instant, and then every job sent so far (``transfers``) is at its
    server, so all are when all ``created`` jobs were sent.
    """
    if recent is None:
        return transfers == created
    while recent and (recent[0].blocked or hasattr(recent[0], "server")):  # `server` is set at the server
        recent.popleft()
    return not recent


def _suspect(point: Point, kind: str, now: float) -> str:
    """The scenario key most likely behind a stalled run (`guard.Watch`), as a phrase; "" if none stands out.

    Failure cycles much faster than the arrivals (when no job moves); else the
    longest time the scenario names, when it is far beyond the gap between arrivals
    (the clock stands at such a time, or the measured jobs wait for it).
    """
    scenario = point.scenario
    gap = 1.0 / point.rate  # mean time between arrivals
    failures = scenario.system.failures
    if kind == "idle" and failures is not None and failures.up.mean + failures.down.mean < 1e-3 * gap:
        return (f"system.failures.up.mean and .down.mean ({failures.up.mean:g} and {failures.down.mean:g}: "
                f"many up/down cycles per arrival, {gap:g} apart)")
    times = {"network.timeout": scenario.network.timeout, "network.latency.mean": scenario.network.latency.mean,
             "workload.service.mean": scenario.workload.service.mean}
    if failures is not None:
        times.update({"system.failures.up.mean": failures.up.mean, "system.failures.down.mean": failures.down.mean})
    key, value = max(((k, v) for k, v in times.items() if v is not None), key=lambda item: item[1])
    return f"{key} ({value:g})" if value > 1e6 * gap else ""
