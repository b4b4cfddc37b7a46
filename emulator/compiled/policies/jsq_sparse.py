"""JSQ with sparse feedback, compiled (`emulator.policies.jsq_sparse`): upper bounds, updates on a timer.

``T.ints[dispatcher]`` holds that dispatcher's bounds and ``T.rr`` where its
cyclic tie-break starts. Synchronous feedback is the periodic timer; for
asynchronous feedback the timer hook sets the delay to its next event
(``Q[Q_PERIOD]``, read by the kernel after each call) to an exponential draw.
With latency an update is a message: rows ``D + k`` of ``T.ints`` hold the
newest stamp dispatcher k has of each server, row ``2 D`` each server's stamp.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from ...measure.messages import Kind
from ...policies.jsq_sparse import JSQSparseConfig
from ..core import compiled_only, uniform
from ..state import P_D, P_LATENT, P_N, P_PARAMS, POLICY_MESSAGE, Q_PARAMS, Q_PERIOD
from ..tools import Description, Tools
from ..transport import lost, send
from .common import nothing_on_arrive, nothing_on_depart, server_up

PARAMS = frozenset({"feedback", "period", "rate"})
UPDATE, ASYNCHRONOUS = P_PARAMS, P_PARAMS + 1
TOTAL = Q_PARAMS  # asynchronous: the rate of the superposed reports, N x rate
TOLD = POLICY_MESSAGE  # with latency: an update (dispatcher, server, length + stamp << 32) on its way


def describe(config: JSQSparseConfig, point: Any, speeds: np.ndarray) -> Description:
    asynchronous = config.feedback == "asynchronous"
    total = point.servers * config.per_server() if asynchronous else 0.0
    # Asynchronous: the period is a placeholder that `initialise` replaces with the first gap.
    latent = point.scenario.network.latency.mean != 0
    dispatchers = point.dispatchers
    return Description(ints=[int(Kind.UPDATE), asynchronous], floats=[total],
                       period=1.0 if asynchronous else float(config.period or 0.0),
                       rr=True, int_rows=2 * dispatchers + 1 if latent else dispatchers,
                       messages_per_step=point.servers * dispatchers)


@njit(cache=True, inline="always")
def _gap(Q: np.ndarray, rng: tuple, ubuf: np.ndarray, iv: np.ndarray) -> None:
    """The delay to the next asynchronous report, drawn as `JSQSparsePolicy._asynchronous` draws it."""
    Q[Q_PERIOD] = -math.log(1.0 - uniform(rng, ubuf, iv)) / Q[TOTAL]


@njit(cache=True, inline="always")
def _report(P: np.ndarray, counts: np.ndarray, length: np.ndarray, iv: np.ndarray, T: Tools, sid: int) -> None:
    """`JSQSparsePolicy._report`: server ``sid`` tells every dispatcher its length (not while down: its turn passes)."""
    latent = P[P_LATENT] != 0  # feature: latency, or zero latency with faults (asks through records)
    if not server_up(T, sid):
        return
    dispatchers = P[P_D]
    if latent:
        stamps = T.ints[2 * dispatchers]
        stamps[sid] += 1
        for dispatcher in range(dispatchers):
            send(counts, iv, T, P[UPDATE], TOLD, dispatcher, sid, length[sid] + (stamps[sid] << 32))
        return
    for dispatcher in range(dispatchers):  # each update drawing its loss (`Channel._post`), delivered at once
        counts[P[UPDATE]] += 1
        if not lost(counts, iv, T, P[UPDATE]):
            T.ints[dispatcher, sid] = length[sid]


@njit(cache=True, inline="always")
def deliver(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, what: int, a: int, b: int, c: int) -> None:
    """`_told`: an update newer than the dispatcher's last from that server sets its bound."""
    stamp, told = c >> 32, c & 0xFFFFFFFF
    stamps = T.ints[P[P_D] + a]
    if stamp > stamps[b]:
        stamps[b] = stamp
        T.ints[a, b] = told


@compiled_only
def initialise(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
               ubuf: np.ndarray, iv: np.ndarray, T: Tools) -> bool:
    if P[ASYNCHRONOUS]:
        _gap(Q, rng, ubuf, iv)
    return True


@compiled_only
def timer(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
          ubuf: np.ndarray, iv: np.ndarray, T: Tools, resume: bool) -> bool:
    if P[ASYNCHRONOUS]:
        _report(P, counts, length, iv, T, int(uniform(rng, ubuf, iv) * P[P_N]))
        _gap(Q, rng, ubuf, iv)
        return True
    for sid in range(P[P_N]):
        _report(P, counts, length, iv, T, sid)
    return True


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    n = P[P_N]
    bound = T.ints[dispatcher]
    low = bound[0]
    for sid in range(1, n):
        if bound[sid] < low:
            low = bound[sid]
    sid = T.rr[dispatcher]
    while bound[sid] != low:  # the first smallest bound in cyclic order from the pointer
        sid = sid + 1 if sid + 1 < n else 0
    bound[sid] += 1
    T.rr[dispatcher] = sid + 1 if sid + 1 < n else 0
    return sid, False


on_arrive, on_depart = nothing_on_arrive, nothing_on_depart


def instant_loss(config: JSQSparseConfig, point: Any) -> bool:
    """Whether the kernel runs its lost messages at zero latency (`eligibility.supports`): yes, each update draws
    its loss when sent and is delivered at once (`faults.lost`), as `Channel._post` does."""
    return True


def servers_fail(config: JSQSparseConfig, point: Any) -> bool:
    """Whether the kernel runs its failing servers (`eligibility.supports`): yes, its updates go to dispatchers,
    which never fail, and a down server skips its turn (`common.server_up`), as SimPy's does."""
    return True
