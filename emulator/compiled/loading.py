"""Loading the compiled kernels: whether numba works here; each policy's kernels, built before a run starts."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import ScenarioError
from ..policies import BUILT_IN
from ..scenario.schema import ResolvedPolicy, SlotConfig
from ..scenario.sweep import Point, Scenario
from .supports import COMPILED, supports


@functools.cache
def available() -> bool:
    """Whether the kernel loads in this process: numba is installed and can cache somewhere.

    Numba caches next to the package (``__pycache__``), or, where that is read-only,
    in the user's cache folder (``~/.cache/numba``), or in ``NUMBA_CACHE_DIR`` if set;
    with none writable it refuses to load, and the SimPy engine runs instead. The
    cache is checked first (`cache.check`): one that is damaged or was compiled from
    other sources is discarded, and the kernel compiled once more.
    """
    try:
        from . import core  # noqa: F401  (numba, imported)
    except (ImportError, RuntimeError):
        return False
    from . import cache

    cache.guard()
    cache.check()
    return True


COMPILE_SECONDS = 20
"""About how long compiling one policy's kernel takes on an empty cache (`build`; the event kernel or the slot clock).

Measured on 2 shared cores: 10-25 s by policy and loop (docs/compiled-engine.md).
"""


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

    wanted: dict[tuple[str, str], tuple[Point, ResolvedPolicy]] = {}
    for point, policy in cases:
        template = "slotted" if point.scenario.system.time == "slotted" else "kernel"
        built = loop(template, name_of(policy.name), features(point, policy))
        function = built.simulate_slots if template == "slotted" else built.simulate
        if not function.overloads:  # not loaded or compiled in this process yet
            wanted.setdefault((template, policy.name), (point, policy))
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
            from .engine import record  # (the drivers load this module)

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


def features(point: Point, policy: ResolvedPolicy) -> tuple[bool, ...]:
    """The kernel's `build.FEATURES` for this case: latency (the event kernel) or held slot messages (the slot
    clock), and whether the policy's decisions are checked (a policy that is not built in)."""
    checked = policy.name not in BUILT_IN
    if point.scenario.system.time == "slotted":
        return ((point.scenario.system.slot or SlotConfig()).pull_delay > 0, checked)
    return (point.scenario.network.latency.mean != 0, checked)


def short_case(point: Point, policy: ResolvedPolicy) -> tuple[Point, ResolvedPolicy]:
    """The case with a run of a few jobs: enough to compile (or load) its kernel."""
    data = point.scenario.to_dict()
    data["run"] = {**data.get("run", {}), "jobs": 20, "warmup_jobs": 0}
    short = Scenario.from_dict(data).points()[0]
    return short, next(p for p in short.policies if p.label == policy.label)


