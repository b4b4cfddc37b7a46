"""Servers that fail and recover in the compiled event kernel, as `emulator.model.failures.FailingFifoServer` has them.

Each server alternates up and down periods, the first up; its periods are the draws the
model reads (`emulator.workload.failures.periods`), taken from the same blocks
(`period_blocks`) and handed to the kernel in rows of ``Failing.periods`` (``[0, sid]``
its up periods, ``[1, sid]`` its down periods),
refilled by the engine when one runs out (`NEED_PERIODS`). Its up/down cycle is one
event at a time: a `state.TIMER` event whose argument is ``1 + 2 sid`` (argument 0 is
the policy's own timer).

SimPy's server is a process that waits on an ``idle`` event while it has nothing to
serve, so a job that reaches an idle server that is up starts its service at a second
event at the same time (the ``idle`` event's, argument ``2 + 2 sid``: `WAKE`), as does
the job at the head of the queue when the server recovers; after a departure the next
service starts at once, as in the plain kernel. A failure cuts the service under way
short: what is left of it is kept (``hold``) and its end, still in the heap, is
skipped when it comes (its event id is no longer the server's: ``sv[sid, EID]``); the
interrupt SimPy schedules for it changes nothing else, so it is not replayed.
``lose``: the jobs present when the server fails, and those that reach it while it
is down, are lost (`Recorder.lose`).

A down server's policy hooks wait in SimPy until it recovers: then it runs the arrival
hook of each job that reached it while down, and its departure hook once. The kernel
runs the departure hook at recovery (`event` returns the server, the kernel calls the
hook, then `resume`), after the arrival hooks `recovery` keeps for it (the jobs from
lists, and the blocked jobs a policy answers); it runs failing servers only under
policies whose compiled form says it may (``servers_fail``: `eligibility.supports`).
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np
from numba import njit

from ..workload.failures import period_blocks
from ..workload.streams import Blocks
from . import occupancy
from .core import compiled_only, pop, push, unmanaged
from .state import (
    F_AREA,
    F_LAST,
    F_NOW,
    I_EID,
    I_FINISHED,
    I_FREE,
    I_HEAP,
    I_HEAP_CAP,
    I_INSYS,
    I_LOST_JOBS,
    I_PERIODS,
    NEED_HEAP,
    NEED_PERIODS,
    SERVICE_END,
    TIMER,
)

Failing = namedtuple("Failing", ["mode", "sv", "sf", "periods"])
"""The failing servers' state: ``mode`` (two int64: -1 no failures, 0 ``hold``, 1 ``lose``; then 1 if a blocked
job's arrival hook waits for its server's recovery, `recovery.keep`); per server ``sv`` (int64: `FLAGS`, `EID`,
the read positions in its up and down rows, `AT`, and the first and last of the blocked jobs it keeps, `KEPT`)
and ``sf`` (float64: `LEFT`, `BEGAN`); ``periods`` (float64, 2 x N x K: the up and down periods still to be
read)."""

FLAGS, EID, AT = 0, 1, 2  # columns of ``sv``; AT + 0: up periods read, AT + 1: down periods read
KEPT = 4  # columns of ``sv``: KEPT + 0 the first job slot `recovery.keep` chains, KEPT + 1 the last (-1: none)
LEFT, BEGAN = 0, 1  # columns of ``sf``: the head job's remaining service (NaN: not begun), its stretch's start
UP, WAITING, SERVING = 1, 2, 4  # flags: up; its process waits on ``idle``; a service end is pending
CYCLE, WAKE = 1, 2  # a TIMER event's argument is CYCLE + 2 sid or WAKE + 2 sid
SKIP = -1  # `before`: the event was a service a failure cut short, popped; go on with the next


def none() -> Failing:
    """The placeholder record of a run without failures (the kernel's types stay the same)."""
    return Failing(np.full(2, -1, dtype=np.int64), np.zeros((1, 6), dtype=np.int64), np.zeros((1, 2)),
                   np.zeros((2, 1, 1)))


def failing_periods(failures: Any, servers: int, seed: int, keep: bool = False) -> Periods | None:
    """The failing servers' record and its refills, from the model's own streams (`workload.failures.period_blocks`);
    None without ``system.failures`` (``failures`` None). ``keep``: the policy's arrival hook answers a blocked
    job (`tools.Description.answers_blocked`), so one blocked at a down server is kept for its recovery."""
    if failures is None:
        return None
    streams = [period_blocks(failures, seed, i) for i in range(servers)]
    return Periods(streams, failures.on_down == "lose", keep)


class Periods:
    """The failing servers' record for one replication, and the refills of its period rows.

    ``streams``: each server's (up, down) blocks, `emulator.workload.failures.period_blocks`, read
    as arrays (a Python float per period took a run of SQ(2), N = 100, 40 ms of its 80).
    """

    def __init__(self, streams: list[tuple[Blocks, Blocks]], lose: bool, keep: bool = False) -> None:
        n = len(streams)
        self.streams = streams
        self.unread = [[np.zeros(0), np.zeros(0)] for _ in range(n)]  # each stream's drawn periods not yet in a row
        self.width = max(2, min(32, (1 << 20) // n))  # periods per row: about 16 MiB at most
        self.record = Failing(np.array([int(lose), int(keep)], dtype=np.int64), np.zeros((n, 6), dtype=np.int64),
                              np.zeros((n, 2)), np.zeros((2, n, self.width)))
        self.record.sv[:, FLAGS] = UP | WAITING  # every server starts up and idle
        self.record.sv[:, EID] = -1
        self.record.sv[:, KEPT:KEPT + 2] = -1
        self.record.sf[:, LEFT] = np.nan
        for sid in range(n):
            for which in (0, 1):
                self.refill(sid, which)

    def refill(self, sid: int, which: int) -> None:
        """The next row of server ``sid``'s up (``which`` 0) or down (1) periods."""
        unread = self.unread[sid][which]
        while len(unread) < self.width:  # the stream's next block
            unread = np.concatenate([unread, self.streams[sid][which](1)])
        self.record.periods[which, sid, :] = unread[:self.width]
        self.unread[sid][which] = unread[self.width:]
        self.record.sv[sid, AT + which] = 0


@compiled_only  # once per call of the kernel: compiled once for every kernel, not inlined in each
def views(F: Failing) -> Failing:
    """``F`` with every array an `core.unmanaged` view: the kernel reads them without reference counting (an
    atomic increment and decrement at each read of a field took SQ(2) with failing servers a third of its time)."""
    return Failing(unmanaged(F.mode), unmanaged(F.sv), unmanaged(F.sf), unmanaged(F.periods))


@njit(cache=True, inline="always")
def _period(F: Failing, sid: int, which: int) -> float:
    at = F.sv[sid, AT + which]
    F.sv[sid, AT + which] = at + 1
    return F.periods[which, sid, at]


@compiled_only
def start(heap: np.ndarray, iv: np.ndarray, F: Failing) -> None:
    """Each server's first up period begins at time 0, in the order the servers' processes start."""
    for sid in range(len(F.sv)):
        push(heap, iv, 0.0 + _period(F, sid, 0), TIMER + 4 * (CYCLE + 2 * sid))


@njit(cache=True, inline="always")
def before(heap: np.ndarray, iv: np.ndarray, F: Failing, code: int) -> int:
    """Before the first event (``code``) is handled: 0 to go on, `SKIP`, or what the engine must do first.

    A service end that is no longer its server's is popped (`SKIP`). A cycle needs its
    next period in its row (`NEED_PERIODS`, the row in ``iv[I_PERIODS]``), and every
    event room for the three a step of a failing server may schedule (`NEED_HEAP`).
    """
    kind = code & 3
    if kind == SERVICE_END and heap[1] != F.sv[code >> 2, EID]:
        pop(heap, iv)
        return SKIP
    if iv[I_HEAP] + 3 >= iv[I_HEAP_CAP]:
        return NEED_HEAP
    arg = code >> 2
    if kind == TIMER and arg > 0 and arg & 1:  # a cycle: a failure reads a down period, a recovery an up one
        sid = (arg - CYCLE) >> 1
        which = 1 if F.sv[sid, FLAGS] & UP else 0
        if F.sv[sid, AT + which] >= F.periods.shape[2]:
            iv[I_PERIODS] = 2 * sid + which
            return NEED_PERIODS
    return 0


@compiled_only
def event(heap: np.ndarray, iv: np.ndarray, fv: np.ndarray, F: Failing, servers: tuple, jobs: tuple,
          measures: tuple, arg: int) -> int:
    """A server's cycle (it fails or recovers) or its wake-up (`WAKE`) at ``fv[F_NOW]``; already popped.

    ``servers``, ``jobs`` and ``measures`` are the kernel's tuples of the servers' table and speeds, the job
    slots' arrays and the measures' arrays (as `copying` reads them). Returns the server if it recovers (the
    kernel then runs its departure hook and `resume`), else -1.
    """
    length, head, tail, inv_speed, speed_index = servers[0], servers[1], servers[2], servers[3], servers[4]
    j_size, j_start, j_next, j_measured = jobs[2], jobs[3], jobs[4], jobs[5]
    occ, occ_count, occ_lengths, occ_totals = measures[1], measures[2], measures[3], measures[4]
    now = fv[F_NOW]
    sid = (arg - 1) >> 1
    sv, sf = F.sv, F.sf
    flags = sv[sid, FLAGS]
    if arg & 1 == 0:  # WAKE: its process resumes; it serves the head job if it still can
        if flags & UP and head[sid] >= 0:
            _serve(heap, iv, F, sid, head[sid], j_size, j_start, inv_speed[sid * speed_index], now)
        else:
            sv[sid, FLAGS] = flags | WAITING
        return -1
    if flags & UP:  # it fails
        flags &= ~UP
        if flags & SERVING:  # the service stops; its end, still in the heap, will be skipped
            sf[sid, LEFT] -= now - sf[sid, BEGAN]
            sv[sid, EID] = -1
            flags = (flags & ~SERVING) | WAITING  # the interrupted process waits on `idle` again
        sv[sid, FLAGS] = flags
        if F.mode[0] == 1:  # lose: every job it holds is lost, in order
            sf[sid, LEFT] = np.nan
            while head[sid] >= 0:
                slot = head[sid]
                head[sid] = j_next[slot]
                length[sid] -= 1
                _lose(iv, fv, j_measured[slot], True)
                if occ:
                    occupancy.depart(iv, fv, occ_count, occ_lengths, occ_totals, length[sid], now)
                j_next[slot] = iv[I_FREE]
                iv[I_FREE] = slot
            tail[sid] = -1
        push(heap, iv, now + _period(F, sid, 1), TIMER + 4 * (CYCLE + 2 * sid))
        return -1
    sv[sid, FLAGS] = flags | UP  # it recovers: the kernel runs its departure hook, then `resume`
    return sid


@compiled_only
def resume(heap: np.ndarray, iv: np.ndarray, F: Failing, sid: int, head: np.ndarray, now: float) -> None:
    """After a recovery's hook: the server's process wakes if it has jobs, and its next up period begins."""
    _wake(heap, iv, F, sid, head, now)
    push(heap, iv, now + _period(F, sid, 0), TIMER + 4 * (CYCLE + 2 * sid))


@njit(cache=True, inline="always")
def _wake(heap: np.ndarray, iv: np.ndarray, F: Failing, sid: int, head: np.ndarray, now: float) -> None:
    """`FailingFifoServer._wake_up`: an up server whose process waits, with a job, resumes at an event now."""
    flags = F.sv[sid, FLAGS]
    if flags & UP and flags & WAITING and head[sid] >= 0:
        F.sv[sid, FLAGS] = flags & ~WAITING
        push(heap, iv, now, TIMER + 4 * (WAKE + 2 * sid))


@njit(cache=True, inline="always")
def arrived(heap: np.ndarray, iv: np.ndarray, F: Failing, sid: int, head: np.ndarray, now: float) -> None:
    """A job joined server ``sid``'s queue (`FailingFifoServer.accept`): an idle server that is up wakes."""
    _wake(heap, iv, F, sid, head, now)


@njit(cache=True, inline="always")
def lost(iv: np.ndarray, fv: np.ndarray, F: Failing, sid: int, measured: int) -> bool:
    """Whether a job that reaches server ``sid`` now is lost there (``lose``, and it is down)."""
    if F.mode[0] == 1 and not F.sv[sid, FLAGS] & UP:
        _lose(iv, fv, measured, False)
        return True
    return False


@njit(cache=True, inline="always")
def row_up(rows: np.ndarray, sid: int) -> bool:
    """Whether server ``sid`` is up, read from the failing servers' rows (`Failing.sv`, or a hook's ``T.failing``)."""
    return rows[sid, FLAGS] & UP != 0


@njit(cache=True, inline="always")
def up(F: Failing, sid: int) -> bool:
    return row_up(F.sv, sid)


@njit(cache=True, inline="always")
def departed(iv: np.ndarray, F: Failing, sid: int, following: int, left: float, now: float) -> None:
    """After a departure the kernel started the next job's service (``left`` long, its end the last event
    scheduled), or, with none (``following`` -1), the process waits on ``idle``."""
    if following >= 0:
        F.sf[sid, LEFT] = left
        F.sf[sid, BEGAN] = now
        F.sv[sid, EID] = iv[I_EID] - 1
    else:
        F.sf[sid, LEFT] = np.nan
        F.sv[sid, EID] = -1
        F.sv[sid, FLAGS] = (F.sv[sid, FLAGS] & ~SERVING) | WAITING


@njit(cache=True, inline="always")
def _serve(heap: np.ndarray, iv: np.ndarray, F: Failing, sid: int, slot: int, j_size: np.ndarray,
           j_start: np.ndarray, inv_speed: float, now: float) -> None:
    """The head job's service (or what is left of it) starts now: its end is scheduled (`_serve`'s timeout)."""
    sf = F.sf
    if np.isnan(sf[sid, LEFT]):  # its first service
        j_start[slot] = now
        sf[sid, LEFT] = j_size[slot] * inv_speed
    sf[sid, BEGAN] = now
    push(heap, iv, now + sf[sid, LEFT], SERVICE_END + 4 * sid)
    F.sv[sid, EID] = iv[I_EID] - 1
    F.sv[sid, FLAGS] = (F.sv[sid, FLAGS] & ~WAITING) | SERVING


@njit(cache=True, inline="always")
def _lose(iv: np.ndarray, fv: np.ndarray, measured: int, present: bool) -> None:
    """`Recorder.lose`: a job lost at a failing server; ``present``: it was there (counted in the area)."""
    if present:
        now = fv[F_NOW]
        fv[F_AREA] += iv[I_INSYS] * (now - fv[F_LAST])
        fv[F_LAST] = now
        iv[I_INSYS] -= 1
    if measured:
        iv[I_LOST_JOBS] += 1
        iv[I_FINISHED] += 1
