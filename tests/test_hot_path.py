"""The SimPy engine's plain path (zero latency, no faults) resumes no generator per job.

A SimPy process costs a resumption of its generator (through `simpy.Process`) per event it
waits on, and a generator that hands out numbers drawn in batches costs one per number.
On this path the FIFO servers and the arrival source are callbacks of reusable events
(`emulator.model.server.Alarm`), and gaps, sizes and uniforms come from C-level iterators,
so the generator frames a run resumes do not grow with its jobs (the policies here have
no timer process).
"""

from __future__ import annotations

import inspect
import sys
from types import FrameType
from typing import Any

import pytest

import emulator


def generator_resumptions(policy: str, jobs: int, **options: Any) -> int:
    """Generator frames started or resumed during one `emulator.simulate` call."""
    count = 0

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        nonlocal count
        if event == "call" and frame.f_code.co_flags & inspect.CO_GENERATOR:
            count += 1

    sys.setprofile(profile)
    try:
        emulator.simulate(policy, servers=10, jobs=jobs, warmup_jobs=jobs // 10, seed=3, engine="simpy", **options)
    finally:
        sys.setprofile(None)
    return count


@pytest.mark.parametrize("policy, options", [
    ("jsq", {}), ("sqd", {"d": 2}), ("jiq", {}), ("random", {}),
    ("sqd", {"d": 2, "dispatchers": 3}), ("random", {"service": {"kind": "erlang", "k": 2}}),
])
def test_a_plain_run_resumes_no_generator_per_job(policy: str, options: dict[str, Any]) -> None:
    generator_resumptions(policy, 100, **options)  # first calls: imports and caches
    assert generator_resumptions(policy, 4_000, **options) == generator_resumptions(policy, 2_000, **options)
