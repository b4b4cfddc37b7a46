"""The driver's growing arrays (job slots, the occupancy observer's), and the run's measurements rebuilt from them."""

from __future__ import annotations

import numpy as np

from ..measure.occupancy import theory_mean
from ..measure.result import OccupancyResult, RunResult
from ..measure.series import Series
from ..measure.sketch import QuantileSketch
from ..scenario.sweep import Point
from . import state as S


def fold(sketch: QuantileSketch, responses: np.ndarray, n: int, series: Series | None = None) -> None:
    """Bin ``responses[:n]``, the batch the SimPy engine's sketch would flush at this point.

    With ``series``, also add them to it by their jobs' arrival numbers (stored from
    ``FLUSH`` on), in the order the SimPy recorder adds them: its sums come out the same.
    """
    if n:
        sketch.fold(responses[:n].copy())
        if series is not None:
            flush = QuantileSketch.FLUSH
            series.add_many(responses[flush:flush + n].astype(np.int64), responses[:n])


def measurements(point: Point, iv: np.ndarray, fv: np.ndarray, window: np.ndarray,
            sketch: QuantileSketch) -> RunResult:
    """The run's measurements from the kernel's sums and window snapshots."""
    # Each snapshot holds the counts sent, then those lost, by kind: the recorder's window.
    snapshots = [(float(fv[S.F_T0]), float(fv[S.F_A0]), window[0].tolist()),
                 (float(fv[S.F_T1]), float(fv[S.F_A1]), window[1].tolist())]
    run = point.scenario.run
    return RunResult(point.scenario.system.servers, run.fixed_warmup, run.jobs, snapshots,
                     finished=int(iv[S.I_FINISHED]), blocked=int(iv[S.I_BLOCKED]), lost_jobs=int(iv[S.I_LOST_JOBS]),
                     waited=int(iv[S.I_WAITED]), sum_response=float(fv[S.F_SUM_RESPONSE]),
                     sum_wait=float(fv[S.F_SUM_WAIT]), responses=sketch)


class Jobs:
    """Job slots (41 bytes each, 33 without latency): arrival, arrival at the server, size, start of
    service, measured, ``next`` (the FIFO link, the free list, or a pool task's server) and its dispatcher.

    Without latency a job reaches its server at its arrival, so one array holds both times
    (the kernel writes the same value twice). They grow by a quarter when full, so that
    memory stays near the jobs in the system.
    """

    def __init__(self, capacity: int, iv: np.ndarray, latent: bool = True) -> None:
        self.arrival = np.zeros(capacity)
        self.at = np.zeros(capacity) if latent else self.arrival
        self.size = np.zeros(capacity)
        self.start = np.zeros(capacity)
        self.measured = np.zeros(capacity, dtype=np.int64)  # arrival number + 1, 0 if not measured
        self.next = np.append(np.arange(1, capacity, dtype=np.int32), np.int32(-1))
        self.dispatcher = np.zeros(capacity, dtype=np.int32)
        iv[S.I_FREE] = 0

    def record(self) -> S.Jobs:
        """The arrays as the kernels take them."""
        return S.Jobs(self.arrival, self.at, self.size, self.start, self.next, self.measured, self.dispatcher)

    def grow(self, iv: np.ndarray) -> None:
        old = len(self.arrival)
        new = old + old // 4 + 64
        shared = self.at is self.arrival
        self.arrival, self.size, self.start, self.measured, self.dispatcher = (
            np.concatenate([a, np.zeros(new - old, a.dtype)])
            for a in (self.arrival, self.size, self.start, self.measured, self.dispatcher))
        self.at = self.arrival if shared else np.concatenate([self.at, np.zeros(new - old)])
        # The new slots go first, then what the list holds (the event kernel grows it only when empty).
        self.next = np.concatenate([self.next, np.arange(old + 1, new, dtype=np.int32),
                                    [np.int32(iv[S.I_FREE])]])
        iv[S.I_FREE] = old


class OccupancyArrays:
    """The compiled occupancy observer's arrays (`occupancy`), doubled when they may be outgrown."""

    def __init__(self, servers: int, iv: np.ndarray, capacity: int = 64) -> None:
        from .occupancy import AREA_AT_EDGE, TOTAL_AT_EDGE

        self.count = np.zeros(capacity, dtype=np.int64)
        self.count[0] = servers  # every server starts empty
        self.lengths = np.zeros((AREA_AT_EDGE + 2, capacity))
        self.totals = np.zeros((TOTAL_AT_EDGE + 2, capacity))
        iv[S.I_OCC_LENGTHS] = iv[S.I_OCC_TOTALS] = 1

    def record(self) -> S.Observer:
        """The arrays as the kernels take them."""
        return S.Observer(self.count, self.lengths, self.totals)

    def grow(self) -> None:
        self.count = np.concatenate([self.count, np.zeros_like(self.count)])
        self.lengths = np.concatenate([self.lengths, np.zeros_like(self.lengths)], axis=1)
        self.totals = np.concatenate([self.totals, np.zeros_like(self.totals)], axis=1)

    def result(self, point: Point, iv: np.ndarray, fv: np.ndarray) -> OccupancyResult:
        """The window's snapshots, as the SimPy engine's observer takes them (`Occupancy.edge`)."""
        from .occupancy import AREA_AT_EDGE, TOTAL_AT_EDGE

        times = (fv[S.F_T0], fv[S.F_T1])
        window = []
        for edge in range(int(iv[S.I_EDGES])):
            held = int(iv[S.I_OCC_EDGE_LENGTHS + 2 * edge])
            totals = int(iv[S.I_OCC_EDGE_LENGTHS + 2 * edge + 1])
            window.append((float(times[edge]), self.lengths[AREA_AT_EDGE + edge, :held].tolist(),
                           self.totals[TOTAL_AT_EDGE + edge, :totals].tolist(), float(fv[S.F_SPREAD0 + edge])))
        return OccupancyResult(point.scenario.system.servers, 1.0 - point.load, theory_mean(point.scenario), window)


# -- the streams, in the SimPy engine's blocks --------------------------------------------

