"""Batch sampling, compiled (`emulator.policies.batch_sqd`), with zero latency.

The kernel holds the jobs of a batch until it is complete (``Description.whole``:
`kernel`), then hands them over one by one to `replied` (its ask's replies are in at
once), with ``iv[I_BATCH]`` the batch's size and ``iv[I_BATCH_AT]`` the jobs placed
before this one; `dispatch` is never called. At the first job, it samples min(N, dk) servers
and counts their round trips; each job is then one pass of `placement`'s, over
``T.values`` (the sampled lengths, and with ``water`` the jobs placed on them) and, for
``shortest``, the candidates left in ``T.ints[0]``: the same draws, in the same order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...policies.batch_sqd import BatchSQDConfig
from ..core import sample, uniform
from ..state import I_BATCH, I_BATCH_AT, P_N, P_PARAMS
from ..tools import Description, Tools
from .common import round_trips

PARAMS = frozenset({"d", "fill"})
WHOLE_BATCHES = True  # the kernel holds each batch until it is complete (`Description.whole`; `loading.features`)
D, WATER = P_PARAMS, P_PARAMS + 1


def describe(config: BatchSQDConfig, point: Any, speeds: np.ndarray) -> Description:
    d = int(config.d)
    return Description(ints=[d, config.fill == "water"], sample=point.servers, int_rows=1, whole=d)


def supports(config: BatchSQDConfig, point: Any) -> str | None:
    """Latency (a batch's jobs wait for one ask's replies) and traces (their end closes the window after the
    last batch is placed) run on SimPy."""
    scenario = point.scenario
    if scenario.network.latency.mean != 0:
        return "batch_sqd with latency: a batch's jobs wait for one ask's replies, which the kernel's asks do not hold"
    if scenario.workload.arrivals.kind == "trace":
        return "batch_sqd with trace arrivals: the trace's end is not replayed after the last batch"
    return None


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    return -1, False  # never called: the kernel holds every job of a whole batch (`replied` places them)


@njit(cache=True, inline="always")
def replied(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, ask: int) -> tuple[int, bool]:
    """The next job of the batch (ask -1: zero latency, `kernel`'s source state 4): one pass of `placement`."""
    n = P[P_N]
    k, at = iv[I_BATCH], iv[I_BATCH_AT]
    m = min(n, P[D] * k)
    picked, values, candidates = T.picked, T.values, T.ints[0]
    if at == 0:  # the batch's ask: `Uniforms.sample` and the lengths its replies carry
        sample(rng, ubuf, iv, n, m, False, picked, T.choice)
        round_trips(P, counts, m)
        for j in range(m):
            values[j] = length[picked[j]]
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
        return picked[best], False
    server = picked[candidates[best]]
    for i in range(best, left - 1):  # `del candidates[at]`: the others keep their order
        candidates[i] = candidates[i + 1]
    return server, False
