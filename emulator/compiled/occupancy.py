"""The compiled occupancy observer: `emulator.measure.occupancy.Occupancy`, float operation for float operation.

The state lives in three arrays, grown by the engine (``NEED_OCCUPANCY``) before
an arrival could outgrow them:

- ``count[k]``: servers holding k jobs (`Occupancy.count`);
- ``lengths``: rows ``since``, ``area``, then ``area`` as it was at the window's
  opening and closing (`Occupancy.since`, `Occupancy.area`, the window's copies);
- ``totals``: row ``total_area``, then its copies at the opening and closing.

The Python lists' lengths (the longest length and the largest total ever held,
plus one) are kept in ``iv``, so that the engine hands the same lists to a real
`Occupancy`, whose code computes the metrics and the distributions.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .core import compiled_only
from .state import (
    F_HIGH_AREA,
    F_HIGH_SINCE,
    F_LOW_AREA,
    F_LOW_SINCE,
    F_OCC_LAST,
    F_SPREAD0,
    I_INSYS,
    I_OCC_EDGE_LENGTHS,
    I_OCC_HIGH,
    I_OCC_LENGTHS,
    I_OCC_LOW,
    I_OCC_TOTALS,
)

SINCE, AREA, AREA_AT_EDGE = 0, 1, 2  # rows of ``lengths``
TOTAL_AREA, TOTAL_AT_EDGE = 0, 1  # rows of ``totals``


@njit(cache=True, inline="always")
def _move_high(iv: np.ndarray, fv: np.ndarray, high: int, now: float) -> None:
    fv[F_HIGH_AREA] += iv[I_OCC_HIGH] * (now - fv[F_HIGH_SINCE])
    fv[F_HIGH_SINCE] = now
    iv[I_OCC_HIGH] = high


@njit(cache=True, inline="always")
def _move_low(iv: np.ndarray, fv: np.ndarray, low: int, now: float) -> None:
    fv[F_LOW_AREA] += iv[I_OCC_LOW] * (now - fv[F_LOW_SINCE])
    fv[F_LOW_SINCE] = now
    iv[I_OCC_LOW] = low


@njit(cache=True, inline="always")
def arrive(iv: np.ndarray, fv: np.ndarray, count: np.ndarray, lengths: np.ndarray, totals: np.ndarray,
           length: int, now: float) -> None:
    """`Occupancy.arrive`, after the recorder's ``enter``: I_INSYS is already the new total."""
    total = iv[I_INSYS] - 1
    totals[TOTAL_AREA, total] += now - fv[F_OCC_LAST]
    fv[F_OCC_LAST] = now
    total += 1
    if total == iv[I_OCC_TOTALS]:
        totals[TOTAL_AREA, total] = 0.0
        iv[I_OCC_TOTALS] = total + 1
    since, area = lengths[SINCE], lengths[AREA]
    k = length - 1
    area[k] += count[k] * (now - since[k])
    since[k] = now
    count[k] -= 1
    if length == iv[I_OCC_LENGTHS]:
        count[length] = 1
        since[length] = now
        area[length] = 0.0
        iv[I_OCC_LENGTHS] = length + 1
    else:
        area[length] += count[length] * (now - since[length])
        since[length] = now
        count[length] += 1
    if length > iv[I_OCC_HIGH]:
        _move_high(iv, fv, length, now)
    if k == iv[I_OCC_LOW] and not count[k]:
        _move_low(iv, fv, length, now)


@njit(cache=True, inline="always")
def depart(iv: np.ndarray, fv: np.ndarray, count: np.ndarray, lengths: np.ndarray, totals: np.ndarray,
           length: int, now: float) -> None:
    """`Occupancy.depart`, after the recorder's ``leave``: I_INSYS is already the new total."""
    totals[TOTAL_AREA, iv[I_INSYS] + 1] += now - fv[F_OCC_LAST]
    fv[F_OCC_LAST] = now
    since, area = lengths[SINCE], lengths[AREA]
    k = length + 1
    area[k] += count[k] * (now - since[k])
    since[k] = now
    count[k] -= 1
    area[length] += count[length] * (now - since[length])
    since[length] = now
    count[length] += 1
    if k == iv[I_OCC_HIGH] and not count[k]:
        _move_high(iv, fv, length, now)
    if length < iv[I_OCC_LOW]:
        _move_low(iv, fv, length, now)


@compiled_only
def edge(iv: np.ndarray, fv: np.ndarray, count: np.ndarray, lengths: np.ndarray, totals: np.ndarray,
         edge: int, now: float) -> None:
    """`Occupancy.edge`: bring every integral up to ``now`` and keep a copy (``edge`` 0 opens, 1 closes)."""
    since, area = lengths[SINCE], lengths[AREA]
    held = iv[I_OCC_LENGTHS]
    for k in range(held):
        area[k] += count[k] * (now - since[k])
        since[k] = now
    totals[TOTAL_AREA, iv[I_INSYS]] += now - fv[F_OCC_LAST]
    fv[F_OCC_LAST] = now
    _move_high(iv, fv, iv[I_OCC_HIGH], now)
    _move_low(iv, fv, iv[I_OCC_LOW], now)
    # Element by element: a slice assignment costs more than a second to compile on a kernel's first run.
    for k in range(held):
        lengths[AREA_AT_EDGE + edge, k] = area[k]
    for k in range(iv[I_OCC_TOTALS]):
        totals[TOTAL_AT_EDGE + edge, k] = totals[TOTAL_AREA, k]
    iv[I_OCC_EDGE_LENGTHS + 2 * edge] = held
    iv[I_OCC_EDGE_LENGTHS + 2 * edge + 1] = iv[I_OCC_TOTALS]
    fv[F_SPREAD0 + edge] = fv[F_HIGH_AREA] - fv[F_LOW_AREA]
