"""Compiled building blocks: the event heap, the policy's uniforms, sampling, ties, id lists.

Each one reproduces, float operation for float operation, its counterpart in the
SimPy engine: `simpy.Environment`'s heap order, `emulator.streams.Uniforms`,
`emulator.policies.base.shortest` and `IdList`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import carray, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .state import I_CHOICE, I_EID, I_HEAP, I_UPOS

BATCH = 4096  # emulator.streams.BATCH (checked by the engine)

# -- arrays without reference counting ----------------------------------------------------

def _voidptr_typer(typingctx: Any, address: Any) -> Any:
    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.inttoptr(args[0], cgutils.voidptr_t)
    return types.voidptr(address), codegen


_voidptr: Any = intrinsic(_voidptr_typer)  # an integer address as a void pointer


@njit(cache=True, inline="always")
def unmanaged(a: np.ndarray) -> np.ndarray:
    """A view of ``a`` that numba does not reference-count.

    Numba counts references to an array at every call that passes it, with an
    atomic increment and decrement each: with the kernel's dozens of arrays, that
    cost ten times the rest of the per-job work. A view built from the raw pointer
    has no owner to count; the caller keeps ``a`` alive for the whole call.
    """
    return carray(_voidptr(a.ctypes.data), a.shape, a.dtype)


# -- the event heap -----------------------------------------------------------------------
# SimPy orders events by (time, priority, id), ids in scheduling order. Every event the
# kernel schedules is NORMAL (the URGENT process initialisations at time 0 are replayed
# in order before the loop starts), so (time, id) is the order.


@njit(cache=True, inline="always")
def _before(t1: float, e1: int, t2: float, e2: int) -> bool:
    return t1 < t2 or (t1 == t2 and e1 < e2)


@njit(cache=True, inline="always")
def push(h_time: np.ndarray, h_id: np.ndarray, h_code: np.ndarray, iv: np.ndarray,
         t: float, code: int) -> None:
    """Schedule event ``code`` at time ``t`` with the next id."""
    eid = iv[I_EID]
    iv[I_EID] = eid + 1
    i = iv[I_HEAP]
    iv[I_HEAP] = i + 1
    while i > 0:
        parent = (i - 1) >> 1
        if _before(t, eid, h_time[parent], h_id[parent]):
            h_time[i] = h_time[parent]
            h_id[i] = h_id[parent]
            h_code[i] = h_code[parent]
            i = parent
        else:
            break
    h_time[i] = t
    h_id[i] = eid
    h_code[i] = code


@njit(cache=True, inline="always")
def pop(h_time: np.ndarray, h_id: np.ndarray, h_code: np.ndarray, iv: np.ndarray) -> None:
    """Remove the first event (read it from index 0 before)."""
    size = iv[I_HEAP] - 1
    iv[I_HEAP] = size
    if size == 0:
        return
    t, eid, code = h_time[size], h_id[size], h_code[size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        right = child + 1
        if right < size and _before(h_time[right], h_id[right], h_time[child], h_id[child]):
            child = right
        if _before(h_time[child], h_id[child], t, eid):
            h_time[i] = h_time[child]
            h_id[i] = h_id[child]
            h_code[i] = h_code[child]
            i = child
        else:
            break
    h_time[i] = t
    h_id[i] = eid
    h_code[i] = code


# -- the policy's uniforms (Uniforms: rng.random(BATCH) blocks, drawn when first needed) --

@njit(cache=True, inline="always")
def uniform(rng: tuple, ubuf: np.ndarray, iv: np.ndarray) -> float:
    """The next draw of `Uniforms`; ``rng`` is the policy generator's (next_double, state address).

    ``rng.random(BATCH)`` is ``next_double(state)`` BATCH times: the same bits, drawn
    through the bit generator's C interface, as numpy's own `Generator.random` does.
    """
    pos = iv[I_UPOS]
    if pos == BATCH:
        next_double, address = rng
        state = _voidptr(address)
        for i in range(BATCH):
            ubuf[i] = next_double(state)
        pos = 0
    iv[I_UPOS] = pos + 1
    return ubuf[pos]


@njit(cache=True, inline="always")
def needs_choice(n: int, k: int, replace: bool) -> bool:
    """Whether ``Uniforms.sample(n, k, replace)`` falls back to ``rng.choice``."""
    return not replace and k != 2 and 4 * k > n


@njit(cache=True, inline="always")
def sample(rng: tuple, ubuf: np.ndarray, iv: np.ndarray, n: int, k: int,
           replace: bool, out: np.ndarray, choice: np.ndarray) -> None:
    """``Uniforms.sample(n, k, replace)`` into ``out[:k]``; the rng.choice case reads ``choice``."""
    if replace:
        for j in range(k):
            out[j] = int(uniform(rng, ubuf, iv) * n)
        return
    if k == 2:
        a = int(uniform(rng, ubuf, iv) * n)
        b = int(uniform(rng, ubuf, iv) * (n - 1))
        out[0] = a
        out[1] = b + 1 if b >= a else b
        return
    if 4 * k <= n:
        count = 0
        while count < k:
            x = int(uniform(rng, ubuf, iv) * n)
            seen = False
            for j in range(count):
                if out[j] == x:
                    seen = True
                    break
            if not seen:
                out[count] = x
                count += 1
        return
    for j in range(k):  # drawn by the engine with rng.choice at this very point of the stream
        out[j] = choice[j]
    iv[I_CHOICE] = 0


@njit(cache=True, inline="always")
def shortest(values: np.ndarray, k: int, rng: tuple, ubuf: np.ndarray,
             iv: np.ndarray) -> int:
    """`emulator.policies.base.shortest` over ``values[:k]``: reservoir sampling over ties."""
    best = 0
    low = values[0]
    ties = 1
    for i in range(1, k):
        value = values[i]
        if value < low:
            best, low, ties = i, value, 1
        elif value == low:
            ties += 1
            if uniform(rng, ubuf, iv) * ties < 1.0:
                best = i
    return best


# -- IdList: row ``d`` of ``ids``/``where`` is dispatcher d's list ----------------------

@njit(cache=True, inline="always")
def id_add(ids: np.ndarray, where: np.ndarray, count: np.ndarray, d: int, sid: int) -> None:
    if where[d, sid] < 0:
        where[d, sid] = count[d]
        ids[d, count[d]] = sid
        count[d] += 1


@njit(cache=True, inline="always")
def id_take(ids: np.ndarray, where: np.ndarray, count: np.ndarray, d: int, i: int) -> int:
    sid = ids[d, i]
    last = ids[d, count[d] - 1]
    count[d] -= 1
    if last != sid:
        ids[d, i] = last
        where[d, last] = i
    where[d, sid] = -1
    return sid


@njit(cache=True, inline="always")
def id_clear(ids: np.ndarray, where: np.ndarray, count: np.ndarray, d: int) -> None:
    for j in range(count[d]):
        where[d, ids[d, j]] = -1
    count[d] = 0
