"""LSQ, compiled (`emulator.policies.lsq`) for one dispatcher: its estimates in the kernel's length index.

The index (JSQ's `LengthIndex`) holds the dispatcher's estimates rather than the
true lengths; ``T.ints[0]`` is each server's estimate as indexed. An estimate is
at least its server's length (only this dispatcher sends it jobs) and grows by
one per job, so the index needs no more room than the kernel keeps for JSQ.
Several dispatchers, each with an index of its own, run on SimPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...policies.lsq import LSQConfig
from ..core import sample, uniform
from ..state import I_LOW, P_N, P_PARAMS
from ..tools import Description, Tools, needs_choice
from .common import nothing_initialise, nothing_on_arrive, nothing_on_depart, nothing_timer, round_trips
from .jsq import move

PARAMS = frozenset({"d"})
D = P_PARAMS


def describe(config: LSQConfig, point: Any, speeds: np.ndarray) -> Description:
    d = int(config.d)
    choice = d if d < point.servers and needs_choice(point.servers, d, False) else 0
    return Description(ints=[d], index=True, sample=d, choice_at_dispatch=choice, int_rows=1)


def supports(config: LSQConfig, point: Any) -> str | None:
    return "lsq with several dispatchers" if point.dispatchers > 1 else None


@njit(cache=True, inline="always")
def _set(T: Tools, iv: np.ndarray, sid: int, new: int) -> None:
    """`LengthIndex.set`: server ``sid`` re-indexed at estimate ``new``."""
    estimate = T.ints[0]
    old = estimate[sid]
    if new == old:
        return
    move(T.buckets, T.bucket_size, T.position, iv, sid, old, new)
    size = T.bucket_size
    estimate[sid] = new
    if new < iv[I_LOW]:
        iv[I_LOW] = new
    elif old == iv[I_LOW]:
        while size[iv[I_LOW]] == 0:
            iv[I_LOW] += 1


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    n, d = P[P_N], P[D]
    round_trips(P, counts, d)
    if d == n:  # every server queried: no draw
        for sid in range(n):
            _set(T, iv, sid, length[sid])
    else:
        picked = T.picked
        sample(rng, ubuf, iv, n, d, False, picked, T.choice)
        for j in range(d):
            _set(T, iv, picked[j], length[picked[j]])
    u = uniform(rng, ubuf, iv)
    low = iv[I_LOW]
    sid = T.buckets[low, int(u * T.bucket_size[low])]
    _set(T, iv, sid, T.ints[0, sid] + 1)
    return sid, False


on_arrive, on_depart, initialise, timer = nothing_on_arrive, nothing_on_depart, nothing_initialise, nothing_timer
