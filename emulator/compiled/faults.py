"""Lost messages and reply timeouts in the compiled engine, as `emulator.model.channels.Channel` has them.

With ``network.loss`` p (``fv[F_LOSS]``) the n-th control message sent, whatever its
kind, is lost when the n-th uniform of the ``loss`` stream (`Tools.loss`, drawn by the
engine in the SimPy engine's blocks) is below p: `lost` draws it when the message is
sent, before its latency, and a lost message takes no latency and is never delivered.
It counts as sent and as lost: the lost counts follow the sent ones in ``counts``
(``counts[K + kind]``, K kinds), so the window's snapshots hold both, as the
recorder's do. Job transfers are never lost.

An ask with faults (`Channel._ask_faulty`) decides when all its replies are in or
``network.timeout`` after its queries went out, whichever comes first, on the replies
that came (a missing one reads `NO_REPLY`); a reply that comes after the decision is
ignored. A round trip is the queries of one decision: all targets of the ask, or one
probe of the threshold model, which asks again on the same record; its first target
(`state.A_FIRST`) tells its queries and timeout from those of an earlier round. Each
query is an event, since its target answers with what it holds when it arrives, and so
is each round's timeout (`state.ASK_TIMEOUT`); a reply is not: whether it comes in time
is known when it leaves (before the timeout, which was scheduled first, so a tie is
late), so its answer is stored then, and only the last one is scheduled, when every
reply of the round comes in time (the event the channel's would be, with its time and
id, as `network.answer` schedules it). Every message still draws the loss stream, its
latency and its event id where the channel's does. A closed ask's record is freed once
its last query and its timeout have come (`state.A_PENDING`).

Each function here is inlined where it is called (one or two callers each: `network`,
the kernel, so little compilation more): called, they took a job of SQ(2) with loss to
twice the kernel time of one with latency alone (2.3 against 1.1 us at N = 100); inlined,
1.3 us.

Messages are lost in the network only: a policy that sends messages runs compiled only
when servers do not fail, so every message that is not lost arrives (`supports` keeps
``system.failures`` on SimPy for it; `failing` runs them under the policies that send none).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..measure.messages import NO_REPLY
from .core import push, push_id
from .state import (
    A_DONE,
    A_DUE_ID,
    A_FIRST,
    A_LATE,
    A_LEFT,
    A_N,
    A_NEXT,
    A_PENDING,
    ASK_SHIFT,
    ASK_TIMEOUT,
    F_LOSS,
    F_NOW,
    F_TIMEOUT,
    I_ASK_FREE,
    I_ASKS,
    I_EID,
    I_LAT,
    I_LOSS,
    I_MSG_FREE,
    I_MSGS,
    MESSAGE,
    P_QUERY,
    P_REPLY,
    QUERY_EVENT,
    REPLY_EVENT,
)
from .tools import Tools


@njit(cache=True, inline="always")
def lost(counts: np.ndarray, iv: np.ndarray, T: Tools, kind: int) -> bool:
    """Whether the control message of ``kind`` sent now is lost (counted as lost if so).

    Draws the next uniform of the ``loss`` stream only when messages can be lost.
    """
    p = T.fv[F_LOSS]
    if p <= 0.0:
        return False
    at = iv[I_LOSS]
    iv[I_LOSS] = at + 1
    if T.loss[at] < p:
        counts[len(counts) // 2 + kind] += 1
        return True
    return False


@njit(cache=True, inline="always")
def _latency(iv: np.ndarray, T: Tools) -> float:
    at = iv[I_LAT]
    iv[I_LAT] = at + 1
    return T.latency[at]


@njit(cache=True, inline="always")
def query(P: np.ndarray, counts: np.ndarray, iv: np.ndarray, T: Tools, ask: int, i: int) -> None:
    """`network.query` with faults: target ``i`` is asked; after the round's last query, its timeout."""
    asks = T.asks
    if asks[ask, A_DONE] != 0:  # the first query of a round trip
        asks[ask, A_DONE] = 0
        asks[ask, A_FIRST] = i
        asks[ask, A_LATE] = 0
        T.due[ask] = -1.0  # no reply on its way yet
    T.replies[ask, i] = NO_REPLY  # until its reply comes in time
    counts[P[P_QUERY]] += 1
    if lost(counts, iv, T, P[P_QUERY]):
        asks[ask, A_LATE] = 1  # no reply will come: the timeout decides
    else:
        asks[ask, A_PENDING] += 1
        push(T.heap, iv, T.fv[F_NOW] + _latency(iv, T), MESSAGE + 4 * (QUERY_EVENT | (ask << ASK_SHIFT) | i))
    if i >= asks[ask, A_N] - 1:  # the round's queries are out: its timeout (`Channel._ask_faulty`)
        T.expiry[ask] = T.fv[F_NOW] + T.fv[F_TIMEOUT]
        asks[ask, A_PENDING] += 1
        msg = T.msg
        slot = iv[I_MSG_FREE]
        iv[I_MSG_FREE] = msg[slot, 1]
        iv[I_MSGS] += 1
        msg[slot, 0] = ASK_TIMEOUT
        msg[slot, 1] = ask
        msg[slot, 2] = asks[ask, A_FIRST]
        msg[slot, 3] = 0
        push(T.heap, iv, T.expiry[ask], MESSAGE + 4 * slot)


@njit(cache=True, inline="always")
def reply(P: np.ndarray, counts: np.ndarray, iv: np.ndarray, T: Tools, ask: int, i: int, value: int) -> None:
    """`network.answer` with faults: the query reached target ``i``, whose reply ``value`` leaves now."""
    asks = T.asks
    asks[ask, A_PENDING] -= 1
    current = asks[ask, A_DONE] == 0 and i >= asks[ask, A_FIRST]  # of the round trip that waits
    counts[P[P_REPLY]] += 1
    if lost(counts, iv, T, P[P_REPLY]):
        if current:  # the timeout decides
            asks[ask, A_LATE] = 1
    else:
        t = T.fv[F_NOW] + _latency(iv, T)
        eid = iv[I_EID]  # the event id the channel's reply takes, scheduled or not
        iv[I_EID] = eid + 1
        if current and t < T.expiry[ask]:  # in time (a tie is late: the timeout was scheduled first)
            T.replies[ask, i] = value
            if t > T.due[ask] or (t == T.due[ask] and eid > asks[ask, A_DUE_ID]):
                T.due[ask] = t
                asks[ask, A_DUE_ID] = eid
            asks[ask, A_LEFT] -= 1
            if asks[ask, A_LEFT] == 0 and asks[ask, A_LATE] == 0:  # every reply in time: the last decides
                asks[ask, A_DONE] = 1
                push_id(T.heap, iv, T.due[ask], float(asks[ask, A_DUE_ID]), MESSAGE + 4 * (REPLY_EVENT | ask))
        elif current:  # it would come after the timeout, which decides
            asks[ask, A_LATE] = 1
    if asks[ask, A_DONE] == 2 and asks[ask, A_PENDING] == 0:
        _free(T, iv, ask)


@njit(cache=True, inline="always")
def arrive(T: Tools, iv: np.ndarray, what: int, ask: int, b: int, c: int) -> int:
    """The timeout (``what`` `state.ASK_TIMEOUT`) of ``ask``'s round trip from target ``b`` on comes.

    Returns ``ask`` if it decides now (its round trip still waits: a reply was lost or
    late), else -1; the caller then runs the policy's ``replied`` and closes the ask.
    """
    asks = T.asks
    asks[ask, A_PENDING] -= 1
    if asks[ask, A_DONE] == 0 and b == asks[ask, A_FIRST]:
        asks[ask, A_DONE] = 1
        asks[ask, A_LEFT] = 0
        return ask
    if asks[ask, A_DONE] == 2 and asks[ask, A_PENDING] == 0:
        _free(T, iv, ask)
    return -1


@njit(cache=True, inline="always")
def close(T: Tools, iv: np.ndarray, ask: int) -> bool:
    """Close ``ask`` after its decision: True if it is free now, False if its queries or timeout are to come."""
    if T.asks[ask, A_PENDING] > 0:
        T.asks[ask, A_DONE] = 2
        return False
    return True


@njit(cache=True, inline="always")
def _free(T: Tools, iv: np.ndarray, ask: int) -> None:
    """`network.close_ask`'s free list, for a closed ask whose last query came."""
    T.asks[ask, A_NEXT] = iv[I_ASK_FREE]
    iv[I_ASK_FREE] = ask
    iv[I_ASKS] -= 1
