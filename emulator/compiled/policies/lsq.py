"""LSQ, compiled (`emulator.policies.lsq`): each dispatcher's estimates in a length index of its own.

Each dispatcher's index (JSQ's `LengthIndex`; with one dispatcher the kernel's
own, with several `jsq.index_set_in`) holds its estimates rather than the true
lengths; ``T.ints[k]`` is each server's estimate as dispatcher ``k`` indexes it.
An estimate is set to a length, or grows by one per job its dispatcher sends: with
one dispatcher it is at least its server's length, so the index needs no more room
than JSQ's, but with several a server may be longer than any estimate, and a query
may then index its length. So, with zero latency, each dispatch keeps a level for
the length its job will make (the kernel's check before the next arrival then
leaves room for every length); with latency the kernel's check holds the longest.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...measure.messages import NO_REPLY
from ...policies.lsq import LSQConfig
from .. import faults
from ..core import sample
from ..network import open_ask
from ..state import A_DISPATCHER, A_TAG, I_LEVELS, P_D, P_LATENT, P_N, P_PARAMS, P_QUERY, P_REPLY
from ..tools import Description, Tools
from ..transport import lost, query
from .common import nothing_initialise, nothing_on_arrive, nothing_on_depart, nothing_timer, round_trips, server_up
from .jsq import index_set_of, indexes_too_large, pick_of

PARAMS = frozenset({"d"})
ASKS = True  # at zero latency with faults the kernel checks the loss draws' room before each job (`faults.room`)
D = P_PARAMS


def describe(config: LSQConfig, point: Any, speeds: np.ndarray) -> Description:
    d = int(config.d)
    return Description(ints=[d], index=True, sample=d,
                       per_dispatcher=point.dispatchers > 1, int_rows=point.dispatchers, asks_per_step=d)


def supports(config: LSQConfig, point: Any) -> str | None:
    return indexes_too_large("lsq", point)


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    latency = P[P_LATENT] == 1  # feature: every message an event
    asking = P[P_LATENT] == faults.INSTANT  # feature: zero latency with faults: asks through records
    n, d, indexes = P[P_N], P[D], P[P_D]
    estimate = T.ints[dispatcher]
    picked = T.picked
    if d < n:
        sample(rng, ubuf, iv, n, d, False, picked, T.pool)
    if latency:  # one ask per server; each reply refreshes its estimate when it comes (`replied`)
        for j in range(d):
            sid = j if d == n else picked[j]
            ask = open_ask(T, iv, -1, dispatcher, 1, sid, False)
            T.targets[ask, 0] = sid
            query(P, counts, iv, T, ask, 0)
    else:  # every server queried (d = N) needs no draw
        if not asking:
            round_trips(P, counts, d)
        for j in range(d):
            sid = j if d == n else picked[j]
            if not asking or _answered(P, counts, iv, T, sid):
                index_set_of(T, iv, indexes, dispatcher, estimate, sid, length[sid])
    sid = pick_of(rng, ubuf, iv, T, indexes, dispatcher)
    index_set_of(T, iv, indexes, dispatcher, estimate, sid, estimate[sid] + 1)
    if indexes > 1 and not latency and length[sid] + 1 >= iv[I_LEVELS]:  # it arrives now: a level for it
        iv[I_LEVELS] = length[sid] + 2
    return sid, False


@njit(cache=True, inline="always")
def _answered(P: np.ndarray, counts: np.ndarray, iv: np.ndarray, T: Tools, sid: int) -> bool:
    """Zero latency with faults: `Channel._ask_faulty` of server ``sid`` alone, now; True if its reply came.

    Its query is counted and draws its loss, is lost at the server if it is down, and its
    reply is counted and draws its loss. Without a reply the ask's timeout would read
    `NO_REPLY` and leave the estimate as it is: it changes nothing, so it is no event here
    (the events that are keep their order).
    """
    counts[P[P_QUERY]] += 1
    if lost(counts, iv, T, P[P_QUERY]):
        return False
    if not server_up(T, sid):  # lost at the down server
        faults.count_lost(counts, P[P_QUERY])
        return False
    counts[P[P_REPLY]] += 1
    return not lost(counts, iv, T, P[P_REPLY])


@njit(cache=True, inline="always")
def replied(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, ask: int) -> tuple[int, bool]:
    """`_replied`: a server's length replaces its estimate, in the index of the dispatcher that asked."""
    if T.replies[ask, 0] == NO_REPLY:  # lost or unanswered (faults): no news, the estimate stays
        return -1, False
    k = T.asks[ask, A_DISPATCHER]
    index_set_of(T, iv, P[P_D], k, T.ints[k], T.asks[ask, A_TAG], T.replies[ask, 0])
    return -1, False


on_arrive, on_depart, initialise, timer = nothing_on_arrive, nothing_on_depart, nothing_initialise, nothing_timer


def instant_loss(config: LSQConfig, point: Any) -> bool:
    """Whether the kernel runs its lost messages at zero latency (`eligibility.supports`): yes, each round trip is
    answered at once or never (`_answered`)."""
    return True


def servers_fail(config: LSQConfig, point: Any) -> bool:
    """Whether the kernel runs its failing servers (`eligibility.supports`): yes, a query lost at a down server
    leaves the estimate as it was (with latency `faults.dropped`, at zero latency `_answered`)."""
    return True
