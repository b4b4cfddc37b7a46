"""The policies' arrays in the compiled engine: what a policy's description asks for, and its toolkit.

A compiled policy (a module under `emulator.compiled.policies`) describes what
it needs with `Description`; the engine allocates the toolkit from it and hands
the kernel a `Tools` tuple of arrays, which every hook of every policy receives.
The parts of the toolkit:

- the length index (JSQ's `LengthIndex`): ``buckets``, ``bucket_size``, ``position``,
  with the kernel's ``I_LEVELS`` and ``I_LOW``; it grows by levels (NEED_LEVELS). Or
  one index per dispatcher (`Description.per_dispatcher`, `policies.jsq.index_set_in`): level
  ``l`` of index ``k`` is row ``l D + k``, its positions ``position[k N:(k + 1) N]``,
  its lowest non-empty level ``position[D N + k]``; ``I_LEVELS`` is the most levels
  any of them uses, and they grow together;
- the dispatchers' lists (`IdList`, see `core.id_add`): ``lists``, ``lstart``,
  ``lcap``, ``count`` and, where a server can be in several, the chains ``chain``,
  ``node_d``, ``node_next``; they are compacted or grown on NEED_LISTS;
- per server: ``threshold`` (int64) and ``listed`` (int8) flags; per dispatcher:
  ``rr`` (int64); ``weights`` (the servers' speeds, or one entry when all are equal);
- scratch for sampling k servers: ``pool`` (4k ids: `core.sample` shuffles up to that many), ``picked``,
  ``values``;
- ``ints``: rows of int64 per server, for a policy's own state (rows asked by
  `Description.int_rows`); ``floats``: rows of float64 per server (`Description.float_rows`);
- ``size``: the kernel's job sizes by job slot (``iv[I_CURRENT]`` is the slot of the job being
  dispatched, and in ``on_arrive`` of the job that reached the server); ``next``: the kernel's links of
  job slots (a whole batch's held jobs are chained by them, `kernel`'s source state 4);
- with latency (`network`): ``latency`` (the latencies to draw, in order), ``msg``
  (the records of messages in flight), ``asks`` with their ``targets`` and
  ``replies`` (rows of `Description.ask_width`) and ``due`` (when the last reply
  arrives); and the kernel's own ``fv`` and ``heap``, so that a hook can schedule
  a message's delivery; ``loss``, the uniforms of the ``loss`` stream, and ``expiry``, when each
  ask's timeout falls (`faults`);
- ``binding``: late binding's reservations and tickets (`binding`), grown on NEED_RESERVATIONS;
- ``failing``: the failing servers' rows (`failing.Failing.sv`: whether each is up), or one row, up, without
  failures (`policies.common.server_up`).

An array a policy does not use has one element, so the tuple's types never change.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from . import binding
from . import state as S

Tools = namedtuple("Tools", [
    "rr", "buckets", "bucket_size", "position", "threshold", "listed",
    "lists", "lstart", "lcap", "count", "chain", "node_d", "node_next",
    "weights", "pool", "picked", "values", "ints",
    "latency", "msg", "asks", "targets", "replies", "due", "fv", "heap", "loss", "expiry",
    "binding", "floats", "size",
    "next", "failing",
])
"""The arrays every compiled hook receives (see the module docstring)."""


@dataclass
class Description:
    """What one compiled policy, at one sweep point, asks of the engine and the kernel.

    ``ints`` and ``floats`` are its parameters, read by its hooks as
    ``P[P_PARAMS + i]`` and ``Q[Q_PARAMS + i]``.
    """

    ints: list[int] = field(default_factory=list)
    floats: list[float] = field(default_factory=list)
    period: float = 0.0  # > 0: the timer hook runs every period, from t = period on
    index: bool = False  # the length index
    per_dispatcher: bool = False  # with the index: one per dispatcher (as SimPy's LSQ keeps them), not one
    lists: bool = False  # the dispatchers' lists ...
    chained: bool = False  # ... where a server can be in several (JIQ with several dispatchers)
    lists_at_arrival: bool = False  # an arrival may add an id (room first)
    lists_at_departure: bool = False
    listed: bool = False  # a flag per server
    threshold: int | None = None  # a threshold per server, starting here
    rr: bool = False  # a position per dispatcher, starting at k N / D (round robin)
    sample: int = 2  # the largest sample of servers or dispatchers a hook draws
    int_rows: int = 0  # rows of `Tools.ints`, N wide ...
    int_width: int = 0  # ... or this wide where N is less: a policy's own state kept in a row (batch SQ(d)'s)
    float_rows: int = 0  # rows of `Tools.floats`
    ask_width: int = 1  # with latency: the most targets one ask has (N for JSQ, d for SQ(d))
    asks_per_step: int = 1  # with latency: the most asks one step opens (LSQ: d per job)
    messages_per_step: int = 0  # with latency: the most messages one step sends beyond N + D (JSQ-sparse: N D)
    reservations: bool = False  # late binding's reservation pool (`binding`)
    whole: int = 0  # d > 0: it places whole batches, d samples per job (`Policy.whole_batches`; `kernel`)
    answers_blocked: bool = False  # its arrival hook answers a blocked job: kept at a down server (`recovery.keep`)


def pack(description: Description, P: np.ndarray, Q: np.ndarray) -> None:
    """Write what the driver reads of a description into the kernel's parameters."""
    if len(description.ints) > S.P_NPARAMS or len(description.floats) > S.Q_NPARAMS:
        raise ValueError("a compiled policy has more parameters than the kernel holds")
    P[S.P_PARAMS:S.P_PARAMS + len(description.ints)] = description.ints
    Q[S.Q_PARAMS:S.Q_PARAMS + len(description.floats)] = description.floats
    Q[S.Q_PERIOD] = description.period
    P[S.P_TIMER] = description.period > 0
    P[S.P_INDEX] = description.index
    P[S.P_LISTS_AT_ARRIVAL] = description.lists_at_arrival
    P[S.P_LISTS_AT_DEPARTURE] = description.lists_at_departure
    P[S.P_LISTS] = description.lists
    P[S.P_WHOLE] = description.whole


class Toolkit:
    """The arrays of `Tools` for one replication, and their growth between kernel calls."""

    def __init__(self, description: Description, servers: int, dispatchers: int, speeds: np.ndarray,
                 iv: np.ndarray) -> None:
        n = servers
        self.rr = np.array([k * n // dispatchers for k in range(dispatchers)] if description.rr else [0],
                           dtype=np.int64)
        levels = 4 if description.index else 1
        each = description.index and description.per_dispatcher
        self.indexes = k = dispatchers if each else 1
        self.buckets = np.zeros((levels * k, n if description.index else 1), dtype=np.int64)
        self.bucket_size = np.zeros(levels * k, dtype=np.int64)
        self.position = np.zeros((n + 1) * k if each else n if description.index else 1, dtype=np.int64)
        if description.index:  # every server at length 0, in each index (level 0 is rows 0 to k - 1)
            self.buckets[:k] = np.arange(n)
            self.bucket_size[:k] = n
            self.position[:n * k] = np.tile(np.arange(n), k)  # (then each index's lowest level: 0)
        iv[S.I_LEVELS], iv[S.I_LEVEL_CAP] = 1, levels
        start = 0 if description.threshold is None else description.threshold
        self.threshold = np.full(n if description.threshold is not None else 1, start, dtype=np.int64)
        self.listed = np.zeros(n if description.listed else 1, dtype=np.int8)
        self._lists_init(n, dispatchers, iv, description.lists, description.chained)
        self.weights = speeds
        k = max(2, description.sample)
        self.pool = np.zeros(4 * k, dtype=np.int64)  # a sample of k of n < 4k shuffles range(n) here
        self.picked = np.zeros(k, dtype=np.int64)
        self.values = np.zeros(k, dtype=np.int64)
        width = max(n, description.int_width) if description.int_rows else 1
        self.ints = np.zeros((max(1, description.int_rows), width), dtype=np.int64)
        self.floats = np.zeros((max(1, description.float_rows), n if description.float_rows else 1))
        # With latency, or faults at zero latency, `open_network` replaces these; otherwise they stay placeholders.
        self.latency = np.zeros(1)
        self.msg = np.zeros((1, 4), dtype=np.int64)
        self.asks = np.zeros((1, S.A_FIELDS), dtype=np.int64)
        self.targets = self.replies = np.zeros((1, 1), dtype=np.int64)
        self.due = np.zeros(1)
        self.loss = np.zeros(1)  # with network.loss, the loss stream's uniforms (`refill_loss`)
        self.expiry = np.zeros(1)
        iv[S.I_NLOSS] = 1 << 62  # none to draw (`network.room`)
        self.binding = binding.pool(2 * n + 64 if description.reservations else 0)
        self.failing = np.full((1, 4), 1, dtype=np.int64)  # every server up (`failing.UP`): the engine's rows if any

    def tools(self) -> Tools:
        """The arrays as the kernel takes them, as they are now (growth replaces some)."""
        return Tools(self.rr, self.buckets, self.bucket_size, self.position, self.threshold, self.listed,
                     self.lists, self.lstart, self.lcap, self.count, self.chain, self.node_d, self.node_next,
                     self.weights, self.pool, self.picked, self.values, self.ints,
                     self.latency, self.msg, self.asks, self.targets, self.replies, self.due,
                     self.latency, self.latency,  # fv and heap: the kernel's own (`core.view`)
                     self.loss, self.expiry, self.binding, self.floats,
                     self.latency, self.latency,  # size and next: the kernel's own (`core.view`)
                     self.failing)

    # -- message latency (`network`) -----------------------------------------------------------
    def open_network(self, description: Description, P: np.ndarray, iv: np.ndarray) -> None:
        """The message and ask records, each pool with twice the room one step may use, all free."""
        self.msg = _linked(np.zeros((2 * int(P[S.P_ROOM]) + 64, 4), dtype=np.int64), 1, 0, iv, S.I_MSG_FREE)
        iv[S.I_MSG_CAP], iv[S.I_MSGS] = len(self.msg), 0
        asks = 2 * int(P[S.P_ASK_ROOM]) + 16
        self.asks = _linked(np.zeros((asks, S.A_FIELDS), dtype=np.int64), S.A_NEXT, 0, iv, S.I_ASK_FREE)
        self.targets = np.zeros((asks, description.ask_width), dtype=np.int64)
        self.replies = np.zeros((asks, description.ask_width), dtype=np.int64)
        self.due = np.zeros(asks)
        self.expiry = np.zeros(asks)
        iv[S.I_ASK_CAP], iv[S.I_ASKS] = asks, 0

    def refill_latency(self, iv: np.ndarray, blocks: Iterator[np.ndarray], room: int) -> None:
        """At least ``room`` latencies ahead (NEED_NETWORK): the unread ones, then the next blocks."""
        at, held = int(iv[S.I_LAT]), int(iv[S.I_NLAT])
        if held - at >= room:
            return
        parts = [self.latency[at:held]]
        total = held - at
        while total < room:  # (concatenate copies each block before the next one is drawn into it)
            parts.append(next(blocks))
            total += len(parts[-1])
        self.latency = np.concatenate(parts)
        iv[S.I_LAT], iv[S.I_NLAT] = 0, len(self.latency)

    def refill_loss(self, iv: np.ndarray, blocks: Iterator[np.ndarray], room: int) -> None:
        """At least ``room`` loss uniforms ahead (NEED_NETWORK): the unread ones, then the next blocks."""
        at, held = int(iv[S.I_LOSS]), int(iv[S.I_NLOSS])
        if held - at >= room:
            return
        parts = [self.loss[at:held]]
        total = held - at
        while total < room:
            parts.append(next(blocks))
            total += len(parts[-1])
        self.loss = np.concatenate(parts)
        iv[S.I_LOSS], iv[S.I_NLOSS] = 0, len(self.loss)

    def grow_network(self, P: np.ndarray, iv: np.ndarray) -> None:
        """Twice the message or ask records when one step might not find room (NEED_NETWORK)."""
        if iv[S.I_MSG_CAP] - iv[S.I_MSGS] < P[S.P_ROOM]:
            old = len(self.msg)
            self.msg = _linked(np.concatenate([self.msg, np.zeros_like(self.msg)]), 1, old, iv, S.I_MSG_FREE)
            iv[S.I_MSG_CAP] = len(self.msg)
        if iv[S.I_ASK_CAP] - iv[S.I_ASKS] < P[S.P_ASK_ROOM]:
            old = len(self.asks)
            self.asks = _linked(np.concatenate([self.asks, np.zeros_like(self.asks)]), S.A_NEXT, old, iv,
                                S.I_ASK_FREE)
            self.targets = np.concatenate([self.targets, np.zeros_like(self.targets)])
            self.replies = np.concatenate([self.replies, np.zeros_like(self.replies)])
            self.due = np.concatenate([self.due, np.zeros_like(self.due)])
            self.expiry = np.concatenate([self.expiry, np.zeros_like(self.expiry)])
            iv[S.I_ASK_CAP] = len(self.asks)

    def grow_reservations(self) -> None:
        """Twice the reservation records (NEED_RESERVATIONS)."""
        self.binding = binding.grown(self.binding)

    # -- the length index ------------------------------------------------------------------
    def grow_levels(self, iv: np.ndarray) -> None:
        """Twice the levels (NEED_LEVELS), of every index: level ``l`` of index ``k`` stays row ``l D + k``."""
        self.buckets = np.concatenate([self.buckets, np.zeros_like(self.buckets)])
        self.bucket_size = np.concatenate([self.bucket_size, np.zeros_like(self.bucket_size)])
        iv[S.I_LEVEL_CAP] = len(self.bucket_size) // self.indexes

    # -- the dispatchers' lists ---------------------------------------------------------------
    def _lists_init(self, servers: int, dispatchers: int, iv: np.ndarray, used: bool, chained: bool) -> None:
        """The lists in memory proportional to the ids they hold (`core.id_add`).

        SimPy keeps one `IdList` per dispatcher, as long as its contents; a dense array of
        dispatchers x N slots would ask for 75 GiB at N = 10^6 and 10,000 dispatchers. Here
        each list is a block of one pool (``lists``, from ``lstart`` with ``lcap`` slots),
        membership across lists a chain of nodes per server (``chain``, ``node_d``,
        ``node_next``, with a free list). When the kernel may run out of room it returns
        NEED_LISTS and `grow_lists` compacts the pool or adds nodes.
        """
        self.count = np.zeros(dispatchers, dtype=np.int64)
        self.lstart = np.zeros(dispatchers, dtype=np.int64)
        self.lcap = np.zeros(dispatchers, dtype=np.int64)  # every list starts with no block: its first id moves it
        self.lists = np.zeros(2 * servers + 64 if used else 1, dtype=np.int64)  # the first tokens or reports fit
        self.chain = np.full(servers if chained else 1, -1, dtype=np.int64)
        nodes = servers + 64 if chained else 1
        self.node_d = np.zeros(nodes, dtype=np.int64)
        self.node_next = np.append(np.arange(1, nodes, dtype=np.int64), np.int64(-1))
        iv[S.I_POOL_END] = iv[S.I_MAXCAP] = iv[S.I_NODE_FREE] = 0  # (unchained: one node that is never taken)
        iv[S.I_INIT] = iv[S.I_UPDATING] = -1

    def grow_lists(self, iv: np.ndarray) -> None:
        """Room for one more id (NEED_LISTS): nodes as many again, or the pool compacted, at least half free.

        Each block is shrunk to at most twice its ids (and 4) into a pool as large as
        before, or twice what it holds.
        """
        if iv[S.I_NODE_FREE] < 0:  # no free node: as many again
            old = len(self.node_d)
            self.node_d = np.concatenate([self.node_d, np.zeros(old, dtype=np.int64)])
            self.node_next = np.concatenate([self.node_next, np.arange(old + 1, 2 * old, dtype=np.int64),
                                             [np.int64(-1)]])
            iv[S.I_NODE_FREE] = old
        need = max(4, 2 * int(iv[S.I_MAXCAP]))  # `core.list_room`: one list's block moves to the end
        if len(self.lists) - int(iv[S.I_POOL_END]) >= need:
            return
        count = self.count
        # Shrunk, never grown: the largest block is no larger, so the kernel needs no more room than now.
        # A list keeps its smallest block (4 ids) once it had one: lists emptied by a reset fill again.
        cap = np.minimum(self.lcap, np.maximum(4, 2 * count))
        start = np.cumsum(cap) - cap
        used = int(cap.sum())
        offset = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
        # At least half of it free: the next compaction waits for as many slots of moved blocks.
        pool = np.zeros(max(2 * (used + need), len(self.lists)), dtype=np.int64)
        pool[np.repeat(start, count) + offset] = self.lists[np.repeat(self.lstart, count) + offset]
        self.lists, self.lstart, self.lcap = pool, start, cap
        iv[S.I_POOL_END] = used
        iv[S.I_MAXCAP] = int(cap.max())


def _linked(records: np.ndarray, column: int, first: int, iv: np.ndarray, head: int) -> np.ndarray:
    """``records[first:]`` put on the free list whose head is ``iv[head]``, linked through ``column``."""
    n = len(records)
    records[first:n - 1, column] = np.arange(first + 1, n)
    records[n - 1, column] = iv[head] if first > 0 else -1
    iv[head] = first
    return records
