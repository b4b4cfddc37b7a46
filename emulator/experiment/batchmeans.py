"""Intervals from batch means of one long replication (``run.batch_means``).

The measured jobs of a replication are split, in arrival order, into B batches of
nearly equal size (`emulator.measure.series.Series.batches`); their mean responses
Y_1 .. Y_B are treated as independent and normal, so the 95% half-width of the
mean response is t_{B-1} s / sqrt(B). That holds when the batches are much longer
than the correlation time of the responses; their lag-1 correlation says when
they are not (`too_short`).
"""

from __future__ import annotations

import math

import numpy as np

from ..measure.series import Series


def lag1(means: np.ndarray) -> float:
    """The lag-1 autocorrelation of a sequence (NaN when it has no spread).

    >>> round(lag1(np.array([1.0, 2.0, 3.0, 4.0])), 3)
    0.25
    """
    centred = means - means.mean()
    denominator = float(centred @ centred)
    return float(centred[:-1] @ centred[1:]) / denominator if denominator > 0 else math.nan


def interval(series: Series) -> tuple[float, float]:
    """The 95% half-width of the mean response from the batch means, and their lag-1 correlation."""
    from scipy import stats

    means = series.means()
    b = len(means)
    if b < 2:  # every job of all but one batch was blocked or lost
        return math.nan, math.nan
    half = float(stats.t.ppf(0.975, b - 1) * np.std(means, ddof=1) / math.sqrt(b))
    return half, lag1(means)


def too_short(correlation: float, batches: int) -> bool:
    """Whether a lag-1 correlation of ``batches`` batch means says they are correlated.

    Independent batch means have a lag-1 estimate of about N(-1/B, 1/B): one above
    1.96/sqrt(B) happens in under 2.5% of independent cases.
    """
    return correlation > 1.96 / math.sqrt(batches)


def note(correlation: float, batches: int) -> str | None:
    """The line that says the batches are too short, or None."""
    if not too_short(correlation, batches):
        return None
    return (f"run.batch_means: the {batches} batch means have a lag-1 correlation of {correlation:.2f}, above "
            f"1.96/sqrt({batches}) = {1.96 / math.sqrt(batches):.2f}: the batches are too short for independent "
            f"means; use fewer batches or a longer run")
