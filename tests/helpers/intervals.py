"""Replications in parallel and Student-t interval checks: the statistical tests' common tools.

The rules they serve are in ``tests/test_theory.py``'s module docstring: R
independent replications (seeds ``base .. base+R-1``), the Student-t interval of
their means at `LEVEL` (Bonferroni over the intervals a check asserts together),
and `check`'s refusal of any tolerance of `SENSITIVITY` of the reference or more.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

import emulator

LEVEL = 0.95  # per interval; a check asserting k intervals at once uses 1 - 0.05/k for each (`interval`)
WORKERS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


@dataclass(frozen=True)
class Interval:
    """The Student-t confidence interval of the mean of independent replications."""

    mean: float
    half: float
    values: tuple[float, ...]

    def contains(self, value: float, allowance: float = 0.0) -> bool:
        """Whether ``value`` lies in the interval widened by ``allowance`` on both sides."""
        return abs(self.mean - value) <= self.half + allowance

    def __str__(self) -> str:
        return f"{self.mean:.4f} ± {self.half:.4f} (R={len(self.values)})"


def interval(values: Sequence[float], family: int = 1) -> Interval:
    """Mean and half-width ``t_{1-a/2, R-1} s / sqrt(R)`` of R values, ``a = (1 - LEVEL) / family``.

    ``family`` is the number of intervals the check asserts together (Bonferroni).
    """
    level = 1.0 - (1.0 - LEVEL) / family
    x = np.asarray(values, dtype=float)
    r = len(x)
    half = float(stats.t.ppf(0.5 + level / 2.0, r - 1) * x.std(ddof=1) / math.sqrt(r))
    return Interval(float(x.mean()), half, tuple(float(v) for v in x))


ENGINE = ["simpy"]  # the engine of the test running now: see the `engine` fixture


def _simulate(task: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    seed, options = task
    return emulator.simulate(seed=seed, **options)


def replicate(base: int, replications: int, **options: Any) -> list[dict[str, Any]]:
    """``emulator.simulate`` with seeds ``base .. base + replications - 1``, in parallel, on `ENGINE`."""
    options = {"engine": ENGINE[0], **options}
    todo = [(base + r, options) for r in range(replications)]
    if WORKERS <= 1:
        rows = [_simulate(task) for task in todo]
    else:
        with ProcessPoolExecutor(min(WORKERS, replications)) as pool:
            rows = list(pool.map(_simulate, todo))
    assert all(row["engine"] == options["engine"] for row in rows), "the engine asked for did not run"
    return rows


def column(rows: list[dict[str, Any]], name: str, family: int = 1) -> Interval:
    return interval([row[name] for row in rows], family)


def report(name: str, measured: Interval, reference: float, allowance: float = 0.0) -> str:
    line = (f"{name}: simulated {measured} vs theory {reference:.4f}"
            + (f" (allowance {allowance:.4f})" if allowance else "")
            + (f", tolerance {(measured.half + allowance) / abs(reference):.1%} of it" if reference else ""))
    print(line)
    return line


SENSITIVITY = 0.04
"""The largest tolerance a check may have, relative to its reference: below 5%, so a 5% bias fails."""


def check(name: str, measured: Interval, reference: float, allowance: float = 0.0,
          scale: float | None = None) -> None:
    """Assert that ``reference`` lies in the interval widened by ``allowance``, and that this can fail.

    The tolerance ``measured.half + allowance`` must be below `SENSITIVITY` times
    the reference; a check that would pass a 5% bias fails as too weak. ``scale``
    replaces the reference in that rule where a relative bias means little: the
    fraction of pools at a level far in the tail (say 0.01) is checked to an
    absolute precision instead.
    """
    line = report(name, measured, reference, allowance)
    limit = SENSITIVITY * (abs(reference) if scale is None else scale)
    assert measured.half + allowance < limit, f"too weak a check (limit {limit:.4g}): {line}"
    assert measured.contains(reference, allowance), line
