"""MSER-5: the warm-up found from a run's own output (White 1997; Franklin and White 2008).

The responses in arrival order are averaged in batches of 5, Y_1 .. Y_m. Dropping the
first d batches leaves m - d of them with mean Ȳ_d; the MSER statistic

    Z(d) = sum_{j > d} (Y_j - Ȳ_d)^2 / (m - d)^2

is the squared standard error of Ȳ_d as if the batches were independent. Dropping the
biased start lowers it; dropping good data raises it (fewer batches). The truncation
point is the d that minimises Z. When the minimum lies in the last half of the run the
run is too short to tell the transient from the steady state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

WIDTH = 5
"""Jobs per batch: the 5 of MSER-5."""

TAIL = 10
"""Batches kept at least: with one or two left Z(d) is near 0 whatever the data, a minimum of no meaning."""


def statistic(means: np.ndarray) -> np.ndarray:
    """Z(d) for d = 0 .. m - 1, from the batch means ``means`` (Y_1 .. Y_m).

    >>> statistic(np.array([5.0, 1.0, 1.0, 1.0])).round(4).tolist()
    [0.75, 0.0, 0.0, 0.0]
    """
    # Sums from the right, of values centred on their overall mean: the sums of squares
    # then do not lose their digits to cancellation when the mean is large.
    centred = means - means.mean()
    left = np.arange(len(means), 0, -1, dtype=float)  # m - d
    first = np.cumsum(centred[::-1])[::-1]
    second = np.cumsum((centred * centred)[::-1])[::-1]
    squares = np.maximum(second - first * first / left, 0.0)  # rounding can leave -1e-17
    result: np.ndarray = squares / (left * left)
    return result


@dataclass(frozen=True)
class Truncation:
    """The warm-up MSER-5 found in one replication.

    ``batch``: the number of batch means dropped (the argmin of Z over the kept range,
    or over the first half when the run is too short); ``jobs``: the jobs dropped
    (arrivals before the first kept batch); ``found``: the job the global minimum
    points at; ``too_short``: that minimum lies in the last half of the run.
    """

    batch: int
    jobs: int
    found: int
    too_short: bool
    statistic: np.ndarray
    starts: np.ndarray  # the arrival number of each batch mean's first job


def truncate(sums: np.ndarray, counts: np.ndarray) -> Truncation:
    """MSER-5 on batch sums and counts of ``WIDTH`` consecutive arrivals (a `Series` of blocks).

    A batch whose jobs were all blocked or lost has no mean and is left out.
    """
    kept = np.flatnonzero(counts > 0)
    means = sums[kept] / counts[kept]
    z = statistic(means)
    m = len(means)
    last = max(1, m - TAIL + 1)  # the truncations that keep at least TAIL batches
    best = int(np.argmin(z[:last]))
    half = max(1, m // 2 + 1)
    too_short = best >= half
    if too_short:  # the run still gets a truncation: the best one that keeps half of it
        chosen = int(np.argmin(z[:half]))
    else:
        chosen = best
    starts = kept * WIDTH
    return Truncation(chosen, int(starts[chosen]), int(starts[best]), too_short, z, starts)


def suggested_jobs(found: int) -> int:
    """A run length for which a transient ending near job ``found`` lies in the first quarter.

    Rounded up to two significant digits.
    """
    wanted = 4 * max(found, 1)
    step = 10 ** max(0, int(math.log10(wanted)) - 1)
    return -(-wanted // step) * step
