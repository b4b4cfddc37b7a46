"""Message records of the compiled engine: taken from their free list when a message is sent, given back when it
is delivered. Written once, here, for every sender (`network`, `faults`) and receiver (the loops, `copying`)."""

from __future__ import annotations

import numpy as np
from numba import njit

from .core import compiled_only
from .state import I_MSG_FREE, I_MSGS
from .tools import Tools


@njit(cache=True, inline="always")
def take_message(T: Tools, iv: np.ndarray, what: int, a: int, b: int, c: int) -> int:
    """A message record from the free list, holding (what, a, b, c); its slot (the caller schedules it)."""
    msg = T.msg
    slot = iv[I_MSG_FREE]
    iv[I_MSG_FREE] = msg[slot, 1]
    iv[I_MSGS] += 1
    msg[slot, 0] = what
    msg[slot, 1] = a
    msg[slot, 2] = b
    msg[slot, 3] = c
    return slot


@compiled_only
def release(T: Tools, iv: np.ndarray, slot: int) -> None:
    """A delivered message's record is free again (read it first)."""
    T.msg[slot, 1] = iv[I_MSG_FREE]
    iv[I_MSG_FREE] = slot
    iv[I_MSGS] -= 1
