"""The compiled policies: one function per policy, the same decisions as `emulator.policies`.

Zero latency only: a query's reply is the server's current length, so a round
trip reduces to counting its messages, as the SimPy engine's zero-latency paths
do. Each function draws the policy's uniforms in the same order as its SimPy
counterpart, so that with the same seed both engines send every job to the same
server. A dispatch function returns the chosen server (and, for the pull-based
policies, whether it came from the dispatcher's list); the driver transfers the
job and calls the server-side hooks (`on_arrive`, `on_depart`).

The policies' arrays are passed one by one, never bundled in a tuple: numba
counts references to arrays taken out of a tuple, and those atomic counts
would cost more than the rest of the per-job work.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .core import id_add, id_clear, id_take, list_room, sample, shortest, uniform
from .state import (
    I_INIT,
    I_LEVELS,
    I_LOW,
    I_UPDATE_R,
    I_UPDATING,
    JBT,
    JIQ,
    JSQ,
    P_D,
    P_IDLE,
    P_MEMORY,
    P_N,
    P_PAIR,
    P_POLICY,
    P_QUERY,
    P_RECHECK,
    P_REPLACE,
    P_REPLY,
    P_REPORT,
    P_REREPORT,
    P_RESET,
    P_STRICT,
    P_THRESHOLD,
    P_THRESHOLD_KIND,
    P_WEIGHTED,
    Q_TOP,
    RANDOM,
    ROUND_ROBIN,
    SQD,
    THRESHOLD,
    P_d,
)


@njit(cache=True, inline="always")
def _round_trips(P: np.ndarray, counts: np.ndarray, n: int) -> None:
    """`Channel.count_round_trips`."""
    counts[P[P_QUERY]] += n
    counts[P[P_REPLY]] += n


@njit(cache=True, inline="always")
def random_dispatcher(P: np.ndarray, rng: tuple, ubuf: np.ndarray, iv: np.ndarray) -> int:
    """`ListPolicy.random_dispatcher`."""
    dispatchers = P[P_D]
    return 0 if dispatchers == 1 else int(uniform(rng, ubuf, iv) * dispatchers)


# -- Random ---------------------------------------------------------------------------------

@njit(cache=True, inline="always")
def random_dispatch(P: np.ndarray, rng: tuple, ubuf: np.ndarray, iv: np.ndarray) -> int:
    return int(uniform(rng, ubuf, iv) * P[P_N])


# -- Round robin -----------------------------------------------------------------------------

@njit(cache=True, inline="always")
def round_robin_dispatch(P: np.ndarray, rr: np.ndarray, dispatcher: int) -> int:
    position = rr[dispatcher]
    rr[dispatcher] = position + 1 if position + 1 < P[P_N] else 0
    return position


# -- JSQ: LengthIndex ----------------------------------------------------------------------

@njit(cache=True, inline="always")
def _jsq_move(buckets: np.ndarray, size: np.ndarray, position: np.ndarray, iv: np.ndarray,
              sid: int, old: int, new: int) -> None:
    i = position[sid]
    last = buckets[old, size[old] - 1]
    size[old] -= 1
    if last != sid:
        buckets[old, i] = last
        position[last] = i
    if new == iv[I_LEVELS]:
        iv[I_LEVELS] = new + 1
    position[sid] = size[new]
    buckets[new, size[new]] = sid
    size[new] += 1


@njit(cache=True, inline="always")
def jsq_dispatch(P: np.ndarray, counts: np.ndarray, rng: tuple, ubuf: np.ndarray,
                 iv: np.ndarray, buckets: np.ndarray, size: np.ndarray) -> int:
    _round_trips(P, counts, P[P_N])
    u = uniform(rng, ubuf, iv)
    low = iv[I_LOW]
    return buckets[low, int(u * size[low])]


@njit(cache=True, inline="always")
def jsq_arrived(length: np.ndarray, iv: np.ndarray, buckets: np.ndarray, size: np.ndarray,
                position: np.ndarray, sid: int) -> None:
    new = length[sid]
    _jsq_move(buckets, size, position, iv, sid, new - 1, new)
    low = iv[I_LOW]
    if new - 1 == low and size[low] == 0:
        iv[I_LOW] = new


@njit(cache=True, inline="always")
def jsq_departed(length: np.ndarray, iv: np.ndarray, buckets: np.ndarray, size: np.ndarray,
                 position: np.ndarray, sid: int) -> None:
    new = length[sid]
    _jsq_move(buckets, size, position, iv, sid, new + 1, new)
    if new < iv[I_LOW]:
        iv[I_LOW] = new


# -- SQ(d) -------------------------------------------------------------------------------------

@njit(cache=True, inline="always")
def sqd_dispatch(P: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
                 ubuf: np.ndarray, iv: np.ndarray, choice: np.ndarray, picked: np.ndarray,
                 values: np.ndarray) -> int:
    n = P[P_N]
    if P[P_PAIR]:
        a = int(uniform(rng, ubuf, iv) * n)
        b = int(uniform(rng, ubuf, iv) * (n - 1))
        first, second = a, (b + 1 if b >= a else b)
        _round_trips(P, counts, 2)
        one, two = length[first], length[second]
        if two < one or (two == one and uniform(rng, ubuf, iv) * 2 < 1.0):
            return second
        return first
    d = P[P_d]
    sample(rng, ubuf, iv, n, d, P[P_REPLACE] != 0, picked, choice)
    _round_trips(P, counts, d)
    for j in range(d):
        values[j] = length[picked[j]]
    return picked[shortest(values, d, rng, ubuf, iv)]


# -- Threshold ---------------------------------------------------------------------------------

@njit(cache=True, inline="always")
def threshold_dispatch(P: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
                       ubuf: np.ndarray, iv: np.ndarray, choice: np.ndarray, picked: np.ndarray) -> int:
    d = P[P_d]
    sample(rng, ubuf, iv, P[P_N], d, P[P_REPLACE] != 0, picked, choice)
    for i in range(d):
        server = picked[i]
        _round_trips(P, counts, 1)
        if length[server] < P[P_THRESHOLD] or i + 1 == d:
            return server
    return picked[d - 1]


# -- the pull-based policies' dispatcher side (ListPolicy) -----------------------------------
# The lists are seven arrays (`core.id_add`): lists, lstart, lcap, count, chain, node_d, node_next.

@njit(cache=True, inline="always")
def list_dispatch(P: np.ndarray, Q: np.ndarray, rng: tuple, ubuf: np.ndarray,
                  iv: np.ndarray, dispatcher: int, lists: np.ndarray, lstart: np.ndarray,
                  count: np.ndarray, chain: np.ndarray, node_d: np.ndarray, node_next: np.ndarray,
                  weights: np.ndarray) -> tuple[int, bool]:
    listed = count[dispatcher]
    chained = P[P_POLICY] == JIQ and P[P_D] > 1  # else the caller clears the `listed` flag (`on_arrive`)
    if listed > 0:
        if not P[P_WEIGHTED]:
            i = int(uniform(rng, ubuf, iv) * listed)
            return id_take(lists, lstart, count, chain, node_d, node_next, iv, chained, dispatcher, i), True
        top = Q[Q_TOP]
        base = lstart[dispatcher]
        while True:  # IdList.take_random: rejection sampling
            i = int(uniform(rng, ubuf, iv) * listed)
            if uniform(rng, ubuf, iv) * top < weights[lists[base + i]]:
                return id_take(lists, lstart, count, chain, node_d, node_next, iv, chained, dispatcher, i), True
    return int(uniform(rng, ubuf, iv) * P[P_N]), False


# -- JIQ: idle tokens ---------------------------------------------------------------------------

@njit(cache=True, inline="always")
def jiq_token(P: np.ndarray, counts: np.ndarray, rng: tuple, ubuf: np.ndarray, iv: np.ndarray,
              listed: np.ndarray, lists: np.ndarray, lstart: np.ndarray, lcap: np.ndarray, count: np.ndarray,
              chain: np.ndarray, node_d: np.ndarray, node_next: np.ndarray, choice: np.ndarray,
              picked: np.ndarray, values: np.ndarray, sid: int) -> None:
    """`JIQPolicy._send_token` and `_token`.

    With one dispatcher an id is in its one list or in none: the ``listed`` flag says
    which, as for JBT-d, and no chain is kept (`core.id_add`).
    """
    dispatchers = P[P_D]
    d = P[P_d]
    if d < 0 or dispatchers == 1:
        target = random_dispatcher(P, rng, ubuf, iv)
    else:
        sample(rng, ubuf, iv, dispatchers, d, False, picked, choice)
        _round_trips(P, counts, d)
        for j in range(d):
            values[j] = count[picked[j]]
        target = picked[shortest(values, d, rng, ubuf, iv)]
    counts[P[P_IDLE]] += 1
    memory = P[P_MEMORY]
    if memory < 0 or count[target] < memory:
        if dispatchers > 1:
            id_add(lists, lstart, lcap, count, chain, node_d, node_next, iv, True, target, sid)
        elif not listed[sid]:
            listed[sid] = 1
            id_add(lists, lstart, lcap, count, count, count, count, iv, False, target, sid)


# -- JBT-d -----------------------------------------------------------------------------------------

@njit(cache=True, inline="always")
def jbt_check(P: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, threshold: np.ndarray, listed: np.ndarray,
              lists: np.ndarray, lstart: np.ndarray, lcap: np.ndarray, count: np.ndarray, sid: int) -> None:
    """`JBTPolicy._check`: a server below its threshold and not listed reports."""
    if listed[sid]:
        return
    r = threshold[sid]
    n = length[sid]
    if n < r or (n == r and not P[P_STRICT]):
        listed[sid] = 1
        target = random_dispatcher(P, rng, ubuf, iv)
        counts[P[P_REPORT]] += 1
        # Not listed, so in no list: no chain needed (`core.id_add`); count stands in for chain and nodes.
        id_add(lists, lstart, lcap, count, count, count, count, iv, False, target, sid)


@njit(cache=True)  # rare: not inlined, to keep compilation short
def jbt_update(P: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
               ubuf: np.ndarray, iv: np.ndarray, count: np.ndarray, choice: np.ndarray,
               picked: np.ndarray) -> None:
    """The start of a threshold update of `JBTPolicy._updates`: sample d, take the smallest length.

    The servers then learn it one by one (`jbt_update_servers`), from ``iv[I_UPDATING]`` on.
    """
    n, d = P[P_N], P[P_d]
    sample(rng, ubuf, iv, n, d, False, picked, choice)
    _round_trips(P, counts, d)
    r = length[picked[0]]
    for j in range(1, d):
        r = min(r, length[picked[j]])
    if P[P_RESET] != 0:
        # Dispatcher 0 clears its list, then sends each other one a threshold message,
        # which (zero latency) clears its list at once.
        for dispatcher in range(P[P_D]):
            id_clear(count, dispatcher)
        counts[P[P_THRESHOLD_KIND]] += P[P_D] - 1
    iv[I_UPDATE_R] = r
    iv[I_UPDATING] = 0


@njit(cache=True)  # rare: not inlined, to keep compilation short
def jbt_update_servers(P: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
                       ubuf: np.ndarray, iv: np.ndarray, threshold: np.ndarray, listed: np.ndarray,
                       lists: np.ndarray, lstart: np.ndarray, lcap: np.ndarray, count: np.ndarray) -> bool:
    """The update reaches each server from ``iv[I_UPDATING]`` on; False if it stopped for list room."""
    r = iv[I_UPDATE_R]
    reset = P[P_RESET] != 0
    recheck = P[P_RECHECK] != 0 or reset
    for sid in range(iv[I_UPDATING], P[P_N]):
        if recheck and not list_room(iv, lists):  # this server's check may list it: room first
            iv[I_UPDATING] = sid
            return False
        counts[P[P_THRESHOLD_KIND]] += 1
        threshold[sid] = r
        if reset:
            listed[sid] = 0
        if recheck:
            jbt_check(P, counts, length, rng, ubuf, iv, threshold, listed, lists, lstart, lcap, count, sid)
    iv[I_UPDATING] = -1
    return True


# -- the switches the driver calls -------------------------------------------------------------

@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray,
             rng: tuple, ubuf: np.ndarray, iv: np.ndarray, dispatcher: int,
             rr: np.ndarray, buckets: np.ndarray, size: np.ndarray, lists: np.ndarray, lstart: np.ndarray,
             count: np.ndarray, chain: np.ndarray, node_d: np.ndarray, node_next: np.ndarray,
             weights: np.ndarray, choice: np.ndarray, picked: np.ndarray, values: np.ndarray) -> tuple[int, bool]:
    """The policy's dispatcher side: (server, taken from the dispatcher's list)."""
    policy = P[P_POLICY]
    if policy == RANDOM:
        return random_dispatch(P, rng, ubuf, iv), False
    if policy == ROUND_ROBIN:
        return round_robin_dispatch(P, rr, dispatcher), False
    if policy == JSQ:
        return jsq_dispatch(P, counts, rng, ubuf, iv, buckets, size), False
    if policy == SQD:
        return sqd_dispatch(P, counts, length, rng, ubuf, iv, choice, picked, values), False
    if policy == THRESHOLD:
        return threshold_dispatch(P, counts, length, rng, ubuf, iv, choice, picked), False
    return list_dispatch(P, Q, rng, ubuf, iv, dispatcher, lists, lstart, count, chain, node_d, node_next, weights)


@njit(cache=True, inline="always")
def on_arrive(P: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, buckets: np.ndarray, size: np.ndarray,
              position: np.ndarray, threshold: np.ndarray, listed: np.ndarray, lists: np.ndarray,
              lstart: np.ndarray, lcap: np.ndarray, count: np.ndarray, sid: int, blocked: bool,
              via_list: bool) -> None:
    """The server-side hook after a job reached server ``sid`` (accepted or blocked)."""
    policy = P[P_POLICY]
    if policy == JSQ:
        if not blocked:
            jsq_arrived(length, iv, buckets, size, position, sid)
    elif policy == JIQ:
        if via_list and P[P_D] == 1:  # taken from the one list (`jiq_token`)
            listed[sid] = 0
    elif policy == JBT:
        if via_list:
            listed[sid] = 0
            if P[P_REREPORT]:
                jbt_check(P, counts, length, rng, ubuf, iv, threshold, listed, lists, lstart, lcap, count, sid)


@njit(cache=True, inline="always")
def on_depart(P: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, buckets: np.ndarray, size: np.ndarray,
              position: np.ndarray, threshold: np.ndarray, listed: np.ndarray, lists: np.ndarray,
              lstart: np.ndarray, lcap: np.ndarray, count: np.ndarray, chain: np.ndarray, node_d: np.ndarray,
              node_next: np.ndarray, choice: np.ndarray, picked: np.ndarray, values: np.ndarray,
              sid: int) -> None:
    """The server-side hook after a departure from server ``sid``."""
    policy = P[P_POLICY]
    if policy == JSQ:
        jsq_departed(length, iv, buckets, size, position, sid)
    elif policy == JIQ:
        if length[sid] == 0:
            jiq_token(P, counts, rng, ubuf, iv, listed, lists, lstart, lcap, count, chain, node_d, node_next,
                      choice, picked, values, sid)
    elif policy == JBT:
        jbt_check(P, counts, length, rng, ubuf, iv, threshold, listed, lists, lstart, lcap, count, sid)


@njit(cache=True)  # rare: not inlined, to keep compilation short
def initialise(P: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
               ubuf: np.ndarray, iv: np.ndarray, threshold: np.ndarray, listed: np.ndarray,
               lists: np.ndarray, lstart: np.ndarray, lcap: np.ndarray, count: np.ndarray, chain: np.ndarray,
               node_d: np.ndarray, node_next: np.ndarray, choice: np.ndarray, picked: np.ndarray,
               values: np.ndarray) -> bool:
    """What the policies' constructors do, from server ``iv[I_INIT]`` on: JIQ's first tokens, JBT-d's
    first checks. False if it stopped for list room (it goes on at the next call)."""
    policy = P[P_POLICY]
    for sid in range(iv[I_INIT], P[P_N]):
        if policy == JIQ:
            if not list_room(iv, lists):
                iv[I_INIT] = sid
                return False
            jiq_token(P, counts, rng, ubuf, iv, listed, lists, lstart, lcap, count, chain, node_d, node_next,
                      choice, picked, values, sid)
        elif policy == JBT:
            if not list_room(iv, lists):
                iv[I_INIT] = sid
                return False
            jbt_check(P, counts, length, rng, ubuf, iv, threshold, listed, lists, lstart, lcap, count, sid)
    iv[I_INIT] = -1
    return True
