"""What a step of the event kernel may need from Python before it starts: a `state` code, 0 for nothing.

Before any step that could outgrow an array or read past a buffer, the kernel (`kernel`) asks
here; it returns the code to the engine, which refills or grows what the code names, and the
step starts again from the same point at the next call. The checks are written once here and
inlined where they are called (per job: a call would cost more than the check).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import binding, faults
from .core import list_room
from .network import room
from .state import (
    I_FREE,
    I_HEAP,
    I_HEAP_CAP,
    I_INSYS,
    I_LEVEL_CAP,
    I_LEVELS,
    I_LOSS,
    I_MAXLEN,
    I_NLOSS,
    I_NSIZE,
    I_NSPLIT,
    I_OCC_HIGH,
    I_SIZE,
    I_SPLIT,
    MESSAGE,
    NEED_HEAP,
    NEED_JOBS,
    NEED_LEVELS,
    NEED_LISTS,
    NEED_NETWORK,
    NEED_OCCUPANCY,
    NEED_RESERVATIONS,
    NEED_SIZES,
    NEED_SPLIT,
    P_D,
    P_INDEX,
    P_LISTS,
    P_LISTS_AT_ARRIVAL,
    P_LISTS_AT_DEPARTURE,
    P_N,
    P_OCCUPANCY,
    P_ROOM,
    POOL_END,
    SERVICE_END,
    TIMER,
)


@njit(cache=True, inline="always")
def occupancy_full(iv: np.ndarray, occ_count: np.ndarray, occ_totals: np.ndarray, k: int) -> bool:
    """Whether the occupancy arrays (`occupancy`) may be too short for ``k`` more jobs."""
    return iv[I_OCC_HIGH] + k >= len(occ_count) or iv[I_INSYS] + k >= occ_totals.shape[1]


@njit(cache=True, inline="always")
def arrival(P: np.ndarray, iv: np.ndarray, lists: np.ndarray, reservations: np.ndarray, occ_count: np.ndarray,
            occ_totals: np.ndarray, events: bool, latent: bool, reserving: bool) -> int:
    """Before the source's next job: its size, split uniform and slot, and room for what its dispatch may add
    (``events``: an arrival may schedule an event, as at a pool, a PS or a failing server; the loss uniforms of
    the messages it may send, a blocked job's completion among them)."""
    if iv[I_SIZE] >= iv[I_NSIZE]:
        return NEED_SIZES
    if P[P_D] > 1 and iv[I_SPLIT] >= iv[I_NSPLIT]:
        return NEED_SPLIT
    if iv[I_FREE] < 0:
        return NEED_JOBS
    if events and iv[I_HEAP] + 2 >= iv[I_HEAP_CAP]:
        return NEED_HEAP
    if P[P_INDEX] != 0 and iv[I_LEVELS] + 1 >= iv[I_LEVEL_CAP]:
        return NEED_LEVELS
    if P[P_OCCUPANCY] != 0 and occupancy_full(iv, occ_count, occ_totals, 1):
        return NEED_OCCUPANCY
    if P[P_LISTS_AT_ARRIVAL] != 0 and not list_room(iv, lists):  # e.g. a report when the job arrives
        return NEED_LISTS
    if (latent and not room(P, iv)) or iv[I_NLOSS] - iv[I_LOSS] < P[P_ROOM]:  # (zero latency with loss: loss draws)
        return NEED_NETWORK
    if reserving and not binding.room(reservations, P[P_N] + 1):
        return NEED_RESERVATIONS
    return 0


@njit(cache=True, inline="always")
def batch_member(P: np.ndarray, iv: np.ndarray, occ_count: np.ndarray, occ_totals: np.ndarray, events: bool,
                 asking: bool) -> int:
    """Before the next job of a whole batch reaches the policy (`kernel`'s source state 4) or, placed at its ask's
    timeout, its server: room for the event its server may schedule (``events``: a pool's task, a
    processor-sharing server's completion, a failing server's wake-up), and (``asking``) for the batch's ask."""
    if events and iv[I_HEAP] + 2 >= iv[I_HEAP_CAP]:
        return NEED_HEAP
    if P[P_OCCUPANCY] != 0 and occupancy_full(iv, occ_count, occ_totals, 1):
        return NEED_OCCUPANCY
    if asking and not faults.room(P, iv):
        return NEED_NETWORK
    return 0


@njit(cache=True, inline="always")
def event(P: np.ndarray, iv: np.ndarray, lists: np.ndarray, length: np.ndarray, code: int,
          failing: bool, asking: bool, occ_count: np.ndarray, occ_totals: np.ndarray) -> int:
    """Before the event ``code`` at the heap's top: the loss uniforms of what it may send (zero latency with loss),
    the list room of a timer or a departure, and
    (``asking``) the occupancy room of the job an ask's timeout sends to its server now, or the list room of the
    token it sends (JIQ-SQ(d))."""
    kind = code & 3
    if asking and kind == MESSAGE and P[P_OCCUPANCY] != 0 and occupancy_full(iv, occ_count, occ_totals, 1):
        return NEED_OCCUPANCY
    if asking and failing and kind == TIMER and code >= 4 and P[P_INDEX] != 0:  # (JSQ-push: at its recovery
        server = ((code >> 2) - 1) >> 1  # a server tells a length that grew while it was down: a level for it)
        if length[server] + 2 >= iv[I_LEVEL_CAP]:
            return NEED_LEVELS
    if iv[I_NLOSS] - iv[I_LOSS] < P[P_ROOM]:  # zero latency with loss: the loss draw of each message the step sends
        return NEED_NETWORK  # (a completion, a token, a recovery's answers to the jobs it kept: `recovery.keep`)
    departure = kind == SERVICE_END or kind == POOL_END
    if P[P_LISTS_AT_DEPARTURE] != 0 and (departure or (failing and kind == TIMER) or (asking and kind == MESSAGE)):
        if not list_room(iv, lists):
            return NEED_LISTS  # e.g. a token or a report after the departure
    return 0


@njit(cache=True, inline="always")
def delivery(P: np.ndarray, iv: np.ndarray, lists: np.ndarray, reservations: np.ndarray, occ_count: np.ndarray,
             occ_totals: np.ndarray, reserving: bool) -> int:
    """With latency, before the next event: a delivered message may send more, reach a server or list an id."""
    if not room(P, iv):
        return NEED_NETWORK
    if reserving and not binding.room(reservations, 1):  # (late binding: a reservation arrives)
        return NEED_RESERVATIONS
    if P[P_LISTS] != 0 and not list_room(iv, lists):
        return NEED_LISTS
    if P[P_INDEX] != 0 and (iv[I_LEVELS] + 2 >= iv[I_LEVEL_CAP] or iv[I_MAXLEN] + 2 >= iv[I_LEVEL_CAP]):
        return NEED_LEVELS
    if P[P_OCCUPANCY] != 0 and occupancy_full(iv, occ_count, occ_totals, 1):
        return NEED_OCCUPANCY
    return 0
