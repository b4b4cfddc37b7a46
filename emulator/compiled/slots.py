"""The slot clock's gathering of a slot's arrivals into decisions (``slot.dispatch: slot``), shared by every kernel.

It lives outside the slot clock's template (`slotted`) so that it is compiled once,
not once per policy's kernel (`build`).
"""

from __future__ import annotations

import numpy as np

from .core import compiled_only

# Rows of the gathering arrays (``scratch``): per arrival, per decision.
MEMBER, ORDER, BEGIN, SIZE, JOBS = range(5)


@compiled_only
def groups(scratch: np.ndarray, dwork: np.ndarray, count: int) -> int:
    """The slot's decisions (dispatch: slot): dispatchers in the order of their first arrival, jobs in order."""
    member, order, begin, size, jobs = scratch[MEMBER], scratch[ORDER], scratch[BEGIN], scratch[SIZE], \
        scratch[JOBS]
    held, start = dwork[0], dwork[1]
    groups = 0
    for k in range(count):
        d = member[k]
        if held[d] == 0:
            order[groups] = d
            groups += 1
        held[d] += 1
    at = 0
    for g in range(groups):
        d = order[g]
        begin[g], size[g] = at, held[d]
        start[d] = at
        at += held[d]
    for k in range(count):
        d = member[k]
        jobs[start[d]] = k
        start[d] += 1
    for g in range(groups):
        held[order[g]] = 0
    return groups


