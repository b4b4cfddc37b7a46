"""Each policy's kernels built before a run starts, so that its workers load them instead of compiling them at once."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..errors import ScenarioError
from ..scenario.schema import ResolvedPolicy
from ..scenario.sweep import Point, Scenario
from .engine import record
from .loading import available, features


def prepare(cases: Iterable[tuple[Point, ResolvedPolicy]], announce: Callable[[], None] | None = None) -> bool:
    """Load the kernels of ``cases`` in this process, compiling those the cache lacks; False if numba is unusable.

    A run calls it once before its worker processes start, with the (point, policy)
    pairs it will run compiled, so that its workers share what it compiled or loaded
    (forked workers inherit the loaded kernels; others load the cache it wrote) instead
    of each compiling the same kernel at once. Each policy has its own kernel per loop
    (the event kernel, the slot clock: `build`) and features (`kernel`), compiled here
    by one short run of a case it runs. ``announce`` is called just before numba starts compiling, and not at all
    when the kernels load from the cache.
    """
    if not available():
        return False
    from numba.core import event

    from .build import loop
    from .policies import name_of

    wanted = []
    for point, policy in one_per_kernel(cases):
        template, name, flags = kernel(point, policy)
        built = loop(template, name_of(name), flags)
        function = built.simulate_slots if template == "slotted" else built.simulate
        if not function.overloads:  # not loaded or compiled in this process yet
            wanted.append((point, policy))
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
        for point, policy in wanted:
            record(*short_case(point, policy), 1)
    return True


def kernel(point: Point, policy: ResolvedPolicy) -> tuple[str, str, tuple[bool, ...]]:
    """The kernel that runs the case: its loop (``kernel`` or ``slotted``), policy and `build.FEATURES` values."""
    template = "slotted" if point.scenario.system.time == "slotted" else "kernel"
    return template, policy.name, features(point, policy)


def one_per_kernel(cases: Iterable[tuple[Point, ResolvedPolicy]]) -> list[tuple[Point, ResolvedPolicy]]:
    """The first of ``cases`` that runs on each `kernel`, in order: building those builds every kernel of them."""
    first: dict[tuple[str, str, tuple[bool, ...]], tuple[Point, ResolvedPolicy]] = {}
    for point, policy in cases:
        first.setdefault(kernel(point, policy), (point, policy))
    return list(first.values())


def short_case(point: Point, policy: ResolvedPolicy) -> tuple[Point, ResolvedPolicy]:
    """The case with a run of a few jobs: enough to compile (or load) its kernel.

    20 jobs, or more where the scenario's checks ask a run for more (`scenario.checks`:
    about 10 batches of batch arrivals, a window of several slots in slotted time, a run
    longer than the mean down time of failing servers, ...): four times more until they
    pass, and at most the case's own run.
    """
    data = point.scenario.to_dict()
    run = {key: value for key, value in data.get("run", {}).items() if key != "batch_means"}  # (needs more jobs)
    data.pop("precision", None)
    jobs = 20
    while jobs < point.scenario.run.jobs:
        data["run"] = {**run, "jobs": jobs, "warmup_jobs": 0}
        try:
            short = Scenario.from_dict(data).points()[0]
        except ScenarioError:
            jobs *= 4
            continue
        return short, next(p for p in short.policies if p.label == policy.label)
    return point, policy
