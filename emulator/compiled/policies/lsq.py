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
from ..network import open_ask, query
from ..state import A_TAG, I_LOW, P_LATENT, P_N, P_PARAMS
from ..tools import Description, Tools, needs_choice
from .common import nothing_initialise, nothing_on_arrive, nothing_on_depart, nothing_timer, round_trips
from .jsq import index_set

PARAMS = frozenset({"d"})
D = P_PARAMS


def describe(config: LSQConfig, point: Any, speeds: np.ndarray) -> Description:
    d = int(config.d)
    choice = d if d < point.servers and needs_choice(point.servers, d, False) else 0
    return Description(ints=[d], index=True, sample=d, choice_at_dispatch=choice, int_rows=1, asks_per_step=d)


def supports(config: LSQConfig, point: Any) -> str | None:
    return "lsq with several dispatchers" if point.dispatchers > 1 else None


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    n, d = P[P_N], P[D]
    estimate = T.ints[0]
    picked = T.picked
    if d < n:
        sample(rng, ubuf, iv, n, d, False, picked, T.choice)
    if P[P_LATENT]:  # one ask per server; each reply refreshes its estimate when it comes (`replied`)
        for j in range(d):
            sid = j if d == n else picked[j]
            ask = open_ask(T, iv, -1, dispatcher, 1, sid, False)
            T.targets[ask, 0] = sid
            query(P, counts, iv, T, ask, 0)
    else:  # every server queried (d = N) needs no draw
        round_trips(P, counts, d)
        for j in range(d):
            sid = j if d == n else picked[j]
            index_set(T, iv, estimate, sid, length[sid])
    u = uniform(rng, ubuf, iv)
    low = iv[I_LOW]
    sid = T.buckets[low, int(u * T.bucket_size[low])]
    index_set(T, iv, estimate, sid, estimate[sid] + 1)
    return sid, False


@njit(cache=True, inline="always")
def replied(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, ask: int) -> tuple[int, bool]:
    """`_replied`: a server's length replaces its estimate."""
    index_set(T, iv, T.ints[0], T.asks[ask, A_TAG], T.replies[ask, 0])
    return -1, False


on_arrive, on_depart, initialise, timer = nothing_on_arrive, nothing_on_depart, nothing_initialise, nothing_timer
