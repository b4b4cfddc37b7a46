"""Exact finite N: the lumped Markov chain of N exponential FIFO servers under symmetric routing.

`exact_supermarket` solves the stationary law of the sorted queue lengths
under random, JSQ, SQ(d) or threshold routing, for the small N where mean
fields and single queues are only approximations or bounds.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from .queues import check_load


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

    >>> from analysis.theory import mmn_response
    >>> round(exact_supermarket("random", 2, 0.5, levels=60)["mean_response"], 6)
    2.0
    >>> jsq = exact_supermarket("jsq", 2, 0.5)["mean_response"]
    >>> bool(mmn_response(2, 0.5) < jsq < 2.0), round(jsq, 4)
    (True, 1.4263)
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.linalg import spsolve

    check_load(lam)
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
