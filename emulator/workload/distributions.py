"""Service-time and latency laws, each given by its mean and, where it has one, its shape.

A law turns a `numpy.random.Generator` into an endless iterator of floats,
drawn in batches so that a scalar draw costs one ``next()`` in the hot path.

>>> import numpy as np
>>> law = Law("erlang", mean=2.0, k=4)
>>> law.scv
0.25
>>> draws = law.sampler(np.random.default_rng(7))
>>> next(draws) > 0
True
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from .streams import BATCH, Blocks, values

# Each kind and the shape parameter it takes (None: the mean alone fixes the law).
SHAPE: dict[str, str | None] = {
    "exponential": None,
    "deterministic": None,
    "erlang": "k",
    "hyperexponential": "scv",
    "lognormal": "scv",
    "pareto": "alpha",
}


class Law(NamedTuple):
    """A non-negative random variable with a given mean.

    Parameters
    ----------
    kind : str
        One of the keys of `SHAPE`.
    mean : float
        The mean (> 0; a latency may be ``deterministic`` with mean 0).
    k : int, optional
        Erlang phases (>= 1).
    shape_scv : float, optional
        Squared coefficient of variation: >= 1 for ``hyperexponential`` (the
        balanced-means two-phase fit), > 0 for ``lognormal``.
    alpha : float, optional
        Pareto tail index, > 1 so that the mean exists.
    """

    kind: str
    mean: float = 1.0
    k: int | None = None
    shape_scv: float | None = None
    alpha: float | None = None

    @property
    def scv(self) -> float:
        """Squared coefficient of variation, Var[X] / E[X]^2."""
        if self.kind == "exponential":
            return 1.0
        if self.kind == "deterministic":
            return 0.0
        if self.kind == "erlang":
            return 1.0 / self.k  # type: ignore[operator]
        if self.kind == "pareto":
            a: float = self.alpha  # type: ignore[assignment]
            return math.inf if a <= 2 else 1.0 / (a * (a - 2))
        return float(self.shape_scv)  # type: ignore[arg-type]

    def quantile(self, p: float) -> float:
        """The value a draw falls below with probability ``p``, 0 < p < 1.

        >>> round(Law("exponential", 2.0).quantile(0.5), 6)
        1.386294
        >>> round(Law("hyperexponential", 1.0, shape_scv=1.0).quantile(0.5), 6)  # scv 1 is exponential
        0.693147
        """
        from scipy import optimize, stats

        m, kind = self.mean, self.kind
        if kind == "deterministic":
            return float(m)
        if kind == "exponential":
            return float(stats.expon.ppf(p, scale=m))
        if kind == "erlang":
            k: int = self.k  # type: ignore[assignment]
            return float(stats.gamma.ppf(p, k, scale=m / k))
        if kind == "lognormal":
            sigma2 = math.log1p(self.scv)
            return float(stats.lognorm.ppf(p, math.sqrt(sigma2), scale=math.exp(math.log(m) - sigma2 / 2.0)))
        if kind == "pareto":
            a: float = self.alpha  # type: ignore[assignment]
            return float(stats.pareto.ppf(p, a, scale=m * (a - 1.0) / a))
        # hyperexponential: the mixture's CDF lies between those of its two exponential branches
        c2 = self.scv
        p1 = 0.5 * (1.0 + math.sqrt((c2 - 1.0) / (c2 + 1.0)))
        m1, m2 = m / (2.0 * p1), m / (2.0 * (1.0 - p1))
        lo, hi = -min(m1, m2) * math.log1p(-p), -max(m1, m2) * math.log1p(-p)
        if hi <= lo:
            return lo
        return float(optimize.brentq(lambda x: p1 * math.exp(-x / m1) + (1.0 - p1) * math.exp(-x / m2) - (1.0 - p),
                                     lo, hi))

    def sampler(self, rng: np.random.Generator) -> Iterator[float]:
        """An endless iterator of independent draws from ``rng``: its `blocks`, value by value."""
        return values(self.blocks(rng))

    def blocks(self, rng: np.random.Generator) -> Blocks:
        """Independent draws from ``rng`` in blocks (`emulator.workload.streams.Blocks`): both engines' draws."""
        if self.kind == "deterministic":
            block = np.full(BATCH, float(self.mean))
            return lambda k: block if k == 1 else np.tile(block, k)
        if self.kind == "exponential":  # one call for k blocks: exponential draws are taken one after the other
            return lambda k: rng.exponential(self.mean, k * BATCH)
        return lambda k: np.concatenate([self._draw(rng, BATCH) for _ in range(k)])

    def _draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        m, kind = self.mean, self.kind
        if kind == "exponential":
            return rng.exponential(m, n)
        if kind == "erlang":
            k: int = self.k  # type: ignore[assignment]
            return rng.gamma(k, m / k, n)
        if kind == "hyperexponential":
            c2 = self.scv
            p1 = 0.5 * (1.0 + math.sqrt((c2 - 1.0) / (c2 + 1.0)))
            # Balanced means: branch i has probability p_i and mean m / (2 p_i).
            means = np.where(rng.random(n) < p1, m / (2.0 * p1), m / (2.0 * (1.0 - p1)))
            return rng.exponential(1.0, n) * means
        if kind == "lognormal":
            sigma2 = math.log1p(self.scv)
            return rng.lognormal(math.log(m) - sigma2 / 2.0, math.sqrt(sigma2), n)
        if kind == "pareto":
            a: float = self.alpha  # type: ignore[assignment]
            # numpy's pareto is Lomax (support from 0): shift by 1 for the classical law.
            return m * (a - 1.0) / a * (1.0 + rng.pareto(a, n))
        raise ValueError(f"unknown law '{kind}'")

