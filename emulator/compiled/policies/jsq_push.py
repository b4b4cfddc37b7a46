"""JSQ with push updates, compiled (`emulator.policies.jsq_push`): JSQ's length index, fed by updates.

Zero latency without faults: every dispatcher is told every change at once and in
the same order, so each dispatcher's index (SimPy keeps one per dispatcher) is the one
index of the true lengths that JSQ keeps; only the messages differ: D updates
per change, no queries. With latency (or faults, where an update arrives at once
unless it is lost) an update is a message to one dispatcher
(its kind ``TOLD_MESSAGE + k`` names dispatcher ``k``), and each dispatcher keeps
an index of its own (`jsq.index_set_of`: with one dispatcher, the kernel's).
``T.ints`` rows are the length each server last pushed and how many updates it
has pushed, then per dispatcher the newest stamp it has of each server (rows
``TOLD_STAMP + k``), then per dispatcher the length it indexes (rows
``TOLD_STAMP + D + k``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...measure.messages import Kind
from ...policies.jsq_push import JSQPushConfig
from ..state import I_LEVELS, P_D, P_LATENT, P_PARAMS, POLICY_MESSAGE
from ..tools import Description, Tools
from ..transport import posted
from .common import nothing_initialise, nothing_timer
from .jsq import index_set_of, indexes_too_large, pick_of, pick_shortest
from .jsq import on_arrive as index_arrive
from .jsq import on_arrive_batch as index_arrive_batch
from .jsq import on_depart as index_depart

PARAMS: frozenset[str] = frozenset()
ASKS = True  # (it asks nothing) at zero latency with faults its updates are told (`_told`) as with latency
UPDATE = P_PARAMS  # the counter of update messages
SENT, STAMP, TOLD_STAMP = 0, 1, 2  # rows of T.ints, with latency (then D rows of stamps, D of told lengths)
TOLD_MESSAGE = POLICY_MESSAGE  # with latency, + k: an update (server, length, stamp) on its way to dispatcher k


def _told(point: Any) -> bool:
    """Whether each dispatcher keeps the lengths it was told: with latency, or with faults (lost updates, or a down
    server's updates waiting for its recovery); else one index of the true lengths serves every dispatcher."""
    scenario = point.scenario
    return (scenario.network.latency.mean != 0 or scenario.network.loss > 0
            or scenario.system.failures is not None)


def describe(config: JSQPushConfig, point: Any, speeds: np.ndarray) -> Description:
    told = _told(point)
    return Description(ints=[int(Kind.UPDATE)], index=True, per_dispatcher=told and point.dispatchers > 1,
                       int_rows=TOLD_STAMP + 2 * point.dispatchers if told else 0)


def supports(config: JSQPushConfig, point: Any) -> str | None:
    if _told(point):  # (else one index serves every dispatcher)
        return indexes_too_large("jsq_push with latency or faults", point)
    return None


@njit(cache=True, inline="always")
def _changed(P: np.ndarray, counts: np.ndarray, length: np.ndarray, iv: np.ndarray, T: Tools, sid: int) -> None:
    """`JSQPushPolicy._changed`, with latency or faults: the new length goes out as an update (each draws its loss;
    at zero latency one not lost arrives at once)."""
    ints = T.ints
    if length[sid] == ints[SENT, sid]:
        return
    ints[SENT, sid] = length[sid]
    ints[STAMP, sid] += 1
    if length[sid] >= iv[I_LEVELS]:  # (zero latency: room for the length told, whether or not it arrives)
        iv[I_LEVELS] = length[sid] + 1
    for k in range(P[P_D]):  # one update per dispatcher, in their order (each draws its latency)
        if not posted(P, counts, iv, T, P[UPDATE], TOLD_MESSAGE + k, sid, length[sid], ints[STAMP, sid]):
            _told_now(P, iv, T, k, sid, length[sid], ints[STAMP, sid])


@njit(cache=True, inline="always")
def _told_now(P: np.ndarray, iv: np.ndarray, T: Tools, k: int, sid: int, told: int, stamp: int) -> None:
    """`_told`: an update newer than any dispatcher ``k`` has re-indexes its server there."""
    ints = T.ints
    indexes = P[P_D]
    if stamp > ints[TOLD_STAMP + k, sid]:
        ints[TOLD_STAMP + k, sid] = stamp
        index_set_of(T, iv, indexes, k, ints[TOLD_STAMP + indexes + k], sid, told)


@njit(cache=True, inline="always")
def deliver(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, what: int, a: int, b: int, c: int) -> None:
    """With latency, `_told`: an update reaches dispatcher ``what - TOLD_MESSAGE``."""
    _told_now(P, iv, T, what - TOLD_MESSAGE, a, b, c)


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    latent = P[P_LATENT] != 0  # feature: latency, or zero latency with faults (asks through records)
    if latent:
        return pick_of(rng, ubuf, iv, T, P[P_D], dispatcher), False
    return pick_shortest(rng, ubuf, iv, T), False


@njit(cache=True, inline="always")
def on_arrive(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int, blocked: bool, via_list: bool) -> None:
    latent = P[P_LATENT] != 0  # feature: latency, or zero latency with faults (asks through records)
    if latent:
        _changed(P, counts, length, iv, T, sid)
        return
    if blocked:  # the length did not change: nothing to tell
        return
    counts[P[UPDATE]] += P[P_D]
    index_arrive(P, Q, counts, length, rng, ubuf, iv, T, sid, blocked, via_list)


@njit(cache=True, inline="always")
def on_depart(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int) -> None:
    latent = P[P_LATENT] != 0  # feature: latency, or zero latency with faults (asks through records)
    if latent:
        _changed(P, counts, length, iv, T, sid)
        return
    counts[P[UPDATE]] += P[P_D]
    index_depart(P, Q, counts, length, rng, ubuf, iv, T, sid)


@njit(cache=True, inline="always")
def on_arrive_batch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
                    ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int, accepted: int, jobs: int,
                    via_list: bool) -> bool:
    """After a slot's batch (slotted time): one change, told once to every dispatcher, if any job got in."""
    if accepted == 0:
        return True
    counts[P[UPDATE]] += P[P_D]
    index_arrive_batch(P, Q, counts, length, rng, ubuf, iv, T, sid, accepted, jobs, via_list)
    return True


initialise, timer = nothing_initialise, nothing_timer


def instant_loss(config: JSQPushConfig, point: Any) -> bool:
    """Whether the kernel runs its lost messages at zero latency (`eligibility.supports`): yes, each dispatcher
    keeps the lengths it was told (`_told`), each update drawing its loss and arriving at once if not lost."""
    return True


def servers_fail(config: JSQPushConfig, point: Any) -> bool:
    """Whether the kernel runs its failing servers (`eligibility.supports`): yes, its updates go to dispatchers,
    which never fail, each keeping the lengths it was told (`_told`), and the departure hook a recovery runs tells
    the length if it changed, as SimPy's arrival hooks then would."""
    return True
