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

from .distributions import Law
from .streams import BATCH, Blocks, values


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
    return values(gap_blocks(kind, rate, rng, burstiness=burstiness, switch_rate=switch_rate,
                             mean_batch=mean_batch, batch=batch, path=path))


def gap_blocks(kind: str, rate: float, rng: np.random.Generator, *, burstiness: float = 2.0,
               switch_rate: float = 0.1, mean_batch: float = 2.0, batch: str = "geometric",
               path: str | None = None) -> Blocks:
    """The gaps of `gaps` in blocks (`emulator.workload.streams.Blocks`): both engines' draws.

    A trace is a finite stream. A batch-Poisson block holds the gaps of `BATCH` batches (each
    batch's gap, then a zero per further job in it), so more than `BATCH` values.
    """
    if kind == "poisson":
        mean = 1.0 / rate  # one call for k blocks: exponential draws are taken one after the other
        return lambda k: rng.exponential(mean, k * BATCH)
    if kind == "deterministic":
        return Law("deterministic", 1.0 / rate).blocks(rng)
    if kind == "batch_poisson":
        if batch == "deterministic":
            return _fixed_batches(rng, rate, int(mean_batch))
        return lambda k: np.concatenate([_batches(rng, rate, mean_batch) for _ in range(k)])
    if kind == "trace":
        assert path is not None
        return finite(np.diff(read_trace(path)[0], prepend=0.0))
    if kind == "mmpp2":
        stream = _mmpp2(rng, rate, burstiness, switch_rate)  # drawn value by value, read in blocks
        return lambda k: np.fromiter(itertools.islice(stream, k * BATCH), dtype=np.float64)
    raise ValueError(f"unknown arrival process '{kind}'")


def _mmpp2(rng: np.random.Generator, rate: float, b: float, cycles: float) -> Iterator[float]:
    rates = (b * rate, rate / b)  # state 0 high, state 1 low
    leave = ((b + 1.0) * cycles, (b + 1.0) * cycles / b)  # mean sojourns 1/((b+1)c) and b/((b+1)c)
    state = 0 if rng.random() < 1.0 / (b + 1.0) else 1  # start in the stationary law
    pending = 0.0
    unit = Law("exponential", 1.0).sampler(rng)
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


def _batches(rng: np.random.Generator, rate: float, mean_batch: float) -> np.ndarray:
    """One block of batch-Poisson gaps: `BATCH` gaps between batches, then `BATCH` geometric batch sizes."""
    gaps = rng.exponential(mean_batch / rate, BATCH)
    sizes = rng.geometric(1.0 / mean_batch, BATCH)
    out = np.zeros(int(sizes.sum()))
    out[np.cumsum(sizes) - sizes] = gaps  # each batch: its gap, then a zero per further job in it
    return out


def _fixed_batches(rng: np.random.Generator, rate: float, size: int) -> Blocks:
    """Batches of exactly ``size`` jobs at the times of a Poisson process of rate rate/size: per block,
    `BATCH` gaps between batches, each followed by ``size - 1`` zeros."""
    mean = size / rate

    def draw(k: int) -> np.ndarray:
        out = np.zeros(k * BATCH * size)
        out[::size] = rng.exponential(mean, k * BATCH)  # one call for k blocks, as Poisson's
        return out

    return draw


def finite(data: np.ndarray) -> Blocks:
    """A finite stream: ``data`` in blocks, then empty arrays."""
    data = np.asarray(data, dtype=np.float64)
    position = 0

    def draw(k: int) -> np.ndarray:
        nonlocal position
        block = data[position:position + k * BATCH]
        position += len(block)
        return block

    return draw


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
