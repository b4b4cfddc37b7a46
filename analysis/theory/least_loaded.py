"""Mean field of LL(d): each job joins the least loaded (least unfinished work) of d sampled FIFO servers.

Hellemans and Van Houdt (SIGMETRICS 2018). For Poisson arrivals at rate ``lam``
per server and exp(1) job sizes, a server's unfinished work W in the N → ∞
limit has the complementary distribution ``F(w) = P(W > w)``, the solution of

    F'(w) = lam F(w)^d - F(w),    F(0) = lam,

(a level-crossing balance: work above w drains at rate 1 and is crossed upward
by a job of size > w - u joining a server at work u, the least of d), which is

    F(w) = (lam + (lam^(1-d) - lam) e^((d-1) w))^(-1/(d-1)).

A job waits the least of d independent workloads, ``P(wait > w) = F(w)^d``, so
``E[R] = 1 + int_0^inf F(w)^d dw``; integrating the ODE gives the same as
``E[W] / lam`` (Brumelle's law with exp(1) sizes), in closed form with the Gauss
hypergeometric function (`least_loaded_response`). d = 1 is the M/M/1 queue.
"""

from __future__ import annotations

import numpy as np
from scipy.special import hyp2f1

from .queues import check_load


def _check_d(d: int) -> None:
    if not (isinstance(d, int) and d >= 1):
        raise ValueError(f"expected a whole number d >= 1, got {d!r}")


def least_loaded_tail(lam: float, d: int, w: float | np.ndarray) -> float | np.ndarray:
    """Mean-field ``P(W > w)`` of a server's unfinished work under LL(d), exp(1) sizes.

    Written as ``lam e^(-w) (1 - lam^d + lam^d e^(-(d-1) w))^(-1/(d-1))``
    (the closed form of the module docstring, with ``lam^(1-d) e^((d-1) w)`` taken out), so that
    no power overflows, whatever d and w.

    Examples
    --------
    >>> float(least_loaded_tail(0.9, 2, 0.0))  # the fraction of busy servers is the load
    0.9
    >>> round(float(least_loaded_tail(0.5, 1, 2.0)), 12)  # M/M/1: lam e^(-(1 - lam) w) = e^(-1) / 2
    0.183939720586
    """
    check_load(lam)
    _check_d(d)
    w = np.asarray(w, dtype=float)
    if d == 1:
        return lam * np.exp(-(1.0 - lam) * w)
    a = 1.0 / (d - 1)
    power = lam ** float(d)
    return lam * np.exp(-w) * (1.0 - power + power * np.exp(-(d - 1) * w)) ** -a


def least_loaded_response(lam: float, d: int) -> float:
    """Mean-field mean response time of LL(d), exp(1) sizes, in mean service times.

    ``E[R] = (1 - lam^d)^(-1/(d-1)) 2F1(1/(d-1), 1/(d-1); 1 + 1/(d-1); -lam^d / (1 - lam^d))``,
    which is ``E[W] / lam`` with ``E[W] = int_0^inf P(W > w) dw`` (substitute ``t = e^(-(d-1) w)``).
    For d = 2 it is ``-log(1 - lam^2) / lam^2``; d = 1 gives the M/M/1 queue's ``1 / (1 - lam)``.

    Examples
    --------
    >>> round(least_loaded_response(0.9, 2), 11)  # -log(1 - 0.81) / 0.81 = 2.0502854405205...
    2.05028544052
    >>> round(least_loaded_response(0.9, 1), 10)
    10.0
    >>> [round(least_loaded_response(0.9, d), 4) for d in (2, 3, 5)]
    [2.0503, 1.4875, 1.1868]
    """
    check_load(lam)
    _check_d(d)
    if lam == 0:
        return 1.0
    if d == 1:
        return 1.0 / (1.0 - lam)
    a = 1.0 / (d - 1)
    power = lam ** float(d)
    if power == 0.0:  # lam^d below the smallest float: no job ever waits
        return 1.0
    return float((1.0 - power) ** -a * hyp2f1(a, a, 1.0 + a, -power / (1.0 - power)))


def least_loaded_response_ode(lam: float, d: int) -> float:
    """`least_loaded_response` from a numerical solve of the mean-field ODE, as an independent check.

    Integrates ``F' = lam F^d - F`` from ``F(0) = lam`` together with ``int F^d`` (scipy's
    ``solve_ivp``, tight tolerances) until F is below 1e-15 of its start.
    """
    from scipy.integrate import solve_ivp

    check_load(lam)
    _check_d(d)
    if lam == 0:
        return 1.0

    def drift(_w: float, y: np.ndarray) -> np.ndarray:
        f = y[0]
        return np.array([lam * f**d - f, f**d])

    # F decays at least as fast as e^(-(1 - lam) w): past this span it is below 1e-15 of F(0).
    span = 35.0 / (1.0 - lam)
    solution = solve_ivp(drift, (0.0, span), [lam, 0.0], method="LSODA", rtol=1e-12, atol=1e-14)
    if not solution.success:
        raise RuntimeError(f"LL({d}) mean-field ODE at load {lam}: {solution.message}")
    return 1.0 + float(solution.y[1, -1])


__all__ = ["least_loaded_response", "least_loaded_response_ode", "least_loaded_tail"]
