"""JSQ with push updates, compiled (`emulator.policies.jsq_push`): JSQ's length index, fed by updates.

Zero latency: every dispatcher is told every change at once and in the same
order, so each dispatcher's index (SimPy keeps one per dispatcher) is the one
index of the true lengths that JSQ keeps; only the messages differ: D updates
per change, no queries.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...measure.messages import Kind
from ...policies.jsq_push import JSQPushConfig
from ..state import P_D, P_PARAMS
from ..tools import Description, Tools
from .common import nothing_initialise, nothing_timer
from .jsq import on_arrive as index_arrive
from .jsq import on_arrive_batch as index_arrive_batch
from .jsq import on_depart as index_depart
from .jsq import pick_shortest

PARAMS: frozenset[str] = frozenset()
UPDATE = P_PARAMS  # the counter of update messages


def describe(config: JSQPushConfig, point: Any, speeds: np.ndarray) -> Description:
    return Description(ints=[int(Kind.UPDATE)], index=True)


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    return pick_shortest(rng, ubuf, iv, T), False


@njit(cache=True, inline="always")
def on_arrive(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int, blocked: bool, via_list: bool) -> None:
    if blocked:  # the length did not change: nothing to tell
        return
    counts[P[UPDATE]] += P[P_D]
    index_arrive(P, Q, counts, length, rng, ubuf, iv, T, sid, blocked, via_list)


@njit(cache=True, inline="always")
def on_depart(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int) -> None:
    counts[P[UPDATE]] += P[P_D]
    index_depart(P, Q, counts, length, rng, ubuf, iv, T, sid)


@njit(cache=True, inline="always")
def on_arrive_batch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
                    ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int, accepted: int, jobs: int,
                    via_list: bool) -> None:
    """After a slot's batch (slotted time): one change, told once to every dispatcher, if any job got in."""
    if accepted == 0:
        return
    counts[P[UPDATE]] += P[P_D]
    index_arrive_batch(P, Q, counts, length, rng, ubuf, iv, T, sid, accepted, jobs, via_list)


initialise, timer = nothing_initialise, nothing_timer
