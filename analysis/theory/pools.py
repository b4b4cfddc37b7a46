"""Server pools (infinite-server, optional capacity B): the JSQ fluid limit, the JSQ(d) mean field, blocking.

Mukherjee, Borst, van Leeuwaarden and Whiting: ``lam`` is the arrival rate per
pool, ``q_i`` the fraction of pools with at least i tasks.
"""

from __future__ import annotations

import math

import numpy as np

from .mean_field import ODE_LEVELS, ODE_WORK, fixed_point
from .queues import erlang_b


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
    """A level past which the Poisson(lam) tail, random routing's pool occupancy, is below ``tol``.

    The search stops past `ODE_LEVELS` (which `jsqd_pool_tail` refuses anyway), so it
    costs at most that many steps whatever lam.
    """
    K = math.ceil(lam) + 1
    while K <= ODE_LEVELS and math.exp(K * math.log(lam) - lam - math.lgamma(K + 1.0)) > tol:  # Poisson pmf
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

    Raises
    ------
    ValueError
        If K exceeds `analysis.theory.mean_field.ODE_LEVELS`.
    RuntimeError
        If the ODE takes more than `analysis.theory.mean_field.ODE_WORK` to settle (see `fixed_point`).

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
    if K > ODE_LEVELS:  # a load of hundreds of tasks per pool, and a capacity as large
        raise ValueError(f"the JSQ({d}) mean field of pools at load {lam} needs more than {ODE_LEVELS} levels")
    i = np.arange(1, K + 1)
    # Time in units of 1 / scale: the same fixed point, with drifts of order K however large lam
    # is, so that the fixed point's tolerance on them stays reachable (lam = 1e300, B = 3 never settled).
    scale = max(1.0, lam / K)
    rate, power = lam / scale, float(min(d, 10**300))

    def occupancy(y: np.ndarray) -> np.ndarray:
        # Clipped to [0, 1], where q lives: outside it q^d can overflow for a large d.
        return np.concatenate(([1.0], np.clip(y, 0.0, 1.0), [0.0]))

    def rhs(_t: float, y: np.ndarray) -> np.ndarray:
        q = occupancy(y)
        qd = q**power
        return rate * (qd[i - 1] - qd[i]) - i / scale * (q[i] - q[i + 1])

    def jac(_t: float, y: np.ndarray) -> np.ndarray:
        q = occupancy(y)
        slope = rate * power * q ** (power - 1)
        J = np.zeros((K, K))
        rows = np.arange(K)
        J[rows, rows] = -slope[1:K + 1] - i / scale
        J[rows[1:], rows[1:] - 1] = slope[1:K]
        J[rows[:-1], rows[:-1] + 1] = i[:-1] / scale
        return J

    y = fixed_point(rhs, jac, np.zeros(K), work=ODE_WORK)
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
