"""Jobs sent as copies in the compiled engine (redundancy): `emulator.model.copies`, event for event.

A job sent as d copies is d job slots: the job's own (the first copy, with its size)
and d - 1 more, each with the job's arrival, measured number and dispatcher, and its
own size (the next draw of the ``copies`` stream, or the job's with identical copies).
Beside the kernel's job arrays, each slot has a row of ``Copies.slots``: its group (the
first copy's slot), its state (`ON_WAY` .. `DROPPED`, as `model.copies`), its target
server and the next copy of its group; the first copy's row also holds the group's
copies still on their way, whether one has started or finished the job, and its
references (below).

A server's copies wait in the kernel's FIFO list of slots. As in `CopyServer`, a copy
cancelled while it waits stays in the list, marked gone, and is skipped when it
reaches the head; ``Copies.serving`` holds the copy in service at each server (-1:
idle). Each service end is an event (kind `state.POOL_END`, argument the copy's slot);
one whose copy was cancelled in service meanwhile changes nothing when it comes, as
the SimPy server's stale timeout. A cancel is a message (a record of kind `CANCEL`
with latency, delivered at once without), sent and lost as the SimPy channel sends
them.

A group's slots go back to the kernel's free list together, once nothing refers to
any of them: a copy counts while it is on its way or in a queue, and so do its
pending service end and each cancel on its way to it.

The kernel's arrays come in three tuples: ``servers`` (each FIFO list's length, head
and tail, 1 / speed and its index), ``jobs`` (`state.Jobs`' arrays) and ``measures``
(the response batch, whether occupancy is on, the occupancy observer's arrays). The
kernel calls `room` before each step, `room_for_job` before each job it dispatches,
`send` once the policy picked the targets (``T.picked``) and `event` for a copy's
service end, transfer or cancel; each at one place, inlined (called, passing the
kernel's arrays cost more than the work).
"""

from __future__ import annotations

import dataclasses
from collections import namedtuple
from typing import Any

import numpy as np
from numba import njit

from . import faults, occupancy
from .core import compiled_only, push, unmanaged
from .jobs import append
from .network import post
from .recorder import leave
from .records import release
from .state import (
    F_AREA,
    F_LAST,
    F_NOW,
    I_ARRIVED,
    I_FREE,
    I_HEAP,
    I_HEAP_CAP,
    I_INSYS,
    I_LOSS,
    I_NLOSS,
    I_TRANSFERS,
    NEED_COPIES,
    NEED_HEAP,
    NEED_JOBS,
    NEED_NETWORK,
    NEED_OCCUPANCY,
    POLICY_MESSAGE,
    POOL_END,
    TRANSFER,
)
from .tools import Tools

ON_WAY, WAITING, SERVING, GONE, DROPPED = range(5)
"""A copy's states, as `emulator.model.copies`."""

CANCEL = POLICY_MESSAGE  # a cancel's message record: (CANCEL, copy slot, its server, 0)

# -- a slot's row ----------------------------------------------------------------------------
GROUP, STATE, TARGET, SIBLING = 0, 1, 2, 3  # every copy's
ON_WAY_LEFT, STARTED, DONE, REFS, FIELDS = 4, 5, 6, 7, 8  # the group's, on its first copy's row; the row's size

# -- Copies.cv -------------------------------------------------------------------------------
V_ON, V_D, V_START, V_IDENTICAL, V_KIND = 0, 1, 2, 3, 4  # sending copies; d; cancel at start; sizes; kind
V_UNSETTLED, V_EXTRA, V_SIZE, V_NSIZE, V_LATENT = 5, 6, 7, 8, 9  # Recorder's unsettled, extra_copies; sizes
NV = 10  # (the sizes read and held; with latency)

Copies = namedtuple("Copies", ["cv", "wasted", "slots", "serving", "sizes", "stack"])
"""The copies' state: scalars ``cv`` (`V_*`), ``wasted`` (`Recorder.wasted_work`, one float), a row per job
slot (``slots``), the copy in service per server (``serving``), the extra copies' sizes to read, and the
frames of `cancel_others`."""


# -- the Python side ---------------------------------------------------------------------------
class Arrays:
    """A run's `Copies` and their growth between kernel calls (a placeholder where jobs are not copied).

    ``plan``: (d, cancel at start, identical copies, the cancel kind's index), or None;
    ``sizes``: the blocks of the ``copies`` stream.
    """

    def __init__(self, plan: tuple[int, bool, bool, int] | None, servers: int, slots: int,
                 sizes: Any = None, latent: bool = False) -> None:
        self.cv = np.zeros(NV, dtype=np.int64)
        self.blocks = sizes
        if plan is None:
            self.slots, self.serving = np.zeros((1, FIELDS), dtype=np.int64), np.zeros(1, dtype=np.int64)
            self.sizes, self.stack = np.zeros(1), np.zeros((1, 2), dtype=np.int64)
        else:
            d, start, identical, kind = plan
            self.cv[V_ON], self.cv[V_D], self.cv[V_START], self.cv[V_IDENTICAL] = 1, d, start, identical
            self.cv[V_KIND], self.cv[V_LATENT] = kind, latent
            self.slots = np.zeros((slots, FIELDS), dtype=np.int64)
            self.serving = np.full(servers, -1, dtype=np.int64)
            self.sizes = np.zeros(1)
            self.stack = np.zeros((servers + 2, 2), dtype=np.int64)  # a frame per server starting, at most
        self.wasted = np.zeros(1)

    def record(self) -> Copies:
        """The arrays as the kernel takes them."""
        return Copies(self.cv, self.wasted, self.slots, self.serving, self.sizes, self.stack)

    def grow(self, slots: int) -> None:
        """NEED_COPIES: a row for each of the kernel's ``slots`` job slots, and the next block of sizes if they
        are used up."""
        if len(self.slots) < slots:
            self.slots = np.concatenate([self.slots, np.zeros((slots - len(self.slots), FIELDS), dtype=np.int64)])
        at, held = int(self.cv[V_SIZE]), int(self.cv[V_NSIZE])
        if not self.cv[V_IDENTICAL] and held - at < self.cv[V_D]:  # the unread sizes, then the next blocks
            parts = [self.sizes[at:held]]
            while sum(len(part) for part in parts) < self.cv[V_D]:
                parts.append(next(self.blocks))
            self.sizes = np.concatenate(parts)
            self.cv[V_SIZE], self.cv[V_NSIZE] = 0, len(self.sizes)

    def measure(self, result: Any) -> Any:
        """``result`` (a `RunResult`) with the copies' measurements, as `Recorder.result` gives them."""
        return dataclasses.replace(result, extra_copies=int(self.cv[V_EXTRA]), wasted_work=float(self.wasted[0]))


# -- the kernel's side -------------------------------------------------------------------------
@compiled_only  # once per call of the kernel: compiled once for every kernel, not inlined in each
def views(cp: Copies) -> Copies:
    """``cp`` with every array an `unmanaged` view: the kernel's calls pass them without reference counting."""
    return Copies(unmanaged(cp.cv), unmanaged(cp.wasted), unmanaged(cp.slots), unmanaged(cp.serving),
                  unmanaged(cp.sizes), unmanaged(cp.stack))


@njit(cache=True, inline="always")
def room(iv: np.ndarray, cp: Copies) -> int:
    """0 if the next step cannot run out of heap or loss uniforms, else what the engine must do first."""
    d = cp.cv[V_D]
    if iv[I_HEAP_CAP] - iv[I_HEAP] < 2 * d + 4:  # a step starts at most d services (`_cancel_others`)
        return NEED_HEAP
    if iv[I_NLOSS] - iv[I_LOSS] < d + 2:  # (zero latency with loss: one draw per cancel)
        return NEED_NETWORK
    return 0


@njit(cache=True, inline="always")
def room_for_job(iv: np.ndarray, cp: Copies, next_: np.ndarray, occ: bool, totals: np.ndarray) -> int:
    """`room`, and 0 if a job's copies find their slots, rows, sizes and occupancy room, else what the engine
    must do first."""
    need = room(iv, cp)
    if need:
        return need
    d = cp.cv[V_D]
    free, slot = 0, iv[I_FREE]
    while free < d and slot >= 0:
        free += 1
        slot = next_[slot]
    if free < d:
        return NEED_JOBS
    if len(cp.slots) < len(next_) or (not cp.cv[V_IDENTICAL] and cp.cv[V_SIZE] + d > cp.cv[V_NSIZE]):
        return NEED_COPIES
    if occ and iv[I_INSYS] + d + 1 >= totals.shape[1]:
        return NEED_OCCUPANCY
    return 0


@njit(cache=True, inline="always")
def send(iv: np.ndarray, fv: np.ndarray, counts: np.ndarray, T: Tools, heap: np.ndarray, servers: tuple,
         jobs: tuple, measures: tuple, cp: Copies, first: int, latent: bool) -> None:
    """`RedundancyPolicy.dispatch` after its draw: job slot ``first`` as copies to ``T.picked[:d]``, in order.

    ``latent``: the kernel's feature (messages take time), a constant there, so that each kernel inlines
    one way of sending a copy: `_accept` at once, or a transfer message (`event` accepts it)."""
    arrival, size, next_, measured, dispatcher = jobs[0], jobs[2], jobs[4], jobs[5], jobs[6]
    C, cv = cp.slots, cp.cv
    d = cv[V_D]
    previous = -1
    for i in range(d):  # `Copier`: every copy made, then each sent
        slot = first
        if i > 0:
            slot = iv[I_FREE]
            iv[I_FREE] = next_[slot]
            arrival[slot], measured[slot], dispatcher[slot] = arrival[first], measured[first], dispatcher[first]
            if cv[V_IDENTICAL]:
                size[slot] = size[first]
            else:
                size[slot] = cp.sizes[cv[V_SIZE]]
                cv[V_SIZE] += 1
            C[previous, SIBLING] = slot
        C[slot, GROUP], C[slot, STATE], C[slot, TARGET], C[slot, SIBLING] = first, ON_WAY, T.picked[i], -1
        previous = slot
    C[first, ON_WAY_LEFT], C[first, STARTED], C[first, DONE], C[first, REFS] = d, 0, 0, d
    if measured[first]:
        cv[V_EXTRA] += d - 1
        cv[V_UNSETTLED] += d - 1
    slot = first
    while slot >= 0:
        following = C[slot, SIBLING]  # read first: the slot may be reused once the copy is gone
        iv[I_TRANSFERS] += 1  # Channel.transfer
        if latent:
            post(T, iv, TRANSFER, slot, C[slot, TARGET], 0)
        else:
            _accept(iv, fv, counts, T, heap, servers, jobs, measures, cp, slot)
        slot = following


@njit(cache=True, inline="always")
def event(iv: np.ndarray, fv: np.ndarray, counts: np.ndarray, T: Tools, heap: np.ndarray, servers: tuple,
          jobs: tuple, measures: tuple, cp: Copies, code: int, latent: bool) -> None:
    """The event ``code`` the kernel popped: a copy's service end, or (``latent``) a copy or cancel arriving."""
    arg = code >> 2
    if latent and code & 3 != POOL_END:  # a message: a copy reaching its server, or a cancel reaching a copy
        what, slot = T.msg[arg, 0], T.msg[arg, 1]
        release(T, iv, arg)
        if what == TRANSFER:
            _accept(iv, fv, counts, T, heap, servers, jobs, measures, cp, slot)
            return
        started = _cancel(iv, fv, T, heap, servers, jobs, measures, cp, slot)
        if started >= 0:
            _cancel_others(iv, fv, counts, T, heap, servers, jobs, measures, cp, started)
        _unref(iv, cp, jobs[4], slot)  # the cancel's reference
        return
    _finish(iv, fv, counts, T, heap, servers, jobs, measures, cp, arg)


@compiled_only
def settled(cp: Copies) -> bool:
    """Whether every extra copy of a measured job is gone (`Recorder.unsettled` is 0)."""
    return cp.cv[V_UNSETTLED] == 0


@njit(cache=True, inline="always")
def _accept(iv: np.ndarray, fv: np.ndarray, counts: np.ndarray, T: Tools, heap: np.ndarray, servers: tuple,
            jobs: tuple, measures: tuple, cp: Copies, slot: int) -> None:
    """`CopyServer.accept`: copy ``slot`` reaches its server (or is dropped there, its cancel first)."""
    length, head, tail = servers[0], servers[1], servers[2]
    at, next_, measured = jobs[1], jobs[4], jobs[5]
    C = cp.slots
    sid = C[slot, TARGET]
    if C[slot, STATE] == DROPPED:
        _reached(iv, cp, measured, slot)
        _settle(cp, measured, slot, 0.0)  # Recorder.drop
        _unref(iv, cp, next_, slot)
        return
    now = fv[F_NOW]
    at[slot] = now
    C[slot, STATE] = WAITING
    append(head, tail, next_, sid, slot)
    length[sid] += 1
    fv[F_AREA] += iv[I_INSYS] * (now - fv[F_LAST])  # Recorder.enter
    fv[F_LAST] = now
    iv[I_INSYS] += 1
    if measures[1]:
        occupancy.arrive(iv, fv, measures[2], measures[3], measures[4], length[sid], now)
    _reached(iv, cp, measured, slot)
    if cp.serving[sid] < 0:
        started = _serve_next(iv, fv, heap, servers, jobs, cp, sid)
        if started >= 0:
            _cancel_others(iv, fv, counts, T, heap, servers, jobs, measures, cp, started)


@njit(cache=True, inline="always")
def _finish(iv: np.ndarray, fv: np.ndarray, counts: np.ndarray, T: Tools, heap: np.ndarray, servers: tuple,
            jobs: tuple, measures: tuple, cp: Copies, slot: int) -> None:
    """`CopyServer._finish`: the service of copy ``slot`` ends (nothing happens if it was cancelled in it)."""
    length, head, tail = servers[0], servers[1], servers[2]
    arrival, at, size, start, next_, measured = jobs[0], jobs[1], jobs[2], jobs[3], jobs[4], jobs[5]
    C = cp.slots
    if C[slot, STATE] != SERVING:  # cancelled in service: a stale timeout
        _unref(iv, cp, next_, slot)
        return
    now = fv[F_NOW]
    sid = C[slot, TARGET]
    head[sid] = next_[slot]  # the copy in service is the first of its queue
    if head[sid] < 0:
        tail[sid] = -1
    C[slot, STATE] = GONE
    length[sid] -= 1
    group = C[slot, GROUP]
    first = C[group, DONE] == 0
    if first:
        C[group, DONE] = 1
        leave(iv, fv, measures[0], now, arrival[slot], at[slot], start[slot], measured[slot])
    else:  # another copy finished the job while this one was served: all its work was wasted
        _withdraw(iv, fv, cp, measured, slot, now, size[slot])
    if measures[1]:
        occupancy.depart(iv, fv, measures[2], measures[3], measures[4], length[sid], now)
    cp.serving[sid] = -1
    if first and not cp.cv[V_START]:  # cancel: completion
        _cancel_others(iv, fv, counts, T, heap, servers, jobs, measures, cp, slot)
    started = _serve_next(iv, fv, heap, servers, jobs, cp, sid)
    if started >= 0:
        _cancel_others(iv, fv, counts, T, heap, servers, jobs, measures, cp, started)
    _unref(iv, cp, next_, slot)  # its service end's reference
    _unref(iv, cp, next_, slot)  # and its place in the queue


@njit(cache=True, inline="always")
def _cancel(iv: np.ndarray, fv: np.ndarray, T: Tools, heap: np.ndarray, servers: tuple, jobs: tuple,
            measures: tuple, cp: Copies, slot: int) -> int:
    """`CopyServer.cancel` of copy ``slot``: the copy that starts at its server as a result, if its cancels are
    to be sent (`_serve_next`), else -1."""
    length, head, tail, speed_index = servers[0], servers[1], servers[2], servers[4]
    start, next_, measured = jobs[3], jobs[4], jobs[5]
    C = cp.slots
    state = C[slot, STATE]
    if state == ON_WAY:
        C[slot, STATE] = DROPPED
        return -1
    if state != WAITING and state != SERVING:  # gone already: it finished before its cancel came
        return -1
    now = fv[F_NOW]
    sid = C[slot, TARGET]
    C[slot, STATE] = GONE
    length[sid] -= 1
    work = (now - start[slot]) * T.weights[sid * speed_index] if state == SERVING else 0.0
    _withdraw(iv, fv, cp, measured, slot, now, work)
    if measures[1]:
        occupancy.depart(iv, fv, measures[2], measures[3], measures[4], length[sid], now)
    if state != SERVING:  # it stays in the queue, skipped when it reaches the head
        return -1
    head[sid] = next_[slot]
    if head[sid] < 0:
        tail[sid] = -1
    cp.serving[sid] = -1
    started = _serve_next(iv, fv, heap, servers, jobs, cp, sid)
    _unref(iv, cp, next_, slot)  # its place in the queue
    return started


@njit(cache=True, inline="always")
def _serve_next(iv: np.ndarray, fv: np.ndarray, heap: np.ndarray, servers: tuple, jobs: tuple, cp: Copies,
                sid: int) -> int:
    """`CopyServer._serve_next`: start the first copy not cancelled at idle server ``sid``, if any.

    Returns that copy if the policy's start hook sends its group's cancels now (``cancel: start``, the
    group's first start), else -1: the caller sends them (`_cancel_others`).
    """
    head, tail, inv_speed, speed_index = servers[1], servers[2], servers[3], servers[4]
    size, start, next_ = jobs[2], jobs[3], jobs[4]
    C = cp.slots
    slot = head[sid]
    while slot >= 0 and C[slot, STATE] == GONE:
        head[sid] = next_[slot]
        _unref(iv, cp, next_, slot)  # (its row is read no more)
        slot = head[sid]
    if slot < 0:
        tail[sid] = -1
        return -1
    now = fv[F_NOW]
    cp.serving[sid] = slot
    start[slot] = now
    C[slot, STATE] = SERVING
    push(heap, iv, now + size[slot] * inv_speed[sid * speed_index], POOL_END + 4 * slot)
    group = C[slot, GROUP]
    C[group, REFS] += 1  # the service end's
    if cp.cv[V_START] and C[group, STARTED] == 0:
        C[group, STARTED] = 1
        return slot
    return -1


@compiled_only
def _cancel_others(iv: np.ndarray, fv: np.ndarray, counts: np.ndarray, T: Tools, heap: np.ndarray,
                   servers: tuple, jobs: tuple, measures: tuple, cp: Copies, sender: int) -> None:
    """`RedundancyPolicy._cancel_others`: the server of copy ``sender`` sends a cancel to every other copy of
    its job, in order.

    At zero latency each cancel acts at once, and one that stops a copy in service starts
    the next copy there, whose own cancels (``cancel: start``) go out before the next of
    these: depth first, as the SimPy calls nest, with a frame per group on ``cp.stack``.
    """
    C, stack = cp.slots, cp.stack
    kind = cp.cv[V_KIND]
    depth = 0
    stack[0, 0], stack[0, 1] = sender, C[sender, GROUP]
    while depth >= 0:
        other = stack[depth, 1]
        if other < 0:
            depth -= 1
            continue
        stack[depth, 1] = C[other, SIBLING]
        if other == stack[depth, 0]:
            continue
        counts[kind] += 1  # Channel.send, with its faults: lost in the network
        if faults.lost(counts, iv, T, kind):
            continue
        if cp.cv[V_LATENT]:
            post(T, iv, CANCEL, other, C[other, TARGET], 0)
            C[C[other, GROUP], REFS] += 1  # until it arrives
            continue
        started = _cancel(iv, fv, T, heap, servers, jobs, measures, cp, other)
        if started >= 0:
            depth += 1
            stack[depth, 0], stack[depth, 1] = started, C[started, GROUP]


@njit(cache=True, inline="always")
def _reached(iv: np.ndarray, cp: Copies, measured: np.ndarray, slot: int) -> None:
    """`Group.reached`: once every copy of a measured job reached its server, the source may stop (latency)."""
    group = cp.slots[slot, GROUP]
    cp.slots[group, ON_WAY_LEFT] -= 1
    if cp.slots[group, ON_WAY_LEFT] == 0 and measured[slot] and cp.cv[V_LATENT]:
        iv[I_ARRIVED] += 1


@njit(cache=True, inline="always")
def _withdraw(iv: np.ndarray, fv: np.ndarray, cp: Copies, measured: np.ndarray, slot: int, now: float,
              work: float) -> None:
    """`Recorder.withdraw`: copy ``slot`` leaves its server without finishing its job, after ``work``."""
    fv[F_AREA] += iv[I_INSYS] * (now - fv[F_LAST])
    fv[F_LAST] = now
    iv[I_INSYS] -= 1
    _settle(cp, measured, slot, work)


@njit(cache=True, inline="always")
def _settle(cp: Copies, measured: np.ndarray, slot: int, work: float) -> None:
    """`Recorder._settle`."""
    if measured[slot]:
        cp.wasted[0] += work
        cp.cv[V_UNSETTLED] -= 1


@njit(cache=True, inline="always")
def _unref(iv: np.ndarray, cp: Copies, next_: np.ndarray, slot: int) -> None:
    """One reference to a copy of ``slot``'s group fewer: at none, the group's slots are free again."""
    C = cp.slots
    group = C[slot, GROUP]
    C[group, REFS] -= 1
    if C[group, REFS] > 0:
        return
    copy = group
    while copy >= 0:
        following = C[copy, SIBLING]
        next_[copy] = iv[I_FREE]
        iv[I_FREE] = copy
        copy = following
