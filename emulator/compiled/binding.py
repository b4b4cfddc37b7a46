"""Late binding's reservations in the compiled engine: a queue of them per server, beside its jobs.

A server's FIFO list of job slots (the kernel's ``head``/``tail``) stays as it is:
under late binding a server holds at most one job, fetched when it is idle. Its
reservations wait in a list of their own, here, in the order they arrived, as the
SimPy policy's deque per server (`emulator.policies.late_binding`).

The records live in one pool, ``T.binding`` (int64, three columns), grown by the
engine between kernel calls (`state.NEED_RESERVATIONS`, before a job is dispatched:
a dispatch takes at most N + 1 records). Row 0 is the pool's header: the head of its
free list, the job a departure's request fetched (-1: none; the kernel takes it,
`handed`), and the records in use. The other rows are

- a reservation: (ticket, next reservation of its server or -1, unused);
- a ticket, one per job with reservations queued: (its job's slot while the job waits
  at its dispatcher, -1 once a server took it; reservations still queued for it, unused).

A free row links to the next through its first column. A server's list is
``T.ints[0, sid]`` (head) and ``T.ints[1, sid]`` (tail), -1 when empty.
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
def reserve(B: np.ndarray, ints: np.ndarray, sid: int, ticket: int) -> None:
    """A reservation for ``ticket``'s job joins the end of server ``sid``'s list."""
    r = take(B)
    B[r, TICKET] = ticket
    B[r, NEXT] = -1
    if ints[1, sid] < 0:
        ints[0, sid] = r
    else:
        B[ints[1, sid], NEXT] = r
    ints[1, sid] = r
    B[ticket, REFS] += 1


@njit(cache=True)
def next_job(B: np.ndarray, ints: np.ndarray, sid: int) -> tuple[int, int]:
    """Server ``sid`` asks for the job of its first reservation: (that job's slot or -1 if taken, requests sent).

    Reservations of jobs already taken are cancelled, one request each, and the next is
    asked for, until a job is found or the list is empty.
    """
    requests = 0
    while ints[0, sid] >= 0:
        r = ints[0, sid]
        ints[0, sid] = B[r, NEXT]
        if ints[0, sid] < 0:
            ints[1, sid] = -1
        ticket = B[r, TICKET]
        give(B, r)
        requests += 1
        slot = B[ticket, SLOT]
        B[ticket, SLOT] = -1
        B[ticket, REFS] -= 1
        if B[ticket, REFS] == 0:
            give(B, ticket)
        if slot >= 0:
            return slot, requests
    return -1, requests
