"""Small scenarios as plain data, and models built from them with a tracer attached (not run yet).

The tracer is `emulator.model.trace.Trace`; see its module for what it records.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import emulator
from emulator.model.build import build_model
from emulator.model.trace import Trace
from emulator.scenario.sweep import Point


def scenario_dict(policy: dict[str, Any] | list[dict[str, Any]], *, servers: int = 2, jobs: int = 10,
                  warmup: int = 0, load: float | str = 0.5, arrivals: dict[str, Any] | None = None,
                  service: dict[str, Any] | None = None, latency: float | dict[str, Any] | None = None,
                  dispatchers: int = 1, discipline: str = "fifo", capacity: int | None = None,
                  speeds: list[float] | None = None, allow_unstable: bool = False, seed: int = 1,
                  replications: int = 1, sweep: dict[str, list[Any]] | None = None) -> dict[str, Any]:
    """A scenario as plain data; deterministic arrivals and sizes unless told otherwise."""
    policies = policy if isinstance(policy, list) else [policy]
    data: dict[str, Any] = {
        "name": "test", "seed": seed, "replications": replications,
        "run": {"jobs": jobs, "warmup_jobs": warmup},
        "system": {"servers": servers, "dispatchers": dispatchers, "discipline": discipline},
        "workload": {"load": load, "arrivals": arrivals or {"kind": "deterministic"},
                     "service": service or {"kind": "deterministic", "mean": 1}},
        "policies": copy.deepcopy(policies),
        "allow_unstable": allow_unstable,
    }
    if capacity is not None:
        data["system"]["capacity"] = capacity
    if speeds is not None:
        data["system"]["speeds"] = speeds
    if latency is not None:
        law = latency if isinstance(latency, dict) else {"kind": "deterministic", "mean": latency}
        data["network"] = {"latency": law}
    if sweep:
        data["sweep"] = sweep
    return data


def make_point(policy: dict[str, Any] | list[dict[str, Any]], **options: Any) -> Point:
    return emulator.Scenario.from_dict(scenario_dict(policy, **options)).points()[0]


def write_trace(folder: Path, rows: list[tuple[float, float]], name: str = "trace.csv") -> str:
    """A trace file of (arrival time, size) rows; returns its path."""
    path = folder / name
    path.write_text("time,size\n" + "".join(f"{t!r},{s!r}\n" for t, s in rows))
    return str(path)


def trace_arrivals(folder: Path, rows: list[tuple[float, float]], jobs: int | None = None) -> dict[str, Any]:
    """Options for `make_point`/`traced` that replay ``rows`` exactly.

    The first ``jobs`` rows (default all) are measured. With fewer, the window
    closes when row ``jobs`` arrives; with all, when the trace runs out (at the
    last arrival).
    """
    return {"arrivals": {"kind": "trace", "path": write_trace(folder, rows)},
            "jobs": len(rows) if jobs is None else jobs, "warmup": 0}


def traced(policy: dict[str, Any] | list[dict[str, Any]], seed: int = 1, **options: Any) -> Trace:
    """Build a model of the first policy of a small scenario and attach a `Trace` (not run yet)."""
    point = make_point(policy, seed=seed, **options)
    return Trace(build_model(point, point.policies[0], seed))
