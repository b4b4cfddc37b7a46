"""Fixtures shared by the test modules; the helpers they use are in `helpers`."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from helpers import intervals
from helpers.scenarios import trace_arrivals
from hypothesis import settings

# The drawn tests draw the same examples on every run, so that the suite's verdict does not depend on
# the day it runs; `pytest --hypothesis-profile=default` draws afresh.
settings.register_profile("suite", derandomize=True)
settings.load_profile("suite")

# Compiling the kernels when the cache has none; `cache.trusted`: the first process checked it already.
_CHECK = "from emulator import compiled; compiled.available()"
_COMPILE = ("import sys; sys.path.insert(0, {tests!r}); from emulator.compiled import cache; "
            "from helpers.equivalence import build_kernels; cache.trusted = True; build_kernels({claims!r})")


def pytest_configure(config: pytest.Config) -> None:
    """On the controller of several test processes: compile the kernels once, before they start.

    Otherwise each process compiles the kernels of each policy on its first compiled test (10-30 s
    of CPU each, on an empty cache), often the same ones side by side. Here one process checks the
    cache (discarding a stale one), then every kernel the suite runs compiles once, in two processes
    that trust that check, so that neither discards what the other is writing, each taking the next
    kernel the other has not (`helpers.equivalence.build_kernels`); the test processes load them.
    The suite's kernels are those of its equivalence cases (`helpers.equivalence.kernel_cases`):
    every kernel another test runs is among them. It does nothing when the cache holds them, and on
    failure the tests compile as before.
    """
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", None):
        return
    subprocess.run([sys.executable, "-c", _CHECK], check=False)
    tests = str(Path(__file__).parent)
    with tempfile.TemporaryDirectory() as claims:
        compiling = [subprocess.Popen([sys.executable, "-c", _COMPILE.format(tests=tests, claims=claims)])
                     for _ in range(2)]
        for process in compiling:
            process.wait()


@pytest.fixture
def trace_rows(tmp_path: Path):  # type: ignore[no-untyped-def]
    """``trace_rows(rows, jobs=None)``: options that replay (time, size) rows as the arrival stream."""
    return lambda rows, jobs=None: trace_arrivals(tmp_path, rows, jobs)


@pytest.fixture(params=["simpy", "compiled"])
def engine(request: pytest.FixtureRequest) -> Any:
    """Run the test on each engine (``compiled`` runs on SimPy what it does not support)."""
    intervals.ENGINE[0] = request.param
    yield request.param
    intervals.ENGINE[0] = "simpy"
