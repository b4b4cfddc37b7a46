"""The suite's share of the equivalence set (`benchmarks/equivalence_cases.py`), and the kernels it runs.

`tests/test_compiled.py` runs these cases on both engines; `tests/conftest.py` builds their
kernels before the test processes start (`kernel_cases`), so that no test compiles one of them.
"""

from __future__ import annotations

import os
import runpy
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EQUIVALENCE = runpy.run_path(str(ROOT / "benchmarks" / "equivalence_cases.py"))
IGNORED: tuple[str, ...] = EQUIVALENCE["IGNORED"]
CASES: dict[str, dict[str, Any]] = dict(EQUIVALENCE["cases"]().items())

JOBS = 400
"""Measured jobs of a suite case: equivalence is identity row for row, and a divergence shows in the
first jobs it touches; the full lengths are `benchmarks/equivalence.py --engines`'s."""
JOBS_PER_SERVER = 10
"""...but at least this many jobs per server, so that a system of 200 servers fills its queues too."""


SAMPLED = {"latency": ("random", "jsq", "sqd", "jiq", "jbt", "late_binding", "redundancy", "batch_sqd"),
           "ps": ("random", "jsq", "sqd"),
           "slotted": ("random", "jsq", "sqd", "jiq", "jbt"),
           "held": ("lor",),
           "faults": ("lor", "sqd"),
           "faults with latency": ("sqd",)}
"""The policies whose cases with latency, processor sharing, slotted time and faults the suite runs (faults:
failing servers, and lost messages at zero latency, which a policy that asks runs on a kernel of its own).

Every policy's cases in continuous time at zero latency (FIFO and pools) are in the suite, and the
contract's systems without latency (`contract_systems`). Each feature is a
further kernel per policy (5-30 s of CPU to compile, about 7 s of the suite's time each), and each
case a further test, so the suite runs them for a few policies, chosen so that each way the kernel carries
the feature is covered once; `benchmarks/equivalence.py --engines` runs every case, at full length.
Latency: a policy whose jobs alone travel (Random, which `check_policy`'s example checks in every system),
one that asks all servers and one that samples (the ask records and their replies), one that pulls
(JIQ's tokens: a server's message to the dispatchers, as JSQ-push's updates and LOR's completions), one
that reports and broadcasts (JBT-d), one that reserves and is asked for its jobs (late binding), one that
cancels copies (redundancy), one whose batch of jobs waits for one ask's replies (batch sampling).
Processor sharing: one without messages and two that ask (whose theory `tests/test_ps.py` checks
on them).
Slotted time: the policies of the slot model's paper, whose theory and claims the slotted tests
check on them; held messages (``pull_delay``) under LOR, whose completions are not held, to each job's
own dispatcher (the slot clock's feature ``origins``), a decision counting its whole batch.
Faults: one whose servers answer their dispatchers (LOR's completions: lost at zero latency, and a job blocked
at a down server answered at its recovery, `recovery`; its failing kernel also carries every way a server fails,
hold and lose: capacities, occupancy, speeds), and one that asks (at zero latency, lost messages take the asks
through records: `faults`); with latency, the one whose queries meet down servers and timeouts.
"""

PLAIN = {"ps": ("lor", "batch_sqd"), "held": ("jiq", "jbt"), "faults": ("jiq", "batch_sqd"),
         "faults with latency": ("jiq",)}
"""Further policies whose cases of a feature the suite runs as plain Python (`PLAIN_SUITE`, `NUMBA_DISABLE_JIT`:
the kernel's own code, every array index checked by numpy), not compiled. Each is a kernel of its own for a
handful of cases, 10-25 s of CPU to compile, where the feature's code is compiled in `SAMPLED`'s kernels: the
completions PS changes (LOR) and whole batches, each of whose jobs schedules a completion at once; tokens and
reports held for later slots; JIQ's tokens at failing servers, and JIQ-SQ(d)'s servers that ask (a reply lost
at a server that is down); batches placed one job a step at their ask's timeout; and the lost messages at zero
latency of JIQ-SQ(d) and batch SQ(d), which take kernels of their own."""


def tier(options: dict[str, Any]) -> str | None:
    """How the suite runs a case: ``compiled`` (every case at zero latency in continuous time, and those of
    `SAMPLED`), ``plain`` (those of `PLAIN`), or None.

    The rest run in `benchmarks/equivalence.py --engines`, the whole set at full length.
    """
    policy, latent = options["policy"], options["latency"] is not None

    def sampled(feature: str) -> str | None:
        return "compiled" if policy in SAMPLED[feature] else "plain" if policy in PLAIN.get(feature, ()) else None

    if latent and policy not in SAMPLED["latency"]:
        return None
    if options.get("discipline") == "ps":
        return None if latent else sampled("ps")
    if options.get("time") == "slotted":
        return sampled("held" if (options.get("slot") or {}).get("pull_delay", 0) > 0 else "slotted")
    if options.get("failures") is not None or (options.get("loss", 0) > 0 and not latent):
        how = sampled("faults with latency" if latent else "faults")
        # (JIQ-SQ(d)'s lost messages at zero latency take a kernel of their own: its asks through records; batch
        # SQ(d)'s lost messages alone too, where its failing servers' kernel asks through records already)
        own_kernel = not latent and options.get("loss", 0) > 0 and (
            (policy == "jiq" and "d" in options) or (policy == "batch_sqd" and options.get("failures") is None))
        if how == "plain" and not own_kernel and not latent and options.get("failures") is None:
            return "compiled"  # (lost messages alone at zero latency: the policy's own kernel, JIQ's tokens)
        return "plain" if how and own_kernel else how
    return "compiled"


def shortened(options: dict[str, Any]) -> dict[str, Any]:
    """The case's options with the suite's run length (`JOBS`, `JOBS_PER_SERVER`), never longer than its own."""
    jobs = min(options["jobs"], max(JOBS, JOBS_PER_SERVER * options.get("servers", 10)))
    return {**options, "jobs": jobs}


SUITE = {key: shortened(options) for key, options in CASES.items() if tier(options) == "compiled"}
"""The suite's cases on the compiled engine, by key, at the suite's run lengths."""
PLAIN_SUITE = {key: shortened(options) for key, options in CASES.items() if tier(options) == "plain"}
"""The suite's cases on the compiled engine's code run as plain Python (`PLAIN`)."""


def simpy_only(options: dict[str, Any]) -> bool:
    """The cases the kernels do not model, which SimPy runs: an index per dispatcher (LSQ, LOR, JSQ-push with
    latency) of more ids than the compiled indexes hold (none of the equivalence cases)."""
    from emulator.compiled.policies.jsq import INDEXED_IDS

    several = options.get("dispatchers", 1)
    indexed = options["policy"] in ("lsq", "lor") or (options["policy"] == "jsq_push" and options["latency"])
    return indexed and several > 1 and several * options["servers"] > INDEXED_IDS


def contract_systems(policy: str) -> tuple[str, ...]:
    """The contract's systems (`emulator.contract.SYSTEMS`) whose rows the suite compares on both engines for a
    built-in ``policy``: those with latency for the policies of `SAMPLED` only, as the equivalence cases."""
    from emulator.contract import SYSTEMS

    latent = policy in SAMPLED["latency"]
    return tuple(name for name, extra in SYSTEMS.items() if latent or "latency" not in extra)


def contract_options() -> list[dict[str, Any]]:
    """The systems the suite's `emulator.contract.same_on_both_engines` runs every built-in policy in
    (`contract_systems`), as case options."""
    from emulator.contract import POISSON, SYSTEMS, _params
    from emulator.policies import REGISTRY

    base = {"servers": 4, "load": 0.8, "jobs": 400, "warmup_jobs": 40, "latency": None, **POISSON}
    return [{"policy": name, **base, **SYSTEMS[system], **_params(cls, {**base, **SYSTEMS[system]}["servers"])}
            for name, cls in sorted(REGISTRY.items()) for system in contract_systems(name)]


def kernel_cases() -> list[tuple[Any, Any]]:
    """The (point, policy) of every suite case and contract system the compiled engine runs: `ahead.prepare`
    builds their kernels."""
    from emulator.api import scenario_data
    from emulator.compiled import supports
    from emulator.errors import ScenarioError
    from emulator.scenario.sweep import Scenario

    out = []
    for options in [*SUITE.values(), *contract_options()]:
        if simpy_only(options):
            continue
        policy, rest = options["policy"], {key: value for key, value in options.items() if key != "policy"}
        try:
            point = Scenario.from_dict(scenario_data(policy, **rest)).points()[0]
        except ScenarioError:  # refused alike by both engines (drawn speeds that overload a server)
            continue
        if supports(point, point.policies[0]) is None:
            out.append((point, point.policies[0]))
    return out


def build_kernels(claims: str) -> None:
    """Build the suite's kernels (`kernel_cases`), each that no other process has claimed, the costliest first.

    A kernel is claimed by creating a file named after it in the folder ``claims``, which only one process
    can. Two processes that run this side by side take the next kernel as each finishes one, so that they
    end within about one kernel's time of each other, where halves fixed beforehand left one of them idle.
    """
    from emulator.compiled import ahead

    cases = ahead.one_per_kernel(kernel_cases())
    for point, policy in sorted(cases, key=lambda case: _cost(*ahead.kernel(*case)), reverse=True):
        template, name, flags = ahead.kernel(point, policy)
        try:
            os.close(os.open(os.path.join(claims, f"{template}-{name}-{flags}"), os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            continue
        ahead.prepare([(point, policy)])


def _cost(template: str, name: str, flags: tuple[bool, ...]) -> float:
    """A kernel's compile time, roughly: its policy's own code, more with each feature (latency most)."""
    from emulator.compiled.build import FEATURES
    from emulator.compiled.policies import module

    extra = {"latent": 1.0, "failing": 0.5, "copies": 0.5, "asking": 0.3, "reserving": 0.3, "held": 0.3, "faulty": 0.3}
    size = Path(module(name).__file__ or "").stat().st_size
    on = [feature for feature, flag in zip(FEATURES[template], flags, strict=True) if flag]
    return size * (1 + sum(extra.get(feature, 0.1) for feature in on))
