"""Persistent-Idle, compiled (`emulator.policies.persistent_idle`): jobs to the server that has last been idle.

Dispatcher k's idle set is its list (`core.id_add`, in report order: only its last
id is ever taken, which keeps the order); ``T.rr[k]`` is its target (-1 before any).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...policies.persistent_idle import NONE, PersistentIdleConfig
from ..core import compiled_only, id_add, id_take, list_room, uniform
from ..state import I_INIT, P_D, P_IDLE, P_N, POLICY_MESSAGE
from ..tools import Description, Tools
from ..transport import posted
from .common import nothing_on_arrive, nothing_timer, random_dispatcher

PARAMS: frozenset[str] = frozenset()
IDLE = POLICY_MESSAGE  # with latency (or held slots), an idle message on its way


def describe(config: PersistentIdleConfig, point: Any, speeds: np.ndarray) -> Description:
    one_list = point.dispatchers == 1  # a flag per server says whether it is in the list
    return Description(lists=True, chained=not one_list, listed=one_list, lists_at_departure=True, rr=True)


@njit(cache=True, inline="always")
def _add(P: np.ndarray, T: Tools, iv: np.ndarray, target: int, sid: int) -> None:
    """`_report`: the idle message reaches dispatcher ``target``, whose set keeps the id once."""
    count = T.count
    if P[P_D] > 1:
        id_add(T.lists, T.lstart, T.lcap, count, T.chain, T.node_d, T.node_next, iv, True, target, sid)
    elif not T.listed[sid]:
        T.listed[sid] = 1
        id_add(T.lists, T.lstart, T.lcap, count, count, count, count, iv, False, target, sid)


@njit(cache=True, inline="always")
def _report_idle(P: np.ndarray, counts: np.ndarray, rng: tuple, ubuf: np.ndarray, iv: np.ndarray, T: Tools,
                 sid: int) -> None:
    """`PersistentIdlePolicy._report_idle`: one idle message to one dispatcher."""
    target = random_dispatcher(P, rng, ubuf, iv)
    if not posted(P, counts, iv, T, P[P_IDLE], IDLE, target, sid, 0):
        _add(P, T, iv, target, sid)


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    """`PersistentIdlePolicy.dispatch`: the last id of the set (which becomes the target), else the target."""
    listed = T.count[dispatcher]
    if listed > 0:
        chained = P[P_D] > 1
        sid = id_take(T.lists, T.lstart, T.count, T.chain, T.node_d, T.node_next, iv, chained, dispatcher,
                      listed - 1)
        if not chained:
            T.listed[sid] = 0
        T.rr[dispatcher] = sid
        return sid, True
    target = T.rr[dispatcher]
    if target == NONE:
        return int(uniform(rng, ubuf, iv) * P[P_N]), False
    return target, False


@njit(cache=True, inline="always")
def on_depart(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int) -> None:
    """`PersistentIdlePolicy._departed`: an emptied server reports to one dispatcher."""
    if length[sid] == 0:
        _report_idle(P, counts, rng, ubuf, iv, T, sid)


@njit(cache=True, inline="always")
def deliver(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, what: int, a: int, b: int, c: int) -> None:
    """With latency or held slots: an idle message reaches dispatcher ``a`` from server ``b``."""
    _add(P, T, iv, a, b)


@compiled_only  # rare: not inlined, to keep compilation short
def initialise(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
               ubuf: np.ndarray, iv: np.ndarray, T: Tools) -> bool:
    """`PersistentIdlePolicy.__init__`: no target yet; every server is idle and reports, from ``iv[I_INIT]`` on.

    False when it stops for list room (the engine makes room and calls it again).
    """
    if iv[I_INIT] == 0:
        for k in range(P[P_D]):
            T.rr[k] = NONE
    for sid in range(iv[I_INIT], P[P_N]):
        if not list_room(iv, T.lists):
            iv[I_INIT] = sid
            return False
        _report_idle(P, counts, rng, ubuf, iv, T, sid)
    iv[I_INIT] = -1
    return True


on_arrive, timer = nothing_on_arrive, nothing_timer


def instant_loss(config: PersistentIdleConfig, point: Any) -> bool:
    """Whether the kernel runs its lost messages at zero latency (`eligibility.supports`): yes, its idle messages
    draw their loss when sent and are delivered at once (`transport.posted`), as `Channel._post` does."""
    return True


def servers_fail(config: PersistentIdleConfig, point: Any) -> bool:
    """Whether the kernel runs its failing servers (`eligibility.supports`): yes, its servers have no arrival hook
    and receive no message (their idle messages go to dispatchers, which never fail); the departure hook the
    kernel runs at a recovery reports an empty server, as SimPy's does."""
    return True
