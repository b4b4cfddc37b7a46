"""JIQ, compiled (`emulator.policies.jiq`): idle tokens into the dispatchers' lists, jobs from them."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...policies.jiq import JIQConfig
from .. import faults
from ..core import compiled_only, id_add, list_room, sample, shortest
from ..network import close_ask, open_ask
from ..state import (
    A_TAG,
    I_INIT,
    P_D,
    P_IDLE,
    P_LATENT,
    P_N,
    P_PARAMS,
    POLICY_MESSAGE,
)
from ..tools import Description, Tools
from ..transport import posted, query_all
from .common import list_dispatch, nothing_on_arrive, nothing_timer, random_dispatcher, round_trips, server_up

PARAMS = frozenset({"d", "memory"})
D, MEMORY = P_PARAMS, P_PARAMS + 1  # D: JIQ-SQ(d)'s d (-1: JIQ-Random); MEMORY: -1 unbounded
IDLE = POLICY_MESSAGE  # with latency, a token on its way


def describe(config: JIQConfig, point: Any, speeds: np.ndarray) -> Description:
    n, dispatchers = point.servers, point.dispatchers
    d = -1 if config.d is None else int(config.d)
    memory = config.memory
    # A list never holds an id twice, so one of N ids or more cannot fill: unbounded (and within int64).
    memory = -1 if memory is None or memory >= n else memory
    one_list = dispatchers == 1  # a flag per server says whether it is in the list
    sqd = d > 0 and not one_list
    # With latency JIQ-SQ(d)'s first tokens are N asks of d dispatchers each, all at time 0.
    return Description(ints=[d, memory], lists=True, chained=not one_list, listed=one_list,
                       lists_at_departure=True, sample=max(d, 2), ask_width=max(d, 1),
                       # (zero latency with loss: the N first tokens' asks draw 2d losses each at time 0)
                       asks_per_step=n if sqd else 1, messages_per_step=2 * n * d if sqd else 0)


def ASKS(config: JIQConfig, point: Any) -> bool:  # (a function: the other forms' ``ASKS`` are constants)
    """Whether its asks go through records at zero latency with faults (`faults.INSTANT`): JIQ-SQ(d)'s idle servers'
    with several dispatchers and lost messages, whose replies may not come (with failing servers alone each comes at
    once: the server that asks is up, and dispatchers never fail)."""
    return config.d is not None and point.scenario.system.dispatchers > 1 and point.scenario.network.loss > 0


@njit(cache=True, inline="always")
def _token(P: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple, ubuf: np.ndarray, iv: np.ndarray,
           T: Tools, sid: int) -> None:
    """`JIQPolicy._send_token` and `_token`.

    With one dispatcher an id is in its one list or in none: the ``listed`` flag says
    which, and no chain is kept (`core.id_add`).
    """
    latent = P[P_LATENT] != 0  # feature: latency, or zero latency with faults (asks through records)
    asking = P[P_LATENT] == faults.INSTANT  # feature: zero latency with faults: asks through records
    dispatchers = P[P_D]
    d = P[D]
    count = T.count
    if d < 0 or dispatchers == 1:
        target = random_dispatcher(P, rng, ubuf, iv)
    elif asking:  # zero latency with loss: the replies in now, or the timeout decides
        ask = open_ask(T, iv, -1, 0, d, sid, True)
        sample(rng, ubuf, iv, dispatchers, d, False, T.targets[ask], T.pool)
        if not faults.asked(P, counts, length, iv, T, T.failing, False, ask):  # (the dispatchers never fail)
            return  # `replied`
        target = T.targets[ask, shortest(T.replies[ask], d, rng, ubuf, iv)]
        close_ask(T, iv, ask)
    elif latent:  # ask d dispatchers how long their I-queues are; the token goes when they answer
        ask = open_ask(T, iv, -1, 0, d, sid, True)
        sample(rng, ubuf, iv, dispatchers, d, False, T.targets[ask], T.pool)
        query_all(P, counts, iv, T, ask)
        return
    else:
        picked, values = T.picked, T.values
        sample(rng, ubuf, iv, dispatchers, d, False, picked, T.pool)
        round_trips(P, counts, d)
        for j in range(d):
            values[j] = count[picked[j]]
        target = picked[shortest(values, d, rng, ubuf, iv)]
    if not posted(P, counts, iv, T, P[P_IDLE], IDLE, target, sid, 0):
        _add(P, T, iv, target, sid)


@njit(cache=True, inline="always")
def _add(P: np.ndarray, T: Tools, iv: np.ndarray, target: int, sid: int) -> None:
    """`JIQPolicy._token`: the token reaches dispatcher ``target``, which keeps the id if it has room."""
    count = T.count
    memory = P[MEMORY]
    if memory < 0 or count[target] < memory:
        if P[P_D] > 1:
            id_add(T.lists, T.lstart, T.lcap, count, T.chain, T.node_d, T.node_next, iv, True, target, sid)
        elif not T.listed[sid]:
            T.listed[sid] = 1
            id_add(T.lists, T.lstart, T.lcap, count, count, count, count, iv, False, target, sid)


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    sid, via_list = list_dispatch(P, rng, ubuf, iv, T, dispatcher, P[P_D] > 1, False, 0.0)
    if via_list and P[P_D] == 1:  # taken from the one list: no longer in it (`_add`)
        T.listed[sid] = 0
    return sid, via_list


@njit(cache=True, inline="always")
def replied(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, ask: int) -> tuple[int, bool]:
    """JIQ-SQ(d) with latency: the I-queue lengths are in; the token goes to the shortest. At zero latency with loss
    the ask's timeout came: the token goes at once, unless the server that asked is down (`Channel._ask_faulty`)."""
    asking = P[P_LATENT] == faults.INSTANT  # feature: zero latency with faults: asks through records
    sid = T.asks[ask, A_TAG]
    if asking and not server_up(T, sid):
        return -1, False
    target = T.targets[ask, shortest(T.replies[ask], P[D], rng, ubuf, iv)]
    if not posted(P, counts, iv, T, P[P_IDLE], IDLE, target, sid, 0):
        _add(P, T, iv, target, sid)
    return -1, False


@njit(cache=True, inline="always")
def deliver(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, what: int, a: int, b: int, c: int) -> None:
    """With latency or held slots: a token (``IDLE``) reaches dispatcher ``a`` from server ``b``."""
    _add(P, T, iv, a, b)


@njit(cache=True, inline="always")
def on_depart(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int) -> None:
    if length[sid] == 0:
        _token(P, counts, length, rng, ubuf, iv, T, sid)


@compiled_only  # rare: not inlined, to keep compilation short
def initialise(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
               ubuf: np.ndarray, iv: np.ndarray, T: Tools) -> bool:
    """`JIQPolicy.__init__`: every server is idle and sends a token, from ``iv[I_INIT]`` on.

    False when it stops for list room.
    """
    for sid in range(iv[I_INIT], P[P_N]):
        if not list_room(iv, T.lists):
            iv[I_INIT] = sid
            return False
        _token(P, counts, length, rng, ubuf, iv, T, sid)
    iv[I_INIT] = -1
    return True


on_arrive, timer = nothing_on_arrive, nothing_timer


def instant_loss(config: JIQConfig, point: Any) -> bool:
    """Whether the kernel runs its lost messages at zero latency (`eligibility.supports`): yes, its tokens draw their
    loss when sent and are delivered at once, and JIQ-SQ(d)'s asks are answered at once or decided at their timeout
    (`ASKS`, `faults.asked`)."""
    return True


def servers_fail(config: JIQConfig, point: Any) -> bool:
    """Whether the kernel runs its failing servers (`eligibility.supports`): yes. JIQ-Random's tokens go to
    dispatchers; JIQ-SQ(d)'s servers ask the dispatchers, at zero latency only while up, the replies in at once
    (with loss, a server down at its ask's timeout sends nothing: `replied`), and with latency a reply that
    reaches a down server is lost there, and a server down when its round trip ends sends no token
    (`recovery.arrive`, `recovery.asker_up`)."""
    return True
