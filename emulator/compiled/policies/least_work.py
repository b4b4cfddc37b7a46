"""Least work, compiled (`emulator.policies.least_work`): d servers queried for their unfinished work.

Each server's unfinished work is kept as `emulator.model.server` keeps it, with the
same float operations: a FIFO server's ``end`` (when its last job will leave) in
``T.floats[END]``; a pool's sum of its tasks' completion times and their latest in
``T.floats[ENDS]`` and ``T.floats[LAST]``. The hooks read the job's size from
``T.size[iv[I_CURRENT]]`` and the time from ``T.fv[F_NOW]``.

The answers are compared as the bits of their float64 values read as int64: for
non-negative floats that order, and equality, are those of the floats, so the
replies fit the kernel's integer reply rows and `core.shortest` breaks ties with the
same draws as SimPy's `shortest`; a missing reply (`NO_REPLY`, sys.maxsize) is above the
bits of every float, as SimPy's int is above every work. With latency each query is a
message of the policy's own (``QUERY_MESSAGE``), posted where `network.query` would push
its event (same latency, same event id), whose delivery answers the target's work at that
moment; with lost messages it takes `faults.query`'s round trip (`_query`). At zero latency
with lost messages (``ASKS``: `faults.INSTANT`) the dispatch opens the ask with the targets'
work beside them (``T.targets[ask, d + j]``, written now: the channel answers at once), the
kernel draws the losses and stores lengths (`faults.answered`), and `replied` reads the
work of each target that answered.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...measure.messages import NO_REPLY
from ...policies.least_work import LeastWorkConfig
from .. import faults
from ..core import sample, shortest
from ..network import open_ask, post
from ..state import (
    A_DONE,
    A_FIRST,
    A_LATE,
    A_PENDING,
    A_PHASE,
    F_LOSS,
    F_NOW,
    I_CURRENT,
    I_EDGES,
    P_LATENT,
    P_N,
    P_PARAMS,
    P_POOL,
    P_QUERY,
    POLICY_MESSAGE,
)
from ..tools import Description, Tools
from ..transport import answer, lost
from .common import nothing_initialise, nothing_timer, round_trips

PARAMS = frozenset({"d"})
ASKS = True  # at zero latency with lost messages its asks go through records (`faults.INSTANT`)
D = P_PARAMS
END = ENDS = 0  # a FIFO server's end; a pool's sum of completion times (the same row: one discipline a run)
LAST = 1  # a pool's latest completion time
SCRATCH = 2  # one float to read as int64 bits
QUERY_MESSAGE = POLICY_MESSAGE  # a query on its way: (ask, target index, server)


def describe(config: LeastWorkConfig, point: Any, speeds: np.ndarray) -> Description:
    d = int(config.d)
    # (ask_width 2d: at zero latency with lost messages, the targets' work beside them)
    return Description(ints=[d], sample=d, ask_width=2 * d, float_rows=3)


def instant_loss(config: LeastWorkConfig, point: Any) -> bool:
    """Lost messages at zero latency run compiled: its asks are answered at once or time out (`faults.answered`)."""
    return True


@njit(cache=True, inline="always")
def _bits(T: Tools, value: float) -> int:
    """``value`` (>= 0) as the int64 of its bits: the same order and ties as the floats."""
    scratch = T.floats[SCRATCH]
    scratch[0] = value
    return scratch.view(np.int64)[0]


@njit(cache=True, inline="always")
def _work(P: np.ndarray, length: np.ndarray, T: Tools, sid: int) -> int:
    """`Server.work` of server ``sid`` now, as `_bits`."""
    if length[sid] == 0:
        return _bits(T, 0.0)
    now = T.fv[F_NOW]
    if P[P_POOL]:
        return _bits(T, max(T.floats[ENDS, sid] - length[sid] * now, T.floats[LAST, sid] - now))
    return _bits(T, T.floats[END, sid] - now)


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    latent = P[P_LATENT] != 0  # feature: latency, or zero latency with faults (asks through records)
    asking = P[P_LATENT] == faults.INSTANT  # feature: zero latency with faults: asks through records
    n, d = P[P_N], P[D]
    picked = T.picked
    if d < n:
        sample(rng, ubuf, iv, n, d, False, picked, T.pool)
    else:  # d = N queries every server in id order, with no draw
        for j in range(n):
            picked[j] = j
    if asking:  # the kernel draws the losses (`faults.answered`); the work is now's
        ask = open_ask(T, iv, iv[I_CURRENT], dispatcher, d, 0, False)
        for j in range(d):
            T.targets[ask, j] = picked[j]
            T.targets[ask, d + j] = _work(P, length, T, picked[j])
        return -1, False
    if latent:  # `Channel.ask`: one query per target, in order, each answered on arrival (`deliver`)
        ask = open_ask(T, iv, iv[I_CURRENT], dispatcher, d, 0, False)
        for j in range(d):
            T.targets[ask, j] = picked[j]
            _query(P, counts, iv, T, ask, j, d)
        return -1, False
    round_trips(P, counts, d)
    values = T.values
    for j in range(d):
        values[j] = _work(P, length, T, picked[j])
    return picked[shortest(values, d, rng, ubuf, iv)], False


@njit(cache=True, inline="always")
def _query(P: np.ndarray, counts: np.ndarray, iv: np.ndarray, T: Tools, ask: int, j: int, d: int) -> None:
    """`network.query` of target ``j`` as this policy's own message (`deliver` answers its work).

    With lost messages, `faults.query`'s round trip: its draws, its records and, after the
    last query, its timeout; the query's event a message record rather than the kernel's
    ``QUERY_EVENT`` (which answers lengths), with the same latency and event id.
    """
    target = T.targets[ask, j]
    faulty = T.fv[F_LOSS] != 0.0  # feature: faults: messages lost or servers failing (`faults.on`)
    if not faulty:
        counts[P[P_QUERY]] += 1
        post(T, iv, QUERY_MESSAGE, ask, j, target)
        return
    asks = T.asks
    if j == 0:  # the round trip begins (its only one)
        asks[ask, A_DONE] = 0
        asks[ask, A_FIRST] = 0
        asks[ask, A_LATE] = 0
        asks[ask, A_PHASE] = iv[I_EDGES]
    T.replies[ask, j] = NO_REPLY  # until its reply comes in time
    counts[P[P_QUERY]] += 1
    if lost(counts, iv, T, P[P_QUERY]):
        asks[ask, A_LATE] = 1  # no reply will come: the timeout decides
    else:
        asks[ask, A_PENDING] += 1
        post(T, iv, QUERY_MESSAGE, ask, j, target)
    if j == d - 1:
        faults._time_out(T, iv, ask)


@njit(cache=True, inline="always")
def deliver(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, what: int, a: int, b: int, c: int) -> None:
    """A query reaches server ``c``: it answers its work now (`network.answer` sends the reply)."""
    answer(P, counts, iv, T, a, b, _work(P, length, T, c))


@njit(cache=True, inline="always")
def replied(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, ask: int) -> tuple[int, bool]:
    asking = P[P_LATENT] == faults.INSTANT  # feature: zero latency with faults: asks through records
    d = P[D]
    replies = T.replies[ask]
    if asking:  # the targets that answered answer their work (`dispatch`)
        for j in range(d):
            if replies[j] != NO_REPLY:
                replies[j] = T.targets[ask, d + j]
    return T.targets[ask, shortest(replies, d, rng, ubuf, iv)], False


@njit(cache=True, inline="always")
def on_arrive(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int, blocked: bool, via_list: bool) -> None:
    """`FifoServer.accept` / `PoolServer.accept`: the job's service time added to the server's work."""
    if blocked:
        return
    now = T.fv[F_NOW]
    weights = T.weights
    service = T.size[iv[I_CURRENT]] * (1.0 / weights[sid if len(weights) > 1 else 0])
    floats = T.floats
    if P[P_POOL]:
        end = now + service
        floats[ENDS, sid] += end
        floats[LAST, sid] = max(floats[LAST, sid], end)
    else:  # (length 1: it was idle, and this job's service starts now)
        floats[END, sid] = (now if length[sid] == 1 else floats[END, sid]) + service


@njit(cache=True, inline="always")
def on_depart(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int) -> None:
    """`PoolServer._complete`: the task that ends now leaves the sum (all of it when the pool empties)."""
    if P[P_POOL]:
        T.floats[ENDS, sid] = T.floats[ENDS, sid] - T.fv[F_NOW] if length[sid] else 0.0


initialise, timer = nothing_initialise, nothing_timer
