"""The threshold model, compiled (`emulator.policies.threshold`): probes one at a time, at most d."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...policies.threshold import ThresholdConfig
from ..core import sample
from ..state import P_N, P_PARAMS
from ..tools import Description, Tools, needs_choice
from .common import nothing_initialise, nothing_on_arrive, nothing_on_depart, nothing_timer, round_trips

PARAMS = frozenset({"d", "threshold", "replace"})
D, THRESHOLD, REPLACE = P_PARAMS, P_PARAMS + 1, P_PARAMS + 2


def describe(config: ThresholdConfig, point: Any, speeds: np.ndarray) -> Description:
    d = int(config.d)
    total = point.scenario.run.warmup_jobs + point.scenario.run.jobs
    # The kernel's integers are int64: a threshold above every reachable length is any such one.
    threshold = min(config.threshold, total + 1)
    choice = d if needs_choice(point.servers, d, config.replace) else 0
    return Description(ints=[d, threshold, config.replace], sample=d, choice_at_dispatch=choice)



@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    d = P[D]
    picked = T.picked
    sample(rng, ubuf, iv, P[P_N], d, P[REPLACE] != 0, picked, T.choice)
    for i in range(d):
        server = picked[i]
        round_trips(P, counts, 1)
        if length[server] < P[THRESHOLD] or i + 1 == d:
            return server, False
    return picked[d - 1], False


on_arrive, on_depart, initialise, timer = nothing_on_arrive, nothing_on_depart, nothing_initialise, nothing_timer
