"""build_model(): the one place where workload, dispatchers, channel, servers and policy are wired."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any

import simpy
from simpy.events import Timeout

from . import arrivals
from .channels import Channel
from .config import Point, ResolvedPolicy
from .dispatcher import Dispatcher
from .job import Job
from .metrics import Recorder
from .occupancy import Occupancy
from .policies import REGISTRY
from .policies.base import Policy
from .server import SERVERS, Server
from .streams import Uniforms, generator


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
    policy: Policy | None = None

    def run(self, progress: Callable[[int], None] | None = None) -> dict[str, float]:
        """Run until every measured job has left; return the metrics.

        ``progress``, if given, is called with the measured jobs finished so far,
        about every 5,000 arrivals' worth of simulated time.
        """
        recorder, env = self.recorder, self.env
        if progress is None:
            env.run(until=recorder.done)
        else:
            step = 5_000 / self.rate
            while not recorder.done.triggered:
                env.run(until=env.now + step)
                progress(recorder.finished)
        return recorder.metrics()


def build_model(point: Point, policy: ResolvedPolicy, seed: int) -> Model:
    """Wire one replication of ``policy`` at ``point`` with replication seed ``seed``."""
    scenario = point.scenario
    system, workload = scenario.system, scenario.workload
    env = simpy.Environment()
    recorder = Recorder(env, system.servers, scenario.run.warmup_jobs, scenario.run.jobs)
    latency = scenario.network.latency
    channel = Channel(env, recorder, None if latency.mean == 0
                      else latency.law().sampler(generator(seed, "network")))
    speeds = system.speeds or (1.0,) * system.servers
    server_class = SERVERS[system.discipline]
    servers = [server_class(env, i, speed, system.capacity, recorder) for i, speed in enumerate(speeds)]
    if scenario.run.occupancy:
        recorder.occupancy = Occupancy(system.servers, 1.0 - point.load)
        for server in servers:
            server.observer = recorder.occupancy
    dispatchers = [Dispatcher(i, channel, servers) for i in range(system.dispatchers)]
    model = Model(env, recorder, channel, servers, dispatchers, Uniforms(generator(seed, "policy")),
                  point.rate)
    model.policy = REGISTRY[policy.name](model, policy.params)
    for dispatcher in dispatchers:
        dispatcher.policy = model.policy

    arrival = workload.arrivals
    gaps = arrivals.gaps(arrival.kind, point.rate, generator(seed, "arrivals"), **arrival.gap_options())
    sizes: Iterator[float] = workload.service.law().sampler(generator(seed, "sizes"))
    if arrival.kind == "trace":
        trace_sizes = arrivals.read_trace(arrival.path)[1]  # type: ignore[arg-type]
        if trace_sizes is not None:
            sizes = iter(trace_sizes.tolist())
    split = Uniforms(generator(seed, "dispatchers")) if len(dispatchers) > 1 else None
    env.process(_source(env, gaps, sizes, dispatchers, split, recorder))
    return model


def _source(env: simpy.Environment, gaps: Iterator[float], sizes: Iterator[float],
            dispatchers: list[Dispatcher], split: Uniforms | None,
            recorder: Recorder) -> Generator[simpy.Event, Any, None]:
    """The arrival process: draws each job, then hands it to a uniformly random dispatcher."""
    job_id = 0
    single = dispatchers[0]
    next_size = sizes.__next__
    # Jobs first .. end - 1 are measured; the arrivals of jobs first and end open and close
    # the measurement window.
    first, end = recorder.warmup, recorder.warmup + recorder.jobs
    for gap in gaps:
        if gap > 0.0:  # batch members (gap 0) arrive without another event
            yield Timeout(env, gap)
        if job_id == first or job_id == end:
            recorder.edge()
        job = Job(job_id, env._now, next_size(), first <= job_id < end)  # _now: the property costs a call
        job_id += 1
        target = single if split is None else dispatchers[split.randrange(len(dispatchers))]
        target.receive(job)
    recorder.exhausted()
