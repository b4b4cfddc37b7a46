"""Processor-sharing servers in the event kernel: `emulator.model.server.PsServer`, float for float.

A PS server's jobs are linked in arrival order as a FIFO server's are (``head``,
``tail``, ``j_next``); while a job is there, its ``start`` holds its virtual finish
(the server's virtual time when it arrived, plus its size), and becomes what the
recorder reads (the time lost to sharing, `PsServer`) when it leaves. Each server's
own state is one row of ``sharing``: its virtual time, the time of its last change,
the event id of the completion that counts (an earlier one still in the heap is
superseded: the kernel drops it when it comes first, as `PsServer` ignores it), the
slot of the job with the least virtual finish, and the slot of the job that found it
idle while no other has come (-1: none).

An arrival costs O(1); a departure walks the server's jobs once, O(jobs there), to
unlink the leaving job and find the next first.
"""

from __future__ import annotations

import numpy as np

from .core import compiled_only, push
from .jobs import append
from .state import I_EID, SERVICE_END

PS_VIRTUAL = 0  # work each job here has received since the server was last idle
PS_LAST = 1  # time of the last change (arrival or departure)
PS_EID = 2  # the event id of the completion that counts
PS_FIRST = 3  # slot of the job with the least virtual finish (ties: the earliest to arrive)
PS_ALONE = 4  # slot of the job that found the server idle, while no other has come; -1: none
PS_FIELDS = 5


@compiled_only
def arrive(sharing: np.ndarray, length: np.ndarray, head: np.ndarray, tail: np.ndarray, j_next: np.ndarray,
           j_size: np.ndarray, j_start: np.ndarray, inv_speed: float, sid: int, slot: int, now: float) -> None:
    """`PsServer.accept`'s bookkeeping: job ``slot`` joins server ``sid`` (``length`` already counts it)."""
    row = sharing[sid]
    before = length[sid] - 1
    if before > 0:  # `PsServer._advance`
        virtual = row[PS_VIRTUAL] + (now - row[PS_LAST]) / (before * inv_speed)
        first = j_start[int(row[PS_FIRST])]
        row[PS_VIRTUAL] = first if virtual > first else virtual
        row[PS_ALONE] = -1.0
    else:
        row[PS_ALONE] = slot
    row[PS_LAST] = now
    finish = row[PS_VIRTUAL] + j_size[slot]
    j_start[slot] = finish
    append(head, tail, j_next, sid, slot)
    if before == 0 or finish < j_start[int(row[PS_FIRST])]:  # a tie goes to the job that came first
        row[PS_FIRST] = slot


@compiled_only
def schedule(sharing: np.ndarray, heap: np.ndarray, iv: np.ndarray, length: np.ndarray, j_start: np.ndarray,
             inv_speed: float, sid: int, now: float) -> None:
    """`PsServer._schedule`: the completion of server ``sid``'s first job, superseding any earlier one."""
    row = sharing[sid]
    delay = (j_start[int(row[PS_FIRST])] - row[PS_VIRTUAL]) * length[sid] * inv_speed
    row[PS_EID] = float(iv[I_EID])
    push(heap, iv, now + delay, SERVICE_END + 4 * sid)


@compiled_only
def depart(sharing: np.ndarray, head: np.ndarray, tail: np.ndarray, j_next: np.ndarray, j_at: np.ndarray,
           j_size: np.ndarray, j_start: np.ndarray, inv_speed: float, sid: int, now: float) -> int:
    """`PsServer._complete`'s bookkeeping: server ``sid``'s first job leaves; return its slot.

    Its ``start`` becomes what the recorder reads; the caller updates ``length``.
    """
    row = sharing[sid]
    slot = int(row[PS_FIRST])
    finish = j_start[slot]
    row[PS_VIRTUAL] = finish
    row[PS_LAST] = now
    j_start[slot] = j_at[slot] if row[PS_ALONE] == slot else now - j_size[slot] * inv_speed
    row[PS_ALONE] = -1.0
    # One walk: unlink the leaving job, and find the least finish among the others (the earliest on ties).
    previous, job, best = -1, head[sid], -1
    while job >= 0:
        following = j_next[job]
        if job == slot:
            if previous < 0:
                head[sid] = following
            else:
                j_next[previous] = following
            if tail[sid] == slot:
                tail[sid] = previous
        else:
            if best < 0 or j_start[job] < j_start[best]:
                best = job
            previous = job
        job = following
    if best < 0:  # idle: its virtual time starts again from 0.0
        row[PS_VIRTUAL] = 0.0
    else:
        row[PS_FIRST] = best
    return slot


@compiled_only
def current(sharing: np.ndarray, sid: int, eid: float) -> bool:
    """Whether the completion with id ``eid`` of server ``sid`` counts (a later change superseded it if not)."""
    return sharing[sid, PS_EID] == eid
