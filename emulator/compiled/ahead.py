"""Each policy's kernels built before a run starts, so that its workers load them instead of compiling them at once."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import ScenarioError
from ..scenario.schema import ResolvedPolicy
from ..scenario.sweep import Point, Scenario
from .eligibility import COMPILED, supports
from .engine import record
from .loading import available, features


def prepare(cases: Iterable[tuple[Point, ResolvedPolicy]], announce: Callable[[], None] | None = None) -> bool:
    """Load the kernels of ``cases`` in this process, compiling those the cache lacks; False if numba is unusable.

    A run calls it once before its worker processes start, with the (point, policy)
    pairs it will run compiled, so that its workers share what it compiled or loaded
    (forked workers inherit the loaded kernels; others load the cache it wrote) instead
    of each compiling the same kernel at once. Each policy has its own kernel per loop
    (the event kernel, the slot clock: `build`), compiled here by one short run of the
    case. ``announce`` is called just before numba starts compiling, and not at all
    when the kernels load from the cache.
    """
    if not available():
        return False
    from numba.core import event

    from .build import loop
    from .policies import name_of

    # A kernel per loop, policy and features (latency, faults, ...): one case of each.
    wanted: dict[tuple[str, str, tuple[bool, ...]], tuple[Point, ResolvedPolicy]] = {}
    for point, policy in cases:
        template = "slotted" if point.scenario.system.time == "slotted" else "kernel"
        flags = features(point, policy)
        built = loop(template, name_of(policy.name), flags)
        function = built.simulate_slots if template == "slotted" else built.simulate
        if not function.overloads:  # not loaded or compiled in this process yet
            wanted.setdefault((template, policy.name, flags), (point, policy))
    if not wanted:
        return True

    class Announce(event.Listener):
        said = False

        def on_start(self, what: event.Event) -> None:
            if announce is not None and not self.said:
                self.said = True
                announce()

        def on_end(self, what: event.Event) -> None:
            pass

    with event.install_listener("numba:compile", Announce()):
        for point, policy in wanted.values():
            record(*short_case(point, policy), 1)
    return True


def every_case() -> list[tuple[Point, ResolvedPolicy]]:
    """A short case of every kernel of every built-in compiled policy: `prepare` them to build all ahead.

    Each policy's event kernel without and with latency, and its slot clock; with held
    messages (``slot.pull_delay``) too for the policies that send what it holds (JIQ, JBT-d).
    """
    systems: list[dict[str, Any]] = [
        {"system": {"servers": 4}},
        {"system": {"servers": 4}, "network": {"latency": {"kind": "exponential", "mean": 0.1}}},
        {"system": {"servers": 4, "time": "slotted"}}]
    held: dict[str, Any] = {"system": {"servers": 4, "time": "slotted", "slot": {"pull_delay": 1}}}
    cases = []
    for name in sorted(COMPILED):
        for system in systems + ([held] if name in ("jiq", "jbt") else []):
            scenario = {"name": name, "policies": [{"name": name}], "run": {"jobs": 20, "warmup_jobs": 0}, **system}
            try:
                point = Scenario.from_dict(scenario).points()[0]
            except ScenarioError:  # e.g. held messages for a policy that sends none
                continue
            if supports(point, point.policies[0]) is None:
                cases.append((point, point.policies[0]))
    return cases


def short_case(point: Point, policy: ResolvedPolicy) -> tuple[Point, ResolvedPolicy]:
    """The case with a run of a few jobs: enough to compile (or load) its kernel."""
    data = point.scenario.to_dict()
    run = {key: value for key, value in data.get("run", {}).items() if key != "batch_means"}  # (needs more jobs)
    arrivals = point.scenario.workload.arrivals
    # 20 jobs, or enough for about 10 batches, as a scenario must hold (`scenario.checks`).
    jobs = max(20, math.ceil(10 * (arrivals.mean_batch or 2.0))) if arrivals.kind == "batch_poisson" else 20
    data["run"] = {**run, "jobs": jobs, "warmup_jobs": 0}
    data.pop("precision", None)
    short = Scenario.from_dict(data).points()[0]
    return short, next(p for p in short.policies if p.label == policy.label)


