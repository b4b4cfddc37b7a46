"""The threshold model, compiled (`emulator.policies.threshold`): probes one at a time, at most d."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...measure.messages import NO_REPLY
from ...policies.threshold import ThresholdConfig
from .. import faults
from ..core import sample
from ..network import open_ask
from ..state import A_LEFT, A_TAG, I_CURRENT, P_LATENT, P_N, P_PARAMS
from ..tools import Description, Tools
from ..transport import query
from .common import nothing_initialise, nothing_on_arrive, nothing_on_depart, nothing_timer, round_trips

PARAMS = frozenset({"d", "threshold", "replace"})
ASKS = True  # its probes are its dispatch's asks, one round trip each: with faults at zero latency, `faults.INSTANT`
D, THRESHOLD, REPLACE, ABOVE_ALL = P_PARAMS, P_PARAMS + 1, P_PARAMS + 2, P_PARAMS + 3


def describe(config: ThresholdConfig, point: Any, speeds: np.ndarray) -> Description:
    d = int(config.d)
    total = point.scenario.run.warmup_jobs + point.scenario.run.jobs
    # The kernel's integers are int64: a threshold above every reachable length is any such one. One
    # above NO_REPLY too (not an int64) finds a missing reply below it, as SimPy does: ABOVE_ALL.
    threshold = min(config.threshold, total + 1)
    above_all = config.threshold > NO_REPLY
    return Description(ints=[d, threshold, config.replace, above_all], sample=d,
                       ask_width=d)



@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    latent = P[P_LATENT] != 0  # feature: latency, or zero latency with faults (asks through records)
    d = P[D]
    if latent:  # the probes, drawn at once; each a round trip before the next (`replied`)
        ask = open_ask(T, iv, iv[I_CURRENT], dispatcher, 1, 0, False)
        sample(rng, ubuf, iv, P[P_N], d, P[REPLACE] != 0, T.targets[ask], T.pool)
        query(P, counts, iv, T, ask, 0)
        return -1, False
    picked = T.picked
    sample(rng, ubuf, iv, P[P_N], d, P[REPLACE] != 0, picked, T.pool)
    for i in range(d):
        server = picked[i]
        round_trips(P, counts, 1)
        if length[server] < P[THRESHOLD] or i + 1 == d:
            return server, False
    return picked[d - 1], False


@njit(cache=True, inline="always")
def replied(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, ask: int) -> tuple[int, bool]:
    """Probe ``i`` answered: join it if below the threshold or the last, else probe the next."""
    asking = P[P_LATENT] == faults.INSTANT  # feature: zero latency with faults: asks through records
    asks = T.asks
    i = asks[ask, A_TAG]
    # Zero latency with faults: the kernel asks the round's one target, `faults.answered`'s first: the next
    # probe goes there.
    at = 0 if asking else i
    if T.replies[ask, at] < P[THRESHOLD] or P[ABOVE_ALL] or i + 1 == P[D]:
        return T.targets[ask, at], False
    asks[ask, A_TAG] = i + 1
    asks[ask, A_LEFT] = 1
    T.due[ask] = -1.0  # a new round trip
    if asking:  # the kernel asks it once this returns
        T.targets[ask, 0] = T.targets[ask, i + 1]
        return -1, False
    query(P, counts, iv, T, ask, i + 1)
    return -1, False


on_arrive, on_depart, initialise, timer = nothing_on_arrive, nothing_on_depart, nothing_initialise, nothing_timer


def instant_loss(config: ThresholdConfig, point: Any) -> bool:
    """Whether the kernel runs its lost messages at zero latency (`eligibility.supports`): yes, each probe a round
    trip the kernel answers at once (`faults.answered`), the next probe asked within the same step once the reply
    is in, else at the round's timeout, as `Channel._ask_faulty` does."""
    return True


def servers_fail(config: ThresholdConfig, point: Any) -> bool:
    """Whether the kernel runs its failing servers (`eligibility.supports`): yes, a probe lost at a down server
    waits for its timeout (`faults.dropped`, `faults.answered`), with latency and without."""
    return True
