"""The arrival source's next gap in the event kernel (`model.build.Source`'s timeout between arrivals)."""

from __future__ import annotations

import numpy as np
from numba import njit

from .recorder import edge
from .state import (
    F_ARRIVAL,
    F_NOW,
    I_ARRIVAL_EID,
    I_BATCH,
    I_BATCH_AT,
    I_BATCH_HELD,
    I_EDGES,
    I_EID,
    I_GAP,
    I_GAPS_FINAL,
    I_NGAP,
    I_SRC,
    NEED_GAPS,
)

ENDED = -1
"""`next_gap`'s answer when a finite trace has ended: the source stops (`Recorder.exhausted`)."""
TRACE_END = 2
"""``iv[I_GAPS_FINAL]`` once a trace's last gap is taken and its last whole batch goes out: after it the source
takes its next gap (state 2), which ends the trace, instead of waiting for a timeout (0)."""


@njit(cache=True, inline="always")
def next_gap(P: np.ndarray, iv: np.ndarray, fv: np.ndarray, counts: np.ndarray, window: np.ndarray,
             gaps: np.ndarray, measures: tuple, whole: bool) -> int:
    """Take the source's next gap: 0 once taken, `ENDED`, or `state.NEED_GAPS` when Python must draw more.

    A gap above 0 is the source's timeout, an event with the next id kept beside the heap (``iv[I_SRC]``
    0; with whole batches, a complete batch's jobs go out first: 4); a gap of 0 is the next job now (1).
    ``measures`` is the kernel's (responses, occupancy on, its count, lengths and totals).
    """
    if iv[I_GAP] >= iv[I_NGAP]:
        if not iv[I_GAPS_FINAL]:
            return NEED_GAPS
        if whole and iv[I_BATCH_HELD] > 0:  # the trace's last batch is complete: its jobs go out first (state
            # 4), as `BatchSource` hands it over before `Recorder.exhausted`; then the kernel comes back here (2)
            iv[I_BATCH], iv[I_BATCH_AT], iv[I_BATCH_HELD] = iv[I_BATCH_HELD], 0, 0
            iv[I_GAPS_FINAL] = TRACE_END
            iv[I_SRC] = 4
            return 0
        if iv[I_EDGES] == 1:  # a finite trace ended: its window closes
            edge(P, iv, fv, counts, window, measures[2], measures[3], measures[4])
        iv[I_SRC] = 3
        return ENDED
    gap = gaps[iv[I_GAP]]
    iv[I_GAP] += 1
    if gap > 0.0:
        fv[F_ARRIVAL] = fv[F_NOW] + gap
        iv[I_ARRIVAL_EID] = iv[I_EID]
        iv[I_EID] += 1
        iv[I_SRC] = 0
        if whole and iv[I_BATCH_HELD] > 0:  # the batch is complete: its jobs go out now (state 4)
            iv[I_BATCH], iv[I_BATCH_AT], iv[I_BATCH_HELD] = iv[I_BATCH_HELD], 0, 0
            iv[I_SRC] = 4
    else:
        iv[I_SRC] = 1
    return 0


@njit(cache=True, inline="always")
def after_batch(iv: np.ndarray) -> int:
    """The source's state once a whole batch's last job is handed over: 0, its next timeout pending; or 2 after
    a trace's last batch (`TRACE_END`), whose next gap ends the trace (`next_gap`, `ENDED`)."""
    return 2 if iv[I_GAPS_FINAL] == TRACE_END else 0
