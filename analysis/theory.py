"""Theory references for lbemu, computed independently of the simulator.

Every function here is a closed form, a fixed point of a mean-field ODE, or the
stationary distribution of a small Markov chain; none of them imports
``emulator``. Published reference values (Mitzenmacher's SQ(2) table, the
threshold model's closed form) appear as doctests, so that
``python -m doctest analysis/theory.py`` (run by ``tests/test_theory.py``)
checks them.

Conventions, as in the emulator: time is measured in mean service times of a
unit-speed server; ``lam`` is the load, i.e. the arrival rate per server
(FIFO servers, so ``lam < 1``) or the arrival rate per pool (pools, any
``lam > 0``); ``servers`` is N.

Contents
--------
Single queues
    `mm1_response`, `md1_response`, `mg1_response` (Pollaczek-Khinchine).
Central queue (a lower bound for any dispatcher)
    `erlang_b`, `erlang_c`, `mmn_response`.
Supermarket model, SQ(d) (Mitzenmacher; Vvedenskaya, Dobrushin, Karpelevich)
    `sqd_tail`, `sqd_response`, `sqd_finite_n_correction`.
Join-Idle-Queue with dispatcher memory A (Lu et al.; Gamarnik, Tsitsiklis, Zubeldia)
    `jiq_response`, `jiq_messages`.
Threshold model (Mitzenmacher)
    `threshold_tail`, `threshold_response`, `threshold_probes`.
Server pools (Mukherjee, Borst, van Leeuwaarden, Whiting)
    `jsq_pool_fluid`, `jsqd_pool_tail`, `pool_blocking`.
Slotted time (Zhou et al.)
    `slotted_md1_response`, `slotted_queue`: one server, Poisson arrivals per slot.
Exact finite N
    `exact_supermarket`: the stationary distribution of the lumped CTMC of N
    exponential FIFO servers under random, JSQ, SQ(d) or threshold routing.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "erlang_b",
    "erlang_c",
    "exact_supermarket",
    "jiq_messages",
    "jiq_response",
    "jsq_pool_fluid",
    "jsqd_pool_tail",
    "md1_response",
    "mg1_response",
    "mm1_response",
    "mmn_response",
    "pool_blocking",
    "slotted_md1_response",
    "slotted_queue",
    "sqd_finite_n_correction",
    "sqd_response",
    "sqd_tail",
    "threshold_fixed_point",
    "threshold_probes",
    "threshold_response",
    "threshold_tail",
]


def _check_load(lam: float) -> None:
    if not 0.0 <= lam < 1.0:
        raise ValueError(f"expected a load in [0, 1) for FIFO servers, got {lam}")


# ---------------------------------------------------------------------------------------
# Single queues
# ---------------------------------------------------------------------------------------
def mm1_response(lam: float) -> float:
    """Mean response time of the M/M/1 queue with unit mean service: ``1 / (1 - lam)``.

    Random routing of Poisson arrivals to N exp(1) servers makes each server an
    M/M/1 queue with arrival rate ``lam``.

    Parameters
    ----------
    lam : float
        Arrival rate (= utilisation), in [0, 1).

    Returns
    -------
    float

    Examples
    --------
    >>> mm1_response(0.9)
    10.000000000000002
    """
    _check_load(lam)
    return 1.0 / (1.0 - lam)


def mm1_response_quantile(lam: float, q: float) -> float:
    """The q-quantile of M/M/1 response time (exp(1) service): it is exponential with rate 1 - lam.

    >>> round(mm1_response_quantile(0.5, 0.5), 6) == round(2 * math.log(2), 6)
    True
    """
    _check_load(lam)
    return -math.log1p(-q) / (1.0 - lam)


def mm1k(lam: float, capacity: int) -> dict[str, float]:
    """M/M/1/K with exp(1) service and arrival rate ``lam``: blocking and mean response of accepted jobs.

    The stationary law is truncated geometric, p_k proportional to lam^k for k <= K;
    an arrival is blocked with probability p_K (PASTA) and the mean response
    follows from Little's law over accepted jobs.

    >>> r = mm1k(0.5, 1)
    >>> round(r["blocking"], 6), round(r["mean_response"], 6)
    (0.333333, 1.0)
    """
    if lam <= 0 or capacity < 1:
        raise ValueError("expected lam > 0 and capacity >= 1")
    weights = np.array([lam**k for k in range(capacity + 1)])
    p = weights / weights.sum()
    blocking = float(p[-1])
    mean_jobs = float(np.dot(np.arange(capacity + 1), p))
    return {"blocking": blocking, "mean_response": mean_jobs / (lam * (1.0 - blocking))}


def mg1_response(lam: float, mean: float = 1.0, scv: float = 1.0) -> float:
    """Mean response time of the M/G/1 FIFO queue (Pollaczek-Khinchine).

    ``E[T] = m + lam * E[S^2] / (2 (1 - rho))`` with ``rho = lam * m`` and
    ``E[S^2] = m^2 (1 + scv)``.

    Parameters
    ----------
    lam : float
        Arrival rate.
    mean : float
        Mean service time m.
    scv : float
        Squared coefficient of variation of the service time (1 exponential,
        0 deterministic, 1/k Erlang-k).

    Returns
    -------
    float

    Examples
    --------
    The M/M/1 and M/D/1 cases:

    >>> round(mg1_response(0.7, scv=1.0), 12) == round(mm1_response(0.7), 12)
    True
    >>> mg1_response(0.5, scv=0.0)
    1.5
    >>> mg1_response(0.5, mean=1.0, scv=3.0)  # e.g. hyperexponential with scv 3
    3.0
    """
    rho = lam * mean
    _check_load(rho)
    second = mean * mean * (1.0 + scv)
    return mean + lam * second / (2.0 * (1.0 - rho))


def md1_response(lam: float) -> float:
    """Mean response time of the M/D/1 queue with unit service: ``1 + lam / (2 (1 - lam))``.

    Examples
    --------
    >>> md1_response(0.9)
    5.500000000000001
    """
    return mg1_response(lam, 1.0, 0.0)


# ---------------------------------------------------------------------------------------
# Central queue: Erlang B and C
# ---------------------------------------------------------------------------------------
def erlang_b(servers: int, offered: float) -> float:
    """Erlang B: blocking probability of the M/M/c/c loss system.

    Computed with the stable recursion ``B(0) = 1``,
    ``B(k) = a B(k-1) / (k + a B(k-1))``. Once B is 0 in floating point it stays
    0, so the recursion stops there: past the offered load B falls faster than
    geometrically, and the cost is at most about a + 40 sqrt(a) steps whatever c
    (a pool with capacity 10^9 costs what one with capacity 1000 does).

    Parameters
    ----------
    servers : int
        c >= 0.
    offered : float
        Offered load a = arrival rate x mean holding time.

    Returns
    -------
    float

    Examples
    --------
    A pool with capacity 3 and 2.5 tasks offered per unit time (unit holding time):

    >>> round(erlang_b(3, 2.5), 6)
    0.282167
    """
    if servers < 0 or offered < 0:
        raise ValueError(f"expected servers >= 0 and offered >= 0, got {servers}, {offered}")
    b = 1.0
    for k in range(1, servers + 1):
        b = offered * b / (k + offered * b)
        if b == 0.0:  # every later step gives 0 again: the result is exact
            break
    return b


def erlang_c(servers: int, offered: float) -> float:
    """Erlang C: probability that an arrival waits in the M/M/c queue.

    ``C = c B / (c - a (1 - B))`` with B = `erlang_b`; requires ``a < c``.

    Examples
    --------
    >>> round(erlang_c(1, 0.9), 12)  # M/M/1: P(wait) = rho
    0.9
    >>> round(erlang_c(10, 9.0), 4)
    0.6687
    """
    if not offered < servers:
        raise ValueError(f"expected offered load < servers, got {offered} >= {servers}")
    b = erlang_b(servers, offered)
    return servers * b / (servers - offered * (1.0 - b))


def mmn_response(servers: int, lam: float) -> float:
    """Mean response time of the central M/M/N queue at load ``lam`` (arrival rate ``lam N``).

    ``1 + C(N, lam N) / (N (1 - lam))``. No dispatcher in front of N exp(1)
    FIFO servers does better in mean response time, so this is a lower bound
    for every policy (JSQ included) at the same N and load.

    Examples
    --------
    >>> round(mmn_response(1, 0.5), 12)
    2.0
    >>> round(mmn_response(10, 0.9), 4)
    1.6687
    """
    _check_load(lam)
    return 1.0 + erlang_c(servers, lam * servers) / (servers * (1.0 - lam))


# ---------------------------------------------------------------------------------------
# Supermarket model: SQ(d) mean field
# ---------------------------------------------------------------------------------------
def _sqd_exponent(d: int, i: int) -> int:
    """(d^i - 1) / (d - 1) = 1 + d + ... + d^(i-1) (= i for d = 1)."""
    return sum(d**k for k in range(i))


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

    Examples
    --------
    >>> np.round(sqd_tail(0.5, 2, tol=1e-3), 6).tolist()
    [1.0, 0.5, 0.125, 0.007812, 3.1e-05]
    """
    _check_load(lam)
    if d < 1:
        raise ValueError(f"expected d >= 1, got {d}")
    values = [1.0]
    i = 1
    while values[-1] >= tol and lam > 0:
        values.append(lam ** _sqd_exponent(d, i))
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
    _check_load(lam)
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
    _check_load(lam)
    if lam == 0:
        return 1.0
    if d == 1:
        total = 1.0 / (1.0 - lam)
    else:
        total = 0.0
        i = 1
        while True:
            term = lam ** (_sqd_exponent(d, i) - 1)  # (d^i - d)/(d - 1) = (d^i - 1)/(d - 1) - 1
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
    _check_load(lam)
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
    _check_load(lam)
    if memory is None:
        return 1.0
    return (1.0 - lam) ** (1.0 / (memory + 1))


# ---------------------------------------------------------------------------------------
# Mean-field ODE fixed points
# ---------------------------------------------------------------------------------------
def _fixed_point(rhs: Callable[[float, np.ndarray], np.ndarray],
                 jac: Callable[[float, np.ndarray], np.ndarray], start: np.ndarray,
                 tol: float = 1e-12, horizon: float = 50.0, max_time: float = 1e7) -> np.ndarray:
    """Integrate ``dy/dt = rhs(t, y)`` with solve_ivp from ``start`` to its fixed point.

    The horizon doubles after each leg (slow modes near lam = 1 relax in time of
    order 1/(1-lam)^2). Once the drift is small, a Newton-type polish
    (scipy.optimize.root, started at the integrated state, so it lands on the
    fixed point the dynamics reach) removes the last integration error; if it
    does not bring the drift below ``tol``, integration goes on. ``jac`` is the
    Jacobian of ``rhs`` (dense), used by both.
    """
    from scipy.integrate import solve_ivp
    from scipy.optimize import root

    def drift(z: np.ndarray) -> float:
        return float(np.max(np.abs(rhs(0.0, z))))

    y = np.asarray(start, dtype=float)
    t = 0.0
    while t < max_time:
        solution = solve_ivp(rhs, (t, t + horizon), y, method="LSODA", jac=jac,
                             rtol=1e-10, atol=1e-13)
        if not solution.success:
            raise RuntimeError(f"solve_ivp failed: {solution.message}")
        y = solution.y[:, -1]
        t += horizon
        horizon *= 2.0
        if drift(y) < 1e-6:
            polished = root(lambda z: rhs(0.0, z), y, jac=lambda z: jac(0.0, z),
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

    Examples
    --------
    T = 1, d = 2: ``s_1 = lam`` and ``s_i = lam^(2i-1)`` for i >= 1.

    >>> s = threshold_tail(0.9, 2, 1)
    >>> bool(np.allclose(s[:4], [1, 0.9, 0.9**3, 0.9**5]))
    True
    """
    _check_load(lam)
    if d < 1 or threshold < 1:
        raise ValueError(f"expected d >= 1 and threshold >= 1, got {d}, {threshold}")
    if lam == 0:
        return np.array([1.0, 0.0])
    K = levels if levels is not None else _threshold_levels(lam, d, threshold, tol)
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

    y = _fixed_point(rhs, jac, np.zeros(K))
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

    Examples
    --------
    >>> s = threshold_fixed_point(0.7, 2, 2)
    >>> bool(np.allclose(s[:8], threshold_tail(0.7, 2, 2)[:8], atol=1e-9))
    True
    >>> [round(float(threshold_fixed_point(0.99, 2, t)[1:].sum() / 0.99), 4) for t in (1, 2, 3)]
    [50.2513, 25.9994, 14.5361]
    """
    from scipy.optimize import brentq

    _check_load(lam)
    if d < 1 or threshold < 1:
        raise ValueError(f"expected d >= 1 and threshold >= 1, got {d}, {threshold}")
    if lam == 0:
        return np.array([1.0, 0.0])

    def low(x: float) -> list[float]:
        g = sum(x**k for k in range(d))
        s = [1.0]
        for _ in range(threshold):
            s.append(lam * (g * (s[-1] - x) + x**d))
        return s

    x = lam if threshold == 1 else brentq(lambda x: low(x)[-1] - x, 0.0, lam, xtol=1e-15, rtol=1e-15)
    s = low(x)
    ratio = lam * x ** (d - 1)
    while s[-1] >= tol and ratio > 0:
        s.append(s[-1] * ratio)
    return np.asarray(s)


# ---------------------------------------------------------------------------------------
# Server pools (infinite-server, optional capacity B)
# ---------------------------------------------------------------------------------------
def jsq_pool_fluid(lam: float, capacity: int | None = None, levels: int | None = None) -> np.ndarray:
    """Fluid limit of JSQ over N server pools with ``lam`` tasks per pool: q_i, i = 0..levels.

    ``q_i`` is the fraction of pools with at least i tasks: 1 for
    ``i <= floor(lam)``, ``lam - floor(lam)`` for ``i = floor(lam) + 1``, 0 above
    (Mukherjee et al.). With a capacity B <= lam every pool is full (q_i = 1 for
    i <= B) and the fraction ``1 - B / lam`` of tasks is blocked.

    Parameters
    ----------
    lam : float
        Tasks per pool per unit time (= mean tasks per pool without blocking).
    capacity : int, optional
        B; tasks finding every pool at B are discarded.
    levels : int, optional
        Length of the returned vector minus one (default ``floor(lam) + 2``, or B).

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> jsq_pool_fluid(2.5).tolist()
    [1.0, 1.0, 1.0, 0.5, 0.0]
    >>> jsq_pool_fluid(2.5, capacity=2).tolist()
    [1.0, 1.0, 1.0]
    """
    if lam < 0:
        raise ValueError(f"expected lam >= 0, got {lam}")
    whole = math.floor(lam)
    if levels is None:
        levels = capacity if capacity is not None and capacity <= whole + 1 else whole + 2
    q = np.zeros(levels + 1)
    q[: min(whole, levels) + 1] = 1.0
    if whole + 1 <= levels:
        q[whole + 1] = lam - whole
    if capacity is not None:
        q[capacity + 1:] = 0.0
    return q


def _poisson_levels(lam: float, tol: float) -> int:
    """A level past which the Poisson(lam) tail, random routing's pool occupancy, is below ``tol``."""
    K = math.ceil(lam) + 1
    while math.exp(K * math.log(lam) - lam - math.lgamma(K + 1.0)) > tol:  # Poisson pmf
        K += 1
    return K + 2


def jsqd_pool_tail(lam: float, d: int, capacity: int | None = None, levels: int | None = None,
                   tol: float = 1e-14) -> np.ndarray:
    """Fixed point of the JSQ(d) mean-field ODE for server pools: q_i, i = 0..K.

    ``dq_i/dt = lam (q_{i-1}^d - q_i^d) - i (q_i - q_{i+1})`` with ``q_0 = 1``
    (Mukherjee et al.): a task goes to the least loaded of d sampled pools, which
    holds at least i-1 but not i tasks with probability ``q_{i-1}^d - q_i^d``;
    the i-th task of a pool leaves at rate 1 per task. With a capacity B the
    system stops at K = B (``q_{B+1} = 0``) and a task is blocked when all d
    sampled pools are full, with probability ``q_B^d``. Without one, or with one
    beyond it, it is truncated where the Poisson(lam) tail of random routing
    (d = 1, which dominates every d) is below ``tol``.

    Parameters
    ----------
    lam : float
        Tasks per pool per unit time.
    d : int
        Pools sampled per task (d = 1: random routing, Poisson(lam) occupancy).
    capacity : int, optional
        B.
    levels : int, optional
        Truncation K when there is no capacity.
    tol : float
        Tail mass for the default truncation.

    Returns
    -------
    numpy.ndarray
        ``[q_0, ..., q_K]``.

    Examples
    --------
    d = 1 is the Poisson(lam) tail; large d approaches the JSQ fluid limit:

    >>> from scipy.stats import poisson
    >>> q = jsqd_pool_tail(2.5, 1)
    >>> bool(np.allclose(q[:6], poisson.sf(np.arange(-1, 5), 2.5), atol=1e-9))
    True
    >>> fluid = jsq_pool_fluid(2.5, levels=5)
    >>> [round(float(np.abs(jsqd_pool_tail(2.5, d)[:6] - fluid).max()), 3) for d in (2, 10, 100)]
    [0.168, 0.042, 0.005]
    >>> q = jsqd_pool_tail(2.5, 1, capacity=3)  # random routing: Erlang B blocking q_B
    >>> bool(abs(q[3] - erlang_b(3, 2.5)) < 1e-9)
    True
    """
    if lam <= 0 or d < 1:
        raise ValueError(f"expected lam > 0 and d >= 1, got {lam}, {d}")
    if capacity is not None:
        # Past where random routing's tail ends, B changes q by less than tol: a huge B costs no huge ODE.
        K = min(capacity, _poisson_levels(lam, tol))
    elif levels is not None:
        K = levels
    else:
        K = _poisson_levels(lam, tol)
    i = np.arange(1, K + 1)

    def rhs(_t: float, y: np.ndarray) -> np.ndarray:
        q = np.concatenate(([1.0], y, [0.0]))
        qd = q**d
        return lam * (qd[i - 1] - qd[i]) - i * (q[i] - q[i + 1])

    def jac(_t: float, y: np.ndarray) -> np.ndarray:
        q = np.concatenate(([1.0], y, [0.0]))
        slope = lam * d * np.abs(q) ** (d - 1)
        J = np.zeros((K, K))
        rows = np.arange(K)
        J[rows, rows] = -slope[1:K + 1] - i
        J[rows[1:], rows[1:] - 1] = slope[1:K]
        J[rows[:-1], rows[:-1] + 1] = i[:-1]
        return J

    y = _fixed_point(rhs, jac, np.zeros(K))
    return np.concatenate(([1.0], np.clip(y, 0.0, 1.0)))


def pool_blocking(lam: float, capacity: int, d: int | None = None) -> float:
    """Fraction of tasks blocked with pool capacity B: exact or mean-field.

    - ``d = 1`` (random routing): every pool is an M/M/B/B loss system with
      offered load lam, so the blocking probability is Erlang B, exactly for any N.
    - ``d > 1``: the JSQ(d) mean field, ``q_B^d`` from `jsqd_pool_tail`; 0 when B is
      past the levels it computes (where random routing's Poisson tail, which
      dominates it, is below 1e-14).
    - ``d = None`` (JSQ): the fluid limit, ``max(0, 1 - B / lam)``.

    Examples
    --------
    >>> round(pool_blocking(2.5, 3, d=1), 6)
    0.282167
    >>> pool_blocking(2.5, 3), round(pool_blocking(4.0, 3), 6)
    (0.0, 0.25)
    """
    if d is None:
        return max(0.0, 1.0 - capacity / lam)
    if d == 1:
        return erlang_b(capacity, lam)
    q = jsqd_pool_tail(lam, d, capacity=capacity)
    return float(q[capacity] ** d) if capacity < len(q) else 0.0


# ---------------------------------------------------------------------------------------
# Exact finite N: the lumped Markov chain of N exponential FIFO servers
# ---------------------------------------------------------------------------------------
def _routing(policy: str, lengths: Sequence[int], d: int, threshold: int) -> np.ndarray:
    """P(the job joins server j), j over positions of ``lengths``, enumerating the probes.

    Probes are d distinct servers, all orders equally likely (the emulator's
    default ``replace: false``); ties are broken uniformly at random.
    """
    n = len(lengths)
    p = np.zeros(n)
    if policy == "random":
        p[:] = 1.0 / n
        return p
    if policy == "jsq":
        low = min(lengths)
        best = [j for j in range(n) if lengths[j] == low]
        p[best] = 1.0 / len(best)
        return p
    probes = list(itertools.permutations(range(n), d))
    weight = 1.0 / len(probes)
    for order in probes:
        if policy == "sqd":
            low = min(lengths[j] for j in order)
            best = [j for j in order if lengths[j] == low]
            for j in best:
                p[j] += weight / len(best)
        elif policy == "threshold":
            chosen = next((j for j in order if lengths[j] < threshold), order[-1])
            p[chosen] += weight
        else:
            raise ValueError(f"unknown policy '{policy}'")
    return p


def exact_supermarket(policy: str, servers: int, lam: float, d: int = 2, threshold: int = 1,
                      levels: int = 40) -> dict[str, float]:
    """Exact stationary metrics of N exp(1) FIFO servers under a symmetric routing policy.

    The state is the sorted vector of queue lengths (the policies below do not
    tell servers apart, so the chain lumps exactly onto it), each at most
    ``levels`` = K; an arrival routed to a server holding K jobs is dropped,
    and the stationary mass of that event is returned as ``truncation`` so that
    callers can check it is negligible. The generator is a ``scipy.sparse``
    matrix; the balance equations are solved directly.

    Parameters
    ----------
    policy : {"random", "jsq", "sqd", "threshold"}
        Routing: uniform; shortest queue (ties at random); shortest of d
        distinct sampled; first of up to d distinct probes with fewer than
        ``threshold`` jobs, else the last probed.
    servers : int
        N (small: the state space has C(N + K, N) states).
    lam : float
        Load; the arrival rate is ``lam N``.
    d, threshold : int
        Policy parameters.
    levels : int
        Truncation K per queue.

    Returns
    -------
    dict
        ``mean_response`` (Little's law over accepted jobs), ``mean_queue_length``
        (per server), ``prob_wait`` (an accepted arrival finds its server busy),
        ``truncation`` (fraction of arrivals dropped by the truncation) and
        ``states``.

    Examples
    --------
    Random routing is M/M/1 per server; JSQ on 2 servers lies between M/M/2 and it:

    >>> round(exact_supermarket("random", 2, 0.5, levels=60)["mean_response"], 6)
    2.0
    >>> jsq = exact_supermarket("jsq", 2, 0.5)["mean_response"]
    >>> bool(mmn_response(2, 0.5) < jsq < 2.0), round(jsq, 4)
    (True, 1.4263)
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.linalg import spsolve

    _check_load(lam)
    K = levels
    states = list(itertools.combinations_with_replacement(range(K + 1), servers))  # sorted tuples
    index = {state: k for k, state in enumerate(states)}
    rows: list[int] = []
    cols: list[int] = []
    rates: list[float] = []
    drop = np.zeros(len(states))  # arrival rate lost to the truncation, per state
    waits = np.zeros(len(states))  # arrival rate that finds its server busy (accepted)
    arrival = lam * servers
    for k, state in enumerate(states):
        p = _routing(policy, state, d, threshold)
        for j in range(servers):
            if p[j] == 0.0:
                continue
            if state[j] >= K:
                drop[k] += arrival * p[j]
                continue
            if state[j] > 0:
                waits[k] += arrival * p[j]
            nxt = list(state)
            nxt[j] += 1
            rows.append(k)
            cols.append(index[tuple(sorted(nxt))])
            rates.append(arrival * p[j])
        for j in range(servers):
            if state[j] > 0:
                nxt = list(state)
                nxt[j] -= 1
                rows.append(k)
                cols.append(index[tuple(sorted(nxt))])
                rates.append(1.0)
    n = len(states)
    Q = csr_matrix((rates, (rows, cols)), shape=(n, n))
    Q = Q - csr_matrix((np.asarray(Q.sum(axis=1)).ravel(), (range(n), range(n))), shape=(n, n))
    # pi Q = 0: replace the balance equation of the empty state by pi_0 = 1 (a sparse
    # row, unlike the normalisation, which would fill the LU factors), then normalise.
    A = Q.T.tolil()
    A[0, :] = 0.0
    A[0, 0] = 1.0
    b = np.zeros(n)
    b[0] = 1.0
    pi = spsolve(A.tocsc(), b, permc_spec="MMD_AT_PLUS_A")
    pi = np.clip(pi, 0.0, None)
    pi /= pi.sum()
    jobs = np.array([sum(state) for state in states], dtype=float)
    lost = float(pi @ drop)
    accepted = arrival - lost
    mean_jobs = float(pi @ jobs)
    return {
        "mean_response": mean_jobs / accepted,
        "mean_queue_length": mean_jobs / servers,
        "prob_wait": float(pi @ waits) / accepted,
        "truncation": lost / arrival,
        "states": float(n),
    }


# ---------------------------------------------------------------------------------------
# Slotted time: one server, Poisson arrivals per slot (Zhou et al.'s setting)
# ---------------------------------------------------------------------------------------
def slotted_md1_response(lam: float, same_slot: bool = True, servers: int = 1) -> float:
    """Mean response, in slots, of a slotted queue with capacity 1 per slot.

    The queue's arrivals per slot, A, are Poisson(lam); or, with ``servers`` n > 1,
    random routing with one decision per slot: the slot's Poisson(lam n) arrivals
    all come here with probability 1/n, so E[A] = lam and E[A^2] = lam + lam^2 n.
    Q (jobs at the start of a slot) follows ``Q' = max(Q + A - 1, 0)`` when a job
    can leave in its arrival slot. With U = 1{Q + A = 0}, Q' = Q + A - 1 + U and
    U^2 = U, (Q + A - 1) U = -U; E[U] = 1 - lam from the means, and the second
    moments give E[Q] = (E[A^2] - lam) / (2 (1 - lam)). A job is present in its
    arrival slot and every slot until the one it leaves in, so by Little's law the
    response is (E[Q] + lam) / lam = 1 + lam n / (2 (1 - lam)): for n = 1 the
    continuous M/D/1 response. When service starts only in the next slot
    (``same_slot=False``), every job stays exactly one slot longer.

    Examples
    --------
    >>> slotted_md1_response(0.8)
    3.0000000000000004
    >>> slotted_md1_response(0.8, same_slot=False)
    4.0
    >>> slotted_md1_response(0.5, servers=10)
    6.0
    """
    _check_load(lam)
    return 1.0 + lam * servers / (2.0 * (1.0 - lam)) + (0.0 if same_slot else 1.0)


def slotted_queue(lam: float, mu: float = 1.0, capacity: str = "constant", same_slot: bool = True,
                  tol: float = 1e-12, servers: int = 1, max_states: int = 8192) -> dict[str, float]:
    """One slotted queue with Poisson(lam) arrivals per slot, from its transition matrix.

    The number Q of jobs at the start of a slot is a Markov chain:
    ``Q' = max(Q + A - S, 0)`` (``same_slot``: arrivals can be served at once) or
    ``Q' = max(Q - S, 0) + A``, with A ~ Poisson(lam) (with ``servers`` n > 1, a
    Poisson(lam n) batch with probability 1/n, else none: random routing with one
    decision per slot, see `slotted_md1_response`) and S the slot's capacity,
    ``mu`` (a whole number) for ``constant`` or Poisson(mu) for ``poisson``. The
    chain is truncated at K states (the top state keeps the overflow) and K is
    doubled until the upper half of the states holds less than ``tol`` of the
    stationary mass (a `ValueError` past ``max_states``); the stationary law
    solves pi P = pi directly.

    Returns ``mean_queue_length`` (jobs present during a slot, E[Q] + lam, the
    emulator's time average) and ``mean_response`` (in slots, by Little's law).

    Examples
    --------
    >>> round(slotted_queue(0.8)["mean_response"], 10) == round(slotted_md1_response(0.8), 10)
    True
    """
    from scipy import stats

    if not 0.0 < lam < mu:
        raise ValueError(f"expected 0 < lam < mu, got lam={lam}, mu={mu}")
    if capacity == "constant" and mu != round(mu):
        raise ValueError(f"constant capacity must be a whole number, got {mu}")
    size = 64
    while True:
        states = np.arange(size)
        arrivals = stats.poisson.pmf(states, lam * servers) / servers
        arrivals[0] += 1.0 - 1.0 / servers
        if capacity == "constant":
            service = np.zeros(size)
            service[int(mu)] = 1.0
        else:
            service = stats.poisson.pmf(states, mu)
        P = np.zeros((size, size))
        if same_slot:
            # D = A - S; law of D at offset size - 1 (index i is d = i - size + 1).
            diff = np.convolve(arrivals, service[::-1])
            below = np.cumsum(diff)
            for q in range(size):
                zero = size - 1 - q  # the index of d = -q
                P[q, 0] = below[zero]
                P[q, 1:] = diff[zero + 1: zero + size]
        else:
            for q in range(size):
                left = np.zeros(size)  # max(q - S, 0)
                left[1: q + 1] = service[q - 1:: -1][:q] if q else 0.0
                left[0] = 1.0 - left[1:].sum()
                P[q] = np.convolve(left, arrivals)[:size]
        P[:, -1] += 1.0 - P.sum(axis=1)  # the overflow stays in the top state
        A = P.T - np.eye(size)
        A[-1] = 1.0
        b = np.zeros(size)
        b[-1] = 1.0
        pi = np.linalg.solve(A, b)
        mean = float(pi @ states)
        if pi[size // 2:].sum() < tol:  # the truncation no longer matters
            break
        if size >= max_states:
            raise ValueError(f"the chain needs more than {size} states at lam={lam}, mu={mu}")
        size *= 2
    present = mean + lam
    return {"mean_queue_length": present, "mean_response": present / lam, "states": float(size)}

