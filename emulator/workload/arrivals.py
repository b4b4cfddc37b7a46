"""Arrival processes as endless iterators of inter-arrival gaps.

All processes have the same long-run rate; the bursty ones (MMPP-2 and
batch-Poisson) have more variability at that rate. A gap of 0 means the job
arrives together with the previous one (a batch).
"""

from __future__ import annotations

import csv
import itertools
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from .streams import BATCH


def gaps(kind: str, rate: float, rng: np.random.Generator, *, burstiness: float = 2.0,
         switch_rate: float = 0.1, mean_batch: float = 2.0, batch: str = "geometric",
         path: str | None = None) -> Iterator[float]:
    """Inter-arrival gaps of the process ``kind`` with long-run ``rate`` jobs per unit time.

    Parameters
    ----------
    kind : str
        ``poisson``, ``deterministic``, ``mmpp2``, ``batch_poisson`` or ``trace``.
    rate : float
        Long-run arrival rate (ignored by ``trace``, whose times are used as they are).
    burstiness : float
        ``mmpp2``: peak-to-mean rate ratio b >= 1. The high state has rate b*rate
        and holds a fraction 1/(b+1) of the time; the low state has rate rate/b.
    switch_rate : float
        ``mmpp2``: high/low cycles per unit time; the mean high period is
        1/((b+1)*switch_rate) and the mean low period b/((b+1)*switch_rate).
    mean_batch : float
        ``batch_poisson``: mean batch size (>= 1); batches arrive as a Poisson
        process of rate rate/mean_batch, so ``rate`` is still the job rate.
    batch : str
        ``batch_poisson``: the batch size's law, ``geometric`` (mean ``mean_batch``)
        or ``deterministic`` (exactly ``mean_batch`` jobs, a whole number).
    path : str
        ``trace``: CSV file with a ``time`` column (arrival times, non-decreasing).

    Examples
    --------
    >>> g = gaps("deterministic", 4.0, np.random.default_rng(0))
    >>> next(g)
    0.25
    """
    if kind == "poisson":
        return _exponential(rng, 1.0 / rate)
    if kind == "deterministic":
        return itertools.repeat(1.0 / rate)
    if kind == "mmpp2":
        return _mmpp2(rng, rate, burstiness, switch_rate)
    if kind == "batch_poisson":
        if batch == "deterministic":
            return _fixed_batches(rng, rate, int(mean_batch))
        return _batch_poisson(rng, rate, mean_batch)
    if kind == "trace":
        assert path is not None
        times = read_trace(path)[0]
        return iter(np.diff(times, prepend=0.0).tolist())
    raise ValueError(f"unknown arrival process '{kind}'")


def _exponential(rng: np.random.Generator, mean: float) -> Iterator[float]:
    """``rng.exponential(mean, BATCH)`` blocks, each drawn when the previous one is used up.

    A C-level iterator (as `emulator.workload.streams.Uniforms`): its ``next`` resumes no
    Python frame except to draw a block, where a generator would resume one per gap.
    """
    return itertools.chain.from_iterable(iter(lambda: rng.exponential(mean, BATCH).tolist(), None))


def _mmpp2(rng: np.random.Generator, rate: float, b: float, cycles: float) -> Iterator[float]:
    rates = (b * rate, rate / b)  # state 0 high, state 1 low
    leave = ((b + 1.0) * cycles, (b + 1.0) * cycles / b)  # mean sojourns 1/((b+1)c) and b/((b+1)c)
    state = 0 if rng.random() < 1.0 / (b + 1.0) else 1  # start in the stationary law
    pending = 0.0
    unit = _exponential(rng, 1.0)
    while True:
        # Race the next arrival against the next switch; memorylessness lets us redraw.
        to_arrival = next(unit) / rates[state]
        to_switch = next(unit) / leave[state]
        if to_arrival < to_switch:
            yield pending + to_arrival
            pending = 0.0
        else:
            pending += to_switch
            state = 1 - state


def _batch_poisson(rng: np.random.Generator, rate: float, mean_batch: float) -> Iterator[float]:
    p = 1.0 / mean_batch
    while True:
        batch_gaps = rng.exponential(mean_batch / rate, BATCH).tolist()
        sizes = rng.geometric(p, BATCH).tolist()
        for gap, size in zip(batch_gaps, sizes, strict=True):
            yield gap
            for _ in range(size - 1):
                yield 0.0


def _fixed_batches(rng: np.random.Generator, rate: float, size: int) -> Iterator[float]:
    """Batches of exactly ``size`` jobs at the times of a Poisson process of rate rate/size."""
    for gap in _exponential(rng, size / rate):
        yield gap
        for _ in range(size - 1):
            yield 0.0


def read_trace(path: str | Path) -> tuple[np.ndarray, np.ndarray | None]:
    """Arrival times and, if the file has a ``size`` column, job sizes.

    Raises `ValueError` with a one-line reason if the file is not a usable trace.
    """
    try:
        with open(path, newline="") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as exc:
        raise ValueError(f"cannot read trace file '{path}' ({exc.strerror})") from None
    if not rows or "time" not in rows[0]:
        raise ValueError(f"trace file '{path}' needs a 'time' column and at least one row")
    try:
        times = np.array([float(row["time"]) for row in rows])
        sizes = np.array([float(row["size"]) for row in rows]) if "size" in rows[0] else None
    except (TypeError, ValueError):
        raise ValueError(f"trace file '{path}' has a value that is not a number") from None
    if not np.all(np.isfinite(times)) or (sizes is not None and not np.all(np.isfinite(sizes))):
        raise ValueError(f"trace file '{path}': times and sizes must be finite numbers")
    if np.any(np.diff(times) < 0) or times[0] < 0:
        raise ValueError(f"trace file '{path}': arrival times must be >= 0 and non-decreasing")
    if sizes is not None and np.any(sizes <= 0):
        raise ValueError(f"trace file '{path}': sizes must be > 0")
    return times, sizes
