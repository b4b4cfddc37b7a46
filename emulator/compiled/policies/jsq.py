"""JSQ, compiled (`emulator.policies.jsq`): the length index's uniform pick among the shortest, 2N messages."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...policies.jsq import JSQConfig
from ..core import shortest, uniform
from ..network import open_ask, query_all
from ..state import I_CURRENT, I_LEVELS, I_LOW, P_LATENT, P_N
from ..tools import Description, Tools
from .common import nothing_initialise, nothing_timer, round_trips

PARAMS: frozenset[str] = frozenset()


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
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    if P[P_LATENT]:  # ask every server; the job waits for the N replies (`replied`)
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
    if blocked or P[P_LATENT]:
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
    if P[P_LATENT]:
        return
    new = length[sid]
    move(T.buckets, T.bucket_size, T.position, iv, sid, new + 1, new)
    if new < iv[I_LOW]:
        iv[I_LOW] = new


@njit(cache=True, inline="always")
def on_arrive_batch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
                    ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int, accepted: int, jobs: int,
                    via_list: bool) -> None:
    """`LengthIndex.arrived` after a slot's batch (slotted time): ``accepted`` of its ``jobs`` jobs are in.

    The first job's call moves the server by the whole batch; the others find it moved.
    """
    if accepted == 0:
        return
    new = length[sid]
    old = new - accepted
    move(T.buckets, T.bucket_size, T.position, iv, sid, old, new)
    low = iv[I_LOW]
    if old == low:
        while T.bucket_size[low] == 0:
            low += 1
        iv[I_LOW] = low


initialise, timer = nothing_initialise, nothing_timer
