"""Redundancy-d (Gardner et al.): the N -> infinity response time of d independent exponential copies.

Each job sends a copy to d servers chosen uniformly at random; each copy's size is
exponential with mean 1, drawn on its own; when the first copy completes the
others are cancelled. As N -> infinity, with arrival rate ``lam`` per server
(``lam < 1`` for every d), the response time T has the tail [1]

    P(T > t) = (lam + (1 - lam) e^{(d-1) t})^{-d/(d-1)},

so that E[T] = integral of the tail. Substituting v = e^{-(d-1) t}, then
u = 1 - v, gives E[T] = 1/(d-1) * integral_0^1 (1-u)^{a-1} (1 - lam u)^{-a} du with
a = d/(d-1), which expands term by term into

    E[T] = sum_{i >= 0} lam^i / (d + i (d - 1)) = 2F1(1, a; a + 1; lam) / d.

With d = 1 the sum is 1/(1 - lam), M/M/1; `redundancy_response_series` and
`redundancy_response_quadrature` compute the same value the other two ways.

References
----------
.. [1] K. Gardner, M. Harchol-Balter, A. Scheller-Wolf, M. Velednitsky, S. Zbarsky,
   "Redundancy-d: The Power of d Choices for Redundancy", Operations Research 65(4) (2017).
"""

from __future__ import annotations

import math

from scipy import integrate, special


def _check(lam: float, d: float) -> None:
    if not 0.0 <= lam < 1.0:
        raise ValueError(f"lam: expected 0 <= lam < 1 (Red(d) is stable exactly below 1), got {lam!r}")
    if not d >= 1:
        raise ValueError(f"d: expected at least 1 copy, got {d!r}")


def redundancy_tail(lam: float, d: int, t: float) -> float:
    """P(T > t) in the mean field of Red(d), exponential independent copies cancelled on completion.

    >>> redundancy_tail(0.5, 1, 2.0) == math.exp(-1.0)  # d = 1: M/M/1, rate 1 - lam
    True
    """
    _check(lam, d)
    if d == 1:
        return math.exp(-(1.0 - lam) * t)
    # Written as e^{-d t} (lam e^{-(d-1) t} + 1 - lam)^{-d/(d-1)}: no overflow for large t.
    return math.exp(-d * t) * (lam * math.exp(-(d - 1) * t) + 1.0 - lam) ** (-d / (d - 1))


def redundancy_response(lam: float, d: int) -> float:
    """Mean response time of Red(d) as N -> infinity (the closed form, a hypergeometric sum).

    >>> redundancy_response(0.5, 1)  # M/M/1
    2.0
    >>> round(redundancy_response(0.8, 2), 6)  # (ln 5 - 0.8) / 0.64
    1.264747
    """
    _check(lam, d)
    if d == 1:
        return 1.0 / (1.0 - lam)
    a = d / (d - 1)
    return float(special.hyp2f1(1.0, a, a + 1.0, lam)) / d


def redundancy_response_series(lam: float, d: int, tol: float = 1e-15) -> float:
    """The same mean as the sum of lam^i / (d + i (d - 1)), to relative ``tol`` (a check: slow near lam = 1)."""
    _check(lam, d)
    total, i, power = 0.0, 0, 1.0
    while True:
        term = power / (d + i * (d - 1))
        total += term
        # The terms after this one sum to less than term * lam / (1 - lam).
        if term * lam / (1.0 - lam) < tol * total:
            return total
        i += 1
        power *= lam


def redundancy_response_quadrature(lam: float, d: int) -> float:
    """The same mean as the numerical integral of `redundancy_tail` over t >= 0 (a check)."""
    _check(lam, d)
    value, _ = integrate.quad(lambda t: redundancy_tail(lam, d, t), 0.0, math.inf, epsabs=0.0, epsrel=1e-12,
                              limit=200)
    return float(value)
