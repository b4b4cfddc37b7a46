"""The recorder's updates as the kernels make them: `Recorder.edge` and `Recorder.leave`, in its float order."""

from __future__ import annotations

import numpy as np
from numba import njit

from . import occupancy
from .core import compiled_only
from .state import (
    F_A0,
    F_A1,
    F_AREA,
    F_LAST,
    F_NOW,
    F_SUM_RESPONSE,
    F_SUM_WAIT,
    F_T0,
    F_T1,
    I_EDGES,
    I_FINISHED,
    I_INSYS,
    I_NRESP,
    I_WAITED,
    P_OCCUPANCY,
)

RESPONSE_BATCH = 8192  # QuantileSketch.FLUSH (checked by the engine)


@compiled_only
def edge(P: np.ndarray, iv: np.ndarray, fv: np.ndarray, counts: np.ndarray, window: np.ndarray,
         occ_count: np.ndarray, occ_lengths: np.ndarray, occ_totals: np.ndarray) -> None:
    """`Recorder.edge`: the window opens or closes now (and the occupancy observer's, if on)."""
    now = fv[F_NOW]
    fv[F_AREA] += iv[I_INSYS] * (now - fv[F_LAST])
    fv[F_LAST] = now
    which = iv[I_EDGES]  # 0: the window opens, 1: it closes
    if which == 0:
        fv[F_T0], fv[F_A0] = now, fv[F_AREA]
    else:
        fv[F_T1], fv[F_A1] = now, fv[F_AREA]
    for k in range(len(counts)):  # (a slice assignment costs more than a second to compile)
        window[which, k] = counts[k]
    if P[P_OCCUPANCY]:
        occupancy.edge(iv, fv, occ_count, occ_lengths, occ_totals, which, now)
    iv[I_EDGES] = which + 1


@njit(cache=True, inline="always")
def enter(iv: np.ndarray, fv: np.ndarray, now: float) -> None:
    """`Recorder.enter`: a job enters the system at ``now``."""
    fv[F_AREA] += iv[I_INSYS] * (now - fv[F_LAST])
    fv[F_LAST] = now
    iv[I_INSYS] += 1


@njit(cache=True, inline="always")
def leave(iv: np.ndarray, fv: np.ndarray, responses: np.ndarray, now: float, arrival: float,
          at_server: float, start: float, measured: int) -> None:
    """`Recorder.leave`; ``measured`` is the job's arrival number + 1, or 0 if it is not measured.

    The arrival numbers go beside the responses (from ``RESPONSE_BATCH`` on): `Recorder.series`
    sums the responses by batch of arrivals.
    """
    fv[F_AREA] += iv[I_INSYS] * (now - fv[F_LAST])
    fv[F_LAST] = now
    iv[I_INSYS] -= 1
    if measured:
        response = now - arrival
        wait = start - at_server
        fv[F_SUM_RESPONSE] += response
        fv[F_SUM_WAIT] += wait
        if wait > 0.0:
            iv[I_WAITED] += 1
        responses[iv[I_NRESP]] = response
        responses[RESPONSE_BATCH + iv[I_NRESP]] = measured - 1  # exact: below 2**53 (`supports`)
        iv[I_NRESP] += 1
        iv[I_FINISHED] += 1


