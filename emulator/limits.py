"""Bounds on valid-looking input that would hang, exhaust memory or give a meaningless run.

Each bound says what goes wrong beyond it, relative to what sets the scale: the
mean service time, the mean inter-arrival gap or the run length. `check_size`
needs the scenario only; `check_point` needs the resolved load and arrival rate.
Both raise `ScenarioError` naming the dotted key.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .arrivals import gaps
from .errors import ScenarioError

if TYPE_CHECKING:
    from .config import ResolvedPolicy, Scenario

MAX_SERVERS = 1_000_000
"""Servers per replication: each is a SimPy process and a few objects (about 1 kB)."""
TIME_RANGE = (1e-100, 1e100)
"""Mean service time, in the scenario's time unit: far from where float sums and squares overflow."""
RARE_JOBS = 10
"""Jobs that a run must expect from a hyperexponential law's rare phase, for the law to be sampled at all."""
BATCHES = 10
"""Batches a run must expect at least: a batch is at most a tenth of the run's jobs on average."""
MAX_IN_SERVICE = 1_000_000
"""Jobs in service at once in server pools, on average: each holds memory (a job and its timer)."""
SWITCHES_PER_GAP = 100
"""MMPP-2 high/low cycles per mean inter-arrival gap, at most: faster is Poisson, at 200 draws per job."""
UPDATE_MESSAGES_PER_JOB = 1000
"""JBT-d threshold-update messages (N + 2d per period) per arriving job, at most."""
DEFAULT_SWITCH_RATE = inspect.signature(gaps).parameters["switch_rate"].default
OBLIVIOUS = {"random": "sends each server 1/N of the arrivals",
             "round_robin": "sends each server every N-th arrival"}
"""Policies whose arrival share at a server ignores its speed: unstable where that share exceeds it."""
SAMPLING = ("sqd", "threshold")
"""Policies that send every job to one of d servers sampled uniformly: a set S of servers receives at least
the jobs whose whole sample falls in S, whatever the queue lengths."""


def check_size(scenario: Scenario) -> None:
    """Bounds that need only the scenario's own numbers."""
    system, workload, run = scenario.system, scenario.workload, scenario.run
    if system.servers > MAX_SERVERS:
        raise ScenarioError(f"system.servers: expected at most {MAX_SERVERS:,} (each server holds memory "
                            f"and a process), got {system.servers}")
    low, high = TIME_RANGE
    mean = workload.service.mean
    if not low <= mean <= high:
        raise ScenarioError(f"workload.service.mean: expected a mean service time between {low:g} and {high:g} "
                            f"(choose the time unit so; sums of times overflow beyond), got {mean:g}")
    if isinstance(system.speeds, tuple):
        for i, speed in enumerate(system.speeds):
            if not low <= mean / speed <= high:
                raise ScenarioError(f"system.speeds.{i}: expected a speed giving a mean service time (service "
                                    f"mean / speed) between {low:g} and {high:g}, got {speed:g}")
    elif system.speeds is not None and not low <= mean / system.speeds.mean <= high:  # a law: its mean speed
        raise ScenarioError(f"system.speeds.mean: expected a mean speed giving a mean service time (service "
                            f"mean / speed) between {low:g} and {high:g}, got {system.speeds.mean:g}")
    for key, law in (("workload.service", workload.service), ("network.latency", scenario.network.latency),
                     ("system.speeds", system.speeds)):
        _check_rare_phase(key, law, run.jobs)
    arrivals = workload.arrivals
    if arrivals.kind == "trace" and not isinstance(system.speeds, (tuple, type(None))):
        raise ScenarioError("system.speeds: expected a list of speeds with trace arrivals (a law's draws "
                            "would change the load of the trace from one replication to the next)")
    total = run.warmup_jobs + run.jobs
    if arrivals.kind == "batch_poisson" and (arrivals.mean_batch or 2.0) > total / BATCHES:
        raise ScenarioError(f"workload.arrivals.mean_batch: expected at most (run.warmup_jobs + run.jobs) / "
                            f"{BATCHES} = {total / BATCHES:g}, so that a run holds about {BATCHES} batches or "
                            f"more, got {arrivals.mean_batch or 2.0:g}")


def _check_rare_phase(key: str, law: object, jobs: int) -> None:
    """A hyperexponential law's rare phase must show up about `RARE_JOBS` times in ``jobs`` draws.

    The balanced-means fit takes its long phase with probability
    p = (1 - sqrt((c2 - 1) / (c2 + 1))) / 2, about 1 / (2 c2): with fewer than a
    few such draws in a run, the run samples a different law (for scv 1e16, p
    rounds to 0 and the draw divides by zero).
    """
    from .config import LawConfig

    if not isinstance(law, LawConfig) or law.kind != "hyperexponential" or law.scv is None:
        return
    p = RARE_JOBS / jobs
    if p >= 0.5:
        largest = 1.0
    else:
        q = (1.0 - 2.0 * p) ** 2  # solve (c2 - 1) / (c2 + 1) = (1 - 2p)^2
        largest = (1.0 + q) / (1.0 - q)
    if law.scv > largest:
        raise ScenarioError(f"{key}.scv: expected at most {largest:.4g} with run.jobs={jobs} (the rare phase, "
                            f"probability about 1/(2 scv), must occur about {RARE_JOBS} times in a run), "
                            f"got {law.scv:g}")


def check_point(scenario: Scenario, load: float, rate: float, policies: Sequence[ResolvedPolicy]) -> None:
    """Bounds relative to the arrival ``rate`` and the run's length at one sweep point."""
    system, workload, run = scenario.system, scenario.workload, scenario.run
    mean = workload.service.mean
    gap = 1.0 / rate
    length = (run.warmup_jobs + run.jobs) * gap  # the run's expected length in time units
    if system.discipline == "pool":
        busy = rate * mean if system.capacity is None else min(rate * mean, system.servers * system.capacity)
        if busy > MAX_IN_SERVICE:
            raise ScenarioError(
                f"workload.load: expected at most {MAX_IN_SERVICE:,} jobs in service at once in the pools on "
                f"average (each holds memory), load x total speed = {busy:.4g} with load {load:g}")
    latency = scenario.network.latency.mean
    if latency > length:
        raise ScenarioError(
            f"network.latency.mean: expected at most the run's length, (run.warmup_jobs + run.jobs) / "
            f"arrival rate = {length:.4g} (every job would still be in flight when it ends), got {latency:g}")
    arrivals = workload.arrivals
    switch_rate = arrivals.gap_options().get("switch_rate", DEFAULT_SWITCH_RATE)
    if arrivals.kind == "mmpp2" and switch_rate > SWITCHES_PER_GAP * rate:
        raise ScenarioError(
            f"workload.arrivals.switch_rate: expected at most {SWITCHES_PER_GAP} cycles per mean inter-arrival "
            f"gap, {SWITCHES_PER_GAP} x arrival rate = {SWITCHES_PER_GAP * rate:.4g} (faster switching is "
            f"Poisson arrivals at great cost), got {switch_rate:g}"
            + ("" if arrivals.switch_rate is not None else " (the default)"))
    for i, policy in enumerate(policies):
        if policy.name == "jbt":
            messages = system.servers + 2 * policy.params["d"]
            shortest = messages * gap / UPDATE_MESSAGES_PER_JOB
            if policy.params["period"] < shortest:
                raise ScenarioError(
                    f"policies.{i}.period: expected at least {shortest:.4g}, where each update's N + 2d = "
                    f"{messages} messages come to {UPDATE_MESSAGES_PER_JOB:,} per arriving job (mean gap "
                    f"{gap:.4g}), got {policy.params['period']:g}")
    if isinstance(system.speeds, tuple) and can_be_unstable(scenario):
        for policy in policies:
            check_oblivious(policy, system.speeds, rate, mean)


def can_be_unstable(scenario: Scenario) -> bool:
    """Whether an overloaded server makes a run unstable: FIFO queues without capacity, not allowed."""
    system = scenario.system
    return system.discipline == "fifo" and system.capacity is None and not scenario.allow_unstable


def check_oblivious(policy: ResolvedPolicy, speeds: Sequence[float], rate: float, mean: float,
                    drawn: str = "") -> None:
    """Refuse a policy that provably gives some servers more work than their speeds can serve.

    Random and round-robin routing send server i rate/N jobs per unit time, each
    needing mean/speed_i of service: server i is unstable when rate/N * mean >=
    speed_i, whatever the others do. SQ(d) and the threshold policy send a job to
    one of its d uniformly sampled servers, so a set S of k servers receives at
    least rate * P(all d samples in S) jobs per unit time, P = C(k, d)/C(N, d)
    (or (k/N)^d with replacement); S is unstable when that work reaches the sum
    of its speeds, and the k slowest servers are the set most likely to be.
    Policies that look for idle or short queues first (JSQ, JIQ, JBT-d) are not
    refused: how much they send to a slow server depends on the state. ``drawn``
    says where drawn speeds come from.
    """
    if policy.name in OBLIVIOUS:
        share = rate / len(speeds) * mean  # work per unit time sent to each server
        slow = [i for i, speed in enumerate(speeds) if speed <= share]
        if slow:
            listed = ", ".join(f"{i} (speed {speeds[i]:.3g})" for i in slow[:5])
            listed += f" and {len(slow) - 5} more" if len(slow) > 5 else ""
            raise ScenarioError(
                f"system.speeds{drawn}: {policy.label} {OBLIVIOUS[policy.name]}, {share:.4g} units of work per "
                f"unit time, which overloads server(s) {listed}; expected a speed-aware policy, a lower load "
                f"or allow_unstable: true")
    elif policy.name in SAMPLING:
        slowest = _overloaded_slowest(speeds, rate * mean, policy.params["d"], policy.params["replace"])
        if slowest:
            listed = ", ".join(str(i) for i in slowest[:10]) + (" ..." if len(slowest) > 10 else "")
            raise ScenarioError(
                f"system.speeds{drawn}: {policy.label} sends every job whose {policy.params['d']} sampled servers "
                f"are all among the {len(slowest)} slowest (servers {listed}) to one of them, more work than "
                f"their speeds sum to; expected a speed-aware policy, a lower load or allow_unstable: true")


def _overloaded_slowest(speeds: Sequence[float], work: float, d: int, replace: bool) -> list[int]:
    """The smallest set of the k slowest servers that the samples of d alone overload (empty if none)."""
    import numpy as np
    from scipy.special import gammaln

    n = len(speeds)
    order = np.argsort(speeds, kind="stable")
    capacity = np.cumsum(np.asarray(speeds, dtype=float)[order])  # of the k slowest, k = 1..N
    k = np.arange(1, n + 1, dtype=float)
    if replace:
        probability = (k / n) ** d
    else:  # C(k, d) / C(N, d), zero for k < d
        inside = k >= d
        probability = np.zeros(n)
        probability[inside] = np.exp(gammaln(k[inside] + 1) - gammaln(k[inside] - d + 1)
                                     - gammaln(n + 1) + gammaln(n - d + 1))
    overloaded = np.nonzero(work * probability >= capacity * (1 + 1e-12))[0]
    return [] if overloaded.size == 0 else sorted(order[: overloaded[0] + 1].tolist())
