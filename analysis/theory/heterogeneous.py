"""Exact finite N with unequal speeds: the Markov chain of N exponential FIFO servers under SED or JSQ.

`exact_speeds` solves the stationary law of the vector of queue lengths (servers of
unequal speeds are told apart, so the chain does not lump as `chains.exact_supermarket`'s)
when every job joins, among all N servers, the least (length + 1) / speed (SED) or the
least length (JSQ), ties uniformly at random or to the fastest.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from .queues import check_load


def sed_routing(lengths: Sequence[int], speeds: Sequence[float], rule: str, ties: str) -> np.ndarray:
    """P(the job joins server j): the least value among all N, ties at random or to the fastest.

    >>> sed_routing((3, 1), (4.0, 1.0), "expected_delay", "random").tolist()
    [1.0, 0.0]
    >>> sed_routing((1, 1), (1.0, 2.0), "length", "fastest").tolist()
    [0.0, 1.0]
    """
    values = [(n + 1) / s if rule == "expected_delay" else float(n) for n, s in zip(lengths, speeds, strict=True)]
    low = min(values)
    best = [j for j, v in enumerate(values) if v == low]
    if ties == "fastest":
        top = max(speeds[j] for j in best)
        best = [j for j in best if speeds[j] == top]
    p = np.zeros(len(lengths))
    p[best] = 1.0 / len(best)
    return p


def _moved(state: tuple[int, ...], j: int, by: int) -> tuple[int, ...]:
    """``state`` with server ``j``'s length moved ``by``."""
    moved = list(state)
    moved[j] += by
    return tuple(moved)


def exact_speeds(speeds: Sequence[float], load: float, rule: str = "expected_delay", ties: str = "random",
                 levels: int = 30) -> dict[str, float]:
    """Exact stationary metrics of N exponential FIFO servers of rates ``speeds`` under SED or JSQ.

    Parameters
    ----------
    speeds : sequence of float
        Each server's service rate (jobs of mean size 1); N = len(speeds), small (the
        chain has (K + 1)^N states).
    load : float
        Arrival rate / total service rate, in (0, 1).
    rule : {"expected_delay", "length"}
        Join the least (length + 1) / speed, or the least length.
    ties : {"random", "fastest"}
        Among equal values: uniformly at random, or the fastest (then at random).
    levels : int
        Truncation K per queue: an arrival routed to a server holding K jobs is
        dropped, and that mass is returned as ``truncation``.

    Returns
    -------
    dict
        ``mean_response`` (Little's law over accepted jobs), ``mean_queue_length`` (per
        server), ``truncation`` and ``states``.

    Examples
    --------
    One server is M/M/1; equal speeds and either rule are JSQ:

    >>> round(exact_speeds([2.0], 0.5, levels=80)["mean_response"], 6)
    1.0
    >>> round(exact_speeds([1.0, 1.0], 0.5)["mean_response"], 4)
    1.4263
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.linalg import spsolve

    check_load(load)
    n = len(speeds)
    K = levels
    states = list(itertools.product(range(K + 1), repeat=n))
    index = {state: k for k, state in enumerate(states)}
    arrival = load * float(sum(speeds))
    rows: list[int] = []
    cols: list[int] = []
    rates: list[float] = []
    drop = np.zeros(len(states))
    for k, state in enumerate(states):
        p = sed_routing(state, speeds, rule, ties)
        for j in range(n):
            if p[j] == 0.0:
                continue
            if state[j] >= K:
                drop[k] += arrival * p[j]
                continue
            rows.append(k)
            cols.append(index[_moved(state, j, 1)])
            rates.append(arrival * p[j])
        for j in range(n):
            if state[j] > 0:
                rows.append(k)
                cols.append(index[_moved(state, j, -1)])
                rates.append(float(speeds[j]))
    size = len(states)
    Q = csr_matrix((rates, (rows, cols)), shape=(size, size))
    Q = Q - csr_matrix((np.asarray(Q.sum(axis=1)).ravel(), (range(size), range(size))), shape=(size, size))
    A = Q.T.tolil()  # pi Q = 0 with pi_0 = 1 in place of one balance equation, then normalised
    A[0, :] = 0.0
    A[0, 0] = 1.0
    b = np.zeros(size)
    b[0] = 1.0
    pi = np.clip(spsolve(A.tocsc(), b), 0.0, None)
    pi /= pi.sum()
    jobs = np.array([sum(state) for state in states], dtype=float)
    lost = float(pi @ drop)
    mean_jobs = float(pi @ jobs)
    return {"mean_response": mean_jobs / (arrival - lost), "mean_queue_length": mean_jobs / n,
            "truncation": lost / arrival, "states": float(size)}
