"""Batch-Poisson arrivals with a fixed batch size (``batch: deterministic``)."""

from __future__ import annotations

import itertools

import numpy as np

from emulator.workload import arrivals, slots


def batch_sizes(gaps: list[float]) -> list[int]:
    """The sizes of the batches in a gap sequence: a job with a gap > 0 opens a batch, gap-0 jobs join it."""
    starts = [i for i, gap in enumerate(gaps) if gap > 0.0] + [len(gaps)]
    return [b - a for a, b in itertools.pairwise(starts)]


def test_every_batch_has_exactly_mean_batch_jobs_at_the_job_rate() -> None:
    """Every batch has K jobs; batches come at rate λ/K, so λ stays the job rate (the load's meaning)."""
    rate, k = 2.0, 3
    gaps = list(itertools.islice(arrivals.gaps("batch_poisson", rate, np.random.default_rng(1), mean_batch=k,
                                               batch="deterministic"), 300_000))
    assert set(batch_sizes(gaps)[:-1]) == {k}
    # 100,000 exponential batch gaps: the job rate within 1% (4 standard errors 4/sqrt(1e5) = 1.3%).
    assert abs(len(gaps) / sum(gaps) / rate - 1) < 0.013


def test_slotted_fixed_batches_are_multiples_of_the_size_with_compound_poisson_moments() -> None:
    """Per slot: K times a Poisson(λN/K) count, mean λN and variance K λN."""
    rate, k = 2.0, 3
    counts = np.fromiter(itertools.islice(slots.arrival_counts("batch_poisson", rate, np.random.default_rng(2),
                                                               mean_batch=k, batch="deterministic"), 200_000),
                         dtype=np.int64)
    assert not np.any(counts % k)
    assert abs(counts.mean() - rate) < 4 * np.sqrt(k * rate / len(counts))
    assert abs(counts.var() / (k * rate) - 1) < 0.02


def test_geometric_stays_the_default() -> None:
    """Without ``batch``, batch sizes are geometric: the draws of the same stream with ``batch: geometric``."""
    default = arrivals.gaps("batch_poisson", 2.0, np.random.default_rng(3), mean_batch=3.0)
    geometric = arrivals.gaps("batch_poisson", 2.0, np.random.default_rng(3), mean_batch=3.0, batch="geometric")
    first = list(itertools.islice(default, 5000))
    assert first == list(itertools.islice(geometric, 5000))
    assert len(set(batch_sizes(first))) > 3


def test_the_short_run_that_builds_a_kernel_holds_whole_batches() -> None:
    """The kernels are built before a run on a few jobs (`ahead.short_case`): for batches of 4 that must
    still be a valid scenario (about 10 batches), or a run of batch arrivals fails before it starts."""
    from emulator.compiled.ahead import short_case
    from emulator.scenario.sweep import Scenario

    scenario = Scenario.from_dict({"name": "batches", "policies": [{"name": "sqd", "d": 2}],
                                   "run": {"jobs": 1000, "warmup_jobs": 0},
                                   "workload": {"arrivals": {"kind": "batch_poisson", "mean_batch": 4,
                                                             "batch": "deterministic"}}})
    point = scenario.points()[0]
    short, _ = short_case(point, point.policies[0])
    assert short.scenario.run.jobs >= 40
