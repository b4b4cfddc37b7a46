"""Batch sampling, compiled (`emulator.policies.batch_sqd`).

The kernel holds the jobs of a batch until it is complete (``Description.whole``:
`kernel`), then hands them over one by one to `replied` (ask -1), with ``iv[I_BATCH]``
the batch's size and ``iv[I_BATCH_AT]`` the jobs handed over before this one; `dispatch`
is never called. At the first job, it samples min(N, dk) servers. With zero latency
their replies are in at once: it counts their round trips, and each job is one pass
of `placement`'s, over ``T.values`` (the sampled lengths, and with ``water`` the jobs
placed on them) and, for ``shortest``, the candidates left in ``T.ints[0]``: the same
draws, in the same order. With latency the first job opens the batch's one ask (its
record holds the first job, chained to the others by the kernel's ``T.next``, and the
batch's size), every job waits, and when the replies are in (or, with lost messages,
at the timeout) `replied` makes the same passes over the replies and sends the jobs
in order, as `BatchSQDPolicy._place` does.

At zero latency with faults (`faults.INSTANT`) the first job opens the ask, answered at
once (`faults.asked`): with every reply in, each job is placed as it is handed over, as
without faults; else every job waits, and at the ask's timeout `replied` places the
first and leaves the others to the kernel one a step (``iv[I_PLACING]``, each handed
over as ask -1), with no event between them, as `_place` sends them all at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...policies.batch_sqd import BatchSQDConfig
from .. import faults
from ..core import sample, uniform
from ..network import close_ask, open_ask, post
from ..state import (
    A_JOB,
    A_N,
    A_TAG,
    I_BATCH,
    I_BATCH_AT,
    I_CURRENT,
    I_PLACING,
    I_TRANSFERS,
    P_LATENT,
    P_N,
    P_PARAMS,
    P_ROOM,
    TRANSFER,
)
from ..tools import Description, Tools
from ..transport import query_all
from .common import asked_now, round_trips

PARAMS = frozenset({"d", "fill"})
WHOLE_BATCHES = True  # the kernel holds each batch until it is complete (`Description.whole`; `loading.features`)
ASKS = True  # at zero latency with faults the batch's ask goes through a record (`faults.INSTANT`)
D, WATER = P_PARAMS, P_PARAMS + 1
AT, K, M, WAITS = 0, 1, 2, 3
"""``T.ints[1]``: the batch's jobs placed so far, its size and servers asked (placing at a timeout), and whether
its ask waits for its timeout (`faults.INSTANT`)."""
SHIFT = 1 << 62
"""Taken off every reply: a missing one (`NO_REPLY`, sys.maxsize) stays above every length, and the batch's
jobs placed on it (fewer than the run's, which the kernel keeps below 2**62) cannot overflow it."""


def describe(config: BatchSQDConfig, point: Any, speeds: np.ndarray) -> Description:
    d, n = int(config.d), point.servers
    return Description(ints=[d, config.fill == "water"], sample=n, int_rows=2, int_width=WAITS + 1, whole=d,
                       ask_width=n)  # (its state, `T.ints[1]`, is 4 wide at N < 4 too)


def instant_loss(config: BatchSQDConfig, point: Any) -> bool:
    """Whether the kernel runs its lost messages at zero latency (`eligibility.supports`): yes, the batch's ask is
    answered at once or decided at its timeout (``ASKS``: `faults.asked`)."""
    return True


def servers_fail(config: BatchSQDConfig, point: Any) -> bool:
    """Whether the kernel runs its failing servers (`eligibility.supports`): yes, the batch's ask is a record whose
    query lost at a down server leaves it to its timeout (`faults.dropped`, `faults.asked`), and its servers have no
    hooks."""
    return True


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    return -1, False  # never called: the kernel holds every job of a whole batch (`replied` places them)


@njit(cache=True, inline="always")
def replied(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, ask: int) -> tuple[int, bool]:
    """The next job of the batch (ask -1, `kernel`'s source state 4): placed now, or held for the batch's ask;
    or (latency) the batch's ask has decided: its jobs go out (none is left to the kernel)."""
    latent = P[P_LATENT] != 0  # feature: latency, or zero latency with faults (asks through records)
    asking = P[P_LATENT] == faults.INSTANT  # feature: zero latency with faults: asks through records
    if ask >= 0 and asking:  # its timeout: the first job goes now, the others one a step (`_placing`)
        return _decided(P, rng, ubuf, iv, T, ask), False
    if ask >= 0:
        _send(P, counts, rng, ubuf, iv, T, ask)
        return -1, False
    if iv[I_PLACING] > 0:
        return _placing(P, rng, ubuf, iv, T), False
    n = P[P_N]
    k, at = iv[I_BATCH], iv[I_BATCH_AT]
    m = min(n, P[D] * k)
    state = T.ints[1]
    if latent and not asking:
        if at == 0:
            _ask(P, counts, rng, ubuf, iv, T, m, k)
        return -1, False
    picked, values = T.picked, T.values
    if at == 0 and asking:  # the batch's ask, answered now: placed as it is handed over, or all at its timeout
        ask = open_ask(T, iv, iv[I_CURRENT], 0, m, k, False)
        sample(rng, ubuf, iv, n, m, False, T.targets[ask], T.pool)
        state[WAITS] = not asked_now(P, counts, length, iv, T, ask)
        if not state[WAITS]:
            _replies(T, ask, m)
            close_ask(T, iv, ask)
    elif at == 0:  # the batch's ask: `Uniforms.sample` and the lengths its replies carry
        sample(rng, ubuf, iv, n, m, False, picked, T.pool)
        round_trips(P, counts, m)
        for j in range(m):
            values[j] = length[picked[j]]
    if asking and state[WAITS]:
        return -1, False
    return picked[_next(P, rng, ubuf, iv, T, m, at)], False


@njit(cache=True, inline="always")
def _replies(T: Tools, ask: int, m: int) -> None:
    """The ask's servers and replies (shifted: `SHIFT`) to ``T.picked`` and ``T.values``, where `_next` reads them."""
    for j in range(m):
        T.picked[j] = T.targets[ask, j]
        T.values[j] = T.replies[ask, j] - SHIFT


@njit(cache=True, inline="always")
def _decided(P: np.ndarray, rng: tuple, ubuf: np.ndarray, iv: np.ndarray, T: Tools, ask: int) -> int:
    """Zero latency with faults, the batch's ask decided at its timeout: the first job's server; the kernel then
    places the others one a step (``iv[I_PLACING]``, `_placing`), before any other event, as `_place` sends them."""
    state = T.ints[1]
    m, k = T.asks[ask, A_N], T.asks[ask, A_TAG]
    _replies(T, ask, m)
    state[AT], state[K], state[M] = 1, k, m
    slot = T.asks[ask, A_JOB]
    iv[I_PLACING] = 1 + T.next[slot] if k > 1 else 0
    return T.picked[_next(P, rng, ubuf, iv, T, m, 0)]


@njit(cache=True, inline="always")
def _placing(P: np.ndarray, rng: tuple, ubuf: np.ndarray, iv: np.ndarray, T: Tools) -> int:
    """The server of the next job of the batch its timeout decided (slot ``iv[I_PLACING] - 1``); moves on first,
    since the job's link is its queue's once it is placed."""
    state = T.ints[1]
    at, k = state[AT], state[K]
    slot = iv[I_PLACING] - 1
    iv[I_PLACING] = 1 + T.next[slot] if at + 1 < k else 0
    state[AT] = at + 1
    return T.picked[_next(P, rng, ubuf, iv, T, state[M], at)]


@njit(cache=True, inline="always")
def _ask(P: np.ndarray, counts: np.ndarray, rng: tuple, ubuf: np.ndarray, iv: np.ndarray, T: Tools, m: int,
         k: int) -> None:
    """`BatchSQDPolicy.dispatch` at the batch's first job, with latency: the ask of m sampled servers, which
    holds the batch (its first job, and its size as its tag)."""
    ask = open_ask(T, iv, iv[I_CURRENT], 0, m, k, False)
    sample(rng, ubuf, iv, P[P_N], m, False, T.targets[ask], T.pool)
    query_all(P, counts, iv, T, ask)
    if P[P_ROOM] < k:  # its decision sends the k jobs in one step: room for them first (`network.room`)
        P[P_ROOM] = k


@njit(cache=True, inline="always")
def _send(P: np.ndarray, counts: np.ndarray, rng: tuple, ubuf: np.ndarray, iv: np.ndarray, T: Tools,
          ask: int) -> None:
    """`BatchSQDPolicy._place`: the batch's jobs, in arrival order, each to the server `placement` picks."""
    asks, values = T.asks, T.values
    m, k = asks[ask, A_N], asks[ask, A_TAG]
    for j in range(m):
        values[j] = T.replies[ask, j] - SHIFT
    slot = asks[ask, A_JOB]
    for at in range(k):
        server = T.targets[ask, _next(P, rng, ubuf, iv, T, m, at)]
        iv[I_TRANSFERS] += 1  # Channel.transfer
        post(T, iv, TRANSFER, slot, server, 0)
        slot = T.next[slot]


@njit(cache=True, inline="always")
def _next(P: np.ndarray, rng: tuple, ubuf: np.ndarray, iv: np.ndarray, T: Tools, m: int, at: int) -> int:
    """One pass of `placement`: the sampled server (an index) of the batch's job ``at``, over ``T.values``."""
    values, candidates = T.values, T.ints[0]
    water = P[WATER] != 0
    left = m if water else m - at % m  # candidates left this round (shortest: one job each per round)
    if not water and left == m:
        for j in range(m):
            candidates[j] = j
    # `shortest` over the candidates' values: reservoir sampling over ties, as the SimPy policy's pass
    best = 0
    low = values[candidates[0]] if not water else values[0]
    ties = 1
    for i in range(1, left):
        value = values[i] if water else values[candidates[i]]
        if value < low:
            best, low, ties = i, value, 1
        elif value == low:
            ties += 1
            if uniform(rng, ubuf, iv) * ties < 1.0:
                best = i
    if water:
        values[best] += 1
        return best
    chosen = candidates[best]
    for i in range(best, left - 1):  # `del candidates[at]`: the others keep their order
        candidates[i] = candidates[i + 1]
    return chosen
