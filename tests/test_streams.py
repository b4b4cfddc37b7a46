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


CASES = [(n, k, replace) for n in range(1, 13) for k in range(n + 1) for replace in (False, True)]
"""Every branch of `Uniforms.sample`: with replacement, k = 2, rejection (4k <= n) and the partial shuffle."""


def test_the_kernels_samples_are_the_policys_samples() -> None:
    """`emulator.compiled.core.sample` draws what `Uniforms.sample` does, from the same generator, in every branch,
    and leaves the uniforms' stream at the same place (the case list, repeated, reads many blocks)."""
    pytest.importorskip("numba")
    from emulator.compiled import core, state
    from emulator.workload.streams import Uniforms, generator

    uniforms = Uniforms(generator(7, "policy"))
    rng = generator(7, "policy")  # (held: the kernel reads its state through the address)
    interface = rng.bit_generator.ctypes
    bitgen = (interface.next_double, interface.state_address)
    ubuf, iv = np.zeros(core.BATCH), np.zeros(state.I_NIV, dtype=np.int64)
    iv[state.I_UPOS] = core.BATCH
    out, pool = np.zeros(12, dtype=np.int64), np.zeros(4 * 12, dtype=np.int64)
    for n, k, replace in CASES * 40:
        expected = uniforms.sample(n, k, replace)
        core.sample(bitgen, ubuf, iv, n, k, replace, out, pool)
        assert out[:k].tolist() == expected, (n, k, replace)
    assert core.uniform(bitgen, ubuf, iv) == uniforms.random()


@pytest.mark.parametrize(("n", "k"), [(5, 3), (4, 4), (6, 2), (4, 1), (3, 1)])
def test_a_sample_without_replacement_is_uniform_over_ordered_draws(n: int, k: int) -> None:
    """Each ordered k-tuple of distinct values is equally likely: a chi-square test of 300 draws per tuple
    (a fixed seed; a correct sampler fails it with probability 0.001)."""
    from math import perm

    from scipy import stats

    from emulator.workload.streams import Uniforms

    uniforms = Uniforms(np.random.default_rng(2026))
    cells = perm(n, k)
    counts: dict[tuple[int, ...], int] = {}
    for _ in range(300 * cells):
        drawn = tuple(uniforms.sample(n, k))
        assert len(set(drawn)) == k and all(0 <= x < n for x in drawn)
        counts[drawn] = counts.get(drawn, 0) + 1
    assert len(counts) == cells
    assert stats.chisquare(list(counts.values())).pvalue > 0.001


def test_a_sample_of_more_distinct_values_than_there_are_is_refused() -> None:
    """A policy of one's own that asks for k > n distinct values gets a ValueError that says so."""
    from emulator.workload.streams import Uniforms

    with pytest.raises(ValueError, match="a sample of 5 distinct values from 4: expected at most 4"):
        Uniforms(np.random.default_rng(1)).sample(4, 5)


def test_a_policys_uniforms_read_with_next_or_random_are_one_stream() -> None:
    # SQ(2) and JSQ read `draws` with `next`, other policies call `random`: both take the same
    # draws in turn, which are the generator's own, in order.
    from emulator.workload.streams import Uniforms

    uniforms = Uniforms(np.random.default_rng(5))
    mixed = [next(uniforms.draws) if i % 3 else uniforms.random() for i in range(3 * BATCH)]
    assert mixed == np.random.default_rng(5).random(3 * BATCH).tolist()
