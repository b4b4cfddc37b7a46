"""Response times of consecutive arrivals, summed in batches: what MSER-5 and batch means read.

A job's batch follows from its arrival number, not from when it leaves, so the
batches are those of the responses in arrival order although jobs leave out of
that order. Memory grows with the batches, not with a parameter.
"""

from __future__ import annotations

import numpy as np


class Series:
    """Sums and counts of the served, measured jobs' responses, by batch of arrivals.

    Job ``id`` (its arrival number, from 0) falls in batch ``(id - first) * num // den``:
    `blocks` are batches of a fixed number of jobs, `batches` split a window of jobs
    into a given number of nearly equal batches. A blocked or lost job counts in no batch.

    >>> s = Series.blocks(jobs=12, width=5)
    >>> for job in range(12):
    ...     s.add(job, 1.0 + job)
    >>> s.sums.tolist(), s.counts.tolist()
    ([15.0, 40.0, 23.0], [5, 5, 2])
    """

    def __init__(self, first: int, jobs: int, num: int, den: int) -> None:
        self.first, self.num, self.den = first, num, den
        size = -(-jobs * num // den)  # ceil: a last, partial batch
        self.sums = np.zeros(size)
        self.counts = np.zeros(size, dtype=np.int64)

    @classmethod
    def blocks(cls, jobs: int, width: int) -> Series:
        """Batches of ``width`` consecutive arrivals of jobs 0 .. ``jobs`` - 1."""
        return cls(0, jobs, 1, width)

    @classmethod
    def batches(cls, first: int, jobs: int, count: int) -> Series:
        """``count`` batches of jobs ``first`` .. ``first + jobs - 1`` (sizes differing by at most one)."""
        return cls(first, jobs, count, jobs)

    def add(self, job: int, response: float) -> None:
        index = (job - self.first) * self.num // self.den
        self.sums[index] += response
        self.counts[index] += 1

    def add_many(self, jobs: np.ndarray, responses: np.ndarray) -> None:
        """`add` for each pair in order (`np.add.at` adds one by one: the same sums as `add`)."""
        index = (jobs - self.first) * self.num // self.den
        np.add.at(self.sums, index, responses)
        np.add.at(self.counts, index, 1)

    def means(self) -> np.ndarray:
        """The mean response of each batch with a served job, in arrival order."""
        kept = self.counts > 0
        return self.sums[kept] / self.counts[kept]
