"""Per-job pieces both loops share (`kernel`, `slotted`, and `ps`'s arrivals): job slots, FIFO lists, dispatchers.

A job is a slot of the `state.Jobs` arrays. The free slots are chained through
``next`` from ``iv[I_FREE]``; a server's jobs are chained through ``next`` from
``head[sid]`` to ``tail[sid]`` in arrival order (-1: none). Written once here and
inlined where they are called: called instead, they cost a job about a third more time
(docs/compiled-engine.md).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .core import pop, replace_first
from .state import I_FREE, I_SPLIT, Q_BOUNDS, SERVICE_END


@njit(cache=True, inline="always")
def take_slot(iv: np.ndarray, j_next: np.ndarray) -> int:
    """A free job slot (the caller made sure there is one: ``iv[I_FREE]`` >= 0)."""
    slot = iv[I_FREE]
    iv[I_FREE] = j_next[slot]
    return slot


@njit(cache=True, inline="always")
def free_slot(iv: np.ndarray, j_next: np.ndarray, slot: int) -> None:
    """Give job slot ``slot`` back."""
    j_next[slot] = iv[I_FREE]
    iv[I_FREE] = slot


@njit(cache=True, inline="always")
def next_service(heap: np.ndarray, iv: np.ndarray, head: np.ndarray, j_start: np.ndarray, j_size: np.ndarray,
                 inv: float, sid: int, now: float) -> int:
    """FIFO server ``sid``'s first job has left: the next one's service starts now, its end replacing the
    server's event at the heap's top (else that event goes). Its slot, or -1."""
    following = head[sid]
    if following >= 0:
        j_start[following] = now
        replace_first(heap, iv, now + j_size[following] * inv, SERVICE_END + 4 * sid)
    else:
        pop(heap, iv)
    return following


@njit(cache=True, inline="always")
def append(head: np.ndarray, tail: np.ndarray, j_next: np.ndarray, sid: int, slot: int) -> None:
    """Job ``slot`` joins the end of server ``sid``'s list."""
    j_next[slot] = -1
    if tail[sid] < 0:
        head[sid] = slot
    else:
        j_next[tail[sid]] = slot
    tail[sid] = slot


@njit(cache=True, inline="always")
def first_leaves(head: np.ndarray, tail: np.ndarray, j_next: np.ndarray, sid: int) -> int:
    """Remove the first job of server ``sid``'s list (it holds one at least) and return its slot."""
    slot = head[sid]
    head[sid] = j_next[slot]
    if head[sid] < 0:
        tail[sid] = -1
    return slot


@njit(cache=True, inline="always")
def pick_dispatcher(Q: np.ndarray, iv: np.ndarray, split: np.ndarray, dispatchers: int, shares: bool) -> int:
    """The dispatcher of the next arrival (of several): the next split uniform, by the shares or evenly."""
    u = split[iv[I_SPLIT]]
    iv[I_SPLIT] += 1
    if not shares:
        return int(u * dispatchers)
    chosen = 0
    while Q[Q_BOUNDS + chosen] <= u:  # bisect_right over the cumulative shares
        chosen += 1
    return chosen
