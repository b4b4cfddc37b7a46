"""JIQ, compiled (`emulator.policies.jiq`): idle tokens into the dispatchers' lists, jobs from them."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...policies.jiq import JIQConfig
from ..core import id_add, list_room, sample, shortest
from ..state import I_INIT, P_D, P_IDLE, P_N, P_PARAMS
from ..tools import Description, Tools
from .common import list_dispatch, nothing_timer, random_dispatcher, round_trips

PARAMS = frozenset({"d", "memory"})
D, MEMORY = P_PARAMS, P_PARAMS + 1  # D: JIQ-SQ(d)'s d (-1: JIQ-Random); MEMORY: -1 unbounded


def describe(config: JIQConfig, point: Any, speeds: np.ndarray) -> Description:
    n, dispatchers = point.servers, point.dispatchers
    d = -1 if config.d is None else int(config.d)
    memory = config.memory
    # A list never holds an id twice, so one of N ids or more cannot fill: unbounded (and within int64).
    memory = -1 if memory is None or memory >= n else memory
    one_list = dispatchers == 1  # a flag per server says whether it is in the list
    return Description(ints=[d, memory], lists=True, chained=not one_list, listed=one_list,
                       lists_at_departure=True, sample=max(d, 2))


def supports(config: JIQConfig, point: Any) -> str | None:
    d = config.d
    if d is not None and point.dispatchers > 1 and 4 * int(d) > point.dispatchers and int(d) != 2:
        return "JIQ-SQ(d) with 4d > dispatchers samples with rng.choice after a departure"
    return None



@njit(cache=True, inline="always")
def _token(P: np.ndarray, counts: np.ndarray, rng: tuple, ubuf: np.ndarray, iv: np.ndarray, T: Tools,
           sid: int) -> None:
    """`JIQPolicy._send_token` and `_token`.

    With one dispatcher an id is in its one list or in none: the ``listed`` flag says
    which, and no chain is kept (`core.id_add`).
    """
    dispatchers = P[P_D]
    d = P[D]
    count = T.count
    if d < 0 or dispatchers == 1:
        target = random_dispatcher(P, rng, ubuf, iv)
    else:
        picked, values = T.picked, T.values
        sample(rng, ubuf, iv, dispatchers, d, False, picked, T.choice)
        round_trips(P, counts, d)
        for j in range(d):
            values[j] = count[picked[j]]
        target = picked[shortest(values, d, rng, ubuf, iv)]
    counts[P[P_IDLE]] += 1
    memory = P[MEMORY]
    if memory < 0 or count[target] < memory:
        if dispatchers > 1:
            id_add(T.lists, T.lstart, T.lcap, count, T.chain, T.node_d, T.node_next, iv, True, target, sid)
        elif not T.listed[sid]:
            T.listed[sid] = 1
            id_add(T.lists, T.lstart, T.lcap, count, count, count, count, iv, False, target, sid)


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    return list_dispatch(P, rng, ubuf, iv, T, dispatcher, P[P_D] > 1, False, 0.0)


@njit(cache=True, inline="always")
def on_arrive(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int, blocked: bool, via_list: bool) -> None:
    if via_list and P[P_D] == 1:  # taken from the one list (`_token`)
        T.listed[sid] = 0


@njit(cache=True, inline="always")
def on_depart(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int) -> None:
    if length[sid] == 0:
        _token(P, counts, rng, ubuf, iv, T, sid)


@njit(cache=True)  # rare: not inlined, to keep compilation short
def initialise(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
               ubuf: np.ndarray, iv: np.ndarray, T: Tools) -> bool:
    """`JIQPolicy.__init__`: every server is idle and sends a token, from ``iv[I_INIT]`` on."""
    for sid in range(iv[I_INIT], P[P_N]):
        if not list_room(iv, T.lists):
            iv[I_INIT] = sid
            return False
        _token(P, counts, rng, ubuf, iv, T, sid)
    iv[I_INIT] = -1
    return True


timer = nothing_timer
