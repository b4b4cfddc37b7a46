"""Late binding's reservations in the compiled engine: a queue of them per server, beside its jobs.

A server's FIFO list of job slots (the kernel's ``head``/``tail``) stays as it is:
under late binding a server holds at most one job, fetched when it is idle. Its
reservations wait in a list of their own, here, in the order they arrived, as the
SimPy policy's deque per server (`emulator.policies.late_binding`).

The records live in one pool, ``T.binding`` (int64, three columns), grown by the
engine between kernel calls (`state.NEED_RESERVATIONS`, before each step: a step takes
at most N + 1 records). Row 0 is the pool's header: the head of its
free list, the job a departure's request fetched (-1: none; the kernel takes it,
`handed`), and the records in use. The other rows are

- a reservation: (ticket, next reservation of its server or -1, unused);
- a ticket, one per job with reservations queued or messages on their way: (its job's
  slot while the job waits at its dispatcher, -1 once a server took it; reservations and
  requests for it still to be answered, unused).

A free row links to the next through its first column. A server's list is
``T.ints[0, sid]`` (head) and ``T.ints[1, sid]`` (tail), -1 when empty; with latency
``T.ints[2, sid]`` is 1 while the server waits for the answer to its request.
"""

from __future__ import annotations

import numpy as np
from numba import njit

FREE, HANDED, USED = 0, 1, 2  # the header's columns (row 0)
TICKET, NEXT = 0, 1  # a reservation's columns
SLOT, REFS = 0, 1  # a ticket's columns


def pool(records: int) -> np.ndarray:
    """A pool of ``records`` free records (and its header); one row, unused, where there are no reservations."""
    pool = np.zeros((records + 1, 3), dtype=np.int64)
    pool[0] = (1 if records else -1, -1, 0)
    pool[1:-1, 0] = np.arange(2, records + 1)
    pool[-1, 0] = -1
    return pool


def grown(old: np.ndarray) -> np.ndarray:
    """The pool with as many free records again (NEED_RESERVATIONS); the records in use stay where they are."""
    records = len(old) - 1
    new = np.concatenate([old, np.zeros((records, 3), dtype=np.int64)])
    new[records + 1:-1, 0] = np.arange(records + 2, 2 * records + 1)
    new[-1, 0] = new[0, FREE]  # the old free list goes on after the new records
    new[0, FREE] = records + 1
    return new


@njit(cache=True, inline="always")
def room(B: np.ndarray, n: int) -> bool:
    """Whether ``n`` more records fit (a dispatch takes at most N + 1)."""
    return len(B) - 1 - B[0, USED] >= n


@njit(cache=True, inline="always")  # every departure of every policy's kernel reads it
def handed(B: np.ndarray) -> int:
    """The job slot a departure's request fetched for its server, or -1; the kernel takes it (once)."""
    slot = B[0, HANDED]
    B[0, HANDED] = -1
    return slot


@njit(cache=True)
def take(B: np.ndarray) -> int:
    """A free record."""
    r = B[0, FREE]
    B[0, FREE] = B[r, 0]
    B[0, USED] += 1
    return r


@njit(cache=True)
def give(B: np.ndarray, r: int) -> None:
    """Record ``r`` is free again."""
    B[r, 0] = B[0, FREE]
    B[0, FREE] = r
    B[0, USED] -= 1


@njit(cache=True)
def ticket(B: np.ndarray, slot: int, refs: int) -> int:
    """A new ticket for the job in ``slot``, with ``refs`` reservations (or requests) still to come for it."""
    t = take(B)
    B[t, SLOT] = slot
    B[t, REFS] = refs
    return t


@njit(cache=True)
def claim(B: np.ndarray, t: int) -> int:
    """A request for ticket ``t``'s job is in: the job's slot if it still waits (now taken), else -1."""
    slot = B[t, SLOT]
    B[t, SLOT] = -1
    B[t, REFS] -= 1
    if B[t, REFS] == 0:  # no reservation or request for it is left anywhere
        give(B, t)
    return slot


@njit(cache=True)
def reserve(B: np.ndarray, ints: np.ndarray, sid: int, t: int) -> None:
    """A reservation for ticket ``t``'s job joins the end of server ``sid``'s list."""
    r = take(B)
    B[r, TICKET] = t
    B[r, NEXT] = -1
    if ints[1, sid] < 0:
        ints[0, sid] = r
    else:
        B[ints[1, sid], NEXT] = r
    ints[1, sid] = r


@njit(cache=True)
def first(B: np.ndarray, ints: np.ndarray, sid: int) -> int:
    """Server ``sid``'s first reservation, taken from its list: its ticket (-1: the list is empty)."""
    r = ints[0, sid]
    if r < 0:
        return -1
    ints[0, sid] = B[r, NEXT]
    if ints[0, sid] < 0:
        ints[1, sid] = -1
    t = B[r, TICKET]
    give(B, r)
    return t


@njit(cache=True)
def next_job(B: np.ndarray, ints: np.ndarray, sid: int) -> tuple[int, int]:
    """With zero latency, idle server ``sid`` asks for the jobs of its reservations in order: (the first
    that still waits, its slot, or -1; the requests sent). Every request but the one that gets a job is
    cancelled."""
    requests = 0
    while True:
        t = first(B, ints, sid)
        if t < 0:
            return -1, requests
        requests += 1
        slot = claim(B, t)
        if slot >= 0:
            return slot, requests
