"""Compiled building blocks: the event heap, the policy's uniforms, sampling, ties, id lists.

Each one reproduces, float operation for float operation, its counterpart in the
SimPy engine: `simpy.Environment`'s heap order, `emulator.workload.streams.Uniforms`,
`emulator.policies.base.shortest` and `IdList`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import carray, config, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .state import I_EID, I_HEAP, I_MAXCAP, I_NODE_FREE, I_POOL_END, I_UPOS
from .tools import Tools

BATCH = 4096  # emulator.workload.streams.BATCH (checked by the engine)


def compiled_only(function: Any) -> Any:
    """``@njit(cache=True)`` for a function that only compiled code calls (not inlined).

    Numba builds it no wrapper for calls from Python, whose conversion of the arguments
    (a `Tools` is 33 arrays) cost up to a second of a kernel's first compilation per
    function; Python cannot call it (`sample`, which a test calls, keeps its wrapper).
    And it is compiled for the types of its arguments, not for the constants a call
    passes: numba would compile it again for each constant (``post(..., TRANSFER, ...)``,
    a hook inlined where its dispatcher is 0), a third of a second or more each time.
    """
    dispatcher = njit(cache=True, no_cpython_wrapper=True)(function)  # type: ignore[call-overload]  # (not in the hints)
    typed = getattr(dispatcher, "get_call_template", None)
    if typed is None:  # NUMBA_DISABLE_JIT: the function itself, run as Python
        return dispatcher

    def get_call_template(args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        return typed(tuple(types.unliteral(a) for a in args), {k: types.unliteral(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher


# -- arrays without reference counting ----------------------------------------------------

def _voidptr_typer(typingctx: Any, address: Any) -> Any:
    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.inttoptr(args[0], cgutils.voidptr_t)
    return types.voidptr(address), codegen


_voidptr: Any = intrinsic(_voidptr_typer)  # an integer address as a void pointer


@compiled_only  # once per array and call of the kernel: compiled once for every kernel, not inlined in each
def _unmanaged(a: np.ndarray) -> np.ndarray:
    """A view of ``a`` that numba does not reference-count.

    Numba counts references to an array at every call that passes it, with an
    atomic increment and decrement each: with the kernel's dozens of arrays, that
    cost ten times the rest of the per-job work. A view built from the raw pointer
    has no owner to count (its count's pointer is null, which the count's code
    tests before any atomic operation); the caller keeps ``a`` alive for the whole call.
    """
    return carray(_voidptr(a.ctypes.data), a.shape, a.dtype)


if config.DISABLE_JIT:  # type: ignore[attr-defined]
    # NUMBA_DISABLE_JIT=1 runs the kernel as plain Python (slowly, for a debugger or coverage):
    # there an array is its own view, and ctypes takes a state's integer address as it is.
    def _voidptr(address: int) -> int:
        return address

    def unmanaged(a: np.ndarray) -> np.ndarray:
        return a
else:
    unmanaged = _unmanaged


@compiled_only  # once per call of the kernel: compiled once for every kernel, not inlined in each
def view(tools: Any, fv: np.ndarray, heap: np.ndarray, size: np.ndarray, links: np.ndarray) -> Any:
    """The hooks' `tools.Tools`, every array an `unmanaged` view, with the kernel's own ``fv``, ``heap``, job
    ``size`` and job slot links (``next``)."""
    return Tools(
        unmanaged(tools.rr), unmanaged(tools.buckets), unmanaged(tools.bucket_size), unmanaged(tools.position),
        unmanaged(tools.threshold), unmanaged(tools.listed), unmanaged(tools.lists), unmanaged(tools.lstart),
        unmanaged(tools.lcap), unmanaged(tools.count), unmanaged(tools.chain), unmanaged(tools.node_d),
        unmanaged(tools.node_next), unmanaged(tools.weights), unmanaged(tools.pool), unmanaged(tools.picked),
        unmanaged(tools.values), unmanaged(tools.ints), unmanaged(tools.latency), unmanaged(tools.msg),
        unmanaged(tools.asks), unmanaged(tools.targets), unmanaged(tools.replies), unmanaged(tools.due), fv, heap,
        unmanaged(tools.loss), unmanaged(tools.expiry), unmanaged(tools.binding), unmanaged(tools.floats), size,
        links, unmanaged(tools.failing))


# -- the event heap -----------------------------------------------------------------------
# SimPy orders events by (time, priority, id), ids in scheduling order. Every event the
# kernel schedules is NORMAL (the URGENT process initialisations at time 0 are replayed
# in order before the loop starts), so (time, id) is the order: ids are unique, so any
# correct priority queue pops the same sequence. This one is a 4-ary heap of records
# (time, id, code), three consecutive float64 of one flat array (ids and codes are
# integers below 2**53): a record and its siblings share cache lines, which matters once
# N is large, and a record's place is 3 i, with no row stride to reload.


@njit(cache=True, inline="always")
def push(heap: np.ndarray, iv: np.ndarray, t: float, code: int) -> None:
    """Schedule event ``code`` at time ``t`` with the next id."""
    eid = float(iv[I_EID])
    iv[I_EID] += 1
    push_id(heap, iv, t, eid, code)


@compiled_only  # large, and called at several places of every kernel: compiled once, a call per push
def push_id(heap: np.ndarray, iv: np.ndarray, t: float, eid: float, code: int) -> None:
    """Schedule event ``code`` at time ``t`` with id ``eid``, taken earlier (`network`'s replies)."""
    i = iv[I_HEAP]
    iv[I_HEAP] = i + 1
    while i > 0:
        parent = (i - 1) >> 2
        p = 3 * parent
        pt = heap[p]
        if t < pt or (t == pt and eid < heap[p + 1]):
            r = 3 * i
            heap[r] = pt
            heap[r + 1] = heap[p + 1]
            heap[r + 2] = heap[p + 2]
            i = parent
        else:
            break
    r = 3 * i
    heap[r] = t
    heap[r + 1] = eid
    heap[r + 2] = code


@njit(cache=True, inline="always")
def _before(ta: float, ea: float, tb: float, eb: float) -> bool:
    """Whether record (ta, ea) comes before (tb, eb): without short circuits, so that it compiles to selects."""
    return (ta < tb) | ((ta == tb) & (ea < eb))


@compiled_only  # large, inlined twice per kernel it cost a fifth of each kernel's compilation
def _sift_down(heap: np.ndarray, size: int, t: float, eid: float, code: float) -> None:
    """Put record (t, eid, code) at the root of the ``size`` records and move it down to its place.

    Where a record has all four children, the first of them is found by a tournament
    of selects (two pairs, then their winners) rather than by branches, whose outcome
    on random times the processor cannot predict.
    """
    i = 0
    while True:
        first = 4 * i + 1
        if first + 3 < size:
            k0 = 3 * first
            k1, k2, k3 = k0 + 3, k0 + 6, k0 + 9
            t0, e0, t1, e1 = heap[k0], heap[k0 + 1], heap[k1], heap[k1 + 1]
            t2, e2, t3, e3 = heap[k2], heap[k2 + 1], heap[k3], heap[k3 + 1]
            one = _before(t1, e1, t0, e0)
            ja, ta, ea = (first + 1 if one else first), (t1 if one else t0), (e1 if one else e0)
            three = _before(t3, e3, t2, e2)
            jb, tb, eb = (first + 3 if three else first + 2), (t3 if three else t2), (e3 if three else e2)
            second = _before(tb, eb, ta, ea)
            best, bt, be = (jb if second else ja), (tb if second else ta), (eb if second else ea)
        elif first < size:
            best = first
            bt, be = heap[3 * first], heap[3 * first + 1]
            for j in range(first + 1, size):
                k = 3 * j
                jt = heap[k]
                if jt < bt or (jt == bt and heap[k + 1] < be):
                    best, bt, be = j, jt, heap[k + 1]
        else:
            break
        if bt < t or (bt == t and be < eid):
            r = 3 * i
            heap[r] = bt
            heap[r + 1] = be
            heap[r + 2] = heap[3 * best + 2]
            i = best
        else:
            break
    r = 3 * i
    heap[r] = t
    heap[r + 1] = eid
    heap[r + 2] = code


@njit(cache=True, inline="always")
def pop(heap: np.ndarray, iv: np.ndarray) -> None:
    """Remove the first event (read it from ``heap[0:3]`` before)."""
    size = iv[I_HEAP] - 1
    iv[I_HEAP] = size
    if size > 0:
        r = 3 * size
        _sift_down(heap, size, heap[r], heap[r + 1], heap[r + 2])


@njit(cache=True, inline="always")
def replace_first(heap: np.ndarray, iv: np.ndarray, t: float, code: int) -> None:
    """`pop`, then `push` (t, code): one pass down the heap instead of two.

    The popped record has the smallest (time, id) of all, so it may stay at the
    root while the caller works (a `push` cannot pass it) until this replaces it.
    """
    eid = float(iv[I_EID])
    iv[I_EID] += 1
    _sift_down(heap, iv[I_HEAP], t, eid, float(code))  # a float, as `pop` passes: one compilation, not two


# -- the policy's uniforms (Uniforms: rng.random(BATCH) blocks, drawn when first needed) --

@compiled_only
def _refill(rng: tuple, ubuf: np.ndarray) -> None:
    next_double, address = rng
    state = _voidptr(address)
    for i in range(BATCH):
        ubuf[i] = next_double(state)


@njit(cache=True, inline="always")
def uniform(rng: tuple, ubuf: np.ndarray, iv: np.ndarray) -> float:
    """The next draw of `Uniforms`; ``rng`` is the policy generator's (next_double, state address).

    ``rng.random(BATCH)`` is ``next_double(state)`` BATCH times: the same bits, drawn
    through the bit generator's C interface, as numpy's own `Generator.random` does.
    """
    pos = iv[I_UPOS]
    if pos == BATCH:
        _refill(rng, ubuf)
        pos = 0
    iv[I_UPOS] = pos + 1
    return ubuf[pos]


@njit(cache=True)
def sample(rng: tuple, ubuf: np.ndarray, iv: np.ndarray, n: int, k: int,
           replace: bool, out: np.ndarray, pool: np.ndarray) -> None:
    """``Uniforms.sample(n, k, replace)`` into ``out[:k]``; ``pool`` (at least n long when 4k > n) is scratch."""
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
    for j in range(n):  # the first k places of a Fisher-Yates shuffle of range(n)
        pool[j] = j
    for j in range(k):
        i = j + int(uniform(rng, ubuf, iv) * (n - j))
        x = pool[i]
        pool[i] = pool[j]
        pool[j] = x
        out[j] = x


@compiled_only
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


# -- IdList: the dispatchers' lists, in memory proportional to the ids they hold ------------
# List d holds count[d] server ids in lists[lstart[d]:lstart[d] + count[d]], a block of
# lcap[d] slots of one pool; a full block moves to the pool's end with twice the room
# (the old one is left as garbage until the engine compacts the pool). Before any step
# that may add an id, the kernel checks `list_room` and otherwise returns NEED_LISTS, so
# the engine compacts or grows the arrays at a point where the kernel can go on.
# JIQ keeps an id at most once per list (IdList.add), and one server can be in several
# lists: its chain of nodes (chain[sid], then node_next) names them (node_d). JBT-d, and
# JIQ with one dispatcher, need no chain: a server is in at most one list, exactly while
# its `listed` flag is set.
# Positions are never read (IdList's ``where`` answers membership only), so none are kept.


@njit(cache=True, inline="always")
def list_room(iv: np.ndarray, lists: np.ndarray) -> bool:
    """Whether one more id fits, whichever list it joins: room for that list's block to move, and a node."""
    return len(lists) - iv[I_POOL_END] >= max(4, 2 * iv[I_MAXCAP]) and iv[I_NODE_FREE] >= 0


@compiled_only  # rare (a block fills up): not inlined
def _move_list(lists: np.ndarray, lstart: np.ndarray, lcap: np.ndarray, iv: np.ndarray, d: int, c: int) -> None:
    room = max(4, 2 * lcap[d])
    to = iv[I_POOL_END]
    at = lstart[d]
    for j in range(c):
        lists[to + j] = lists[at + j]
    lstart[d] = to
    lcap[d] = room
    iv[I_POOL_END] = to + room
    if room > iv[I_MAXCAP]:
        iv[I_MAXCAP] = room


@njit(cache=True, inline="always")
def id_add(lists: np.ndarray, lstart: np.ndarray, lcap: np.ndarray, count: np.ndarray, chain: np.ndarray,
           node_d: np.ndarray, node_next: np.ndarray, iv: np.ndarray, chained: bool, d: int, sid: int) -> None:
    """`IdList.add` on list ``d``; ``chained`` (JIQ) keeps the id once, else the caller knows it is not listed."""
    if chained:
        node = chain[sid]
        while node >= 0:
            if node_d[node] == d:
                return
            node = node_next[node]
        node = iv[I_NODE_FREE]
        iv[I_NODE_FREE] = node_next[node]
        node_d[node] = d
        node_next[node] = chain[sid]
        chain[sid] = node
    c = count[d]
    if c == lcap[d]:
        _move_list(lists, lstart, lcap, iv, d, c)
    lists[lstart[d] + c] = sid
    count[d] = c + 1


@njit(cache=True, inline="always")
def id_take(lists: np.ndarray, lstart: np.ndarray, count: np.ndarray, chain: np.ndarray, node_d: np.ndarray,
            node_next: np.ndarray, iv: np.ndarray, chained: bool, d: int, i: int) -> int:
    """`IdList.take`: remove and return the id at position ``i`` of list ``d`` (the last one takes its place)."""
    base = lstart[d]
    sid = lists[base + i]
    last = count[d] - 1
    lists[base + i] = lists[base + last]
    count[d] = last
    if chained:  # unlink d from the server's chain, and free its node
        node = chain[sid]
        before = -1
        while node_d[node] != d:
            before = node
            node = node_next[node]
        if before < 0:
            chain[sid] = node_next[node]
        else:
            node_next[before] = node_next[node]
        node_next[node] = iv[I_NODE_FREE]
        iv[I_NODE_FREE] = node
    return sid


@njit(cache=True, inline="always")
def id_clear(count: np.ndarray, d: int) -> None:
    """`IdList.clear` for JBT-d's reset, where a server is in one list at most (no chains)."""
    count[d] = 0


@compiled_only  # once per update and dispatcher: not inlined
def id_clear_chained(lists: np.ndarray, lstart: np.ndarray, count: np.ndarray, chain: np.ndarray,
                     node_d: np.ndarray, node_next: np.ndarray, iv: np.ndarray, d: int) -> None:
    """`IdList.clear` where servers keep chains (JBT-d's reset with latency): each id unlinked from d."""
    base = lstart[d]
    for i in range(count[d]):
        sid = lists[base + i]
        node = chain[sid]
        before = -1
        while node_d[node] != d:
            before = node
            node = node_next[node]
        if before < 0:
            chain[sid] = node_next[node]
        else:
            node_next[before] = node_next[node]
        node_next[node] = iv[I_NODE_FREE]
        iv[I_NODE_FREE] = node
    count[d] = 0
