"""The job streams are defined once (`emulator.workload.blocks`): both engines read the same draws.

The SimPy engine reads each stream value by value, the compiled engine `CHUNK` blocks at a
time; here the same stream, read both ways, gives the same floats for every arrival process
and law, a trace (finite) included. And neither engine names these streams or draws them
itself, so that the two cannot drift apart.
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from emulator.compiled.blocks import CHUNK, chunks
from emulator.scenario.schema import ArrivalsConfig, LawConfig
from emulator.workload import blocks
from emulator.workload.streams import BATCH, values

ROOT = Path(__file__).resolve().parents[1]
STREAMS = {"arrivals", "sizes", "dispatchers"}


def _both(draw: Any, again: Any, count: int) -> tuple[list[float], list[float]]:
    """The first ``count`` values of one stream read value by value, and of a fresh copy read in chunks."""
    one = list(itertools.islice(values(draw), count))
    other: list[float] = []
    for block in chunks(again):
        other += block.tolist()
        if len(other) >= count or len(block) < BATCH * CHUNK:
            break
    return one, other[:count]


@pytest.mark.parametrize("arrivals", [
    {"kind": "poisson"}, {"kind": "deterministic"}, {"kind": "mmpp2", "burstiness": 3.0},
    {"kind": "batch_poisson", "mean_batch": 2.5},
])
def test_gaps_read_by_either_engine_are_the_same(arrivals: dict[str, Any]) -> None:
    config = ArrivalsConfig(**arrivals)
    count = BATCH * CHUNK + 5  # past the first chunk
    one, other = _both(blocks.arrival_gaps(config, 3.0, 7), blocks.arrival_gaps(config, 3.0, 7), count)
    assert len(one) == count and one == other


def test_a_trace_read_by_either_engine_is_the_same_and_ends(tmp_path: Path) -> None:
    times = np.cumsum(np.random.default_rng(3).exponential(1.0, BATCH + 10)).tolist()
    path = tmp_path / "trace.csv"
    path.write_text("time,size\n" + "".join(f"{t!r},{1.0 + t % 1.0!r}\n" for t in times))
    config = ArrivalsConfig(kind="trace", path=str(path))
    one, other = _both(blocks.arrival_gaps(config, 1.0, 7), blocks.arrival_gaps(config, 1.0, 7), 10 * BATCH)
    assert len(one) == len(times) and one == other == np.diff(times, prepend=0.0).tolist()


@pytest.mark.parametrize("law", [
    {"kind": "exponential", "mean": 2.0}, {"kind": "deterministic", "mean": 2.0}, {"kind": "erlang", "k": 3},
    {"kind": "hyperexponential", "scv": 4.0}, {"kind": "lognormal", "scv": 2.0}, {"kind": "pareto", "alpha": 2.5},
])
def test_law_draws_read_by_either_engine_are_the_same(law: dict[str, Any]) -> None:
    spread = LawConfig(**law).law()
    count = BATCH * CHUNK + 5
    one, other = _both(spread.blocks(np.random.default_rng(5)), spread.blocks(np.random.default_rng(5)), count)
    assert len(one) == count and one == other


def _stream_names(path: Path) -> list[str]:
    """The job streams ``path`` names itself: a literal stream name passed to `generator`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("generator"):
            found += [arg.value for arg in node.args[1:] if isinstance(arg, ast.Constant) and arg.value in STREAMS]
    return found


def test_the_engines_name_no_job_stream_of_their_own() -> None:
    """The gaps', sizes' and split's streams are named only in `emulator.workload.blocks`."""
    engines = [*(ROOT / "emulator" / "model").glob("*.py"), *(ROOT / "emulator" / "compiled").glob("*.py")]
    named = {path.name: _stream_names(path) for path in engines}
    assert {name: streams for name, streams in named.items() if streams} == {}
    assert set(_stream_names(ROOT / "emulator" / "workload" / "blocks.py")) == STREAMS


def test_the_compiled_engine_draws_no_job_stream_itself() -> None:
    """`emulator.compiled.blocks` reads the shared streams: it calls no generator's draws of its own."""
    tree = ast.parse((ROOT / "emulator" / "compiled" / "blocks.py").read_text())
    draws = [ast.unparse(node.func) for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and "rng" in ast.unparse(node.func)]
    assert draws == []
