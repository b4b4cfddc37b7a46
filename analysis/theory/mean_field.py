"""Mean fields of N -> infinity FIFO servers: SQ(d), JIQ with dispatcher memory A, the threshold model.

SQ(d), the supermarket model (Mitzenmacher; Vvedenskaya, Dobrushin,
Karpelevich), and JIQ (Lu et al.; Gamarnik, Tsitsiklis, Zubeldia) have closed
forms; Mitzenmacher's threshold model is the fixed point of its mean-field ODE
(`fixed_point`, which the pool ODE of `analysis.theory.pools` uses too), or of
its cut equations (`threshold_fixed_point`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .queues import check_load

LEVELS = 100_000
"""The most levels (queue lengths 0, 1, ...) a fixed point here holds: 0.8 MB per vector of them,
and about 1 s for the threshold model's root search over that many.

A fixed point that needs more (a load so close to 1, or a threshold so large, that the
levels carrying mass above round-off number more than this) raises `ValueError` saying so,
and the table gives no theory row for it.
"""

ODE_LEVELS = 500
"""The most levels a mean-field ODE here integrates: its Jacobian is dense (2 MB at 500)."""

ODE_WORK = 3e8
"""The most work `fixed_point` does for a theory row: evaluations of the drift times the square
of the levels (an LSODA step with a dense Jacobian costs about that square), a few seconds on
one core. A stiff ODE (pools at load 100 with d = 2, or at load 50 with d = 100) takes more and
is given up."""


def _power(x: float, n: int) -> float:
    """``x ** n`` for 0 <= x <= 1 and any whole n >= 0, however large (past 10^300 it is x^(10^300))."""
    return float(x ** float(min(n, 10**300)))


def _geometric(x: float, d: int) -> float:
    """``1 + x + ... + x^(d-1) = (1 - x^d) / (1 - x)`` for 0 <= x < 1: O(1) work whatever d."""
    if x == 0.0:
        return 1.0
    return -math.expm1(min(d, 10**300) * math.log(x)) / (1.0 - x)


# ---------------------------------------------------------------------------------------
# Supermarket model: SQ(d) mean field
# ---------------------------------------------------------------------------------------
def _sqd_exponent(d: int, i: int) -> int:
    """(d^i - 1) / (d - 1) = 1 + d + ... + d^(i-1) (= i for d = 1), in whole numbers."""
    return i if d == 1 else (d**i - 1) // (d - 1)


def sqd_tail(lam: float, d: int, tol: float = 1e-16) -> np.ndarray:
    """Mean-field fraction of servers with at least i jobs under SQ(d), i = 0, 1, ...

    ``s_i = lam^((d^i - 1) / (d - 1))`` (Mitzenmacher; Vvedenskaya et al.),
    listed until ``s_i < tol``; ``s_0 = 1``. With d = 1 (random routing) it is
    the M/M/1 tail ``lam^i``.

    Parameters
    ----------
    lam : float
        Load in [0, 1).
    d : int
        Servers sampled per job, >= 1.
    tol : float
        Truncation: the last entry is the first below ``tol``.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValueError
        If more than `LEVELS` entries are at least ``tol`` (d = 1 with a load near 1).

    Examples
    --------
    >>> np.round(sqd_tail(0.5, 2, tol=1e-3), 6).tolist()
    [1.0, 0.5, 0.125, 0.007812, 3.1e-05]
    """
    check_load(lam)
    if d < 1:
        raise ValueError(f"expected d >= 1, got {d}")
    values = [1.0]
    i = 1
    while values[-1] >= tol and lam > 0:
        if i > LEVELS:  # d = 1 near lam = 1: lam^i falls below tol only after about -ln(tol) / (1 - lam) levels
            raise ValueError(f"the SQ({d}) tail at load {lam} holds more than {LEVELS:,} levels above {tol}")
        values.append(_power(lam, _sqd_exponent(d, i)))
        i += 1
    return np.asarray(values)


def sqd_finite_n_correction(lam: float, servers: int) -> float:
    """A rough size of the finite-N excess of SQ(d) mean response over its mean-field value.

    ``lam^2 / (2 (1 - lam)) / (lam N)``: "finite N sits above the mean field by
    roughly" this much. It is a rough, d-independent size of the O(1/N) term
    (it has the form of the M/M/1 waiting time spread over the N servers), not
    an exact expansion; tests treat it as a systematic allowance.

    Examples
    --------
    >>> round(sqd_finite_n_correction(0.9, 500), 6)
    0.009
    """
    check_load(lam)
    return lam * lam / (2.0 * (1.0 - lam)) / (lam * servers)


def sqd_response(lam: float, d: int, servers: int | None = None) -> float:
    """Mean-field mean response time of SQ(d): ``T_d(lam) = sum_{i>=1} lam^((d^i - d)/(d - 1))``.

    By Little's law, ``T_d = sum_{i>=1} s_i / lam``.

    Parameters
    ----------
    lam : float
        Load in [0, 1).
    d : int
        Servers sampled per job (d = 1: random routing, ``1 / (1 - lam)``).
    servers : int, optional
        If given, add `sqd_finite_n_correction` for N = ``servers``.

    Returns
    -------
    float

    Examples
    --------
    The published values for d = 2 (Mitzenmacher 1996, table of T_2):

    >>> [round(sqd_response(lam, 2), 4) for lam in (0.5, 0.7, 0.8, 0.9, 0.95, 0.99)]
    [1.2657, 1.6145, 1.9474, 2.6141, 3.383, 5.432]
    >>> round(sqd_response(0.9, 1), 10)
    10.0
    >>> round(sqd_response(0.9, 2, servers=500), 4)
    2.6231
    """
    check_load(lam)
    if lam == 0:
        return 1.0
    if d == 1:
        total = 1.0 / (1.0 - lam)
    else:
        total = 0.0
        i = 1
        while True:
            term = _power(lam, _sqd_exponent(d, i) - 1)  # (d^i - d)/(d - 1) = (d^i - 1)/(d - 1) - 1
            total += term
            if term < 1e-17:
                break
            i += 1
    if servers is not None:
        total += sqd_finite_n_correction(lam, servers)
    return total


# ---------------------------------------------------------------------------------------
# JIQ with dispatcher memory A
# ---------------------------------------------------------------------------------------
def jiq_response(lam: float, memory: int | None = None) -> float:
    """Mean-field mean response time of JIQ with one dispatcher: ``(1 - lam)^(-1/(A+1))``.

    Derivation (N -> infinity, exp(1) service). The I-queue holds at most A ids;
    it changes at rate O(N), so it sits in the stationary law of a birth-death
    chain on {0..A} with births at the idle-token rate ``x_1`` (the fraction of
    servers with exactly one job, per unit time per server) and deaths at rate
    ``lam``. A job finding it empty (probability p) goes to a random server.
    Cut equations give ``x_i = x_1 (lam p)^(i-1)`` for i >= 2 and, with
    ``s_1 = lam``, ``r := x_1 / lam = 1 - lam p``; the empty probability
    ``p = (1 - r) / (1 - r^(A+1))`` then forces ``r^(A+1) = 1 - lam``. Mean
    jobs per server ``lam / r``, so mean response ``1 / r``; tokens per job ``r``.
    A = 0 is random routing; unbounded memory (``None``) gives 1.

    Parameters
    ----------
    lam : float
        Load in [0, 1).
    memory : int or None
        A, the most ids the I-queue keeps (None: unbounded).

    Examples
    --------
    >>> round(jiq_response(0.9, 0), 10), round(jiq_response(0.9, 1), 4), jiq_response(0.9)
    (10.0, 3.1623, 1.0)
    """
    check_load(lam)
    if memory is None:
        return 1.0
    return (1.0 - lam) ** (-1.0 / (memory + 1))


def jiq_messages(lam: float, memory: int | None = None) -> float:
    """Mean-field idle messages per job of JIQ with memory A: ``(1 - lam)^(1/(A+1))``.

    Every token sent counts, including those dropped by a full I-queue; see
    `jiq_response` for the derivation.

    Examples
    --------
    >>> round(jiq_messages(0.9, 1), 4), jiq_messages(0.9)
    (0.3162, 1.0)
    """
    check_load(lam)
    if memory is None:
        return 1.0
    return (1.0 - lam) ** (1.0 / (memory + 1))


# ---------------------------------------------------------------------------------------
# Mean-field ODE fixed points
# ---------------------------------------------------------------------------------------
def fixed_point(rhs: Callable[[float, np.ndarray], np.ndarray],
                 jac: Callable[[float, np.ndarray], np.ndarray], start: np.ndarray,
                 tol: float = 1e-12, horizon: float = 50.0, max_time: float = 1e7,
                 work: float = math.inf) -> np.ndarray:
    """Integrate ``dy/dt = rhs(t, y)`` with solve_ivp from ``start`` to its fixed point.

    The horizon doubles after each leg (slow modes near lam = 1 relax in time of
    order 1/(1-lam)^2). Once the drift is small, a Newton-type polish
    (scipy.optimize.root, started at the integrated state, so it lands on the
    fixed point the dynamics reach) removes the last integration error; if it
    does not bring the drift below ``tol``, integration goes on. ``jac`` is the
    Jacobian of ``rhs`` (dense), used by both. After ``work / len(start)^2``
    evaluations of ``rhs`` (e.g. `ODE_WORK`) it gives up with `RuntimeError`.
    """
    from scipy.integrate import solve_ivp
    from scipy.optimize import root

    allowed = work / max(len(start), 1) ** 2
    calls = 0

    def counted(t: float, z: np.ndarray) -> np.ndarray:
        nonlocal calls
        calls += 1
        if calls > allowed:
            raise RuntimeError(f"the mean-field ODE of {len(start)} levels did not settle within "
                               f"{int(allowed):,} evaluations of its drift")
        return rhs(t, z)

    def drift(z: np.ndarray) -> float:
        return float(np.max(np.abs(rhs(0.0, z))))

    y = np.asarray(start, dtype=float)
    t = 0.0
    while t < max_time:
        solution = solve_ivp(counted, (t, t + horizon), y, method="LSODA", jac=jac,
                             rtol=1e-10, atol=1e-13)
        if not solution.success:
            raise RuntimeError(f"solve_ivp failed: {solution.message}")
        y = solution.y[:, -1]
        t += horizon
        horizon *= 2.0
        if drift(y) < 1e-6:
            polished = root(lambda z: counted(0.0, z), y, jac=lambda z: jac(0.0, z),
                            method="hybr", tol=tol).x
            if drift(polished) < tol and np.max(np.abs(polished - y)) < 1e-3:
                return polished
            if drift(y) < tol:
                return y
    raise RuntimeError("the mean-field ODE did not reach a fixed point")


def _threshold_levels(lam: float, d: int, threshold: int, tol: float) -> int:
    # Above T the tail falls geometrically with ratio lam * s_T^(d-1) <= lam^d (s_T <= s_1 = lam).
    ratio = lam**d
    return threshold + math.ceil(math.log(tol) / math.log(ratio)) + 5


def threshold_tail(lam: float, d: int = 2, threshold: int = 1, levels: int | None = None,
                   tol: float = 1e-13) -> np.ndarray:
    """Fixed point of Mitzenmacher's threshold-model mean field: s_i, i = 0..levels.

    A job probes up to d random servers one at a time and joins the first with
    fewer than T jobs, else the last probed. With ``s_i`` the fraction of
    servers holding at least i jobs (``s_0 = 1``)::

        i <= T: ds_i/dt = lam (s_{i-1} - s_i) (1 - s_T^d) / (1 - s_T) - (s_i - s_{i+1})
        i >  T: ds_i/dt = lam (s_{i-1} - s_i) s_T^(d-1)             - (s_i - s_{i+1})

    (``(1 - s_T^d) / (1 - s_T) = 1 + s_T + ... + s_T^(d-1)``, which is how it is
    evaluated). The system is integrated from the empty state with
    ``scipy.integrate.solve_ivp`` until it stops moving, truncated at a level
    where the geometric tail (ratio at most ``lam^d``) is below ``tol``.

    Parameters
    ----------
    lam : float
        Load in [0, 1).
    d : int
        Most probes per job.
    threshold : int
        T >= 1.
    levels : int, optional
        Truncation level K (s_{K+1} = 0); default from ``tol``.
    tol : float
        Negligible tail mass for the default truncation.

    Returns
    -------
    numpy.ndarray
        ``[s_0, s_1, ..., s_K]``.

    Raises
    ------
    ValueError
        If K exceeds `ODE_LEVELS` (`threshold_fixed_point` gives the same fixed point at any K).

    Examples
    --------
    T = 1, d = 2: ``s_1 = lam`` and ``s_i = lam^(2i-1)`` for i >= 1.

    >>> s = threshold_tail(0.9, 2, 1)
    >>> bool(np.allclose(s[:4], [1, 0.9, 0.9**3, 0.9**5]))
    True
    """
    check_load(lam)
    if d < 1 or threshold < 1:
        raise ValueError(f"expected d >= 1 and threshold >= 1, got {d}, {threshold}")
    if lam == 0:
        return np.array([1.0, 0.0])
    K = levels if levels is not None else _threshold_levels(lam, d, threshold, tol)
    if K > ODE_LEVELS:  # e.g. a large T or a load near 1; `threshold_fixed_point` has no such limit
        raise ValueError(f"the threshold model's ODE at load {lam} with threshold {threshold} needs {K:,} "
                         f"levels, more than {ODE_LEVELS}")
    T = threshold

    i = np.arange(1, K + 1)
    low = i <= T

    def factors(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s = np.concatenate(([1.0], y, [0.0]))  # s_0 .. s_{K+1}
        sT = s[T] if T <= K else 0.0
        below = sum(sT**k for k in range(d))  # (1 - s_T^d) / (1 - s_T), safe at s_T = 1
        dbelow = sum(k * sT ** (k - 1) for k in range(1, d))
        above, dabove = sT ** (d - 1), ((d - 1) * sT ** (d - 2) if d > 1 else 0.0)
        return s, np.where(low, below, above), np.where(low, dbelow, dabove)

    def rhs(_t: float, y: np.ndarray) -> np.ndarray:
        s, g, _ = factors(y)
        return lam * (s[i - 1] - s[i]) * g - (s[i] - s[i + 1])

    def jac(_t: float, y: np.ndarray) -> np.ndarray:
        s, g, dg = factors(y)
        J = np.zeros((K, K))
        rows = np.arange(K)
        J[rows, rows] = -lam * g - 1.0
        J[rows[1:], rows[1:] - 1] = lam * g[1:]
        J[rows[:-1], rows[:-1] + 1] = 1.0
        if T <= K:
            J[:, T - 1] += lam * (s[i - 1] - s[i]) * dg
        return J

    y = fixed_point(rhs, jac, np.zeros(K))
    return np.concatenate(([1.0], y))


def threshold_response(lam: float, d: int = 2, threshold: int = 1, **options: Any) -> float:
    """Mean-field mean response time of the threshold model: ``sum_{i>=1} s_i / lam``.

    Examples
    --------
    A closed-form check: T = 1 and d = 2 give ``1 / (1 - lam^2)``:

    >>> [round(threshold_response(lam, 2, 1), 6) for lam in (0.5, 0.7, 0.9)]
    [1.333333, 1.960784, 5.263158]
    >>> [round(1 / (1 - lam**2), 6) for lam in (0.5, 0.7, 0.9)]
    [1.333333, 1.960784, 5.263158]
    """
    if lam == 0:
        return 1.0
    s = threshold_tail(lam, d, threshold, **options)
    return float(s[1:].sum() / lam)


def threshold_probes(lam: float, d: int = 2, threshold: int = 1, **options: Any) -> float:
    """Mean-field mean number of probes per job: ``1 + s_T + ... + s_T^(d-1)``.

    Each probe is a query and a reply, so messages per job are twice this.

    Examples
    --------
    >>> round(threshold_probes(0.9, 2, 1), 6)  # 1 + s_1 = 1 + lam
    1.9
    """
    s = threshold_tail(lam, d, threshold, **options)
    sT = s[threshold] if threshold < len(s) else 0.0
    return float(sum(sT**k for k in range(d)))


def _random_routing_reach(lam: float, d: int) -> int:
    """A threshold from which the threshold model is random routing to within round-off.

    Below T the cut equations give ``s_k = lam s_{k-1} - lam x c_x (1 - s_{k-1})`` with
    ``x = s_T`` and ``c_x = 1 + x + ... + x^(d-2) <= c = min(d - 1, 1 / (1 - lam))``, so
    ``s_k <= lam^k`` and ``x <= lam^T``: the mean response differs from random
    routing's ``1 / (1 - lam)`` by a relative ``lam^(T-1) (T c + 2)`` at most, the probes
    per job from 1 by ``c lam^T`` at most. The least K from which both are below 2^-53
    solves ``K = 1 + (53 ln 2 + ln(K c + 2)) / (-ln lam)`` (a few fixed-point steps).
    """
    c = min(d - 1, 1.0 / (1.0 - lam))
    rate = -math.log(lam)
    reach, previous = 1, 0
    while reach != previous:
        previous, reach = reach, 1 + math.ceil((53 * math.log(2) + math.log(reach * c + 2)) / rate)
    return reach


def _affine_orbit(start: float, a: float, b: float, steps: int) -> np.ndarray:
    """``y_1 .. y_n`` of ``y_k = a y_{k-1} + b`` from ``y_0 = start``, for 0 <= a <= 1, without a Python loop.

    ``y_k = a^k start + b (1 + a + ... + a^(k-1))``: with a <= 1 every term is
    bounded and no error grows with k, as it would by a factor a per step with a > 1.
    """
    powers = a ** np.arange(steps + 1)
    return np.asarray(powers[1:] * start + b * np.cumsum(powers[:-1]))


def _threshold_low(lam: float, d: int, threshold: int) -> np.ndarray:
    """``[s_0, ..., s_T]`` of the threshold model's fixed point, from its cut equations (see below).

    Below T the cut equations are ``s_k = a s_{k-1} + b`` with ``a = lam g``,
    ``b = lam (x^d - g x)``. Where ``a > 1`` (a load near 1 and a large T) an error
    grows by a factor a per level upwards, so the levels are then computed from
    ``s_T = x`` downwards (``s_{k-1} = (s_k - b) / a``), where it shrinks; the root
    condition is then ``s_0 = 1``, which has the sign of ``s_T = x`` (they differ
    by the factor ``a^T > 0``). O(T) memory and time per step of the root search,
    so T is refused past `LEVELS`.
    """
    from scipy.optimize import brentq

    if threshold > LEVELS:
        raise ValueError(f"the threshold model's mean field at load {lam} with threshold {threshold} "
                         f"needs more than {LEVELS:,} levels")

    def coefficients(x: float) -> tuple[float, float]:
        g = _geometric(x, d)
        return lam * g, lam * (_power(x, d) - g * x)

    def gap(x: float) -> float:
        """A function with the sign of ``s_T(x) - x``, computed in the stable direction."""
        a, b = coefficients(x)
        if a <= 1.0:
            return float(_affine_orbit(1.0, a, b, threshold)[-1] - x)
        return float(1.0 - _affine_orbit(x, 1.0 / a, -b / a, threshold)[-1])

    x = lam if threshold == 1 else brentq(gap, 0.0, lam, xtol=1e-15, rtol=1e-15)
    a, b = coefficients(x)
    if a <= 1.0:
        return np.concatenate(([1.0], _affine_orbit(1.0, a, b, threshold)[:-1], [x]))
    return np.concatenate(([1.0], _affine_orbit(x, 1.0 / a, -b / a, threshold)[-2::-1], [x]))


def _tail_ratio(lam: float, d: int, x: float) -> tuple[float, float]:
    """Above T the tail falls geometrically with ratio ``r = lam x^(d-1)``: r and ``1 - r`` (accurate near 1)."""
    r = lam * _power(x, d - 1)
    if x == 0.0 or d == 1:
        return r, 1.0 - r
    return r, -math.expm1(math.log(lam) + min(d - 1, 10**300) * math.log(x))


def threshold_fixed_point(lam: float, d: int = 2, threshold: int = 1, tol: float = 1e-13) -> np.ndarray:
    """The fixed point of `threshold_tail` from its cut equations: a 1-D root instead of the ODE.

    Summing the fixed-point equations of `threshold_tail` from level k upwards
    (the tail telescopes) gives, with ``x = s_T``, ``g = 1 + x + ... + x^(d-1)``::

        k <= T: s_k = lam (g (s_{k-1} - x) + x^d)        (k = 1: s_1 = lam)
        k >  T: s_k = lam x^(d-1) s_{k-1}                (geometric above T)

    so ``x`` solves ``s_T(x) = x`` on ``[0, lam]`` (scipy's brentq), and the
    rest follows. It agrees with the ODE's fixed point and takes milliseconds
    where the ODE's relaxation (of order ``1 / (1 - lam)^2``) takes minutes
    near ``lam = 1``.

    Its cost is what the answer needs, not what T says: a threshold beyond
    every level whose mass is above round-off (see `_random_routing_reach`) is
    random routing, ``s_k = lam^k``; otherwise the levels up to T and the
    geometric tail down to ``tol`` are computed, and more than `LEVELS` of them
    (T past 10^5, or a load within about ``-ln(tol) / LEVELS`` of 1) raise
    `ValueError`.

    Examples
    --------
    >>> s = threshold_fixed_point(0.7, 2, 2)
    >>> bool(np.allclose(s[:8], threshold_tail(0.7, 2, 2)[:8], atol=1e-9))
    True
    >>> [round(float(threshold_fixed_point(0.99, 2, t)[1:].sum() / 0.99), 4) for t in (1, 2, 3)]
    [50.2513, 25.9994, 14.5361]
    >>> bool(np.array_equal(threshold_fixed_point(0.5, 2, 10**30), 0.5 ** np.arange(45)))
    True
    """
    check_load(lam)
    if d < 1 or threshold < 1:
        raise ValueError(f"expected d >= 1 and threshold >= 1, got {d}, {threshold}")
    if lam == 0:
        return np.array([1.0, 0.0])
    if threshold >= _random_routing_reach(lam, d):
        low, x, r = np.array([1.0]), 1.0, lam  # random routing: the "tail" starts at level 0
    else:
        low = _threshold_low(lam, d, threshold)
        x = float(low[-1])
        r = _tail_ratio(lam, d, x)[0]
    # The tail x r^j down to the first entry below tol.
    steps = 0 if x < tol or r == 0.0 else math.floor(math.log(tol / x) / math.log(r)) + 1
    if len(low) + steps > LEVELS:
        raise ValueError(f"the threshold model's mean field at load {lam} holds more than {LEVELS:,} "
                         f"levels above {tol}")
    tail = x * r ** np.arange(1, steps + 1)
    s = np.concatenate((low, tail))
    while s[-1] >= tol:  # the floor above can fall one short in floating point
        s = np.append(s, s[-1] * r)
    return s


def threshold_metrics(lam: float, d: int = 2, threshold: int = 1) -> tuple[float, float]:
    """Mean response and mean probes per job of the threshold model's mean field, in O(min(T, reach)).

    The same fixed point as `threshold_fixed_point`, with the geometric tail
    above T summed in closed form (``x r / (1 - r)``), so no vector of the tail
    is built however close the load is to 1; a threshold past
    `_random_routing_reach` gives random routing's ``(1 / (1 - lam), 1)``. The
    levels up to T are computed, and more than `LEVELS` of them raise
    `ValueError`.

    Returns
    -------
    tuple of float
        ``sum_{i>=1} s_i / lam`` and ``1 + x + ... + x^(d-1)`` (each probe is two messages).

    Examples
    --------
    T = 1: ``1 / (1 - lam^d)`` and ``1 + lam + ... + lam^(d-1)``; a threshold no queue reaches: M/M/1.

    >>> [round(v, 6) for v in threshold_metrics(0.9, 2, 1)], round(1 / (1 - 0.9**2), 6)
    ([5.263158, 1.9], 5.263158)
    >>> threshold_metrics(0.9, 2, 10**30) == (1 / (1 - 0.9), 1.0)
    True
    """
    check_load(lam)
    if d < 1 or threshold < 1:
        raise ValueError(f"expected d >= 1 and threshold >= 1, got {d}, {threshold}")
    if lam == 0:
        return 1.0, 1.0
    if threshold >= _random_routing_reach(lam, d):
        return 1.0 / (1.0 - lam), 1.0
    low = _threshold_low(lam, d, threshold)
    x = float(low[-1])
    r, rest = _tail_ratio(lam, d, x)
    return float((low[1:].sum() + x * r / rest) / lam), _geometric(x, d)
