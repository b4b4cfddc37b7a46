"""build_model(): the one place where workload, dispatchers, channel, servers and policy are wired."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import simpy
from simpy.events import Timeout

from ..measure.occupancy import Occupancy, theory_mean
from ..measure.recorder import Recorder
from ..policies import BUILT_IN, REGISTRY
from ..policies.base import Policy
from ..scenario.schema import ResolvedPolicy, SlotConfig
from ..scenario.sweep import Point
from ..workload import arrivals, slots
from ..workload.speeds import draw_speeds
from ..workload.streams import Uniforms, generator
from . import guard, policing, slotted
from .channels import Channel
from .dispatcher import Dispatcher
from .failures import FailingFifoServer
from .job import Job
from .server import SERVERS, Server


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

    def run(self, progress: Callable[[int], None] | None = None) -> dict[str, float]:
        """Run until every measured job has left; return the metrics.

        ``progress``, if given, is called with the measured jobs finished so far,
        about every 5,000 arrivals' worth of simulated time. A run that stops
        advancing raises `emulator.errors.StalledRun` (`emulator.model.guard`).
        """
        recorder = self.recorder
        report = None if progress is None else (lambda: progress(recorder.finished))
        guard.run(self.env, recorder.done, self.watch, report, 5_000 / self.rate)
        return recorder.metrics()


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
        servers = [FailingFifoServer(env, i, speed, system.capacity, recorder,
                                     failures.up.law().sampler(generator(seed, f"up.{i}")),
                                     failures.down.law().sampler(generator(seed, f"down.{i}")),
                                     failures.on_down == "lose")
                   for i, speed in enumerate(speeds)]
    else:
        server_class = SERVERS[system.discipline]
        servers = [server_class(env, i, speed, system.capacity, recorder) for i, speed in enumerate(speeds)]
    if scenario.run.occupancy:
        recorder.occupancy = Occupancy(system.servers, 1.0 - point.load, theory_mean(scenario))
        for server in servers:
            server.observer = recorder.occupancy
    dispatcher_class = slotted.SlotDispatcher if system.time == "slotted" and slot.dispatch == "slot" else Dispatcher
    dispatchers = [dispatcher_class(i, channel, servers) for i in range(system.dispatchers)]
    watch = guard.Watch(env, recorder, system.servers, system.dispatchers, scenario.run.total_jobs,
                        rate, lambda kind, now: _suspect(point, kind, now))
    model = Model(env, recorder, channel, servers, dispatchers, Uniforms(generator(seed, "policy")), rate, watch)
    model.policy = REGISTRY[policy.name](model, policy.config)
    for dispatcher in dispatchers:
        dispatcher.policy = model.policy
    if policy.name not in BUILT_IN:  # the built-in policies are tested to send every job once
        policing.watch(dispatchers, channel, servers, policy.name)

    arrival = workload.arrivals
    split = Uniforms(generator(seed, "dispatchers")) if len(dispatchers) > 1 else None
    shares = system.dispatcher_shares
    # Unequal shares: the dispatcher whose cumulative share first exceeds the uniform draw.
    bounds = None if shares is None else [*accumulate(shares[:-1]), math.inf]
    if system.time == "slotted":
        counts = slots.arrival_counts(arrival.kind, rate, generator(seed, "arrivals"),
                                        **arrival.gap_options())
        mus = [speed / workload.service.mean for speed in speeds]
        caps = slots.capacities(workload.service.kind, mus, generator(seed, "capacities"))
        env.process(slotted.clock(env, counts, caps, servers, busy, dispatchers,  # type: ignore[arg-type]
                                  split, recorder, slot.same_slot, bounds))
        return model
    gaps = arrivals.gaps(arrival.kind, rate, generator(seed, "arrivals"), **arrival.gap_options())
    sizes: Iterator[float] = workload.service.law().sampler(generator(seed, "sizes"))
    if arrival.kind == "trace":
        trace_sizes = arrivals.read_trace(arrival.path)[1]  # type: ignore[arg-type]
        if trace_sizes is not None:
            sizes = iter(trace_sizes.tolist())
    env.process(_source(env, gaps, sizes, dispatchers, split, recorder, bounds))
    return model


def _source(env: simpy.Environment, gaps: Iterator[float], sizes: Iterator[float],
            dispatchers: list[Dispatcher], split: Uniforms | None,
            recorder: Recorder, bounds: list[float] | None = None) -> Generator[simpy.Event, Any, None]:
    """The arrival process: draws each job, then hands it to a random dispatcher.

    The dispatcher is uniform, or with ``bounds`` (cumulative shares, the last
    infinite) the first whose bound exceeds one uniform draw of the same stream.

    Arrivals stop once the window has closed and every measured job has reached its
    server (or was blocked). From then on no later job can change a measured job's
    response: a FIFO server serves later jobs after it, and a pool serves every job
    on its own; window metrics were fixed when it closed. So stopping changes no
    metric, and an unstable run (``allow_unstable``) ends once its backlog drains
    instead of admitting arrivals for as long as that takes.
    """
    job_id = 0
    single = dispatchers[0]
    next_size = sizes.__next__
    # With latency, measured jobs may still be on their way when the window closes: keep
    # those that may be, pruned from the left now and then. Without, a job sent is at its server.
    track = not dispatchers[0].channel.instant
    recent: deque[Job] = deque()
    # Jobs first .. end - 1 are measured; the arrivals of jobs first and end open and close
    # the measurement window.
    first, end = recorder.warmup, recorder.warmup + recorder.jobs
    for gap in gaps:
        if gap > 0.0:  # batch members (gap 0) arrive without another event
            yield Timeout(env, gap)
        if job_id >= end:
            if job_id == end:
                recorder.edge()
            if _all_arrived(recent if track else None, recorder.transfers, job_id):
                return
        elif job_id == first:
            recorder.edge()
        job = Job(job_id, env._now, next_size(), first <= job_id < end)  # _now: the property costs a call
        if track and job.measured:
            recent.append(job)
            if not job_id & 63:
                _all_arrived(recent, 0, 0)  # prunes
        job_id += 1
        if split is None:
            target = single
        elif bounds is None:
            target = dispatchers[split.randrange(len(dispatchers))]
        else:
            target = dispatchers[bisect_right(bounds, split.random())]
        target.receive(job)
    recorder.exhausted()


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
