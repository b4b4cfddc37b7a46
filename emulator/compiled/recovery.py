"""What a failed server misses in the compiled kernel, as `emulator.model.failures.FailingFifoServer` has it.

A down server's arrival hooks wait until it recovers: SimPy then runs the arrival hook of
each job that reached it while down, in order, before its departure hook (`failing`
runs that one). Of such a job the compiled policies whose servers may fail read, in their
arrival hook, whether it came from a list (JBT-d's ``via_list``) or, with a capacity, was
blocked (LOR answers it: its completion goes to the job's dispatcher); the others' hooks do
nothing then (JSQ-push's tells a changed length, which the departure hook tells as well).
So the kernel counts the jobs from lists that reached a down server (`hold`; the count sits
above the failing server's own flags in ``sv[sid, FLAGS]``, `failing.UP`, `WAITING`,
`SERVING`, whose bits `failing` sets and clears one by one), and, under a policy that answers
a blocked job (``Failing.mode[1]``), keeps each blocked job's slot, chained in arrival order
(`keep`: its dispatcher stays in the slot); at the recovery `missed` hands the kernel each kept
job, then each job from a list, for its arrival hook. ``hold`` only: with ``lose`` a job that
reaches a down server is lost before its capacity is looked at, so none is blocked there.
A kept job's answer goes out in the recovery's step: each adds one to ``P[P_ROOM]``, the most
one step may send, so that the room checked before every step (`network.room`,
`needs.event`) holds them all, and memory grows with the jobs kept.

A policy's own message to a server (JBT-d's threshold) is lost if the server is down when
it arrives, as `Channel._post` loses it: the policy sends it with `to_server`, which marks
it (`TO_SERVER` in its ``what``) and keeps its kind and the window it was sent in (its
``c``), and the kernel delivers it only if the server is up (`reaches`), else counts it lost
where `Recorder.lose_message` does.

A server that asks (JIQ-SQ(d)'s idle server asks dispatchers: `state.A_DISPATCHERS`, its id the ask's tag) loses
the replies that reach it while it is down, and decides nothing if it is down when its round trip ends
(`Channel._ask_faulty` with an ``asker``): with latency each of its replies is an event (`reply`, `arrive`), where
a dispatcher's ask schedules only its last (`faults.reply`), and its decision runs only if it is up (`asker_up`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import faults
from .failing import FLAGS, KEPT, Failing, up
from .jobs import free_slot
from .network import post, send
from .state import (
    A_DISPATCHERS,
    A_DONE,
    A_LEFT,
    A_NEXT,
    A_PENDING,
    A_TAG,
    I_ASK_FREE,
    I_ASKS,
    I_EDGES,
    I_ORIGIN,
    P_REPLY,
    P_ROOM,
)
from .tools import Tools

HELD = 8
"""One job from a list held for the recovery: the failing server's flags are the bits below it."""
TO_SERVER = 1 << 40
"""Set in a policy message's ``what`` (`to_server`): its receiver is server ``a``."""
WHAT = TO_SERVER - 1
"""The message's own ``what``, the mark taken off (`deliver` sees it so)."""
PHASE = 1 << 16
"""``c`` of a marked message: its kind + PHASE x the window's edges passed when it was sent."""


@njit(cache=True, inline="always")
def hold(F: Failing, sid: int, via_list: bool) -> None:
    """A job reached server ``sid`` while it is down: if from a list, its arrival hook waits for the recovery
    (`missed`)."""
    if via_list:
        F.sv[sid, FLAGS] += HELD


LISTED, BLOCKED = 1, 2
"""What `missed` hands the kernel: a job from a list (not blocked), or a kept blocked job (its dispatcher in
``iv[I_ORIGIN]``)."""


@njit(cache=True, inline="always")
def keep(P: np.ndarray, F: Failing, j_next: np.ndarray, sid: int, slot: int) -> bool:
    """A job blocked at server ``sid`` (slot ``slot``): whether it is kept for its arrival hook at the recovery.

    Kept if the server is down and the policy answers a blocked job (``F.mode[1]``): chained after the
    server's last kept job, its slot taken until `missed` frees it.
    """
    if F.mode[1] == 0 or up(F, sid):
        return False
    j_next[slot] = -1
    if F.sv[sid, KEPT] < 0:
        F.sv[sid, KEPT] = slot
    else:
        j_next[F.sv[sid, KEPT + 1]] = slot
    F.sv[sid, KEPT + 1] = slot
    P[P_ROOM] += 1  # its answer goes out in the recovery's step
    return True


@njit(cache=True, inline="always")
def missed(P: np.ndarray, iv: np.ndarray, F: Failing, j_next: np.ndarray, j_dispatcher: np.ndarray,
           sid: int) -> int:
    """The next job whose arrival hook the recovering server ``sid`` runs, in SimPy's order, or 0 if none is left.

    `BLOCKED`: its first kept job (`keep`), its dispatcher written to ``iv[I_ORIGIN]``, its slot freed.
    `LISTED`: one of its jobs from lists (`hold`; counted once: the count goes down). No policy has both.
    0: ``iv[I_ORIGIN]`` is -1 for the departure hook the recovery runs next (no job left: LOR answers none).
    """
    slot = F.sv[sid, KEPT]
    if slot >= 0:
        F.sv[sid, KEPT] = j_next[slot]
        iv[I_ORIGIN] = j_dispatcher[slot]
        free_slot(iv, j_next, slot)
        P[P_ROOM] -= 1
        return BLOCKED
    if F.sv[sid, FLAGS] >= HELD:
        F.sv[sid, FLAGS] -= HELD
        return LISTED
    iv[I_ORIGIN] = -1
    return 0


@njit(cache=True, inline="always")
def to_server(counts: np.ndarray, iv: np.ndarray, T: Tools, kind: int, what: int, sid: int, b: int) -> None:
    """A policy's message of ``kind`` to server ``sid`` (with latency), lost there if it is down when it arrives."""
    send(counts, iv, T, kind, what | TO_SERVER, sid, b, kind + PHASE * iv[I_EDGES], True)  # (servers fail: faults)


@njit(cache=True, inline="always")
def reaches(counts: np.ndarray, window: np.ndarray, iv: np.ndarray, F: Failing, what: int, a: int, c: int) -> bool:
    """Whether a policy's message arriving now reaches its receiver: False if it is a server that is down.

    Lost there, it is counted lost now and in the window's snapshots taken since it was sent,
    as `Recorder.lose_message` counts it (`faults.dropped`).
    """
    if what & TO_SERVER == 0 or up(F, a):
        return True
    faults.count_lost_since(counts, window, iv, c % PHASE, c // PHASE)
    return False


# -- a server's own ask (JIQ-SQ(d)'s idle server asks the dispatchers), with latency --------------
REPLY = 1
"""A message record's ``what`` (`state.TRANSFER` is 0, `state.ASK_TIMEOUT` 2): a reply on its way to the server
that asked (ask, target index, its answer x 4 + the window's edges passed when it left)."""


@njit(cache=True, inline="always")
def reply(P: np.ndarray, counts: np.ndarray, iv: np.ndarray, T: Tools, ask: int, i: int, value: int) -> None:
    """The query of a server's ``ask`` reached target ``i`` (a dispatcher), whose reply ``value`` leaves now.

    `Channel._ask_faulty` with an ``asker``: the reply is counted and draws its loss; one not lost is an event
    (`arrive`), since whether it is lost at its server depends on the server's state when it arrives.
    """
    asks = T.asks
    asks[ask, A_PENDING] -= 1  # the query came
    counts[P[P_REPLY]] += 1
    if not faults.lost(counts, iv, T, P[P_REPLY]):
        asks[ask, A_PENDING] += 1
        post(T, iv, REPLY, ask, i, 4 * value + iv[I_EDGES])
    elif asks[ask, A_DONE] == 2 and asks[ask, A_PENDING] == 0:
        _free(T, iv, ask)


@njit(cache=True, inline="always")
def arrive(P: np.ndarray, counts: np.ndarray, window: np.ndarray, iv: np.ndarray, T: Tools, F: Failing, ask: int,
           i: int, c: int) -> int:
    """A reply (`reply`) reaches the server that asked: ``ask`` if it decides now (its last reply), else -1.

    Lost there if the server is down, counted where `Recorder.lose_message` counts it; else, while the round
    trip waits, its answer is in, and with every answer in the server decides (`Channel._ask_faulty`'s
    ``on_reply``); one that comes after the decision changes nothing.
    """
    asks = T.asks
    asks[ask, A_PENDING] -= 1
    decide = -1
    if not up(F, asks[ask, A_TAG]):
        faults.count_lost_since(counts, window, iv, P[P_REPLY], c % 4)
    elif asks[ask, A_DONE] == 0:
        T.replies[ask, i] = c // 4
        asks[ask, A_LEFT] -= 1
        if asks[ask, A_LEFT] == 0:
            asks[ask, A_DONE] = 1  # (its timeout, when it comes, changes nothing: `faults.arrive`)
            decide = ask
    if asks[ask, A_DONE] == 2 and asks[ask, A_PENDING] == 0:
        _free(T, iv, ask)
    return decide


@njit(cache=True, inline="always")
def asker_up(F: Failing, T: Tools, ask: int) -> bool:
    """Whether ``ask``'s decision runs: not a server's (its tag, `state.A_TAG`) that is down (it sends nothing)."""
    return not T.asks[ask, A_DISPATCHERS] or up(F, T.asks[ask, A_TAG])


@njit(cache=True, inline="always")
def _free(T: Tools, iv: np.ndarray, ask: int) -> None:
    """`network.close_ask`'s free list, for a closed ask whose last message came."""
    T.asks[ask, A_NEXT] = iv[I_ASK_FREE]
    iv[I_ASK_FREE] = ask
    iv[I_ASKS] -= 1
