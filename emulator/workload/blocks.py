"""A replication's job streams, defined once for both engines: which named stream, which draws, which blocks.

The arrival gaps, the job sizes and the split of jobs among dispatchers, each a
`emulator.workload.streams.Blocks` of its own named generator (and, in slotted time,
the arrivals per slot, from the arrival gaps' stream). The SimPy engine reads
them value by value (`emulator.workload.streams.values`), the compiled engine several
blocks at a time (`emulator.compiled.blocks`): the same floats, in the same order.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..scenario.schema import ArrivalsConfig, WorkloadConfig
from .arrivals import finite, gap_blocks, read_trace
from .slots import arrival_counts
from .streams import Blocks, generator, uniform_blocks


def arrival_gaps(arrival: ArrivalsConfig, rate: float, seed: int) -> Blocks:
    """The gaps between arrivals at ``rate``: stream ``arrivals``."""
    return gap_blocks(arrival.kind, rate, generator(seed, "arrivals"), **arrival.gap_options())


def job_sizes(workload: WorkloadConfig, seed: int) -> Blocks:
    """The jobs' sizes: a trace's own, if it has a ``size`` column, else the service law's draws, stream ``sizes``."""
    if workload.arrivals.kind == "trace":
        sizes = read_trace(workload.arrivals.path)[1]  # type: ignore[arg-type]
        if sizes is not None:
            return finite(sizes)
    return workload.service.law().blocks(generator(seed, "sizes"))


def dispatcher_split(seed: int) -> Blocks:
    """The uniforms that send each job to a dispatcher (with more than one): stream ``dispatchers``."""
    return uniform_blocks(generator(seed, "dispatchers"))


def slot_arrivals(arrival: ArrivalsConfig, rate: float, seed: int) -> Iterator[int]:
    """Slotted time: the arrivals in each slot (`emulator.workload.slots.arrival_counts`), stream ``arrivals``."""
    return arrival_counts(arrival.kind, rate, generator(seed, "arrivals"), **arrival.gap_options())
