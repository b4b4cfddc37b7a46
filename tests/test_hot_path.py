"""The SimPy engine's plain path (zero latency, no faults) resumes no generator per job.

A SimPy process costs a resumption of its generator (through `simpy.Process`) per event it
waits on, and a generator that hands out numbers drawn in batches costs one per number.
On this path the FIFO servers and the arrival source are callbacks of reusable events
(`emulator.model.server.Alarm`), and gaps, sizes and uniforms come from C-level iterators,
so the generator frames a run resumes do not grow with its jobs (the policies here have
no timer process). A server's callbacks keep the order of the process they replace.
"""

from __future__ import annotations

import inspect
import sys
from types import FrameType
from typing import Any

import pytest
from helpers.scenarios import traced

import emulator
from emulator.model.job import Job


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


def test_a_job_sent_to_a_server_by_its_departure_hook_starts_one_service(trace_rows: Any) -> None:
    # One server. Job 0 arrives at 1 and leaves at 2; its departure hook sends a job of
    # size 2 there, which finds it empty: one service, 2 to 4, then job 1 (5 to 6). The
    # server looks at its queue after the hooks, as a process would: a second service
    # scheduled for the same job would make it leave twice.
    trace = traced({"name": "random"}, servers=1, **trace_rows([(1.0, 1.0), (5.0, 1.0)]))
    server = trace.model.servers[0]
    extra = Job(99, 2.0, 2.0, False)

    def hook(departed: Any) -> None:
        if not hasattr(extra, "server"):
            departed.accept(extra)

    server.on_depart = hook
    trace.run()
    assert [(now, job.id) for now, _, job in trace.left] == [(2.0, 0), (4.0, 99), (6.0, 1)]
    assert extra.start == 2.0
