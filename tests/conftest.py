"""Fixtures shared by the test modules; the helpers they use are in `helpers`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import intervals
from helpers.scenarios import trace_arrivals


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
