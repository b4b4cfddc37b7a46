"""SED, compiled (`emulator.policies.sed`): d queried servers, the least (length + 1) / speed joined, 2d messages."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...policies.sed import SEDConfig
from ..core import compiled_only, sample, uniform
from ..network import open_ask
from ..state import I_CURRENT, P_LATENT, P_N, P_PARAMS
from ..tools import Description, Tools
from ..transport import query_all
from .common import nothing_initialise, nothing_on_arrive, nothing_on_depart, nothing_timer, round_trips

PARAMS = frozenset({"d", "rule", "ties"})
ASKS = True  # at zero latency with faults its asks go through records, as with latency (`faults.INSTANT`)
D, BY_DELAY, FASTEST = P_PARAMS, P_PARAMS + 1, P_PARAMS + 2  # D: -1 for all N, in server order


def describe(config: SEDConfig, point: Any, speeds: np.ndarray) -> Description:
    n = point.servers
    d = -1 if config.d is None else int(config.d)
    return Description(ints=[d, config.rule == "expected_delay", config.ties == "fastest"],
                       sample=n if d < 0 else d, ask_width=n if d < 0 else d)


@njit(cache=True, inline="always")
def _queried(P: np.ndarray, rng: tuple, ubuf: np.ndarray, iv: np.ndarray, T: Tools, out: np.ndarray) -> int:
    """The servers to query into ``out``, as the SimPy policy: all N in order (no draw), or d sampled."""
    n, d = P[P_N], P[D]
    if d < 0:
        for sid in range(n):
            out[sid] = sid
        return n
    sample(rng, ubuf, iv, n, d, False, out, T.pool)
    return d


@compiled_only
def least(P: np.ndarray, rng: tuple, ubuf: np.ndarray, iv: np.ndarray, T: Tools, ids: np.ndarray,
          lengths: np.ndarray, k: int) -> int:
    """`sed.least` over the ``k`` queried servers ``ids`` and their ``lengths``: the position joined."""
    weights = T.weights
    alike = len(weights) == 1  # one entry: every server has that speed
    by_delay, fastest = P[BY_DELAY] != 0, P[FASTEST] != 0
    best, ties = 0, 1
    low = 0.0
    best_speed = 1.0
    for i in range(k):
        speed = weights[0] if alike else weights[ids[i]]
        # float(length) + 1.0, not length + 1: a missing reply (NO_REPLY, the largest int64) must not wrap
        value = (float(lengths[i]) + 1.0) / speed if by_delay else float(lengths[i])
        if i == 0:
            low, best_speed = value, speed
            continue
        if fastest and value == low and speed != best_speed:
            if speed > best_speed:
                best, ties, best_speed = i, 1, speed
            continue
        if value < low:
            best, ties, low, best_speed = i, 1, value, speed
        elif value == low:
            ties += 1
            if uniform(rng, ubuf, iv) * ties < 1.0:
                best, best_speed = i, speed
    return best


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    latent = P[P_LATENT] != 0  # feature: latency, or zero latency with faults (asks through records)
    if latent:  # ask them; the job waits for the replies (`replied`)
        ask = open_ask(T, iv, iv[I_CURRENT], dispatcher, P[P_N] if P[D] < 0 else P[D], 0, False)
        _queried(P, rng, ubuf, iv, T, T.targets[ask])
        query_all(P, counts, iv, T, ask)
        return -1, False
    picked, values = T.picked, T.values
    k = _queried(P, rng, ubuf, iv, T, picked)
    round_trips(P, counts, k)
    for j in range(k):
        values[j] = length[picked[j]]
    return picked[least(P, rng, ubuf, iv, T, picked, values, k)], False


@njit(cache=True, inline="always")
def replied(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, ask: int) -> tuple[int, bool]:
    k = P[P_N] if P[D] < 0 else P[D]
    return T.targets[ask, least(P, rng, ubuf, iv, T, T.targets[ask], T.replies[ask], k)], False


on_arrive, on_depart, initialise, timer = nothing_on_arrive, nothing_on_depart, nothing_initialise, nothing_timer


def instant_loss(config: SEDConfig, point: Any) -> bool:
    """Lost messages at zero latency run compiled: its asks are answered at once or time out (`faults.answered`)."""
    return True


def servers_fail(config: SEDConfig, point: Any) -> bool:
    """Failing servers run compiled: a query that reaches a down server is lost there (`faults`)."""
    return True
