"""Persistent-Idle, compiled (`emulator.policies.persistent_idle`): jobs to the server that last reported idle.

``T.rr[k]`` is dispatcher k's target (-1 before its first idle message).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...policies.persistent_idle import NONE, PersistentIdleConfig
from ..core import uniform
from ..network import send
from ..state import P_D, P_HELD, P_IDLE, P_LATENT, P_N, POLICY_MESSAGE
from ..tools import Description, Tools
from .common import nothing_on_arrive, nothing_timer, random_dispatcher

PARAMS: frozenset[str] = frozenset()
IDLE = POLICY_MESSAGE  # with latency (or held slots), an idle message on its way


def describe(config: PersistentIdleConfig, point: Any, speeds: np.ndarray) -> Description:
    return Description(rr=True)


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    target = T.rr[dispatcher]
    if target == NONE:
        return int(uniform(rng, ubuf, iv) * P[P_N]), False
    return target, False


@njit(cache=True, inline="always")
def on_depart(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int) -> None:
    """`PersistentIdlePolicy._departed`: an emptied server reports to one dispatcher."""
    if length[sid] != 0:
        return
    target = random_dispatcher(P, rng, ubuf, iv)
    if P[P_LATENT] or P[P_HELD]:  # on its way (unless lost), or held for a later slot
        send(counts, iv, T, P[P_IDLE], IDLE, target, sid, 0)
    else:
        counts[P[P_IDLE]] += 1
        T.rr[target] = sid


@njit(cache=True, inline="always")
def deliver(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, what: int, a: int, b: int, c: int) -> None:
    """An idle message reaches dispatcher ``a`` from server ``b``: its target from now on."""
    T.rr[a] = b


@njit(cache=True)  # rare: not inlined, to keep compilation short
def initialise(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
               ubuf: np.ndarray, iv: np.ndarray, T: Tools) -> bool:
    """`PersistentIdlePolicy.__init__`: no dispatcher has a target yet."""
    for k in range(P[P_D]):
        T.rr[k] = NONE
    return True


on_arrive, timer = nothing_on_arrive, nothing_timer
