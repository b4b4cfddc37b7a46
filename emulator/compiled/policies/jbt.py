"""JBT-d, compiled (`emulator.policies.jbt`): below-threshold reports into lists, threshold updates."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...measure.messages import NO_REPLY
from ...policies.jbt import JBTConfig
from .. import faults
from ..core import compiled_only, id_add, id_clear, id_clear_chained, list_room, sample
from ..network import close_ask, open_ask
from ..recovery import to_server
from ..state import (
    I_INIT,
    I_UPDATE_R,
    I_UPDATING,
    P_D,
    P_LATENT,
    P_N,
    P_PARAMS,
    P_REPORT,
    P_THRESHOLD_KIND,
    POLICY_MESSAGE,
    Q_PARAMS,
)
from ..tools import Description, Tools
from ..transport import late, lost, posted, query_all, send
from .common import asked_now, list_dispatch, random_dispatcher, round_trips, server_up

ASKS = True  # at zero latency with faults its update's ask goes through a record (`faults.INSTANT`)
PARAMS = frozenset({"d", "period", "below", "reports", "rereport", "recheck", "reset", "initial_threshold"})
D, STRICT, REREPORT, RECHECK, RESET, WEIGHTED, CHAINED = (P_PARAMS + i for i in range(7))
TOP = Q_PARAMS  # max(weights): rejection sampling by speed (JBTG-d)
# With latency, its messages on their way: a report (dispatcher, server), a threshold (server, r),
# the update's clearing of another dispatcher's list (reset: dispatcher).
REPORT, THRESHOLD, CLEAR = POLICY_MESSAGE, POLICY_MESSAGE + 1, POLICY_MESSAGE + 2


def describe(config: JBTConfig, point: Any, speeds: np.ndarray) -> Description:
    """``speeds``: the servers' speeds, one entry when all are equal (then picks are uniform)."""
    d = int(config.d)
    total = point.scenario.run.warmup_jobs + point.scenario.run.jobs
    weighted = len(speeds) > 1  # JBTPolicy.weights
    # With latency (or reports held for later slots) and reset, a report still on its way when the
    # lists are cleared (and the server told it is no longer listed) can list a server twice, in one list or two:
    # then the lists keep each id once, as IdList.add does (`core.id_add`, chained). So can a lost clearing,
    # which leaves its dispatcher's ids listed.
    system, network = point.scenario.system, point.scenario.network
    late = network.latency.mean != 0 or network.loss > 0 or (system.slot is not None and system.slot.pull_delay > 0)
    chained = late and config.reset
    return Description(
        ints=[d, config.below == "lt", config.rereport, config.recheck, config.reset, weighted, chained],
        floats=[float(speeds.max())],
        period=config.period,
        lists=True, listed=True, lists_at_arrival=True, lists_at_departure=True, chained=chained, ask_width=d,
        messages_per_step=2 * d,  # (zero latency with faults: the update's ask draws 2d losses in its broadcast's step)
        # The kernel's integers are int64: a threshold above every reachable length is any such one.
        threshold=min(config.initial_threshold, total + 1), sample=d)



@njit(cache=True, inline="always")
def _check(P: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple, ubuf: np.ndarray,
           iv: np.ndarray, T: Tools, sid: int) -> None:
    """`JBTPolicy._check`: a server below its threshold and not listed reports."""
    listed = T.listed
    if listed[sid]:
        return
    r = T.threshold[sid]
    n = length[sid]
    if n < r or (n == r and not P[STRICT]):
        listed[sid] = 1
        target = random_dispatcher(P, rng, ubuf, iv)
        if not posted(P, counts, iv, T, P[P_REPORT], REPORT, target, sid, 0):
            _reported(P, iv, T, target, sid)


@njit(cache=True, inline="always")
def _reported(P: np.ndarray, iv: np.ndarray, T: Tools, target: int, sid: int) -> None:
    """`_reported`: dispatcher ``target`` lists server ``sid``."""
    # One call, so one inlined copy; unchained, `id_add` reads no chain (then T.chain has one entry).
    id_add(T.lists, T.lstart, T.lcap, T.count, T.chain, T.node_d, T.node_next, iv, _chained(P), target, sid)


@njit(cache=True, inline="always")
def _chained(P: np.ndarray) -> bool:
    """Whether the lists keep each id once (`describe`): only where a report may come late, so that the kernels
    of other transports compile no chain."""
    if late(P):
        return P[CHAINED] != 0
    return False


@njit(cache=True, inline="always")
def _clear(P: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> None:
    """`_cleared`: the dispatcher's list is emptied."""
    if _chained(P):
        id_clear_chained(T.lists, T.lstart, T.count, T.chain, T.node_d, T.node_next, iv, dispatcher)
    else:
        id_clear(T.count, dispatcher)


@njit(cache=True, inline="always")
def _new_threshold(P: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple, ubuf: np.ndarray,
                   iv: np.ndarray, T: Tools, sid: int, r: int) -> None:
    """`JBTPolicy._new_threshold`."""
    T.threshold[sid] = r
    reset = P[RESET] != 0
    if reset:
        T.listed[sid] = 0
    if P[RECHECK] != 0 or reset:
        _check(P, counts, length, rng, ubuf, iv, T, sid)


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    return list_dispatch(P, rng, ubuf, iv, T, dispatcher, _chained(P), P[WEIGHTED] != 0, Q[TOP])


@njit(cache=True, inline="always")
def on_arrive(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int, blocked: bool, via_list: bool) -> None:
    """`JBTPolicy._arrived`."""
    if via_list:
        T.listed[sid] = 0
        if P[REREPORT]:
            _check(P, counts, length, rng, ubuf, iv, T, sid)


@njit(cache=True, inline="always")
def on_depart(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int) -> None:
    _check(P, counts, length, rng, ubuf, iv, T, sid)


@compiled_only  # rare: not inlined, to keep compilation short
def initialise(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
               ubuf: np.ndarray, iv: np.ndarray, T: Tools) -> bool:
    """`JBTPolicy.__init__`: every server checks itself, from ``iv[I_INIT]`` on."""
    for sid in range(iv[I_INIT], P[P_N]):
        if not list_room(iv, T.lists):
            iv[I_INIT] = sid
            return False
        _check(P, counts, length, rng, ubuf, iv, T, sid)
    iv[I_INIT] = -1
    return True


@compiled_only  # rare: not inlined, to keep compilation short
def timer(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
          ubuf: np.ndarray, iv: np.ndarray, T: Tools, resume: bool) -> bool:
    """One threshold update of `JBTPolicy._updates`: sample d, take the smallest length, tell every server.

    The servers learn it one by one, from ``iv[I_UPDATING]`` on; False if it stopped
    for list room (``resume`` goes on from there).
    """
    latency = P[P_LATENT] == 1  # feature: every message an event
    asking = P[P_LATENT] == faults.INSTANT  # feature: zero latency with faults: asks through records
    if asking and not resume:  # zero latency with faults: asked now, or at its timeout
        ask = open_ask(T, iv, -1, 0, P[D], 0, False)
        sample(rng, ubuf, iv, P[P_N], P[D], False, T.targets[ask], T.pool)
        if not asked_now(P, counts, length, iv, T, ask):
            return True  # a reply is missing: the ask's timeout decides (`replied`)
        r = _smallest(P, T, ask)
        close_ask(T, iv, ask)
        _begin(P, counts, iv, T, r)
    elif latency:  # ask d servers; the update goes out when they answer (`replied`)
        ask = open_ask(T, iv, -1, 0, P[D], 0, False)
        sample(rng, ubuf, iv, P[P_N], P[D], False, T.targets[ask], T.pool)
        query_all(P, counts, iv, T, ask)
        return True
    elif not resume:
        n, d = P[P_N], P[D]
        sample(rng, ubuf, iv, n, d, False, T.picked, T.pool)
        round_trips(P, counts, d)
        r = length[T.picked[0]]
        for j in range(1, d):
            r = min(r, length[T.picked[j]])
        _begin(P, counts, iv, T, r)
    return _broadcast(P, counts, length, rng, ubuf, iv, T)


@njit(cache=True, inline="always")
def _smallest(P: np.ndarray, T: Tools, ask: int) -> int:
    """The smallest of ``ask``'s replies (`NO_REPLY` if none came)."""
    replies = T.replies[ask]
    r = replies[0]
    for j in range(1, P[D]):
        r = min(r, replies[j])
    return r


@njit(cache=True, inline="always")
def _begin(P: np.ndarray, counts: np.ndarray, iv: np.ndarray, T: Tools, r: int) -> None:
    """Zero latency: r is set; with reset, dispatcher 0 clears its list, then sends each other one a threshold
    message, which clears its list at once unless it is lost (`faults.lost`). The servers learn it next."""
    if P[RESET] != 0:  # (chained lists where reports are held)
        kind = P[P_THRESHOLD_KIND]
        _clear(P, iv, T, 0)
        for dispatcher in range(1, P[P_D]):
            counts[kind] += 1
            if not lost(counts, iv, T, kind):
                _clear(P, iv, T, dispatcher)
    iv[I_UPDATE_R] = r
    iv[I_UPDATING] = 0


@njit(cache=True, inline="always")
def _broadcast(P: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple, ubuf: np.ndarray,
               iv: np.ndarray, T: Tools) -> bool:
    """Zero latency: every server from ``iv[I_UPDATING]`` on learns r at once; False if it stopped for list room.

    With faults (`faults.INSTANT`) each threshold draws its loss, and is lost at a server that is
    down, as `Channel._post` loses it. An update its ask's timeout decided keeps -1 - r in
    ``iv[I_UPDATE_R]`` (`faults.update_done`: its timer waits already).
    """
    r = iv[I_UPDATE_R]
    if r < 0:
        r = -1 - r
    kind = P[P_THRESHOLD_KIND]
    asking = P[P_LATENT] == faults.INSTANT  # feature: zero latency with faults: asks through records
    reset = P[RESET] != 0
    recheck = P[RECHECK] != 0 or reset
    for sid in range(iv[I_UPDATING], P[P_N]):
        if recheck and not list_room(iv, T.lists):  # this server's check may list it: room first
            iv[I_UPDATING] = sid
            return False
        counts[kind] += 1
        if asking and (lost(counts, iv, T, kind) or _lost_at(counts, T, kind, sid)):
            continue
        T.threshold[sid] = r
        if reset:
            T.listed[sid] = 0
        if recheck:
            _check(P, counts, length, rng, ubuf, iv, T, sid)
    iv[I_UPDATING] = -1
    return True


@njit(cache=True, inline="always")
def _lost_at(counts: np.ndarray, T: Tools, kind: int, sid: int) -> bool:
    """Whether a message of ``kind`` reaching server ``sid`` now is lost there (it is down): counted lost if so."""
    if server_up(T, sid):
        return False
    faults.count_lost(counts, kind)
    return True


@compiled_only  # once per update: not inlined, to keep compilation short
def replied(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, ask: int) -> tuple[int, bool]:
    """With latency: the sampled lengths are in; r is the smallest, told to every server as a message. At zero
    latency with faults, the ask's timeout came: the servers learn r at once (`_broadcast`, which the kernel's next
    call resumes if it stopped for list room)."""
    r = _smallest(P, T, ask)
    if r == NO_REPLY:  # no reply came back in time (faults): the threshold stays as it is
        return -1, False
    asking = P[P_LATENT] == faults.INSTANT  # feature: zero latency with faults: asks through records
    if asking:
        _begin(P, counts, iv, T, r)
        iv[I_UPDATE_R] = -1 - r  # the timer waits already (`faults.update_done`)
        _broadcast(P, counts, length, rng, ubuf, iv, T)
        return -1, False
    kind = P[P_THRESHOLD_KIND]
    if P[RESET] != 0:  # dispatcher 0 clears its own list; each other one when its message arrives
        _clear(P, iv, T, 0)
        for dispatcher in range(1, P[P_D]):
            send(counts, iv, T, kind, CLEAR, dispatcher, 0, 0)
    for sid in range(P[P_N]):  # (a server down when its threshold arrives loses it: `recovery.reaches`)
        to_server(counts, iv, T, kind, THRESHOLD, sid, r)
    return -1, False


@njit(cache=True, inline="always")
def deliver(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, what: int, a: int, b: int, c: int) -> None:
    """With latency: a report reaches a dispatcher, a threshold a server, or a clearing a dispatcher."""
    if what == REPORT:
        _reported(P, iv, T, a, b)
    elif what == THRESHOLD:
        _new_threshold(P, counts, length, rng, ubuf, iv, T, a, b)
    else:
        _clear(P, iv, T, a)


def instant_loss(config: JBTConfig, point: Any) -> bool:
    """Whether the kernel runs its lost messages at zero latency (`eligibility.supports`): yes, its update's ask is
    answered at once or decided at its timeout (``ASKS``: `faults.asked`), and its thresholds, clearings and reports
    draw their loss when sent and are delivered at once, as `Channel._post` does."""
    return True


def servers_fail(config: JBTConfig, point: Any) -> bool:
    """Whether the kernel runs its failing servers (`eligibility.supports`): yes. Its update asks the servers
    through records (a query lost at a down server: `faults.dropped`, `faults.asked`), its thresholds are lost at a
    down server (`recovery.reaches`; at zero latency `_lost_at`), and the arrival hooks of the jobs from lists that
    reached a down server run at its recovery (`recovery.missed`)."""
    return True
