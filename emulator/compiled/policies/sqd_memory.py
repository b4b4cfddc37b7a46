"""SQ(d) with memory, compiled (`emulator.policies.sqd_memory`): d drawn plus m remembered, 2 per read.

``T.ints[dispatcher]`` is that dispatcher's memory: its ids in order, then -1
(m < N, so a row always ends in -1).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...measure.messages import NO_REPLY
from ...policies.sqd_memory import SQDMemoryConfig
from ..core import compiled_only, sample, shortest
from ..network import open_ask
from ..state import A_DISPATCHER, A_LEFT, A_N, I_CURRENT, P_D, P_LATENT, P_N, P_PARAMS
from ..tools import Description, Tools
from ..transport import query_all
from .common import nothing_on_arrive, nothing_on_depart, nothing_timer, round_trips

PARAMS = frozenset({"d", "m"})
ASKS = True  # at zero latency with faults its asks go through records, as with latency (`faults.INSTANT`)
D, M = P_PARAMS, P_PARAMS + 1


def describe(config: SQDMemoryConfig, point: Any, speeds: np.ndarray) -> Description:
    d = int(config.d)
    return Description(ints=[d, config.m], sample=d + config.m,
                       int_rows=point.dispatchers, ask_width=d + config.m)


@compiled_only
def initialise(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
               ubuf: np.ndarray, iv: np.ndarray, T: Tools) -> bool:
    T.ints[:P[P_D], :] = -1  # every memory empty
    return True


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    latent = P[P_LATENT] != 0  # feature: latency, or zero latency with faults (asks through records)
    d, m = P[D], P[M]
    ask = open_ask(T, iv, iv[I_CURRENT], dispatcher, 0, 0, False) if latent else -1
    picked, memory = (T.targets[ask] if latent else T.picked), T.ints[dispatcher]
    sample(rng, ubuf, iv, P[P_N], d, False, picked, T.pool)
    k = d
    j = 0
    while j < m and memory[j] >= 0:  # the remembered ids that were not drawn
        sid = memory[j]
        drawn = False
        for i in range(d):
            if picked[i] == sid:
                drawn = True
                break
        if not drawn:
            picked[k] = sid
            k += 1
        j += 1
    if latent:  # the job waits for the k replies (`replied`)
        T.asks[ask, A_N] = T.asks[ask, A_LEFT] = k
        query_all(P, counts, iv, T, ask)
        return -1, False
    round_trips(P, counts, k)
    values = T.values
    for i in range(k):
        values[i] = length[picked[i]]
    return _decide(P, rng, ubuf, iv, picked, values, memory, k), False


@njit(cache=True, inline="always")
def replied(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, ask: int) -> tuple[int, bool]:
    k = T.asks[ask, A_N]
    picked, values = T.picked, T.values
    for i in range(k):  # `_decide` spends its candidates and values
        picked[i] = T.targets[ask, i]
        values[i] = T.replies[ask, i]
    return _decide(P, rng, ubuf, iv, picked, values, T.ints[T.asks[ask, A_DISPATCHER]], k), False


@njit(cache=True, inline="always")
def _decide(P: np.ndarray, rng: tuple, ubuf: np.ndarray, iv: np.ndarray, picked: np.ndarray,
            values: np.ndarray, memory: np.ndarray, k: int) -> int:
    """The shortest of the k candidates (ties at random), and the m least loaded remembered."""
    m = P[M]
    chosen = shortest(values, k, rng, ubuf, iv)
    server = picked[chosen]
    if m > 0:
        # Only servers that answered are remembered: a missing reply (NO_REPLY, faults) is no length.
        answered = 0
        for i in range(k):
            if values[i] == NO_REPLY:
                picked[i] = -1
            else:
                answered += 1
        if picked[chosen] >= 0:
            values[chosen] += 1  # the job just sent
        # The m least loaded, by a stable selection: ties in candidate order (drawn first).
        kept = min(m, answered)
        for slot in range(kept):
            best = -1
            for i in range(k):
                if picked[i] >= 0 and (best < 0 or values[i] < values[best]):
                    best = i
            memory[slot] = picked[best]
            picked[best] = -1
        # The memory is replaced, not overwritten: with latency it may have grown since this job read it
        # (other replies came in between), and ids left after the new ones would be remembered too.
        memory[kept:m] = -1
    return server


on_arrive, on_depart, timer = nothing_on_arrive, nothing_on_depart, nothing_timer


def instant_loss(config: SQDMemoryConfig, point: Any) -> bool:
    """Lost messages at zero latency run compiled: its asks are answered at once or time out (`faults.answered`)."""
    return True


def servers_fail(config: SQDMemoryConfig, point: Any) -> bool:
    """Failing servers run compiled: a query that reaches a down server is lost there (`faults`)."""
    return True
