"""Which theory of `analysis.theory` applies to a (sweep point, policy), and its value.

A reference is given only where its assumptions hold at that point, read from
the resolved scenario (``scenario.yaml`` of the results folder, with the swept
values applied):

========================  ==============================================  ===========================
reference                 assumptions                                     label
========================  ==============================================  ===========================
random routing            Poisson arrivals, FIFO, equal speeds, no        M/M/1 (exponential service)
                          capacity, zero latency; any service law with    or M/G/1 (otherwise), exact
                          a finite variance
SQ(d), d >= 2             as above, exponential service, zero latency     mean field, N → ∞
threshold model           as SQ(d)                                        mean field, N → ∞
JIQ with memory A         as SQ(d), one dispatcher                        mean field, N → ∞
late binding, d = 1       as random routing                               M/M/1 or M/G/1, exact
late binding, d = N       as SQ(d)                                        M/M/N (Erlang C), exact
least work, d < N         as SQ(d) (LL(d), Hellemans and Van Houdt)       mean field, N → ∞
least work, d = N         as SQ(d): the central M/M/N queue (LWL)         M/M/N (Erlang C), exact
every policy              Poisson, exponential, FIFO, equal speeds, no    M/M/N (Erlang C) lower bound
                          capacity (the central queue; any latency)
PS: random                Poisson arrivals, PS, equal speeds, no          M/G/1-PS, exact (any
                          capacity, zero latency; any service law         service law: insensitive)
PS: every other           exponential service: every FIFO row above       as FIFO (the same lengths)
pools: random             Poisson arrivals, capacity B, equal speeds,     Erlang B, exact
                          zero latency
pools: SQ(d)              as above, exponential service, zero latency     mean field, N → ∞
pools: JSQ                as SQ(d)                                        fluid limit, N → ∞
pools: every policy       Poisson, exponential, capacity B, equal speeds  Erlang B of N·B, lower bound
slotted: random           Poisson arrivals per slot, capacity 1 per slot  slotted M/D/1, exact
                          (or Poisson(1), where the chain is small), no   (per decision: a slot's
                          capacity, zero latency; per arrival or per      Poisson(λN) batch with
                          slot (a slot's arrivals routed together)        probability 1/N)
========================  ==============================================  ===========================

A reference whose computation would exceed its budget (`analysis.theory.mean_field.LEVELS`
levels, `ODE_WORK` for the pools' ODE, 2,048 states for the slotted chain: a threshold around 10^6
at a load near 1, pools at about 100 tasks each) is given as `omitted`, its label the reason: the
table shows no row for it and states the reason in its caption; docs/theory.md lists these limits.

Every other reference is a continuous-time result: in slotted time (responses
counted in whole slots, service by per-slot capacities) none of them holds, so
none is given there.

With exponential sizes, processor-sharing (PS) servers have the lengths of FIFO ones under any
policy (a busy server completes a job at rate 1 either way, and policies see lengths): every FIFO
reference and bound holds for them. Random routing makes each PS server M/G/1-PS, whose mean
response m / (1 - rho) depends on the service law through its mean only.

The metrics with references are ``mean_response`` (FIFO, PS), ``blocked_fraction``
(pools), ``mean_queue_length`` (by Little's law from those two) and
``messages_per_job`` (JIQ idle tokens; threshold probes, two messages each; late binding's 3d - 1).
Late binding's jobs wait at their dispatcher: its ``mean_queue_length`` (jobs at servers) is the
load, not the load times the response.
Time is in mean service times of a server (`analysis.theory`); the values are
scaled by the service mean over the server speed.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from . import theory

MEAN_FIELD = "mean field, N → ∞"


@dataclass(frozen=True)
class Reference:
    """A theoretical value and the approximation it comes from (e.g. "mean field, N → ∞").

    A value of NaN is a reference whose assumptions hold but whose computation would exceed
    its budget; the label then says why (see `omitted`).
    """

    value: float
    label: str

    @property
    def omitted(self) -> bool:
        """True for a reference left out for its budget (its label is the reason)."""
        return math.isnan(self.value)


def omitted(reason: str) -> Reference:
    """A reference that is not given, for the reason stated (a theory function's budget error)."""
    return Reference(math.nan, reason)


def _unit(scenario: Any) -> float | None:
    """Mean service time at a server if all servers have the same speed, else None."""
    speeds = scenario.system.speeds
    if speeds is not None and len(set(speeds)) > 1:
        return None
    speed = speeds[0] if speeds else 1.0
    return float(scenario.workload.service.mean / speed)


def _zero_latency(scenario: Any) -> bool:
    return bool(scenario.network.latency.mean == 0)


def _exponential(scenario: Any) -> bool:
    return bool(scenario.workload.service.kind == "exponential")


@lru_cache(maxsize=512)
def _threshold(load: float, d: int, threshold: int) -> tuple[Reference, Reference]:
    """Mean response and messages per job (two per probe) of the threshold model's mean field.

    Omitted where it needs more levels than `analysis.theory.mean_field.LEVELS` (see `theory.threshold_metrics`).
    """
    try:
        response, probes = theory.threshold_metrics(load, d, threshold)
    except (ValueError, RuntimeError) as error:  # over its levels, or a root search that did not converge
        return omitted(str(error)), omitted(str(error))
    return Reference(response, MEAN_FIELD), Reference(2.0 * probes, MEAN_FIELD)


@lru_cache(maxsize=512)
def _pool_blocking(load: float, capacity: int, d: int) -> Reference:
    """Blocking of pools under JSQ(d), mean field; omitted where its ODE exceeds its budget (`jsqd_pool_tail`)."""
    try:
        return Reference(theory.pool_blocking(load, capacity, d), MEAN_FIELD)
    except (ValueError, RuntimeError) as error:
        return omitted(str(error))


def _fifo(scenario: Any, load: float, name: str, params: dict[str, Any]) -> dict[str, Reference]:
    """References for FIFO servers, and PS ones (random: M/G/1-PS; exponential service: FIFO's): response
    time (in units of the mean service), messages."""
    law = scenario.workload.service.law()
    found: dict[str, Reference] = {}
    d = params.get("d")
    if scenario.system.discipline == "ps" and (name == "random" or (name == "sqd" and d == 1)):
        found["mean_response"] = Reference(theory.mg1_ps_response(load), "M/G/1-PS, exact")
        return found
    if name == "late_binding" and isinstance(d, int):
        return _late_binding(scenario, law.scv, load, d)
    if name == "random" or (name in ("sqd", "redundancy", "least_work") and d == 1):  # one copy: random routing
        if math.isfinite(law.scv):
            label = "M/M/1, exact" if law.scv == 1.0 and _exponential(scenario) else "M/G/1, exact"
            found["mean_response"] = Reference(theory.mg1_response(load, 1.0, law.scv), label)
        return found
    if not (_exponential(scenario) and _zero_latency(scenario)):
        return found
    if name == "sqd" and isinstance(d, int):
        found["mean_response"] = Reference(theory.sqd_response(load, d), MEAN_FIELD)
    elif name == "threshold" and isinstance(d, int):
        found["mean_response"], found["messages_per_job"] = _threshold(load, d, params["threshold"])
    elif name == "redundancy" and isinstance(d, int) and params["cancel"] == "completion" \
            and params["copies"] == "independent":
        found["mean_response"] = Reference(theory.redundancy_response(load, d), MEAN_FIELD)
    elif name == "least_work" and d == scenario.system.servers:  # LWL: the central FCFS queue, exactly
        found["mean_response"] = Reference(theory.mmn_response(d, load), "M/M/N (Erlang C), exact")
    elif name == "least_work" and isinstance(d, int):
        found["mean_response"] = Reference(theory.least_loaded_response(load, d), MEAN_FIELD)
    elif name == "jiq" and scenario.system.dispatchers == 1:
        memory = params.get("memory")
        found["mean_response"] = Reference(theory.jiq_response(load, memory), MEAN_FIELD)
        found["messages_per_job"] = Reference(theory.jiq_messages(load, memory), MEAN_FIELD)
    return found


def _late_binding(scenario: Any, scv: float, load: float, d: int) -> dict[str, Reference]:
    """Late binding with zero latency: d = 1 is random routing (M/G/1), d = N one central FCFS queue (M/M/N).

    Every reservation asks once: d reservations, d requests, d - 1 cancels per job in the long run.
    """
    found = {"messages_per_job": Reference(3.0 * d - 1.0, "3d - 1, exact")}
    if d == 1 and math.isfinite(scv):
        label = "M/M/1, exact" if scv == 1.0 and _exponential(scenario) else "M/G/1, exact"
        found["mean_response"] = Reference(theory.mg1_response(load, 1.0, scv), label)
    elif d == scenario.system.servers and _exponential(scenario):
        found["mean_response"] = Reference(theory.mmn_response(d, load), "M/M/N (Erlang C), exact")
    return found


def _pool(scenario: Any, load: float, name: str, params: dict[str, Any]) -> dict[str, Reference]:
    capacity = scenario.system.capacity
    d = params.get("d")
    if name == "random" or (name == "sqd" and d == 1):
        return {"blocked_fraction": Reference(theory.erlang_b(capacity, load), "Erlang B, exact")}
    if not (_exponential(scenario) and _zero_latency(scenario)):
        return {}
    if name == "sqd" and isinstance(d, int):
        return {"blocked_fraction": _pool_blocking(load, capacity, d)}
    if name == "jsq":
        return {"blocked_fraction": Reference(theory.pool_blocking(load, capacity, None), "fluid limit, N → ∞")}
    return {}


def _slotted(point: Any, name: str, params: dict[str, Any]) -> dict[str, Reference]:
    """Slotted time: random routing makes each server a slotted queue with known arrivals.

    Dispatched one by one, Poisson(λN) arrivals per slot split into Poisson(λ) at each
    server; with one decision per slot, a server receives the whole Poisson(λN) batch
    with probability 1/N. Capacity 1 per slot has a closed form; Poisson(1) capacity
    the chain of `analysis.theory.slotted_queue`, where it is small enough to solve.
    """
    scenario = point.scenario
    system, service = scenario.system, scenario.workload.service
    if not (name == "random" or (name == "sqd" and params.get("d") == 1)) or _unit(scenario) != 1.0:
        return {}
    slot = system.slot
    together = slot is None or slot.dispatch == "slot"
    same_slot = slot is None or slot.same_slot
    servers = system.servers if together else 1
    if service.kind == "deterministic":
        response = theory.slotted_md1_response(point.load, same_slot, servers)
        label = "slotted M/D/1" + (", batches of a slot" if together else "") + ", exact"
    else:
        response, reason = _poisson_capacity_response(point.load, same_slot, servers)
        if reason:
            return {"mean_response": omitted(reason), "mean_queue_length": omitted(reason)}
        label = "slotted queue, Poisson capacity" + (", batches of a slot" if together else "") + ", exact"
    return {"mean_response": Reference(response, label),
            "mean_queue_length": Reference(point.load * response, label)}  # Little's law


@functools.lru_cache(maxsize=256)
def _poisson_capacity_response(load: float, same_slot: bool, servers: int) -> tuple[float, str]:
    """The slotted queue's mean response with Poisson(1) capacity, and why not (NaN) where its chain is too large.

    A table asks for it once per cell; 2,048 states solve in a fraction of a second.
    """
    try:
        return theory.slotted_queue(load, capacity="poisson", same_slot=same_slot, servers=servers,
                                    max_states=2048)["mean_response"], ""
    except ValueError as error:
        return math.nan, str(error)


def _applies(point: Any) -> bool:
    """The assumptions common to every reference: Poisson arrivals, equal speeds, a stable system, no failures."""
    scenario = point.scenario
    if scenario.workload.arrivals.kind != "poisson" or _unit(scenario) is None:
        return False
    if scenario.system.failures is not None:  # docs/faults.md has the one for random routing
        return False
    if scenario.system.discipline == "pool":
        return scenario.system.capacity is not None
    return scenario.system.capacity is None and point.load < 1


def references(point: Any, policy: Any) -> dict[str, Reference]:
    """Theory for one policy at one sweep point, by metric; empty where none applies.

    Parameters
    ----------
    point : emulator.scenario.sweep.Point
        The resolved sweep point.
    policy : emulator.scenario.schema.ResolvedPolicy
        One of ``point.policies``.

    Returns
    -------
    dict of str to Reference

    Examples
    --------
    >>> import emulator
    >>> s = emulator.Scenario.from_dict({"system": {"servers": 100}, "workload": {"load": 0.9},
    ...                                  "policies": [{"name": "sqd", "d": 2}, {"name": "jsq"}]})
    >>> point = s.points()[0]
    >>> ref = references(point, point.policies[0])["mean_response"]
    >>> round(ref.value, 4), ref.label
    (2.6141, 'mean field, N → ∞')
    >>> references(point, point.policies[1])
    {}
    """
    # With latency a job's response includes its transfer (and probes): no single-queue formula holds.
    if not _applies(point) or not _zero_latency(point.scenario):
        return {}
    scenario = point.scenario
    # Lost messages change every policy that sends any; random routing sends none.
    if scenario.network.loss > 0 and policy.name != "random":
        return {}
    if scenario.system.time == "slotted":
        return _slotted(point, policy.name, policy.params)
    unit = _unit(scenario)
    assert unit is not None
    if scenario.system.discipline == "pool":
        found = _pool(scenario, point.load, policy.name, policy.params)
        if "blocked_fraction" in found:
            ref = found["blocked_fraction"]
            found["mean_queue_length"] = Reference(point.load * (1.0 - ref.value), ref.label)
        return found
    found = _fifo(scenario, point.load, policy.name, policy.params)
    if "mean_response" in found:
        ref = found["mean_response"]
        found["mean_response"] = Reference(ref.value * unit, ref.label)
        if policy.name != "redundancy" or policy.params.get("d") == 1:  # lengths count copies, not jobs
            found["mean_queue_length"] = Reference(point.load * ref.value, ref.label)  # Little's law
        if policy.name == "late_binding":  # a job waits at its dispatcher: at a server it is only served
            found["mean_queue_length"] = Reference(point.load, "jobs in service only, exact")
    return found


def bound(point: Any) -> tuple[str, dict[str, float]] | None:
    """The lower bound that holds for every policy at a point: its label and values by metric.

    FIFO servers with exponential service: the central M/M/N queue (Erlang C),
    which no dispatcher beats in mean response. Pools with capacity B: the
    central loss system of N·B slots (Erlang B), which no dispatcher beats in
    blocking. None where neither applies, or where a policy sends a job as several
    copies (`redundancy`): neither bounds it.

    Examples
    --------
    >>> import emulator
    >>> s = emulator.Scenario.from_dict({"workload": {"load": 0.9}, "policies": [{"name": "jsq"}]})
    >>> label, values = bound(s.points()[0])
    >>> label, round(values["mean_response"], 4)
    ('M/M/N (Erlang C), lower bound', 1.6687)
    """
    if not _applies(point) or not _exponential(point.scenario) or point.scenario.system.time == "slotted":
        return None
    if any(policy.name == "redundancy" and policy.params.get("d") != 1 for policy in point.policies):
        return None  # copies of a job served at once beat one server each: Red(d) tends to 1/d at low load
    scenario = point.scenario
    n = scenario.system.servers
    if scenario.system.discipline == "pool":
        capacity = scenario.system.capacity
        blocked = theory.erlang_b(n * capacity, n * point.load)
        return "Erlang B of N·B slots, lower bound", {"blocked_fraction": blocked}
    unit = _unit(scenario)
    assert unit is not None
    response = theory.mmn_response(n, point.load)
    return "M/M/N (Erlang C), lower bound", {"mean_response": response * unit,
                                              "mean_queue_length": point.load * response}
