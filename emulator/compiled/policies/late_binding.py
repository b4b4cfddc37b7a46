"""Late binding, compiled (`emulator.policies.late_binding`): reservations, requests and cancels.

A server's reservations wait in a list of their own beside its jobs (`binding`).

With zero latency every message is answered within its sender's step, so a server
with no job never holds a reservation (it asks for it at once) and never waits for
an answer. A dispatch then places the job's reservations in sampled order: the first
idle server among them asks and gets the job, every later idle one asks and is
cancelled, and each busy one queues its reservation. A departure that leaves its
server idle asks for the jobs of its reservations in order, cancelled for those
already taken, until one still waits: that job reaches the server at once (the
kernel takes it from `binding.handed`).

With latency every reservation, request, cancel and job transfer is a message
(`network.send`, `network.post`), sent and handled where the SimPy policy sends and
handles it; a job's ticket lives until all d of its requests are in.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...measure.messages import Kind
from ...policies.late_binding import LateBindingConfig
from .. import binding
from ..core import compiled_only, sample
from ..network import post
from ..state import I_CURRENT, I_TRANSFERS, P_LATENT, P_N, P_PARAMS, POLICY_MESSAGE, TRANSFER
from ..tools import Description, Tools
from ..transport import send
from .common import nothing_timer

PARAMS = frozenset({"d"})
RESERVATIONS = True  # the kernel keeps reservations and hands their jobs over (`binding`; `loading.features`)
D = P_PARAMS
RESERVATION, REQUEST, CANCEL = int(Kind.RESERVATION), int(Kind.REQUEST), int(Kind.CANCEL)
# With latency, what a message record carries (`network`): a reservation (server, ticket), a
# request (ticket, server) and a cancel (server).
RESERVE, ASK, CANCELLED = POLICY_MESSAGE, POLICY_MESSAGE + 1, POLICY_MESSAGE + 2
HEAD, WAITING = 0, 2  # rows of `Tools.ints`: a server's list (rows 0 and 1), and whether it waits for an answer


def describe(config: LateBindingConfig, point: Any, speeds: np.ndarray) -> Description:
    d = int(config.d)
    return Description(ints=[d], sample=d, int_rows=3, reservations=True)


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    latent = P[P_LATENT] != 0  # feature: latency, or zero latency with faults (asks through records)
    d = P[D]
    picked = T.picked
    sample(rng, ubuf, iv, P[P_N], d, False, picked, T.pool)
    B = T.binding
    if latent:  # d reservations on their way; the job waits for the first request
        t = binding.ticket(B, iv[I_CURRENT], d)
        for j in range(d):
            send(counts, iv, T, RESERVATION, RESERVE, picked[j], t, 0)
        return -1, False
    counts[RESERVATION] += d
    to, t = -1, -1
    for j in range(d):
        sid = picked[j]
        if length[sid] == 0:  # idle, so nothing queued: it asks at once
            counts[REQUEST] += 1
            if to < 0:
                to = sid
            else:
                counts[CANCEL] += 1
        else:
            if t < 0:
                t = binding.ticket(B, iv[I_CURRENT], 0)
            B[t, binding.REFS] += 1
            binding.reserve(B, T.ints, sid, t)
    if t >= 0 and to >= 0:  # the reservations queued before or after its taker are stale
        B[t, binding.SLOT] = -1
    return to, False


@njit(cache=True, inline="always")
def _ask(counts: np.ndarray, length: np.ndarray, iv: np.ndarray, T: Tools, sid: int) -> None:
    """With latency, `LateBindingPolicy._ask`: an idle server that waits for no answer asks for its next job."""
    if T.ints[WAITING, sid] or length[sid] > 0:
        return
    t = binding.first(T.binding, T.ints, sid)
    if t >= 0:
        T.ints[WAITING, sid] = 1
        send(counts, iv, T, REQUEST, ASK, t, sid, 0)


@njit(cache=True, inline="always")
def deliver(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, what: int, a: int, b: int, c: int) -> None:
    """With latency: a reservation reaches server a, a request for ticket a's job its dispatcher, a cancel server a."""
    if what == RESERVE:
        binding.reserve(T.binding, T.ints, a, b)
        _ask(counts, length, iv, T, a)
    elif what == ASK:
        slot = binding.claim(T.binding, a)
        if slot >= 0:  # the first to ask: the job goes to it (`Dispatcher.send`)
            iv[I_TRANSFERS] += 1
            post(T, iv, TRANSFER, slot, b, 0)
        else:
            send(counts, iv, T, CANCEL, CANCELLED, b, 0, 0)
    else:
        T.ints[WAITING, a] = 0
        _ask(counts, length, iv, T, a)


@njit(cache=True, inline="always")
def on_arrive(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int, blocked: bool, via_list: bool) -> None:
    T.ints[WAITING, sid] = 0  # the job it asked for


@njit(cache=True, inline="always")
def on_depart(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int) -> None:
    latent = P[P_LATENT] != 0  # feature: latency, or zero latency with faults (asks through records)
    if length[sid] > 0:
        return
    if latent:
        _ask(counts, length, iv, T, sid)
        return
    B = T.binding
    slot, requests = binding.next_job(B, T.ints, sid)
    counts[REQUEST] += requests
    counts[CANCEL] += requests - (slot >= 0)
    B[0, binding.HANDED] = slot


@compiled_only
def initialise(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
               ubuf: np.ndarray, iv: np.ndarray, T: Tools) -> bool:
    """Every server's list of reservations is empty, and no server waits for an answer."""
    T.ints[:2, :] = -1
    T.ints[WAITING, :] = 0
    return True


timer = nothing_timer
