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

With failing servers (`failing`) a query that reaches a down server is lost there
(`dropped`): counted as lost in the window it was sent in (`state.A_PHASE`), as
`Recorder.lose_message` counts it, and its round trip waits for its timeout. Faults
are on (`on`) with loss or failing servers: ``fv[F_LOSS]`` is then the loss, or -1 for
failing servers without loss (asks wait with timeouts, no loss is drawn).

At zero latency with faults (`INSTANT`: ``P[P_LATENT]`` 2, where the compiled policy
asks: its ``ASKS``) a policy asks through a record as with latency, and the kernel
answers it at once after the hook that opened it (`answered`): each target in order
draws its query's loss, answers if it is up, and its reply draws its own, as
`Channel._ask_faulty` delivers them at once; with every reply in, the policy decides
within the same step, else at the round's timeout, an event (`network.expire`). JBT-d's timer asks
the same way (`asked`, from the hook): its update goes out within the timer's step or the timeout's.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..measure.messages import NO_REPLY
from .core import push, push_id
from .failing import Failing, row_up
from .records import take_message
from .state import (
    A_DISPATCHERS,
    A_DONE,
    A_DUE_ID,
    A_FIRST,
    A_LATE,
    A_LEFT,
    A_N,
    A_NEXT,
    A_PENDING,
    A_PHASE,
    ASK_SHIFT,
    ASK_TIMEOUT,
    F_LOSS,
    F_NOW,
    F_TIMEOUT,
    I_ASK_CAP,
    I_ASK_FREE,
    I_ASKS,
    I_EDGES,
    I_EID,
    I_HEAP,
    I_HEAP_CAP,
    I_LAT,
    I_LOSS,
    I_MSG_CAP,
    I_MSGS,
    I_NLOSS,
    I_UPDATE_R,
    I_UPDATING,
    MESSAGE,
    P_ASK_ROOM,
    P_QUERY,
    P_REPLY,
    P_ROOM,
    QUERY_EVENT,
    REPLY_EVENT,
)
from .tools import Tools

INSTANT = 2
"""``P[P_LATENT]`` at zero latency with faults under a policy that asks: its asks go through records (`answered`)."""


@njit(cache=True, inline="always")
def room(P: np.ndarray, iv: np.ndarray) -> bool:
    """`INSTANT`: whether a step cannot run out of loss uniforms (two per target), ask or message records or heap."""
    return (iv[I_NLOSS] - iv[I_LOSS] >= P[P_ROOM] and iv[I_MSG_CAP] - iv[I_MSGS] >= 1
            and iv[I_ASK_CAP] - iv[I_ASKS] >= P[P_ASK_ROOM] and iv[I_HEAP_CAP] - iv[I_HEAP] >= 4)


@njit(cache=True, inline="always")
def on(T: Tools) -> bool:
    """Whether asks may miss replies (loss, or failing servers: ``fv[F_LOSS]`` -1), so they wait with timeouts."""
    return T.fv[F_LOSS] != 0.0


@njit(cache=True, inline="always")
def count_lost(counts: np.ndarray, kind: int) -> None:
    """Count a control message of ``kind`` as lost (``counts``' second half, as `Recorder.lose_message` does)."""
    counts[len(counts) // 2 + kind] += 1


@njit(cache=True, inline="always")
def count_lost_since(counts: np.ndarray, window: np.ndarray, iv: np.ndarray, kind: int, phase: int) -> None:
    """`count_lost` for a message lost on arrival: also in the window's snapshots taken since it was sent
    (``phase``: the window edges passed then), as if it had been lost when it was sent."""
    at = len(counts) // 2 + kind
    counts[at] += 1
    for edge in range(phase, iv[I_EDGES]):
        window[edge, at] += 1


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
        count_lost(counts, kind)
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
        asks[ask, A_PHASE] = iv[I_EDGES]
        T.due[ask] = -1.0  # no reply on its way yet
    T.replies[ask, i] = NO_REPLY  # until its reply comes in time
    counts[P[P_QUERY]] += 1
    if lost(counts, iv, T, P[P_QUERY]):
        asks[ask, A_LATE] = 1  # no reply will come: the timeout decides
    else:
        asks[ask, A_PENDING] += 1
        push(T.heap, iv, T.fv[F_NOW] + _latency(iv, T), MESSAGE + 4 * (QUERY_EVENT | (ask << ASK_SHIFT) | i))
    if i >= asks[ask, A_N] - 1:  # the round's queries are out: its timeout (`Channel._ask_faulty`)
        _time_out(T, iv, ask)


@njit(cache=True, inline="always")
def _time_out(T: Tools, iv: np.ndarray, ask: int) -> None:
    """The round trip's timeout, ``network.timeout`` from now (`Channel._ask_faulty`'s ``Timeout``): an event."""
    asks = T.asks
    T.expiry[ask] = T.fv[F_NOW] + T.fv[F_TIMEOUT]
    asks[ask, A_PENDING] += 1
    slot = take_message(T, iv, ASK_TIMEOUT, ask, asks[ask, A_FIRST], 0)
    push(T.heap, iv, T.expiry[ask], MESSAGE + 4 * slot)


@njit(cache=True, inline="always")
def dropped(P: np.ndarray, counts: np.ndarray, window: np.ndarray, iv: np.ndarray, T: Tools, ask: int,
            i: int) -> None:
    """The query to target ``i`` of ``ask`` reached it while it is down: lost there, so its timeout decides.

    Counted as lost where `Recorder.lose_message` counts it: now, and in the window's snapshots
    taken since it was sent (``A_PHASE``), as if it had been lost when it was sent.
    """
    asks = T.asks
    asks[ask, A_PENDING] -= 1
    count_lost_since(counts, window, iv, P[P_QUERY], asks[ask, A_PHASE])
    if asks[ask, A_DONE] == 0 and i >= asks[ask, A_FIRST]:  # of the round trip that waits
        asks[ask, A_LATE] = 1
    if asks[ask, A_DONE] == 2 and asks[ask, A_PENDING] == 0:
        _free(T, iv, ask)


@njit(cache=True, inline="always")
def answered(P: np.ndarray, counts: np.ndarray, length: np.ndarray, iv: np.ndarray, T: Tools, F: Failing,
             failing: bool, ask: int) -> bool:
    """Zero latency with faults: ``ask``'s round trip, now; True if every reply is in (the policy decides now).

    `Channel._ask_faulty` at zero latency: per target in order, the query is counted and draws
    its loss; one that is not lost reaches the target, lost there if it is down, else answered
    with what it holds now, and the reply is counted and draws its loss. A missing reply reads
    `NO_REPLY`; then the round's timeout is scheduled, and decides (`network.expire`).
    """
    return asked(P, counts, length, iv, T, F.sv, failing, ask)


@njit(cache=True, inline="always")
def asked(P: np.ndarray, counts: np.ndarray, length: np.ndarray, iv: np.ndarray, T: Tools, servers: np.ndarray,
          failing: bool, ask: int) -> bool:
    """`answered`, with the failing servers' rows (``servers``: `failing.Failing.sv`, or a hook's ``T.failing``)."""
    asks = T.asks
    n = asks[ask, A_N]
    kind = P[P_QUERY]
    missing = 0
    for i in range(n):
        target = T.targets[ask, i]
        T.replies[ask, i] = NO_REPLY
        counts[kind] += 1
        if lost(counts, iv, T, kind):
            missing += 1
        elif failing and not asks[ask, A_DISPATCHERS] and not row_up(servers, target):  # lost at the down server
            count_lost(counts, kind)
            missing += 1
        else:
            value = T.count[target] if asks[ask, A_DISPATCHERS] else length[target]
            counts[P[P_REPLY]] += 1
            if lost(counts, iv, T, P[P_REPLY]):
                missing += 1
            else:
                T.replies[ask, i] = value
    asks[ask, A_LEFT] = missing
    if missing == 0:
        return True
    asks[ask, A_DONE] = 0  # the round trip waits for its timeout
    asks[ask, A_FIRST] = 0
    asks[ask, A_LATE] = 1
    _time_out(T, iv, ask)
    return False


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


@njit(cache=True, inline="always")
def update_done(iv: np.ndarray, asking: bool) -> bool:
    """A threshold update that stopped for list room is done (``iv[I_UPDATING]`` -1): whether the timer is to wait
    again. Not if its ask's timeout decided it (``asking``: JBT-d at zero latency with faults, ``iv[I_UPDATE_R]``
    then -1 - r): the timer waits already."""
    iv[I_UPDATING] = -1
    return not (asking and iv[I_UPDATE_R] < 0)
