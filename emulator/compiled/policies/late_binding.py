"""Late binding, compiled (`emulator.policies.late_binding`), with zero latency: reservations, requests, cancels.

With zero latency every message is answered within its sender's step, so a server
with no job never holds a reservation (it asks for it at once) and never waits for
an answer. A dispatch then places the job's reservations in sampled order: the first
idle server among them asks and gets the job, every later idle one asks and is
cancelled, and each busy one queues its reservation (`binding`). A departure that
leaves its server idle asks for the jobs of its reservations in order, cancelled
for those already taken, until one still waits: that job reaches the server at
once (the kernel takes it from `binding.handed`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...measure.messages import Kind
from ...policies.late_binding import LateBindingConfig
from .. import binding
from ..core import sample
from ..state import I_CURRENT, P_N, P_PARAMS
from ..tools import Description, Tools, needs_choice
from .common import nothing_on_arrive, nothing_timer

PARAMS = frozenset({"d"})
D = P_PARAMS
RESERVATION, REQUEST, CANCEL = int(Kind.RESERVATION), int(Kind.REQUEST), int(Kind.CANCEL)


def describe(config: LateBindingConfig, point: Any, speeds: np.ndarray) -> Description:
    d = int(config.d)
    choice = d if needs_choice(point.servers, d, False) else 0
    return Description(ints=[d], sample=d, choice_at_dispatch=choice, int_rows=2, reservations=True)


def supports(config: LateBindingConfig, point: Any) -> str | None:
    if point.scenario.network.latency.mean != 0:
        return "late binding with latency (requests and cancels as events) runs on SimPy"
    return None


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    d = P[D]
    picked = T.picked
    sample(rng, ubuf, iv, P[P_N], d, False, picked, T.choice)
    counts[RESERVATION] += d
    B = T.binding
    to, ticket = -1, -1
    for j in range(d):
        sid = picked[j]
        if length[sid] == 0:  # idle, so nothing queued: it asks at once
            counts[REQUEST] += 1
            if to < 0:
                to = sid
            else:
                counts[CANCEL] += 1
        else:
            if ticket < 0:
                ticket = binding.take(B)
                B[ticket, binding.SLOT] = iv[I_CURRENT]
                B[ticket, binding.REFS] = 0
            binding.reserve(B, T.ints, sid, ticket)
    if ticket >= 0 and to >= 0:  # the reservations queued before or after its taker are stale
        B[ticket, binding.SLOT] = -1
    return to, False


@njit(cache=True, inline="always")
def on_depart(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int) -> None:
    if length[sid] == 0:
        B = T.binding
        slot, requests = binding.next_job(B, T.ints, sid)
        counts[REQUEST] += requests
        counts[CANCEL] += requests - (slot >= 0)
        B[0, binding.HANDED] = slot


@njit(cache=True)
def initialise(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
               ubuf: np.ndarray, iv: np.ndarray, T: Tools) -> bool:
    """Every server's list of reservations is empty."""
    T.ints[:, :] = -1
    return True


on_arrive, timer = nothing_on_arrive, nothing_timer
