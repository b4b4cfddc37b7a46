"""How a policy's hooks send and ask (`Channel.send`, `Channel.ask`): now, as events, or held for a later slot.

The way depends on the kernel's transport: zero latency (the answer or delivery is
now), latency (every message an event: `network`), zero latency with faults (asks
through records: `faults.INSTANT`) or slotted time holding idle tokens and reports
(`slot.pull_delay`). The policies leave that choice to these helpers, as the SimPy
policies leave it to their channel. Each reads the transport through its feature
lines (``# feature:``), which `build` fixes in the copy of this module that a
policy's kernel imports: numba then compiles only the way that kernel's runs take.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import faults, network
from .network import open_ask
from .state import A_N, F_LOSS, I_CURRENT, P_HELD, P_IDLE, P_LATENT, P_QUERY, P_REPLY, P_REPORT
from .tools import Tools


@njit(cache=True, inline="always")
def query_all(P: np.ndarray, counts: np.ndarray, iv: np.ndarray, T: Tools, ask: int) -> None:
    """Query every target of ``ask``, in order (`query`)."""
    for i in range(T.asks[ask, A_N]):
        query(P, counts, iv, T, ask, i)


@njit(cache=True, inline="always")
def query(P: np.ndarray, counts: np.ndarray, iv: np.ndarray, T: Tools, ask: int, i: int) -> None:
    """Query target ``i`` of ``ask`` (`network.query`), unless the kernel asks once the hook is done."""
    asking = P[P_LATENT] == faults.INSTANT  # feature: zero latency with faults: asks through records
    faulty = T.fv[F_LOSS] != 0.0  # feature: faults: messages lost or servers failing (`faults.on`)
    if not asking:
        network.query(P, counts, iv, T, ask, i, faulty)


@njit(cache=True, inline="always")
def answer(P: np.ndarray, counts: np.ndarray, iv: np.ndarray, T: Tools, ask: int, i: int, value: int) -> None:
    """Target ``i`` of ``ask`` answers ``value`` (`network.answer`)."""
    faulty = T.fv[F_LOSS] != 0.0  # feature: faults: messages lost or servers failing (`faults.on`)
    network.answer(P, counts, iv, T, ask, i, value, faulty)


@njit(cache=True, inline="always")
def send(counts: np.ndarray, iv: np.ndarray, T: Tools, kind: int, what: int, a: int, b: int, c: int) -> None:
    """`Channel.send` of a policy's own message as an event (`network.send`): counted, and posted unless lost."""
    faulty = T.fv[F_LOSS] != 0.0  # feature: faults: messages lost or servers failing (`faults.on`)
    network.send(counts, iv, T, kind, what, a, b, c, faulty)


@njit(cache=True, inline="always")
def lost(counts: np.ndarray, iv: np.ndarray, T: Tools, kind: int) -> bool:
    """Whether the control message of ``kind`` sent now is lost (`faults.lost`: counted as lost if so)."""
    faulty = T.fv[F_LOSS] != 0.0  # feature: faults: messages lost or servers failing (`faults.on`)
    return faulty and faults.lost(counts, iv, T, kind)


@njit(cache=True, inline="always")
def ask_lengths(P: np.ndarray, counts: np.ndarray, length: np.ndarray, iv: np.ndarray, T: Tools,
                dispatcher: int, n: int) -> bool:
    """`Channel.ask` of the ``n`` servers in ``T.picked[:n]`` for their queue lengths, for the current job.

    With zero latency the answers are in now: True, with them in ``T.values[:n]`` (one
    query and one reply counted per server, as the SimPy channel counts them). With
    latency the queries are sent: False, and the policy's ``replied`` hook decides when
    the last reply is in (the answers in ``T.replies[ask]``, the servers in
    ``T.targets[ask]``, both in this order). A policy's dispatch reads the same either way.
    """
    latency = P[P_LATENT] == 1  # feature: every message an event
    asking = P[P_LATENT] == faults.INSTANT  # feature: zero latency with faults: asks through records
    if latency or asking:
        ask = open_ask(T, iv, iv[I_CURRENT], dispatcher, n, 0, False)
        for i in range(n):
            T.targets[ask, i] = T.picked[i]
        query_all(P, counts, iv, T, ask)
        return False
    counts[P[P_QUERY]] += n
    counts[P[P_REPLY]] += n
    for i in range(n):
        T.values[i] = length[T.picked[i]]
    return True


@njit(cache=True, inline="always")
def posted(P: np.ndarray, counts: np.ndarray, iv: np.ndarray, T: Tools, kind: int, what: int, a: int, b: int,
           c: int) -> bool:
    """`Channel.send` of a policy's own message: True if it went out as an event (latency, or slotted time
    holding an idle token or a report for a later slot: the ``deliver`` hook handles it when it arrives) or was
    lost at zero latency (`faults.lost`, as `Channel._post`), False if it is delivered now: then it is counted
    here, and the caller delivers it (`SlotChannel` holds no other kind: LOR's completions arrive at once)."""
    latency = P[P_LATENT] == 1  # feature: every message an event
    held = P[P_HELD] != 0  # feature: slotted time holds idle tokens and reports for a later slot
    faulty = T.fv[F_LOSS] != 0.0  # feature: faults: messages lost or servers failing (`faults.on`)
    if latency or (held and (kind == P[P_IDLE] or kind == P[P_REPORT])):
        network.send(counts, iv, T, kind, what, a, b, c, faulty)
        return True
    counts[kind] += 1
    return faulty and faults.lost(counts, iv, T, kind)


@njit(cache=True, inline="always")
def late(P: np.ndarray) -> bool:
    """Whether a policy's own message may come after the state it told of changed (or not at all): with latency,
    with faults at zero latency (lost), or held for a later slot; not where each is delivered as it is sent."""
    latent = P[P_LATENT] != 0  # feature: latency, or zero latency with faults (asks through records)
    held = P[P_HELD] != 0  # feature: slotted time holds idle tokens and reports for a later slot
    if latent or held:
        return True
    return False
