"""What a failed server misses in the compiled kernel, as `emulator.model.failures.FailingFifoServer` has it.

A down server's arrival hooks wait until it recovers: SimPy then runs the arrival hook of
each job that reached it while down, in order, before its departure hook (`failing`
runs that one). The compiled policies whose servers may fail read nothing of such a job
in their arrival hook but whether it came from a list (JBT-d's ``via_list``; the others'
do nothing, or, as LOR's, run only where no job is held: their ``servers_fail``), so the
kernel counts the jobs from lists that reached a down server (`hold`) and runs the hook
that many times at its recovery (`held`). The count sits above the failing server's own
flags in ``sv[sid, FLAGS]`` (`failing.UP`, `WAITING`, `SERVING`), whose bits `failing`
sets and clears one by one.

A policy's own message to a server (JBT-d's threshold) is lost if the server is down when
it arrives, as `Channel._post` loses it: the policy sends it with `to_server`, which marks
it (`TO_SERVER` in its ``what``) and keeps its kind and the window it was sent in (its
``c``), and the kernel delivers it only if the server is up (`reaches`), else counts it lost
where `Recorder.lose_message` does.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .failing import FLAGS, Failing, up
from .network import send
from .state import I_EDGES
from .tools import Tools

HELD = 8
"""One job from a list held for the recovery: the failing server's flags are the bits below it."""
TO_SERVER = 1 << 40
"""Set in a policy message's ``what`` (`to_server`): its receiver is server ``a``."""
WHAT = TO_SERVER - 1
"""The message's own ``what``, the mark taken off (`deliver` sees it so)."""
PHASE = 1 << 16
"""``c`` of a marked message: its kind + PHASE x the window's edges passed when it was sent."""


@njit(cache=True, inline="always")
def hold(F: Failing, sid: int, via_list: bool) -> None:
    """A job reached server ``sid`` while it is down: its arrival hook waits for the recovery (`held`)."""
    if via_list:
        F.sv[sid, FLAGS] += HELD


@njit(cache=True, inline="always")
def held(F: Failing, sid: int) -> int:
    """The recovering server's jobs from lists whose arrival hook waited (counted once: the count is cleared)."""
    n = F.sv[sid, FLAGS] // HELD
    F.sv[sid, FLAGS] -= n * HELD
    return n


@njit(cache=True, inline="always")
def to_server(counts: np.ndarray, iv: np.ndarray, T: Tools, kind: int, what: int, sid: int, b: int) -> None:
    """A policy's message of ``kind`` to server ``sid`` (with latency), lost there if it is down when it arrives."""
    send(counts, iv, T, kind, what | TO_SERVER, sid, b, kind + PHASE * iv[I_EDGES])


@njit(cache=True, inline="always")
def reaches(counts: np.ndarray, window: np.ndarray, iv: np.ndarray, F: Failing, what: int, a: int, c: int) -> bool:
    """Whether a policy's message arriving now reaches its receiver: False if it is a server that is down.

    Lost there, it is counted lost now and in the window's snapshots taken since it was sent,
    as `Recorder.lose_message` counts it (`faults.dropped`).
    """
    if what & TO_SERVER == 0 or up(F, a):
        return True
    kind, phase = c % PHASE, c // PHASE
    at = len(counts) // 2 + kind
    counts[at] += 1
    for edge in range(phase, iv[I_EDGES]):
        window[edge, at] += 1
    return False
