"""The random streams in the SimPy engine's blocks: arrival gaps, job sizes, dispatcher splits, latencies.

Each is drawn with the same numpy calls, in the same ``BATCH`` blocks, as the SimPy engine draws it,
``CHUNK`` blocks at a time; each stream is consumed in order and by nothing else, so drawing ahead
changes nothing.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..scenario.sweep import Point
from ..workload import arrivals
from ..workload.streams import BATCH, generator

CHUNK = 16  # BATCH blocks per refill of the gap, size and split buffers

# What the kernel was written against. Anything else in a scenario (a new key, a new
# metric column, a new policy option) is something it may not reproduce: SimPy runs it.

def uniform_blocks(rng: np.random.Generator) -> Iterator[np.ndarray]:
    """`Uniforms`' draws: rng.random(BATCH) blocks."""
    while True:
        yield np.concatenate([rng.random(BATCH) for _ in range(CHUNK)])


def exponential_blocks(rng: np.random.Generator, mean: float) -> Iterator[np.ndarray]:
    """``rng.exponential(mean, BATCH)`` blocks, CHUNK at a time, in one buffer refilled in place.

    Exponential draws are taken one by one from the stream, and numpy's
    ``exponential(mean)`` is ``mean * standard_exponential()``: the same floats as
    the SimPy engine's blocks, without an allocation and a copy per refill. The
    kernel has read the whole buffer before it asks for the next one.
    """
    block = np.empty(BATCH * CHUNK)
    while True:
        rng.standard_exponential(out=block)
        block *= mean
        yield block


def size_blocks(point: Point, seed: int) -> Iterator[np.ndarray]:
    """`Law.sampler`'s draws (or a trace's sizes), in its BATCH blocks."""
    workload = point.scenario.workload
    if workload.arrivals.kind == "trace":
        trace_sizes = arrivals.read_trace(workload.arrivals.path)[1]  # type: ignore[arg-type]
        if trace_sizes is not None:
            yield np.asarray(trace_sizes, dtype=np.float64)
            return
    yield from law_blocks(workload.service.law(), seed, "sizes")


def law_blocks(law: Any, seed: int, stream: str) -> Iterator[np.ndarray]:
    """``law.sampler(generator(seed, stream))``'s draws, CHUNK of its BATCH blocks at a time."""
    if law.kind == "deterministic":
        block = np.full(BATCH * CHUNK, float(law.mean))
        while True:
            yield block
    rng = generator(seed, stream)
    if law.kind == "exponential":
        yield from exponential_blocks(rng, float(law.mean))
    while True:
        yield np.concatenate([law._draw(rng, BATCH) for _ in range(CHUNK)])


def gap_blocks(point: Point, rate: float, seed: int) -> Iterator[tuple[np.ndarray, bool]]:
    """`arrivals.gaps`' draws at ``rate``, with True once the last (finite) block is out."""
    arrival = point.scenario.workload.arrivals
    rng = generator(seed, "arrivals")
    options = arrival.gap_options()
    if arrival.kind == "poisson":
        for block in exponential_blocks(rng, 1.0 / rate):
            yield block, False
    if arrival.kind == "deterministic":
        block = np.full(BATCH * CHUNK, 1.0 / rate)
        while True:
            yield block, False
    if arrival.kind == "batch_poisson":
        mean_batch = options.get("mean_batch", _default("mean_batch"))
        if options.get("batch", _default("batch")) == "deterministic":
            yield from _fixed_batch_blocks(rng, rate, int(mean_batch))
        p = 1.0 / mean_batch
        while True:
            batch_gaps = rng.exponential(mean_batch / rate, BATCH)
            batch = rng.geometric(p, BATCH)
            out = np.zeros(int(batch.sum()))
            out[np.cumsum(batch) - batch] = batch_gaps  # each batch: its gap, then size - 1 zeros
            yield out, False
    # Any other process: its own iterator, read in chunks.
    stream = arrivals.gaps(arrival.kind, rate, rng, **options)
    while True:
        block = np.fromiter(itertools.islice(stream, BATCH * CHUNK), dtype=np.float64)
        yield block, len(block) < BATCH * CHUNK


def _fixed_batch_blocks(rng: np.random.Generator, rate: float, size: int) -> Iterator[tuple[np.ndarray, bool]]:
    """`arrivals._fixed_batches`' gaps: each exponential batch gap (its BATCH blocks), then size - 1 zeros."""
    for batch_gaps in exponential_blocks(rng, size / rate):
        out = np.zeros(len(batch_gaps) * size)
        out[::size] = batch_gaps
        yield out, False


def _default(name: str) -> Any:
    return inspect.signature(arrivals.gaps).parameters[name].default

