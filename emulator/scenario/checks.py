"""Bounds on valid-looking input that would hang, exhaust memory or give a meaningless run.

Each bound says what goes wrong beyond it, relative to what sets the scale: the
mean service time, the mean inter-arrival gap or the run length. `check_size`
needs the scenario only; `check_point` needs the resolved load and arrival rate.
Both raise `ScenarioError` naming the dotted key.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

from ..errors import ScenarioError
from ..policies import REGISTRY
from ..workload.arrivals import gaps, read_trace
from ..workload.slots import DENOMINATOR, ROWS
from .schema import FailuresConfig, LawConfig, ResolvedPolicy, SystemConfig

if TYPE_CHECKING:
    from .schema import ScenarioSchema as Scenario

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
MAX_RUN_LENGTH = 1e12
"""A continuous-time run's length, in mean service times of the fastest server, at most: arrival times up to
that are resolved to 1e12 x 2.2e-16, about 2e-4 of a service time; beyond, service times drown in their rounding."""
MAX_SLOTS = 4_000_000
"""Slots a slotted run may take: the clock does Python work in every slot, 2.4 to 4.4 us even in an empty one
(3.8 million empty slots: 9.4 s on one core)."""
MAX_CAPACITY_DRAWS = 20_000_000
"""Poisson capacities a slotted run may draw, one per server and slot, `slots.ROWS` slots at a time: 0.1 to
0.3 us and about 20 bytes each while a batch is held (N = 19,000: 7 s and 430 MB for one batch)."""
MIN_WINDOW_SLOTS = 5
"""Slots the measurement window of a slotted run spans at least, run.jobs / λN: a window within one slot has no
length (sim_time 0, and no time averages), and a short one measures pull messages and time averages to about a
slot's arrivals, 1 / (window slots) of its jobs."""
MAX_POISSON_MEAN = 1e18
"""Mean of a Poisson count per slot (a capacity), at most: numpy refuses means above about 9.2e18."""
FAILURE_EVENTS_PER_JOB = 1000
"""Failures and recoveries per arriving job, at most: 2N per up/down cycle of the N servers, each a SimPy event."""
FAILURE_DRAWS = "periods drawn in a run (N x run length / (up.mean + down.mean))"
"""What counts the draws of a failure law, in the refusals of its shape."""
DEFAULT_SWITCH_RATE = inspect.signature(gaps).parameters["switch_rate"].default


def check_size(scenario: Scenario) -> None:
    """Bounds that need only the scenario's own numbers."""
    system, workload, run = scenario.system, scenario.workload, scenario.run
    if system.servers > MAX_SERVERS:
        raise ScenarioError(f"system.servers: expected at most {MAX_SERVERS:,} (each server holds memory "
                            f"and a process), got {system.servers}")
    if system.dispatchers > MAX_SERVERS:  # as servers: each dispatcher holds memory (about 1 kB) and its state
        raise ScenarioError(f"system.dispatchers: expected at most {MAX_SERVERS:,} (each dispatcher holds memory "
                            f"and its policy's state), got {system.dispatchers}")
    low, high = TIME_RANGE
    mean = workload.service.mean
    if not low <= mean <= high:
        raise ScenarioError(f"workload.service.mean: expected a mean service time between {low:g} and {high:g} "
                            f"(choose the time unit so; sums of times overflow beyond), got {mean:g}")
    if isinstance(system.speeds, LawConfig):  # listed speeds: `check_speeds`
        if not low <= mean / system.speeds.mean <= high:
            raise ScenarioError(f"system.speeds.mean: expected a mean speed giving a mean service time (service "
                                f"mean / speed) between {low:g} and {high:g}, got {system.speeds.mean:g}")
        _check_spread(system.speeds, system.servers, mean)
    for key, law in (("workload.service", workload.service), ("network.latency", scenario.network.latency),
                     ("system.speeds", system.speeds)):
        _check_rare_phase(key, law, run.jobs)
    for key, law in (("workload.service", workload.service), ("network.latency", scenario.network.latency)):
        _check_heavy_half(key, law, run.jobs)
    arrivals = workload.arrivals
    if arrivals.kind == "trace" and not isinstance(system.speeds, (tuple, type(None))):
        raise ScenarioError("system.speeds: expected a list of speeds with trace arrivals (a law's draws "
                            "would change the load of the trace from one replication to the next)")
    total = run.total_jobs
    if arrivals.kind == "batch_poisson" and (arrivals.mean_batch or 2.0) > total / BATCHES:
        raise ScenarioError(f"workload.arrivals.mean_batch: expected at most (run.warmup_jobs + run.jobs) / "
                            f"{BATCHES} = {total / BATCHES:g}, so that a run holds about {BATCHES} batches or "
                            f"more, got {arrivals.mean_batch or 2.0:g}")


def _check_rare_phase(key: str, law: object, jobs: int, draws: str = "run.jobs") -> None:
    """A hyperexponential law's rare phase must show up about `RARE_JOBS` times in ``jobs`` draws.

    ``draws`` names what counts the draws in the error message.

    The balanced-means fit takes its long phase with probability
    p = (1 - sqrt((c2 - 1) / (c2 + 1))) / 2, about 1 / (2 c2): with fewer than a
    few such draws in a run, the run samples a different law (for scv 1e16, p
    rounds to 0 and the draw divides by zero).
    """
    if not isinstance(law, LawConfig) or law.kind != "hyperexponential" or law.scv is None:
        return
    p = RARE_JOBS / jobs
    if p >= 0.5:
        largest = 1.0
    else:
        q = (1.0 - 2.0 * p) ** 2  # solve (c2 - 1) / (c2 + 1) = (1 - 2p)^2
        largest = (1.0 + q) / (1.0 - q)
    if law.scv > largest:
        raise ScenarioError(f"{key}.scv: expected at most {largest:.4g} with {draws}={jobs} (the rare phase, "
                            f"probability about 1/(2 scv), must occur about {RARE_JOBS} times in a run), "
                            f"got {law.scv:g}")


def _check_heavy_half(key: str, law: object, jobs: int, draws: str = "run.jobs") -> None:
    """Half of a lognormal law's mean comes from draws rare enough that a run must see about `RARE_JOBS`.

    With X = exp(mu + sigma Z), E[X; X > exp(mu + sigma^2)] = E[X] / 2, and a draw
    exceeds exp(mu + sigma^2) when Z > sigma, with probability 1 - Phi(sigma): the
    lognormal counterpart of the hyperexponential's rare phase (which also carries
    half the mean). With fewer such draws the sample mean, and so every delay,
    falls far short of the law's (scv 1e6 and 2,000 jobs: a mean of 0.4 for 1).
    An scv up to 1 is always accepted, as the hyperexponential's is. ``draws``
    names what counts the draws in the error message.
    """
    if not isinstance(law, LawConfig) or law.kind != "lognormal" or law.scv is None:
        return
    from scipy.stats import norm  # here: importing scipy.stats costs about 0.3 s of CPU, and few laws need it

    p = RARE_JOBS / jobs
    largest = max(1.0, math.expm1(float(norm.isf(p)) ** 2)) if p < 0.5 else 1.0
    if law.scv > largest:
        raise ScenarioError(f"{key}.scv: expected at most {largest:.4g} with {draws}={jobs} (the draws that carry "
                            f"half the mean, probability 1 - Phi(sqrt(ln(1 + scv))), must occur about {RARE_JOBS} "
                            f"times in a run), got {law.scv:g}")


def _typical(law: LawConfig, n: int) -> tuple[float, float]:
    """The typical slowest and fastest of ``n`` speeds drawn from ``law``: its 1/(n+1) and n/(n+1) quantiles."""
    spread = law.law()
    return spread.quantile(1.0 / (n + 1)), spread.quantile(n / (n + 1.0))


def _check_spread(law: LawConfig, n: int, mean: float) -> None:
    """Drawn speeds obey the bounds of listed ones: their typical extremes give service times in `TIME_RANGE`.

    A draw beyond them fails its replication (`check_speeds`, when it is drawn). For
    a lognormal law the bound is on the scv: with sigma^2 = ln(1 + scv) and z the
    1/(n+1) quantile of the standard normal, the slowest typical speed is
    exp(ln(mean speed) - sigma^2 / 2 + sigma z).
    """
    low, high = TIME_RANGE
    slowest, fastest = _typical(law, n)
    if slowest > 0 and low <= mean / fastest and mean / slowest <= high:
        return
    if law.kind == "lognormal" and not mean / high <= slowest:  # too slow, so too spread: a bound on the scv
        from scipy.stats import norm

        z = float(norm.isf(1.0 / (n + 1)))
        room = math.log(law.mean) - math.log(mean / high)  # ln(mean speed / slowest allowed), >= 0
        sigma = -z + math.sqrt(z * z + 2.0 * room)  # the larger root of sigma^2 / 2 + sigma z = room
        raise ScenarioError(f"system.speeds.scv: expected at most {math.expm1(sigma * sigma):.4g} with N={n} (the "
                            f"typical slowest of N draws, the 1/(N+1) quantile, must give a mean service time, "
                            f"service mean / speed, of at most {high:g}), got {law.scv:g}")
    raise ScenarioError(f"system.speeds: expected a law whose typical slowest and fastest of N={n} draws (the "
                        f"1/(N+1) and N/(N+1) quantiles, {slowest:.3g} and {fastest:.3g}) give mean service times, "
                        f"service mean / speed, between {low:g} and {high:g}")


def check_point(scenario: Scenario, load: float, rate: float, policies: Sequence[ResolvedPolicy]) -> None:
    """Bounds relative to the arrival ``rate`` and the run's length at one sweep point."""
    system, workload, run = scenario.system, scenario.workload, scenario.run
    mean = workload.service.mean
    if isinstance(system.speeds, LawConfig):  # the drawn speeds are checked again when they are drawn
        check_speed_range(scenario, rate, *_typical(system.speeds, system.servers), "system.speeds")
    else:
        check_speeds(scenario, system.speeds or (1.0,) * system.servers, rate)
    gap = 1.0 / rate
    length = run.total_jobs * gap  # the run's expected length in time units
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
    timeout = scenario.network.timeout
    if timeout is not None and timeout > length:
        # Arrivals go on until every measured job has reached its server: a job that waits out the
        # timeout keeps them coming for timeout x rate more jobs.
        raise ScenarioError(
            f"network.timeout: expected at most the run's length, (run.warmup_jobs + run.jobs) / arrival rate = "
            f"{length:.4g} (a job waiting it out keeps the arrivals coming that long), got {timeout:g}")
    if system.failures is not None:
        check_failures(scenario, load, rate, length)
    arrivals = workload.arrivals
    switch_rate = arrivals.gap_options().get("switch_rate", DEFAULT_SWITCH_RATE)
    if arrivals.kind == "mmpp2" and switch_rate > SWITCHES_PER_GAP * rate:
        raise ScenarioError(
            f"workload.arrivals.switch_rate: expected at most {SWITCHES_PER_GAP} cycles per mean inter-arrival "
            f"gap, {SWITCHES_PER_GAP} x arrival rate = {SWITCHES_PER_GAP * rate:.4g} (faster switching is "
            f"Poisson arrivals at great cost), got {switch_rate:g}"
            + ("" if arrivals.switch_rate is not None else " (the default)"))
    if isinstance(system.speeds, tuple) and can_be_unstable(scenario):
        for policy in policies:
            check_oblivious(policy, system.speeds, rate, mean)


def check_failures(scenario: Scenario, load: float, rate: float, length: float) -> None:
    """Bounds on `system.failures` at arrival ``rate``, for a run of ``length`` time units.

    A down period longer than the run holds jobs past it; periods below
    ``length / MAX_RUN_LENGTH`` round to nothing on the clock at the run's end;
    each server's cycle costs 2 events, at most `FAILURE_EVENTS_PER_JOB` over the N
    servers per arriving job; with ``hold`` the servers must be up often enough to
    carry the load; and the laws' rare draws must occur in the periods a run draws.
    """
    system = scenario.system
    failures = system.failures
    assert failures is not None
    up, down = failures.up.mean, failures.down.mean
    if down > length:
        raise ScenarioError(
            f"system.failures.down.mean: expected at most the run's length, (run.warmup_jobs + run.jobs) / arrival "
            f"rate = {length:.4g} (a down server holds its jobs that long), got {down:g}")
    for key, mean in (("up", up), ("down", down)):
        if mean < length / MAX_RUN_LENGTH:
            raise ScenarioError(
                f"system.failures.{key}.mean: expected at least the run's length / {MAX_RUN_LENGTH:g} = "
                f"{length / MAX_RUN_LENGTH:.4g} (float times resolve about 2e-4 of such a period at the run's end; "
                f"a shorter one rounds to nothing), got {mean:g}")
    n = system.servers
    shortest = 2.0 * n / (FAILURE_EVENTS_PER_JOB * rate)
    if up + down < shortest:
        key = "up" if up >= down else "down"
        raise ScenarioError(
            f"system.failures.{key}.mean: expected up.mean + down.mean of at least 2N / ({FAILURE_EVENTS_PER_JOB} x "
            f"arrival rate) = {shortest:.4g} (each of the N={n} servers fails and recovers once a cycle: at most "
            f"{FAILURE_EVENTS_PER_JOB} events per arriving job), got {up:g} + {down:g} = {up + down:.4g}")
    if failures.on_down == "hold":
        _check_held(scenario, failures, load)
    periods = max(1, round(n * length / (up + down)))
    for key, law in (("system.failures.up", failures.up), ("system.failures.down", failures.down)):
        _check_rare_phase(key, law, periods, FAILURE_DRAWS)
        _check_heavy_half(key, law, periods, FAILURE_DRAWS)


def _check_held(scenario: Scenario, failures: FailuresConfig, load: float) -> None:
    """``on_down: hold``: the servers must carry the load in their up time, or drain a backlog at a bounded cost.

    A server is up a fraction up / (up + down) of the time, so the load on its up
    time is load x (up + down) / up (docs/faults.md). When that is not checked
    (``allow_unstable``, or a capacity that blocks) a backlog may build, and it
    drains after the arrivals stop: a backlog of B jobs takes B x S / up
    cycles of the server (S its mean service time), and the N servers cycle
    meanwhile, 2N events a cycle: at most `FAILURE_EVENTS_PER_JOB` per job when
    up.mean >= 2N S / `FAILURE_EVENTS_PER_JOB`.
    """
    system = scenario.system
    up, down = failures.up.mean, failures.down.mean
    effective = load * (up + down) / up
    if can_be_unstable(scenario):
        if effective >= 1:
            raise ScenarioError(
                f"system.failures: expected servers up often enough to carry the load with on_down: hold, load x "
                f"(up.mean + down.mean) / up.mean < 1 (or allow_unstable: true), got {load:g} x ({up:g} + {down:g})"
                f" / {up:g} = {effective:.4g}")
        return
    speeds = system.speeds
    slowest = (min(speeds) if isinstance(speeds, tuple) else
               _typical(speeds, system.servers)[0] if isinstance(speeds, LawConfig) else 1.0)
    longest = 2.0 * system.servers * scenario.workload.service.mean / slowest / FAILURE_EVENTS_PER_JOB
    if up < longest:
        raise ScenarioError(
            f"system.failures.up.mean: expected at least 2N x the slowest server's mean service time / "
            f"{FAILURE_EVENTS_PER_JOB} = {longest:.4g} with on_down: hold and the load unchecked (allow_unstable or a "
            f"capacity: draining a backlog takes a cycle of every server per up.mean of work; at most "
            f"{FAILURE_EVENTS_PER_JOB} events per job), got {up:g}")


def check_speeds(scenario: Scenario, speeds: Sequence[float], rate: float, drawn: str = "") -> None:
    """Bounds on the servers' speeds at arrival ``rate``: listed ones at validation, drawn ones per replication.

    Each speed must give a mean service time in `TIME_RANGE`; then come the bounds
    that the slowest and the fastest server set (`check_speed_range`). ``drawn`` says
    where drawn speeds come from, as in `check_oblivious`.
    """
    low, high = TIME_RANGE
    mean = scenario.workload.service.mean
    slowest, fastest = speeds.index(min(speeds)), speeds.index(max(speeds))
    for i in (slowest, fastest):
        if not low <= mean / speeds[i] <= high:
            raise ScenarioError(f"{_speed_key(scenario, i, drawn)}: expected a speed giving a mean service time "
                                f"(service mean / speed) between {low:g} and {high:g}, got {speeds[i]:g}")
    check_speed_range(scenario, rate, speeds[slowest], speeds[fastest], _speed_key(scenario, slowest, drawn),
                      drawn.replace("(drawn", "(speeds drawn", 1))


def _speed_key(scenario: Scenario, i: int, drawn: str) -> str:
    """The key that sets server i's speed: a listed speed, a drawn one (and its server), or the service mean."""
    if drawn:
        return f"system.speeds{drawn} at server {i}"
    return f"system.speeds.{i}" if scenario.system.speeds is not None else "workload.service.mean"


def check_speed_range(scenario: Scenario, rate: float, slowest: float, fastest: float, slow_key: str,
                      context: str = "") -> None:
    """The bounds set by the slowest and fastest speeds: the run's slots in slotted time, its resolution else.

    ``slow_key`` names what sets the slowest speed; ``context`` follows every other
    key named, to say that the speeds were drawn (and with which seed).
    """
    if scenario.system.time == "slotted":
        _check_slot_means(scenario, rate, fastest, context)
        _check_slot_count(scenario, rate, slowest, slow_key, context)
        return
    run, arrivals = scenario.run, scenario.workload.arrivals
    length = run.total_jobs / rate if rate > 0 else math.inf
    shortest = scenario.workload.service.mean / fastest  # the fastest server's mean service time
    if not length <= MAX_RUN_LENGTH * shortest:
        key = "workload.arrivals.path" if arrivals.kind == "trace" else "workload.load"
        raise ScenarioError(
            f"{key}{context}: expected a run of at most {MAX_RUN_LENGTH:g} mean service times of the fastest "
            f"server (float arrival times resolve about 2e-4 of one up to there), got (run.warmup_jobs + run.jobs) "
            f"/ arrival rate {rate:.3g} = {length:.3g} time units = {length / shortest:.3g} service times")


def _check_slot_means(scenario: Scenario, rate: float, fastest: float, context: str) -> None:
    """Slotted time, at λN = ``rate`` arrivals per slot: counts numpy can draw, a window of many slots."""
    run, service, arrivals = scenario.run, scenario.workload.service, scenario.workload.arrivals
    mu = fastest / service.mean  # the largest capacity per slot
    if service.kind == "exponential" and mu > MAX_POISSON_MEAN:
        raise ScenarioError(f"workload.service.mean{context}: expected a capacity per slot, speed / mean, of at "
                            f"most {MAX_POISSON_MEAN:g} in slotted time (numpy draws Poisson counts up to about "
                            f"9.2e18), got {fastest:g} / {service.mean:g} = {mu:.4g}")
    if arrivals.kind == "deterministic":
        rounded = float(Fraction(rate).limit_denominator(DENOMINATOR))
        if abs(rounded - rate) > 1e-3 * rate:
            raise ScenarioError(f"workload.load{context}: expected deterministic arrivals per slot, λN, that a "
                                f"fraction with denominator at most {DENOMINATOR:,} gives within 0.1% (so about "
                                f"1e-6 or more), got λN = {rate:.4g}, which becomes {rounded:.4g}")
    if run.jobs < MIN_WINDOW_SLOTS * rate:
        raise ScenarioError(f"run.jobs{context}: expected at least {MIN_WINDOW_SLOTS} x the arrivals per slot λN = "
                            f"{MIN_WINDOW_SLOTS * rate:.4g}, so that the measurement window spans {MIN_WINDOW_SLOTS} "
                            f"slots or more (a window within one slot has no length), got {run.jobs}")
    burstiness, total = arrivals.burstiness or 2.0, run.total_jobs
    if arrivals.kind == "mmpp2" and burstiness * rate > total / BATCHES:  # as a batch of batch_poisson
        raise ScenarioError(
            f"workload.arrivals.burstiness{context}: expected at most (run.warmup_jobs + run.jobs) / ({BATCHES} λN) "
            f"= {total / (BATCHES * rate):.4g} in slotted time, so that a slot of the high state, b λN arrivals, "
            f"brings at most 1/{BATCHES} of the run's jobs, got {burstiness:g}"
            + ("" if arrivals.burstiness is not None else " (the default)"))


def _check_slot_count(scenario: Scenario, rate: float, slowest: float, slow_key: str, context: str) -> None:
    """Slotted time: a run of at most `MAX_SLOTS` slots, and of at most `MAX_CAPACITY_DRAWS` Poisson capacities.

    ``rate`` is λN, the mean arrivals per slot. The run takes about (run.warmup_jobs
    + run.jobs) / λN slots, plus 1/μ for the slowest server's job (μ = speed / mean,
    its capacity per slot: a job there stays about 1/μ slots), plus with mmpp2 one
    high/low cycle 1/switch_rate (a run shorter than a cycle may wait out a whole
    low period). The error names the key of the largest part.
    """
    system, run, arrivals = scenario.system, scenario.run, scenario.workload.arrivals
    arriving = run.total_jobs / rate if rate > 0 else math.inf
    parts = [(f"workload.load{context}", arriving, f"the jobs at λN = {rate:.3g} a slot"),
             (slow_key, scenario.workload.service.mean / slowest, "the slowest server's job (mean / speed)")]
    if arrivals.kind == "mmpp2":
        parts.append((f"workload.arrivals.switch_rate{context}",
                      1.0 / (arrivals.switch_rate or DEFAULT_SWITCH_RATE), "a high/low cycle (1 / switch_rate)"))
    slots = math.fsum(part[1] for part in parts)
    key = max(parts, key=lambda part: part[1])[0]
    if slots > MAX_SLOTS:
        listed = ", ".join(f"{value:.3g} for {what}" for _, value, what in parts)
        raise ScenarioError(f"{key}: expected a slotted run of at most {MAX_SLOTS:,} slots (the clock does Python "
                            f"work in every slot, even an empty one), this one takes about {slots:.3g}: {listed}")
    drawn = ROWS * math.ceil(slots / ROWS)  # slots of capacities drawn, in batches
    draws = system.servers * drawn
    if scenario.workload.service.kind == "exponential" and draws > MAX_CAPACITY_DRAWS:
        key = f"system.servers{context}" if system.servers * ROWS > MAX_CAPACITY_DRAWS else key
        raise ScenarioError(f"{key}: expected at most {MAX_CAPACITY_DRAWS:,} Poisson capacities drawn in slotted "
                            f"time (one per server and slot, {ROWS} slots at a time: time and memory), got "
                            f"N={system.servers} x {drawn:,} slots (of about {slots:.3g}) = {draws:.3g}")


def can_be_unstable(scenario: Scenario) -> bool:
    """Whether an overloaded server makes a run unstable: single servers (FIFO or PS) without capacity, not
    allowed."""
    system = scenario.system
    return system.discipline != "pool" and system.capacity is None and not scenario.allow_unstable


def check_oblivious(policy: ResolvedPolicy, speeds: Sequence[float], rate: float, mean: float,
                    drawn: str = "") -> None:
    """Refuse a policy that provably gives some servers more work than their speeds can serve.

    The policy says (`Policy.check_speeds`): random and round-robin routing send each
    server 1/N of the work, SQ(d) and the threshold policy overload the slowest
    servers when jobs whose d samples all fall among them bring more work than
    their speeds; policies that look for idle or short queues first (JSQ, JIQ,
    JBT-d) cannot be judged without the state, and are not refused. ``drawn`` says
    where drawn speeds come from.
    """
    problem = REGISTRY[policy.name].check_speeds(policy.config, speeds, rate * mean)
    if problem is not None:
        raise ScenarioError(f"system.speeds{drawn}: {policy.label} {problem}; expected a speed-aware policy, a "
                            f"lower load or allow_unstable: true")


def check_slotted(scenario: Scenario) -> None:
    """What slotted time cannot run: each gets one line naming the key."""
    system, workload = scenario.system, scenario.workload
    arrivals, service = workload.arrivals, workload.service
    if system.discipline != "fifo":
        raise ScenarioError(f"system.discipline: expected fifo in slotted time, got {system.discipline!r}")
    if arrivals.kind == "trace":
        raise ScenarioError("workload.arrivals.kind: expected poisson, batch_poisson, mmpp2 or deterministic "
                            "in slotted time (counts per slot), got 'trace'")
    if arrivals.kind == "mmpp2":
        b, c = arrivals.burstiness or 2.0, arrivals.switch_rate or 0.1
        if (b + 1.0) * c > 1.0:
            raise ScenarioError(f"workload.arrivals.switch_rate: expected at most 1/(burstiness+1) = "
                                f"{1.0 / (b + 1.0):.4g} in slotted time (it sets the per-slot probability "
                                f"(b+1)*switch_rate of leaving the high state), got {c:g}")
    if scenario.network.latency.mean != 0:
        raise ScenarioError(f"network.latency.mean: expected 0 in slotted time (messages arrive within the "
                            f"slot), got {scenario.network.latency.mean:g}")
    if service.kind not in ("deterministic", "exponential"):
        raise ScenarioError(f"workload.service.kind: expected deterministic (constant capacity per slot) or "
                            f"exponential (Poisson capacity per slot) in slotted time, got {service.kind!r}")
    if service.kind == "deterministic":
        if isinstance(system.speeds, LawConfig):
            raise ScenarioError("system.speeds: expected a list of speeds with deterministic service in slotted "
                                "time (whole jobs per slot), got a law")
        for speed in system.speeds or (1.0,):
            mu = speed / service.mean
            if abs(mu - round(mu)) > 1e-9 or round(mu) < 1:
                raise ScenarioError(f"workload.service.mean: expected speed / mean to be a whole number of "
                                    f"jobs per slot with deterministic service in slotted time, got "
                                    f"{speed:g} / {service.mean:g} = {mu:.4g}")
    for i, entry in enumerate(scenario.policies):
        if getattr(REGISTRY.get(entry.name), "whole_batches", False):  # batch_sqd
            raise ScenarioError(f"system.time: expected continuous with policies.{i} ({entry.name}, which places "
                                f"the jobs that arrive together as one batch), got 'slotted'")
        period = getattr(entry, "period", None)
        # An infinite period (no update ever) is whole too; round() cannot take it.
        if isinstance(period, (int, float)) and math.isfinite(period) and period != round(period):
            raise ScenarioError(f"policies.{i}.period: expected a whole number of slots in slotted time, "
                                f"got {period:g}")


def expected_capacity(system: SystemConfig) -> float:
    """The total service rate: the sum of the speeds; with a law of speeds, N times its mean."""
    if isinstance(system.speeds, tuple):
        return sum(system.speeds)
    if isinstance(system.speeds, LawConfig):
        return system.servers * system.speeds.mean
    return float(system.servers)


def check_trace(scenario: Scenario) -> tuple[float, float]:
    """Check a trace file; return its arrival rate and mean job size."""
    path = scenario.workload.arrivals.path
    try:
        times, sizes = read_trace(path)  # type: ignore[arg-type]
    except ValueError as exc:
        raise ScenarioError(f"workload.arrivals.path: {exc}") from None
    needed = scenario.run.total_jobs
    if len(times) < needed:
        raise ScenarioError(f"workload.arrivals.path: expected at least run.warmup_jobs + run.jobs = "
                            f"{needed} arrivals, got {len(times)} in '{path}'")
    span = float(times[-1])
    if span <= 0:
        raise ScenarioError(f"workload.arrivals.path: expected arrivals spread over time, '{path}' has all at 0")
    mean_size = float(sizes.mean()) if sizes is not None else scenario.workload.service.mean
    return len(times) / span, mean_size
