"""Single queues and the central queue: M/M/1, M/M/1/K, M/G/1 (Pollaczek-Khinchine), M/G/1-PS, Erlang B and C.

Random routing makes every server one of these single queues; the central
M/M/N queue (Erlang C) and the central loss system (Erlang B) bound what any
dispatcher achieves. Time is in mean service times (see `analysis.theory`).
"""

from __future__ import annotations

import math

import numpy as np


def check_load(lam: float) -> None:
    """Refuse a load outside [0, 1), where FIFO servers have no stationary law (shared by every theory module)."""
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
    check_load(lam)
    return 1.0 / (1.0 - lam)


def mm1_response_quantile(lam: float, q: float) -> float:
    """The q-quantile of M/M/1 response time (exp(1) service): it is exponential with rate 1 - lam.

    >>> round(mm1_response_quantile(0.5, 0.5), 6) == round(2 * math.log(2), 6)
    True
    """
    check_load(lam)
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
    check_load(rho)
    second = mean * mean * (1.0 + scv)
    return mean + lam * second / (2.0 * (1.0 - rho))


def mg1_ps_response(lam: float, mean: float = 1.0) -> float:
    """Mean response time of the M/G/1 processor-sharing queue: ``m / (1 - rho)``, ``rho = lam * m``.

    Insensitive: it depends on the service law through its mean m only (Kleinrock; Sakata, Noguchi
    and Oizumi). A job of size x stays ``x / (1 - rho)`` on average, so it loses
    ``x rho / (1 - rho)`` to sharing, the M/M/1 FIFO queue's mean wait for x = m.

    Examples
    --------
    Equal to M/M/1 FIFO's; with more variable sizes, FIFO's is longer (hyperexponential, scv 3):

    >>> round(mg1_ps_response(0.7), 12) == round(mm1_response(0.7), 12)
    True
    >>> round(mg1_ps_response(0.7), 4), round(mg1_response(0.7, scv=3.0), 4)
    (3.3333, 5.6667)
    >>> mg1_ps_response(0.25, mean=2.0)
    4.0
    """
    rho = lam * mean
    check_load(rho)
    return mean / (1.0 - rho)


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
    check_load(lam)
    return 1.0 + erlang_c(servers, lam * servers) / (servers * (1.0 - lam))
