"""The SimPy engine's random streams, ``CHUNK`` blocks at a time: arrival gaps, job sizes, dispatcher splits, latencies.

Each stream is the one `emulator.workload.blocks` and `emulator.workload.streams` define for
both engines (its named generator, numpy calls and ``BATCH`` blocks); here it is read
``CHUNK`` blocks per refill of the kernel's buffers. Each stream is consumed in order and by
nothing else, so drawing ahead changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..scenario.sweep import Point
from ..workload import blocks
from ..workload.streams import BATCH, Blocks, generator

CHUNK = 16  # BATCH blocks per refill of the gap, size and split buffers


def chunks(draw: Blocks) -> Iterator[np.ndarray]:
    """The stream's draws, ``CHUNK`` blocks per array."""
    while True:
        yield draw(CHUNK)


def uniform_blocks(rng: np.random.Generator) -> Iterator[np.ndarray]:
    """`Uniforms`' draws."""
    return chunks(blocks.uniform_blocks(rng))


def split_blocks(seed: int) -> Iterator[np.ndarray]:
    """The dispatcher split's uniforms (`emulator.workload.blocks.dispatcher_split`)."""
    return chunks(blocks.dispatcher_split(seed))


def size_blocks(point: Point, seed: int) -> Iterator[np.ndarray]:
    """The jobs' sizes (`emulator.workload.blocks.job_sizes`)."""
    return chunks(blocks.job_sizes(point.scenario.workload, seed))


def law_blocks(law: Any, seed: int, stream: str) -> Iterator[np.ndarray]:
    """``law.sampler(generator(seed, stream))``'s draws."""
    return chunks(law.blocks(generator(seed, stream)))


def gap_blocks(point: Point, rate: float, seed: int) -> Iterator[tuple[np.ndarray, bool]]:
    """The arrival gaps at ``rate`` (`emulator.workload.blocks.arrival_gaps`), with True once a finite stream's
    last block is out (a block shorter than asked for)."""
    for block in chunks(blocks.arrival_gaps(point.scenario.workload.arrivals, rate, seed)):
        yield block, len(block) < BATCH * CHUNK
