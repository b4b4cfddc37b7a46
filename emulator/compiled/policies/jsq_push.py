"""JSQ with push updates, compiled (`emulator.policies.jsq_push`): JSQ's length index, fed by updates.

Zero latency: every dispatcher is told every change at once and in the same
order, so each dispatcher's index (SimPy keeps one per dispatcher) is the one
index of the true lengths that JSQ keeps; only the messages differ: D updates
per change, no queries. With latency (one dispatcher; several keep an index
each, and run on SimPy) an update is a message: ``T.ints`` rows are the length
each server last pushed and how many updates it has pushed, then the newest
stamp the dispatcher has and the length it indexes, per server.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...measure.messages import Kind
from ...policies.jsq_push import JSQPushConfig
from ..network import post
from ..state import P_D, P_LATENT, P_PARAMS, POLICY_MESSAGE
from ..tools import Description, Tools
from .common import nothing_initialise, nothing_timer
from .jsq import index_set, pick_shortest
from .jsq import on_arrive as index_arrive
from .jsq import on_arrive_batch as index_arrive_batch
from .jsq import on_depart as index_depart

PARAMS: frozenset[str] = frozenset()
UPDATE = P_PARAMS  # the counter of update messages
SENT, STAMP, TOLD_STAMP, TOLD = 0, 1, 2, 3  # rows of T.ints, with latency
TOLD_MESSAGE = POLICY_MESSAGE  # with latency: an update (server, length, stamp) on its way


def describe(config: JSQPushConfig, point: Any, speeds: np.ndarray) -> Description:
    latent = point.scenario.network.latency.mean != 0
    return Description(ints=[int(Kind.UPDATE)], index=True, int_rows=4 if latent else 0)


def supports(config: JSQPushConfig, point: Any) -> str | None:
    if point.scenario.network.latency.mean != 0 and point.dispatchers > 1:
        return "jsq_push with latency and several dispatchers (an index each)"
    return None


@njit(cache=True, inline="always")
def _changed(P: np.ndarray, counts: np.ndarray, length: np.ndarray, iv: np.ndarray, T: Tools, sid: int) -> None:
    """`JSQPushPolicy._changed`, with latency: the new length goes out as an update."""
    ints = T.ints
    if length[sid] == ints[SENT, sid]:
        return
    ints[SENT, sid] = length[sid]
    ints[STAMP, sid] += 1
    counts[P[UPDATE]] += 1
    post(T, iv, TOLD_MESSAGE, sid, length[sid], ints[STAMP, sid])


@njit(cache=True, inline="always")
def deliver(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, what: int, a: int, b: int, c: int) -> None:
    """`_told`: an update newer than any the dispatcher has re-indexes its server."""
    ints = T.ints
    if c > ints[TOLD_STAMP, a]:
        ints[TOLD_STAMP, a] = c
        index_set(T, iv, ints[TOLD], a, b)


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    return pick_shortest(rng, ubuf, iv, T), False


@njit(cache=True, inline="always")
def on_arrive(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int, blocked: bool, via_list: bool) -> None:
    if P[P_LATENT]:
        _changed(P, counts, length, iv, T, sid)
        return
    if blocked:  # the length did not change: nothing to tell
        return
    counts[P[UPDATE]] += P[P_D]
    index_arrive(P, Q, counts, length, rng, ubuf, iv, T, sid, blocked, via_list)


@njit(cache=True, inline="always")
def on_depart(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int) -> None:
    if P[P_LATENT]:
        _changed(P, counts, length, iv, T, sid)
        return
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
