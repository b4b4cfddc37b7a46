"""Named random streams: one root seed, no global random state.

Each replication has one integer seed. From it, every consumer of randomness
(arrival times, job sizes, the dispatcher each job goes to, policy choices,
message latencies) gets its own `numpy.random.Generator`, keyed by name. The
arrival and size streams therefore do not depend on the policy: with the same
seed every policy faces exactly the same jobs (common random numbers).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from itertools import chain

import numpy as np

BATCH = 4096
"""Draws per block of every stream: the SimPy engine draws one block at a time, the compiled engine several."""

Blocks = Callable[[int], np.ndarray]
"""A stream's blocks: ``draw(k)`` returns its next ``k`` blocks of `BATCH` draws as one array.

Both engines read a stream through its `Blocks`, the SimPy engine one block at a time
(`values`), the compiled engine several (`emulator.compiled.blocks`): the same floats in
the same order, since a stream is consumed in order and by nothing else. A finite stream
(a trace) returns fewer values once it runs out, then empty arrays; a batch-Poisson block
holds more (`emulator.workload.arrivals.gap_blocks`).
"""


def values(draw: Blocks) -> Iterator[float]:
    """A stream's draws one by one, a block drawn when the previous one is used up; it ends where the stream does.

    A C-level iterator: its ``next`` runs no Python code except to draw a block, where a
    generator would resume a Python frame per value.
    """
    return chain.from_iterable(iter(lambda: draw(1).tolist(), []))


def uniform_blocks(rng: np.random.Generator) -> Blocks:
    """U(0,1) draws. One call for ``k`` blocks: ``rng.random`` takes its draws one after the other."""
    return lambda k: rng.random(k * BATCH)


def replication_seed(root: int, replication: int) -> int:
    """The seed of one replication, derived from the scenario's root seed.

    It is the seed to pass to `emulator.simulate` to reproduce that replication.
    It does not depend on the sweep point or the policy, so all of them share the
    same job streams (common random numbers).
    """
    sequence = np.random.SeedSequence(entropy=root, spawn_key=(replication,))
    return int(sequence.generate_state(1, np.uint64)[0] >> np.uint64(1))


def generator(seed: int, name: str) -> np.random.Generator:
    """The generator of stream ``name`` in the replication with ``seed``."""
    key = zlib.crc32(name.encode())
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(key,))))


class Uniforms:
    """Batched U(0,1) draws: the cheap way to make many scalar choices in Python.

    >>> u = Uniforms(np.random.default_rng(1))
    >>> 0 <= u.randrange(10) < 10
    True
    """

    __slots__ = ("draws", "random")

    draws: Iterator[float]  # the U(0,1) draws, for `next` (a call Python 3.11 specialises)
    random: Callable[[], float]  # the next U(0,1) draw

    def __init__(self, rng: np.random.Generator) -> None:
        self.draws = values(uniform_blocks(rng))
        # `random` is that iterator's own __next__, so a policy's hot path calls C directly; `next`
        # of ``draws`` is the same draw, about 7 ns cheaper (a bound `__next__` is a method-wrapper,
        # whose call Python 3.11 does not specialise).
        self.random = self.draws.__next__

    def randrange(self, n: int) -> int:
        """A uniform integer in ``[0, n)``."""
        return int(next(self.draws) * n)

    def sample(self, n: int, k: int, replace: bool = False) -> list[int]:
        """``k`` integers from ``[0, n)``, distinct unless ``replace``, made of `random`'s draws alone.

        With replacement one draw each; two draws for k = 2; redraws of repeats where 4k <= n;
        otherwise the first k places of a Fisher-Yates shuffle of ``range(n)``. The compiled
        engine's `emulator.compiled.core.sample` draws the same. Raises `ValueError` for k > n
        distinct values.
        """
        it = self.draws
        if replace:
            return [int(next(it) * n) for _ in range(k)]
        if k == 2:
            a = int(next(it) * n)
            # Second pick among the other n - 1 values, shifted past the first.
            b = int(next(it) * (n - 1))
            return [a, b + 1 if b >= a else b]
        if 4 * k <= n:
            chosen: list[int] = []
            seen: set[int] = set()
            while len(chosen) < k:
                x = int(next(it) * n)
                if x not in seen:
                    seen.add(x)
                    chosen.append(x)
            return chosen
        # Otherwise rejection would redraw often: the first k places of a Fisher-Yates shuffle of
        # range(n), one draw each (n < 4k, so the list costs what the sample does).
        if k > n:
            raise ValueError(f"a sample of {k} distinct values from {n}: expected at most {n}")
        pool = list(range(n))
        for j in range(k):
            i = j + int(next(it) * (n - j))
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:k]
