"""JSQ, compiled (`emulator.policies.jsq`): the length index's uniform pick among the shortest, 2N messages."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...policies.jsq import JSQConfig
from ..core import shortest, uniform
from ..network import open_ask
from ..state import I_CURRENT, I_LEVELS, I_LOW, P_LATENT, P_N
from ..tools import Description, Tools
from ..transport import query_all
from .common import nothing_initialise, nothing_timer, round_trips

PARAMS: frozenset[str] = frozenset()
ASKS = True  # at zero latency with faults its asks go through records, as with latency (`faults.INSTANT`)
INDEXED_IDS = 1 << 22
"""The most ids (D N) that an index per dispatcher may hold: they take D x levels x N int64, 128 MiB at
4 levels (SimPy's D `LengthIndex` hold D N ids, a list entry and an int each)."""


def indexes_too_large(name: str, point: Any) -> str | None:
    """Why ``name`` with an index per dispatcher (`index_set_in`) does not run compiled, or None."""
    ids = point.dispatchers * point.servers
    if point.dispatchers > 1 and ids > INDEXED_IDS:
        return f"{name} with D x N = {ids:,} above {INDEXED_IDS:,} (an index of levels x N per dispatcher)"
    return None


def describe(config: JSQConfig, point: Any, speeds: np.ndarray) -> Description:
    return Description(index=True, ask_width=point.servers)


@njit(cache=True, inline="always")
def move(buckets: np.ndarray, size: np.ndarray, position: np.ndarray, iv: np.ndarray,
          sid: int, old: int, new: int) -> None:
    """`LengthIndex._move`: server ``sid`` from bucket ``old`` to bucket ``new``."""
    i = position[sid]
    last = buckets[old, size[old] - 1]
    size[old] -= 1
    if last != sid:
        buckets[old, i] = last
        position[last] = i
    if new >= iv[I_LEVELS]:  # JSQ's lengths move by one; LSQ's estimates may jump
        iv[I_LEVELS] = new + 1
    position[sid] = size[new]
    buckets[new, size[new]] = sid
    size[new] += 1


@njit(cache=True, inline="always")
def index_set(T: Tools, iv: np.ndarray, indexed: np.ndarray, sid: int, new: int) -> None:
    """`LengthIndex.set`: server ``sid`` re-indexed at ``new``; ``indexed`` holds each server's value as indexed."""
    old = indexed[sid]
    if new == old:
        return
    move(T.buckets, T.bucket_size, T.position, iv, sid, old, new)
    size = T.bucket_size
    indexed[sid] = new
    if new < iv[I_LOW]:
        iv[I_LOW] = new
    elif old == iv[I_LOW]:
        while size[iv[I_LOW]] == 0:
            iv[I_LOW] += 1


@njit(cache=True, inline="always")
def move_in(T: Tools, iv: np.ndarray, indexes: int, k: int, sid: int, old: int, new: int) -> None:
    """`LengthIndex._move` in index ``k`` of ``indexes`` (`index_set_in`)."""
    n = T.buckets.shape[1]
    buckets, size, position = T.buckets, T.bucket_size, T.position
    p = k * n
    r = old * indexes + k
    i = position[p + sid]
    last = buckets[r, size[r] - 1]
    size[r] -= 1
    if last != sid:
        buckets[r, i] = last
        position[p + last] = i
    if new >= iv[I_LEVELS]:  # the most any index uses: the kernel's room check holds for all
        iv[I_LEVELS] = new + 1
    r = new * indexes + k
    position[p + sid] = size[r]
    buckets[r, size[r]] = sid
    size[r] += 1


@njit(cache=True, inline="always")
def index_set_in(T: Tools, iv: np.ndarray, indexes: int, k: int, indexed: np.ndarray, sid: int, new: int) -> None:
    """`LengthIndex.set` in dispatcher ``k``'s index, of ``indexes`` (SimPy keeps one per dispatcher).

    With D indexes (`tools.Description.per_dispatcher`) level ``l`` of index ``k`` is row
    ``l D + k`` of ``T.buckets`` and ``T.bucket_size``, its positions are
    ``T.position[k N:(k + 1) N]`` and its lowest non-empty level ``T.position[D N + k]``.
    ``indexed`` holds each server's value as index ``k`` holds it.
    """
    old = indexed[sid]
    if new == old:
        return
    move_in(T, iv, indexes, k, sid, old, new)
    indexed[sid] = new
    n = T.buckets.shape[1]
    at = indexes * n + k
    if new < T.position[at]:
        T.position[at] = new
    elif old == T.position[at]:
        size = T.bucket_size
        while size[T.position[at] * indexes + k] == 0:
            T.position[at] += 1


@njit(cache=True, inline="always")
def pick_in(rng: tuple, ubuf: np.ndarray, iv: np.ndarray, T: Tools, indexes: int, k: int) -> int:
    """`LengthIndex.pick` in dispatcher ``k``'s index, of ``indexes`` (`index_set_in`)."""
    u = uniform(rng, ubuf, iv)
    n = T.buckets.shape[1]
    r = T.position[indexes * n + k] * indexes + k
    return T.buckets[r, int(u * T.bucket_size[r])]


@njit(cache=True, inline="always")
def index_set_of(T: Tools, iv: np.ndarray, indexes: int, k: int, indexed: np.ndarray, sid: int, new: int) -> None:
    """`index_set` with one index (one dispatcher: the kernel's, as JSQ's), else `index_set_in`."""
    if indexes == 1:
        index_set(T, iv, indexed, sid, new)
    else:
        index_set_in(T, iv, indexes, k, indexed, sid, new)


@njit(cache=True, inline="always")
def pick_of(rng: tuple, ubuf: np.ndarray, iv: np.ndarray, T: Tools, indexes: int, k: int) -> int:
    """`pick_shortest` with one index, else `pick_in`."""
    if indexes == 1:
        return pick_shortest(rng, ubuf, iv, T)
    return pick_in(rng, ubuf, iv, T, indexes, k)


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    latent = P[P_LATENT] != 0  # feature: latency, or zero latency with faults (asks through records)
    if latent:  # ask every server; the job waits for the N replies (`replied`)
        n = P[P_N]
        ask = open_ask(T, iv, iv[I_CURRENT], dispatcher, n, 0, False)
        targets = T.targets[ask]
        for sid in range(n):
            targets[sid] = sid
        query_all(P, counts, iv, T, ask)
        return -1, False
    round_trips(P, counts, P[P_N])
    return pick_shortest(rng, ubuf, iv, T), False


@njit(cache=True, inline="always")
def replied(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, ask: int) -> tuple[int, bool]:
    """The lengths as each query found them: the shortest, ties at random (`base.shortest`)."""
    return shortest(T.replies[ask], P[P_N], rng, ubuf, iv), False


@njit(cache=True, inline="always")
def pick_shortest(rng: tuple, ubuf: np.ndarray, iv: np.ndarray, T: Tools) -> int:
    """`LengthIndex.pick`: a uniform server among those of the lowest indexed length."""
    u = uniform(rng, ubuf, iv)
    low = iv[I_LOW]
    return T.buckets[low, int(u * T.bucket_size[low])]


@njit(cache=True, inline="always")
def on_arrive(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int, blocked: bool, via_list: bool) -> None:
    """`LengthIndex.arrived` (one job at a time: the length moved by one); with latency JSQ keeps no index."""
    latent = P[P_LATENT] != 0  # feature: latency, or zero latency with faults (asks through records)
    if blocked or latent:
        return
    new = length[sid]
    move(T.buckets, T.bucket_size, T.position, iv, sid, new - 1, new)
    low = iv[I_LOW]
    if new - 1 == low and T.bucket_size[low] == 0:
        iv[I_LOW] = new


@njit(cache=True, inline="always")
def on_depart(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int) -> None:
    """`LengthIndex.departed`."""
    latent = P[P_LATENT] != 0  # feature: latency, or zero latency with faults (asks through records)
    if latent:
        return
    new = length[sid]
    move(T.buckets, T.bucket_size, T.position, iv, sid, new + 1, new)
    if new < iv[I_LOW]:
        iv[I_LOW] = new


@njit(cache=True, inline="always")
def on_arrive_batch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
                    ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int, accepted: int, jobs: int,
                    via_list: bool) -> bool:
    """`LengthIndex.arrived` after a slot's batch (slotted time): ``accepted`` of its ``jobs`` jobs are in.

    The first job's call moves the server by the whole batch; the others find it moved.
    """
    if accepted == 0:
        return True
    new = length[sid]
    old = new - accepted
    move(T.buckets, T.bucket_size, T.position, iv, sid, old, new)
    low = iv[I_LOW]
    if old == low:
        while T.bucket_size[low] == 0:
            low += 1
        iv[I_LOW] = low
    return True


initialise, timer = nothing_initialise, nothing_timer


def instant_loss(config: JSQConfig, point: Any) -> bool:
    """Lost messages at zero latency run compiled: its asks are answered at once or time out (`faults.answered`)."""
    return True


def servers_fail(config: JSQConfig, point: Any) -> bool:
    """Failing servers run compiled: a query that reaches a down server is lost there (`faults`)."""
    return True
