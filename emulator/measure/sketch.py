"""Response-time quantiles in bounded memory: the sketch both engines fill."""

from __future__ import annotations

import math
import sys

import numpy as np


class QuantileSketch:
    """Quantiles from a log-spaced histogram: memory bounded, relative error below 0.5%.

    Values are buffered and folded into bins of ratio 1.01 (bin i holds
    [1e-9 * 1.01^i, 1e-9 * 1.01^(i+1))). The bins kept are those between the
    smallest and the largest value seen, so any positive finite value is binned
    correctly; all floats together span fewer than 150,000 bins.

    >>> sketch = QuantileSketch()
    >>> for x in range(1, 1001):
    ...     sketch.add(float(x))
    >>> abs(sketch.quantile(0.5) / 500 - 1) < 0.005
    True
    >>> sketch = QuantileSketch()
    >>> for x in (1e-300, 1e300, 1e308):
    ...     sketch.add(x)
    >>> [abs(sketch.quantile(q) / x - 1) < 0.005 for q, x in ((0.3, 1e-300), (0.6, 1e300), (1, 1e308))]
    [True, True, True]
    """

    RATIO = 1.01
    LOW = 1e-9  # the origin of the bin grid
    FLUSH = 8192  # values buffered before they are binned
    TINY = 5e-324  # a zero is binned with the smallest positive float

    def __init__(self) -> None:
        self.buffer: list[float] = []
        self.first = 0  # the bin index of counts[0]
        self.counts = np.zeros(0, dtype=np.int64)

    def add(self, x: float) -> None:
        self.buffer.append(x)
        if len(self.buffer) >= self.FLUSH:
            self.flush()

    def flush(self) -> None:
        if not self.buffer:
            return
        # (`fromiter`: the same float64 array, without `asarray`'s look at each item's type and shape.)
        self.fold(np.fromiter(self.buffer, np.float64, len(self.buffer)))
        self.buffer.clear()

    def fold(self, values: np.ndarray) -> None:
        """Bin an array of values at once (the compiled engine hands its batches here)."""
        values = np.maximum(values, self.TINY)
        with np.errstate(over="ignore"):
            scaled = values / self.LOW
        finite = np.isfinite(scaled)
        if finite.all():  # the usual case: one log per value, computed in place
            logs = np.log(scaled, out=scaled)
        else:  # values / LOW overflows above about 1.8e299: take the difference of logs there instead
            logs = np.where(finite, np.log(scaled), np.log(values) - math.log(self.LOW))
        np.divide(logs, math.log(self.RATIO), out=logs)
        index = np.floor(logs, out=logs).astype(np.int64)
        low, high = int(index.min()), int(index.max())
        size = self.counts.size
        if size == 0 or low < self.first or high >= self.first + size:  # widen the kept range
            if size:
                low, high = min(low, self.first), max(high, self.first + size - 1)
            grown = np.zeros(high - low + 1, dtype=np.int64)
            grown[self.first - low:self.first - low + size] = self.counts
            self.counts, self.first = grown, low
        self.counts += np.bincount(index - self.first, minlength=self.counts.size)

    def quantile(self, q: float) -> float:
        """The q-quantile (the value of rank ceil(q n)), as the bin's geometric centre."""
        self.flush()
        total = int(self.counts.sum())
        if total == 0:
            return math.nan
        rank = max(1, math.ceil(q * total))
        index = self.first + int(np.searchsorted(np.cumsum(self.counts), rank))
        top = math.log(sys.float_info.max)
        if (index + 0.5) * math.log(self.RATIO) < top:
            return float(self.LOW * self.RATIO ** (index + 0.5))
        # Values above about 1e299: RATIO ** (index + 0.5) alone would overflow.
        exponent = math.log(self.LOW) + (index + 0.5) * math.log(self.RATIO)
        return math.exp(exponent) if exponent < top else sys.float_info.max
