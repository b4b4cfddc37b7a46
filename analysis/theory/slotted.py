"""Slotted time: one server, Poisson arrivals per slot (Zhou et al.'s setting).

Random routing makes every server such a queue: the slotted M/D/1 queue in
closed form (`slotted_md1_response`), any whole or Poisson capacity per slot
from its transition matrix (`slotted_queue`). Responses are in slots.
"""

from __future__ import annotations

import numpy as np

from .queues import check_load


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
    check_load(lam)
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
