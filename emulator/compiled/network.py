"""Message latency in the compiled engine: every message an event, as `emulator.model.channels.Channel` sends it.

With latency the SimPy channel schedules one ``Timeout`` per message, its delay
the next draw of the ``network`` stream, and runs the receiver's handler when it
fires. Here a message is a record of `Tools.msg` (what, a, b, c: `state.TRANSFER`,
or a policy's own from `state.POLICY_MESSAGE` on), and its
delivery an event of the kernel's heap (kind `state.MESSAGE`, argument the record)
at now plus the next latency of `Tools.latency`, which the engine draws in the
SimPy engine's blocks. Messages are counted by kind when sent, as the channel
counts them. `Channel.ask` is an ask record (`Tools.asks`, fields `state.A_*`) with
a row of targets and one of replies: one query per target, in target order (an
event whose argument names the ask and target: `state.QUERY_EVENT`, no record); each
target answers when its query arrives (`answer`); when the last reply is in, the
policy's ``replied`` hook decides (and the kernel sends the job the ask held, if any).

In slotted time with ``slot.pull_delay`` (`model.slotted.SlotChannel`) the idle
tokens and reports are held instead: `post` schedules each at the slot after whose
decisions it is due, and the slot clock delivers those due after each slot's decisions.

Before every step the kernel checks `room`: latencies, message and ask records
and heap room for the most one step may send (`state.P_ROOM`, `P_ASK_ROOM`);
otherwise it returns NEED_NETWORK, and the engine refills and grows them. So no
hook ever runs out mid-step.

`post`, which schedules a message, is not inlined: inlining it into every branch of the
kernel's switches took a third of its compilation time (154 s instead of 96 s on an empty
cache, when one kernel held every policy). A policy's message, a query and its answer
(`send`, `query`, `answer`) are: a kernel is built for its transport, so they appear only in
the kernels with latency, and called apart each passed the policy's `Tools` (JSQ with latency
at N = 100, 200 messages a job: 36 us a job called, 9.3 us inlined; JIQ 502 ns and 328 ns,
JBT-2 600 ns and 396 ns, for about 1 s more of their first compilation). Those of an ask's
record (`open_ask`, `close_ask`, `expire`, and `transport.query_all`) are, being short: at zero latency with faults
(`faults.INSTANT`) every job's dispatch calls them, and a call passes the policy's `Tools`,
its arrays and their reference counts (SQ(2), N = 100, loss 0.05: 630 ns a job called,
210 ns inlined). With ``network.loss`` (`faults`) a policy sends its own messages with
`send`, which draws the loss; queries, replies and the asks' timeouts take the
fault path of `faults` from `query`, `answer` and `close_ask`. Their callers say whether
faults are on (``faulty``: the kernel's feature, or `transport`'s feature line), so that a
kernel built without faults compiles none of their paths. Whether a policy's message or ask
goes now or as an event is `transport`'s choice, which the policies' hooks call.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import faults
from .core import compiled_only, push, push_id
from .records import release, take_message
from .state import (
    A_DISPATCHER,
    A_DISPATCHERS,
    A_DONE,
    A_DUE_ID,
    A_JOB,
    A_LEFT,
    A_N,
    A_NEXT,
    A_PENDING,
    A_TAG,
    ASK_SHIFT,
    F_NOW,
    I_ASK_CAP,
    I_ASK_FREE,
    I_ASKS,
    I_EID,
    I_HEAP,
    I_HEAP_CAP,
    I_HELD,
    I_LAT,
    I_LOSS,
    I_MSG_CAP,
    I_MSGS,
    I_NLAT,
    I_NLOSS,
    I_TRANSFERS,
    MESSAGE,
    P_ASK_ROOM,
    P_QUERY,
    P_REPLY,
    P_ROOM,
    QUERY_EVENT,
    REPLY_EVENT,
    TRANSFER,
)
from .tools import Tools


@compiled_only
def room(P: np.ndarray, iv: np.ndarray) -> bool:
    """Whether one more step cannot run out of latencies, loss uniforms, records or heap."""
    r = P[P_ROOM]
    return (iv[I_NLAT] - iv[I_LAT] >= r and iv[I_NLOSS] - iv[I_LOSS] >= r and iv[I_MSG_CAP] - iv[I_MSGS] >= r
            and iv[I_HEAP_CAP] - iv[I_HEAP] >= r + 2 and iv[I_ASK_CAP] - iv[I_ASKS] >= P[P_ASK_ROOM])


@compiled_only
def post(T: Tools, iv: np.ndarray, what: int, a: int, b: int, c: int) -> None:
    """Send one message now: it is delivered after the next latency (`Channel._later`).

    The caller counts it (by kind: the channel counts what it sends).
    """
    slot = take_message(T, iv, what, a, b, c)
    if iv[I_HELD] > 0:  # slotted time's pull_delay: due with the decisions of a later slot, in order
        push(T.heap, iv, float(int(T.fv[F_NOW]) + iv[I_HELD] - 1), MESSAGE + 4 * slot)
        return
    at = iv[I_LAT]
    iv[I_LAT] = at + 1
    push(T.heap, iv, T.fv[F_NOW] + T.latency[at], MESSAGE + 4 * slot)


@njit(cache=True, inline="always")
def send(counts: np.ndarray, iv: np.ndarray, T: Tools, kind: int, what: int, a: int, b: int, c: int,
         faulty: bool) -> None:
    """A policy's own control message of ``kind``: counted, and posted unless it is lost (``faulty``: with
    faults, `faults.lost`)."""
    counts[kind] += 1
    if not (faulty and faults.lost(counts, iv, T, kind)):
        post(T, iv, what, a, b, c)


@njit(cache=True, inline="always")
def open_ask(T: Tools, iv: np.ndarray, job: int, dispatcher: int, n: int, tag: int, dispatchers: bool) -> int:
    """A new ask of ``n`` targets (the caller writes them to ``T.targets[ask, :n]``, then `query`s them)."""
    asks = T.asks
    ask = iv[I_ASK_FREE]
    iv[I_ASK_FREE] = asks[ask, A_NEXT]
    iv[I_ASKS] += 1
    asks[ask, A_JOB] = job
    asks[ask, A_DISPATCHER] = dispatcher
    asks[ask, A_LEFT] = n
    asks[ask, A_N] = n
    asks[ask, A_TAG] = tag
    asks[ask, A_DISPATCHERS] = dispatchers
    asks[ask, A_PENDING] = 0
    asks[ask, A_DONE] = 1  # no round trip begun (`faults`)
    T.due[ask] = -1.0  # no reply on its way yet
    return ask


@njit(cache=True, inline="always")
def query(P: np.ndarray, counts: np.ndarray, iv: np.ndarray, T: Tools, ask: int, i: int, faulty: bool) -> None:
    """Query target ``i`` of ``ask`` (`Channel.ask`: one ``query``, answered on arrival); ``faulty``: with
    faults (`faults.on`), through `faults.query`."""
    if faulty:
        faults.query(P, counts, iv, T, ask, i)
        return
    counts[P[P_QUERY]] += 1
    at = iv[I_LAT]
    iv[I_LAT] = at + 1
    push(T.heap, iv, T.fv[F_NOW] + T.latency[at], MESSAGE + 4 * (QUERY_EVENT | (ask << ASK_SHIFT) | i))


@njit(cache=True, inline="always")
def answer(P: np.ndarray, counts: np.ndarray, iv: np.ndarray, T: Tools, ask: int, i: int, value: int,
           faulty: bool) -> None:
    """Target ``i`` of ``ask`` answers ``value``: its reply leaves now, after the next latency.

    Every reply is counted, takes its latency and its event id where the channel's does;
    but a reply's arrival only stores its value and counts down, so only the last one
    to arrive (in the heap's (time, id) order) is scheduled: when every target has
    answered, that one, with its own time and id. With faults (``faulty``: `faults.on`) each reply is an event
    (`faults.reply`).
    """
    if faulty:
        faults.reply(P, counts, iv, T, ask, i, value)
        return
    counts[P[P_REPLY]] += 1
    T.replies[ask, i] = value
    at = iv[I_LAT]
    iv[I_LAT] = at + 1
    t = T.fv[F_NOW] + T.latency[at]
    eid = iv[I_EID]
    iv[I_EID] = eid + 1
    asks = T.asks
    due = T.due[ask]
    if t > due or (t == due and eid > asks[ask, A_DUE_ID]):
        T.due[ask] = t
        asks[ask, A_DUE_ID] = eid
    asks[ask, A_LEFT] -= 1
    if asks[ask, A_LEFT] == 0:  # the last answer: the ask's one reply event
        push_id(T.heap, iv, T.due[ask], float(asks[ask, A_DUE_ID]), MESSAGE + 4 * (REPLY_EVENT | ask))


@njit(cache=True, inline="always")
def close_ask(T: Tools, iv: np.ndarray, ask: int) -> None:
    if not faults.close(T, iv, ask):  # its late replies or timeout are still to come
        return
    T.asks[ask, A_NEXT] = iv[I_ASK_FREE]
    iv[I_ASK_FREE] = ask
    iv[I_ASKS] -= 1


@njit(cache=True, inline="always")
def decided(T: Tools, iv: np.ndarray, ask: int, to: int, via_list: bool) -> None:
    """With latency, the policy's ``replied`` has run: unless the threshold model asks again, ``ask`` closes and
    the job it held leaves for server ``to`` (if any: `Channel.transfer`)."""
    if T.asks[ask, A_LEFT] != 0:
        return
    held = T.asks[ask, A_JOB]
    close_ask(T, iv, ask)
    if to >= 0:
        iv[I_TRANSFERS] += 1
        post(T, iv, TRANSFER, held, to, via_list)


@njit(cache=True, inline="always")
def expire(T: Tools, iv: np.ndarray, slot: int) -> int:
    """Zero latency with faults: an ask's timeout (message record ``slot``) comes; the ask that decides now, or -1.

    (With latency the kernel reads the record itself, since its messages are of every kind.)
    """
    what, a, b, c = T.msg[slot, 0], T.msg[slot, 1], T.msg[slot, 2], T.msg[slot, 3]
    release(T, iv, slot)
    return faults.arrive(T, iv, what, a, b, c)
