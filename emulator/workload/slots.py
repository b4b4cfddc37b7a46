"""What arrives in slotted time: arrivals per slot and the servers' capacities per slot.

Drawn from their own streams, for every slot and server, so that every policy of a
replication faces the same arrivals and the same capacity at the same server and
slot (common random numbers). The slot clock (`emulator.model.slotted`) reads them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from fractions import Fraction

import numpy as np

from .streams import BATCH

ROWS = 1024  # slots of capacities drawn per numpy batch
DENOMINATOR = 1_000_000  # deterministic arrivals per slot: a fraction with at most this denominator


def arrival_counts(kind: str, rate: float, rng: np.random.Generator, *, burstiness: float = 2.0,
                   switch_rate: float = 0.1, mean_batch: float = 2.0, batch: str = "geometric") -> Iterator[int]:
    """Arrivals per slot, an endless iterator, with mean ``rate`` (λN).

    Parameters
    ----------
    kind : str
        ``poisson``: Poisson(rate) per slot. ``batch_poisson``: a Poisson number of
        batches (mean rate/mean_batch) of geometric size (mean ``mean_batch``):
        variance rate (2 mean_batch - 1); with ``batch: deterministic`` every batch has
        mean_batch jobs: variance rate mean_batch. ``mmpp2``: Poisson with mean b rate (high
        state) or rate/b (low); at each boundary the high state is left with
        probability (b+1) switch_rate and the low one with (b+1) switch_rate / b,
        so a fraction 1/(b+1) of slots is high, as in continuous time.
        ``deterministic``: floor((t+1) rate) - floor(t rate) in slot t (rate as a
        fraction with denominator at most 10^6), so the count by the end of slot t
        is floor((t+1) rate).

    Examples
    --------
    >>> list(itertools.islice(arrival_counts("deterministic", 1.5, np.random.default_rng(0)), 4))
    [1, 2, 1, 2]
    """
    if kind == "poisson":
        return itertools.chain.from_iterable(iter(lambda: rng.poisson(rate, BATCH).tolist(), None))
    if kind == "batch_poisson":
        if batch == "deterministic":
            size = int(mean_batch)
            return (size * count for count in arrival_counts("poisson", rate / size, rng))
        return _batch_poisson(rng, rate, mean_batch)
    if kind == "mmpp2":
        return _mmpp2(rng, rate, burstiness, switch_rate)
    if kind == "deterministic":
        return _evenly(Fraction(rate).limit_denominator(DENOMINATOR))
    raise ValueError(f"arrivals '{kind}' have no slotted form")


def _evenly(rate: Fraction) -> Iterator[int]:
    p, q = rate.numerator, rate.denominator
    for t in itertools.count():
        yield (t + 1) * p // q - t * p // q


def _batch_poisson(rng: np.random.Generator, rate: float, mean_batch: float) -> Iterator[int]:
    while True:
        batches = rng.poisson(rate / mean_batch, BATCH)
        sizes = rng.geometric(1.0 / mean_batch, int(batches.sum()))
        slot = np.repeat(np.arange(BATCH), batches)
        yield from np.bincount(slot, weights=sizes, minlength=BATCH).astype(np.int64).tolist()


def _mmpp2(rng: np.random.Generator, rate: float, b: float, cycles: float) -> Iterator[int]:
    leave = ((b + 1.0) * cycles, (b + 1.0) * cycles / b)  # per-slot exit probabilities, high and low
    means = (b * rate, rate / b)
    state = 0 if rng.random() < 1.0 / (b + 1.0) else 1  # start in the stationary law
    while True:
        states = np.empty(BATCH, dtype=np.int64)
        for i, u in enumerate(rng.random(BATCH).tolist()):
            states[i] = state
            if u < leave[state]:
                state = 1 - state
        yield from rng.poisson(np.take(means, states)).tolist()


def capacities(kind: str, mus: list[float], rng: np.random.Generator) -> Iterator[list[int]]:
    """Each slot's service capacities, one per server: constant (``deterministic``) or Poisson(μ_i).

    Drawn for every server in every slot, busy or not, so that the capacity at a
    given server and slot does not depend on the policy.
    """
    if kind == "deterministic":
        return itertools.repeat([round(mu) for mu in mus])
    rates = np.asarray(mus)
    return itertools.chain.from_iterable(
        iter(lambda: rng.poisson(rates, (ROWS, len(mus))).tolist(), None))
