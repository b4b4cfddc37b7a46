"""Least work, compiled (`emulator.policies.least_work`): d servers queried for their unfinished work.

Each server's unfinished work is kept as `emulator.model.server` keeps it, with the
same float operations: a FIFO server's ``end`` (when its last job will leave) in
``T.floats[END]``; a pool's sum of its tasks' completion times and their latest in
``T.floats[ENDS]`` and ``T.floats[LAST]``. The hooks read the job's size from
``T.size[iv[I_CURRENT]]`` and the time from ``T.fv[F_NOW]``.

The answers are compared as the bits of their float64 values read as int64: for
non-negative floats that order, and equality, are those of the floats, so the
replies fit the kernel's integer reply rows and `core.shortest` breaks ties with the
same draws as SimPy's `shortest`. With latency each query is a message of the
policy's own (``QUERY_MESSAGE``), posted where `network.query` would push its event (same
latency, same event id), whose delivery answers the target's work at that moment.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...policies.least_work import LeastWorkConfig
from ..core import sample, shortest
from ..network import answer, open_ask, post
from ..state import F_NOW, I_CURRENT, P_LATENT, P_N, P_PARAMS, P_POOL, P_QUERY, POLICY_MESSAGE
from ..tools import Description, Tools, needs_choice
from .common import nothing_initialise, nothing_timer, round_trips

PARAMS = frozenset({"d"})
D = P_PARAMS
END = ENDS = 0  # a FIFO server's end; a pool's sum of completion times (the same row: one discipline a run)
LAST = 1  # a pool's latest completion time
SCRATCH = 2  # one float to read as int64 bits
QUERY_MESSAGE = POLICY_MESSAGE  # a query on its way: (ask, target index, server)


def describe(config: LeastWorkConfig, point: Any, speeds: np.ndarray) -> Description:
    d = int(config.d)
    choice = d if d < point.servers and needs_choice(point.servers, d, False) else 0
    return Description(ints=[d], sample=d, choice_at_dispatch=choice, ask_width=d, float_rows=3)


def supports(config: LeastWorkConfig, point: Any) -> str | None:
    if point.scenario.network.loss > 0:  # (its queries are its own messages: the fault path answers lengths)
        return "least_work with network.loss > 0 (lost queries and replies run on SimPy)"
    return None


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
    n, d = P[P_N], P[D]
    picked = T.picked
    if d < n:
        sample(rng, ubuf, iv, n, d, False, picked, T.choice)
    else:  # d = N queries every server in id order, with no draw
        for j in range(n):
            picked[j] = j
    if P[P_LATENT]:  # `Channel.ask`: one query per target, in order, each answered on arrival (`deliver`)
        ask = open_ask(T, iv, iv[I_CURRENT], dispatcher, d, 0, False)
        for j in range(d):
            T.targets[ask, j] = picked[j]
            counts[P[P_QUERY]] += 1
            post(T, iv, QUERY_MESSAGE, ask, j, picked[j])
        return -1, False
    round_trips(P, counts, d)
    values = T.values
    for j in range(d):
        values[j] = _work(P, length, T, picked[j])
    return picked[shortest(values, d, rng, ubuf, iv)], False


@njit(cache=True, inline="always")
def deliver(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, what: int, a: int, b: int, c: int) -> None:
    """A query reaches server ``c``: it answers its work now (`network.answer` sends the reply)."""
    answer(P, counts, iv, T, a, b, _work(P, length, T, c))


@njit(cache=True, inline="always")
def replied(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, ask: int) -> tuple[int, bool]:
    return T.targets[ask, shortest(T.replies[ask], P[D], rng, ubuf, iv)], False


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
