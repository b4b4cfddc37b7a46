"""SQ(d), compiled (`emulator.policies.sqd`): d sampled servers, the shortest joined, 2d messages."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...policies.sqd import SQDConfig
from ..core import sample, shortest, uniform
from ..network import open_ask
from ..state import I_CURRENT, P_LATENT, P_N, P_PARAMS
from ..tools import Description, Tools
from ..transport import query_all
from .common import nothing_initialise, nothing_on_arrive, nothing_on_depart, nothing_timer, round_trips

PARAMS = frozenset({"d", "replace"})
ASKS = True  # at zero latency with faults its asks go through records, as with latency (`faults.INSTANT`)
D, REPLACE, PAIR = P_PARAMS, P_PARAMS + 1, P_PARAMS + 2  # PAIR: SQ(2) without replacement, written out


def describe(config: SQDConfig, point: Any, speeds: np.ndarray) -> Description:
    d = int(config.d)
    pair = d == 2 and not config.replace
    return Description(ints=[d, config.replace, pair], sample=d, ask_width=d)



@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    latent = P[P_LATENT] != 0  # feature: latency, or zero latency with faults (asks through records)
    n = P[P_N]
    if latent:  # `Uniforms.sample` (SimPy's written-out pair is for zero latency only), then ask them
        d = P[D]
        ask = open_ask(T, iv, iv[I_CURRENT], dispatcher, d, 0, False)
        sample(rng, ubuf, iv, n, d, P[REPLACE] != 0, T.targets[ask], T.pool)
        query_all(P, counts, iv, T, ask)
        return -1, False
    if P[PAIR]:  # the SimPy policy's written-out SQ(2): `Uniforms.sample(n, 2)` and `shortest`, inlined
        a = int(uniform(rng, ubuf, iv) * n)
        b = int(uniform(rng, ubuf, iv) * (n - 1))
        first, second = a, (b + 1 if b >= a else b)
        round_trips(P, counts, 2)
        one, two = length[first], length[second]
        if two < one or (two == one and uniform(rng, ubuf, iv) * 2 < 1.0):
            return second, False
        return first, False
    d = P[D]
    picked, values = T.picked, T.values
    sample(rng, ubuf, iv, n, d, P[REPLACE] != 0, picked, T.pool)
    round_trips(P, counts, d)
    for j in range(d):
        values[j] = length[picked[j]]
    return picked[shortest(values, d, rng, ubuf, iv)], False


@njit(cache=True, inline="always")
def replied(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, ask: int) -> tuple[int, bool]:
    return T.targets[ask, shortest(T.replies[ask], P[D], rng, ubuf, iv)], False


on_arrive, on_depart, initialise, timer = nothing_on_arrive, nothing_on_depart, nothing_initialise, nothing_timer


def instant_loss(config: SQDConfig, point: Any) -> bool:
    """Lost messages at zero latency run compiled: its asks are answered at once or time out (`faults.answered`)."""
    return True


def servers_fail(config: SQDConfig, point: Any) -> bool:
    """Failing servers run compiled: a query that reaches a down server is lost there (`faults`)."""
    return True
