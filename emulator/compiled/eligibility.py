"""What the compiled engine runs: which policies have a compiled form, and which scenarios it reproduces exactly."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..measure.messages import KINDS
from ..measure.occupancy import OCCUPANCY_METRICS
from ..measure.recorder import METRICS
from ..policies import BUILT_IN, REGISTRY
from ..scenario.schema import ResolvedPolicy, SlotConfig
from ..scenario.sweep import Point, Scenario

COMPILED: frozenset[str] = frozenset(name for name, cls in REGISTRY.items() if name in BUILT_IN and cls.compiled)
"""The built-in policies with a compiled version (their classes name it: `Policy.compiled`), read without numba."""


def has_compiled_form(name: str) -> bool:
    """Whether registered policy ``name`` names a compiled form (`Policy.compiled`): built-in or a user's."""
    return getattr(REGISTRY.get(name), "compiled", None) is not None


_KNOWN_FIELDS = {
    "system": {"servers", "discipline", "capacity", "speeds", "dispatchers", "dispatcher_shares", "time", "slot",
               "failures"},
    "workload": {"load", "arrivals", "service"},
    "arrivals": {"kind", "burstiness", "switch_rate", "mean_batch", "path", "batch"},
    "service": {"kind", "mean", "k", "scv", "alpha"},
    "network": {"latency", "loss", "timeout"},
    "run": {"jobs", "warmup_jobs", "engine", "occupancy", "batch_means"},
}
_KNOWN_METRICS = (
    "jobs", "warmup_jobs", "mean_response", "mean_wait", "p50_response", "p90_response", "p99_response",
    "prob_wait", "mean_queue_length", "messages_per_job", *(f"messages_per_job_{k}" for k in KINDS),
    *(f"delivered_per_job_{k}" for k in KINDS), *(f"lost_per_job_{k}" for k in KINDS),
    "messages_per_server_time", "blocked_fraction", "lost_fraction", "sim_time", "wall_seconds",
    *OCCUPANCY_METRICS, "copies_per_job", "wasted_work_per_job",  # 1 and 0 but for redundancy (`copying`)
)
_ARRIVALS = {"poisson", "deterministic", "mmpp2", "batch_poisson", "trace"}


def supports(point: Point, policy: ResolvedPolicy) -> str | None:
    """Why the compiled engine cannot run ``policy`` at ``point`` exactly, or None if it can."""
    scenario = point.scenario
    system = scenario.system
    if not has_compiled_form(policy.name):
        return f"policy '{policy.name}' has no compiled version"
    parts = {"system": system, "workload": scenario.workload, "arrivals": scenario.workload.arrivals,
             "service": scenario.workload.service, "network": scenario.network, "run": scenario.run}
    for name, part in parts.items():
        unknown = set(type(part).model_fields) - _KNOWN_FIELDS[name]
        if unknown:
            return f"{name} has options the compiled engine does not know: {sorted(unknown)}"
    try:
        from .policies import module as compiled_form
    except ImportError:
        return "numba is not installed"
    try:
        module = compiled_form(policy.name)
    except Exception as exc:  # a user's compiled form that does not import: `check_policy` says so too
        return f"its compiled form does not import ({type(exc).__name__}: {exc})"
    unknown = set(policy.params) - module.PARAMS
    if unknown:
        return f"policy options the compiled engine does not know: {sorted(unknown)}"
    problem = _faults_problem(point, policy, module)
    if problem is not None:
        return problem
    if METRICS != _KNOWN_METRICS:  # message kinds come and go with the enum; other columns do not
        return "metric columns the compiled engine does not know"
    if (scenario.run.warmup_jobs == "auto" or scenario.run.batch_means is not None) and (
            scenario.run.total_jobs >= 2**53):  # (arrival numbers beside the responses, as floats: exact below)
        return "run.warmup_jobs: auto and run.batch_means run below 2**53 jobs"
    if scenario.run.total_jobs >= 2**62:
        return "run.warmup_jobs + run.jobs beyond the kernel's 64-bit counters"
    # Known keys the kernel does not model yet: only their neutral values run compiled.
    if system.time == "slotted":
        problem = _slotted_problem(point, policy, module)
        if problem is not None:
            return problem
    elif system.time != "continuous":
        return f"time '{system.time}'"
    if system.discipline not in ("fifo", "pool", "ps"):
        return f"discipline '{system.discipline}'"
    if scenario.workload.arrivals.kind not in _ARRIVALS:
        return f"arrivals '{scenario.workload.arrivals.kind}'"
    problem = getattr(module, "supports", None)
    return None if problem is None else problem(policy.config, PointView(point))


def _faults_problem(point: Point, policy: ResolvedPolicy, module: Any) -> str | None:
    """Why the kernel cannot run this scenario's faults with this compiled policy, or None.

    Lost messages at zero latency run compiled where the compiled form says so (its
    ``instant_loss``): a policy whose messages the kernel draws the loss of and delivers
    at once (Random, round robin, JIQ), or whose asks are its dispatch's, one record each
    (its ``ASKS``: SQ(d), JSQ, SED, SQ(d) with memory; and JBT-d's update, asked from its
    timer), which the kernel answers at once and decides within the sender's step once
    every reply is in, else at the timeout (`faults.answered`). Failing servers (`failing`)
    run compiled where the compiled form says its servers may fail (its ``servers_fail``):
    where the messages a down server loses and the arrival hooks SimPy holds until it recovers
    are those the kernel replays (`recovery`: queries and marked messages lost there, the hooks
    of jobs from lists and of blocked jobs a policy answers; then the departure hook, as SimPy).
    """
    scenario = point.scenario
    instant_loss = getattr(module, "instant_loss", None)
    if scenario.network.loss > 0 and scenario.network.latency.mean == 0 and (
            instant_loss is None or not instant_loss(policy.config, PointView(point))):
        return "messages are lost at zero latency (network.loss > 0 with network.latency.mean 0)"
    servers_fail = getattr(module, "servers_fail", None)
    if scenario.system.failures is not None and (servers_fail is None
                                                 or not servers_fail(policy.config, PointView(point))):
        return "servers fail (system.failures) under a policy that sends messages to its servers"
    return None


_KNOWN_SLOT = {"same_slot", "dispatch", "pull_delay"}


def _slotted_problem(point: Point, policy: ResolvedPolicy, module: Any) -> str | None:
    """Why the compiled slot clock (`compiled.slotted`) cannot run this slotted case, or None."""
    slot = point.scenario.system.slot or SlotConfig()
    unknown = set(type(slot).model_fields) - _KNOWN_SLOT
    if unknown:
        return f"system.slot has options the compiled engine does not know: {sorted(unknown)}"
    return None



@dataclass(frozen=True)
class PointView:
    """A resolved point as a policy's checks see it (`emulator.policies.views.PointView`)."""

    point: Point

    @property
    def servers(self) -> int:
        return self.point.servers

    @property
    def dispatchers(self) -> int:
        return self.point.scenario.system.dispatchers

    @property
    def rate(self) -> float:
        return self.point.rate

    @property
    def scenario(self) -> Scenario:
        return self.point.scenario


