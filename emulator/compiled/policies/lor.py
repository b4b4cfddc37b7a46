"""LOR, compiled (`emulator.policies.lor`): each dispatcher's outstanding counts in a length index of its own.

As LSQ's estimates (`lsq`): with one dispatcher the kernel's own index, with several
one per dispatcher (`jsq.index_set_in`); ``T.ints[k]`` is each server's count as
dispatcher ``k`` indexes it. A count grows by one when its dispatcher sends a job and
shrinks by one when that job's completion reaches it, so it never exceeds the levels
the kernel's room check leaves before each arrival. The kernel writes the dispatcher
of the job that leaves, or is blocked, to ``iv[I_ORIGIN]`` before the hook runs (a job blocked at a down
server: at its recovery, `recovery.missed`; -1 for the departure hook a recovery runs: no job left, nothing
to answer); the slot clock keeps each job's dispatcher for it (`ORIGINS`).

In slotted time a decision sends its dispatcher's batch of the slot (``dispatch: slot``;
a batch of one with ``dispatch: job``), which `LORPolicy.dispatch` counts at once (its
``followers``): here `dispatch` counts the job it decides for and `on_arrive_batch` the
batch's others. The index ends as SimPy's: raised by one, a server is the last of its
new level, and raised again it leaves that level as it was.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...measure.messages import Kind
from ...policies.lor import LORConfig
from ..core import sample, shortest
from ..state import I_ORIGIN, P_D, P_N, P_PARAMS, POLICY_MESSAGE
from ..tools import Description, Tools
from ..transport import posted
from .common import nothing_initialise, nothing_timer
from .jsq import index_set_of, indexes_too_large, pick_of

PARAMS = frozenset({"d"})
D = P_PARAMS  # -1: every server (the index's pick)
COMPLETION_KIND = int(Kind.COMPLETION)
COMPLETION = POLICY_MESSAGE  # with latency, a completion on its way
ORIGINS = True  # its hooks read the dispatcher of the job in question (`loading.origins`)


def describe(config: LORConfig, point: Any, speeds: np.ndarray) -> Description:
    d = -1 if config.d is None else int(config.d)
    return Description(ints=[d], index=True, per_dispatcher=point.dispatchers > 1, int_rows=point.dispatchers,
                       sample=max(d, 2), answers_blocked=True)


def supports(config: LORConfig, point: Any) -> str | None:
    return indexes_too_large("lor", point)


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    indexes, d = P[P_D], P[D]
    outstanding = T.ints[dispatcher]
    if d < 0:
        sid = pick_of(rng, ubuf, iv, T, indexes, dispatcher)
    else:  # `LORPolicy.dispatch`: d sampled, the smallest count, ties by reservoir draws
        picked, values = T.picked, T.values
        sample(rng, ubuf, iv, P[P_N], d, False, picked, T.pool)
        for j in range(d):
            values[j] = outstanding[picked[j]]
        sid = picked[shortest(values, d, rng, ubuf, iv)]
    index_set_of(T, iv, indexes, dispatcher, outstanding, sid, outstanding[sid] + 1)
    return sid, False


@njit(cache=True, inline="always")
def _completed(P: np.ndarray, iv: np.ndarray, T: Tools, k: int, sid: int) -> None:
    """`lor._completed`: one job fewer outstanding at ``sid`` for dispatcher ``k``."""
    outstanding = T.ints[k]
    index_set_of(T, iv, P[P_D], k, outstanding, sid, outstanding[sid] - 1)


@njit(cache=True, inline="always")
def _answer(P: np.ndarray, counts: np.ndarray, iv: np.ndarray, T: Tools, sid: int) -> None:
    """`LORPolicy._answer`: a completion from ``sid`` to the dispatcher of the job in question."""
    k = iv[I_ORIGIN]
    if not posted(P, counts, iv, T, COMPLETION_KIND, COMPLETION, k, sid, 0):  # delivered now
        _completed(P, iv, T, k, sid)


@njit(cache=True, inline="always")
def on_arrive(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int, blocked: bool, via_list: bool) -> None:
    if blocked:
        _answer(P, counts, iv, T, sid)


@njit(cache=True, inline="always")
def on_arrive_batch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
                    ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int, accepted: int, jobs: int,
                    via_list: bool) -> bool:
    """In slotted time, a decision's ``jobs`` jobs reached ``sid``: its others are outstanding too, then each
    blocked one (the last ``jobs - accepted``) is answered, as `SlottedServer.accept_all` runs the hooks."""
    k = iv[I_ORIGIN]
    outstanding = T.ints[k]
    index_set_of(T, iv, P[P_D], k, outstanding, sid, outstanding[sid] + jobs - 1)
    for _ in range(jobs - accepted):
        _answer(P, counts, iv, T, sid)
    return True


@njit(cache=True, inline="always")
def on_depart(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
              ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int) -> None:
    if iv[I_ORIGIN] >= 0:  # (-1: a failed server back up, no job left: `LORPolicy._departed` answers none)
        _answer(P, counts, iv, T, sid)


@njit(cache=True, inline="always")
def deliver(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
            ubuf: np.ndarray, iv: np.ndarray, T: Tools, what: int, a: int, b: int, c: int) -> None:
    """With latency: a completion reaches dispatcher ``a`` from server ``b``."""
    _completed(P, iv, T, a, b)


initialise, timer = nothing_initialise, nothing_timer


def instant_loss(config: LORConfig, point: Any) -> bool:
    """Whether the kernel runs its lost messages at zero latency (`eligibility.supports`): yes, its completions
    draw their loss when sent and are delivered at once (`transport.posted`), as `Channel._post` does."""
    return True


def servers_fail(config: LORConfig, point: Any) -> bool:
    """Whether the kernel runs its failing servers (`eligibility.supports`): yes, its completions go to dispatchers,
    which never fail, a recovery's departure hook answers nothing, and a job blocked at a down server (a capacity,
    ``hold``) is answered at its recovery, to its own dispatcher, in order (`recovery.keep`, `recovery.missed`)."""
    return True
