"""Batch sampling (Ying, Srikant, Kang): the N -> infinity mean field of ``batch_sqd`` with ``fill: shortest``.

Batches of k jobs arrive at rate λN/k (λ jobs per server and unit time); each samples
L = dk servers and sends its k jobs to the k shortest of them, one each; service is
exponential with rate 1. In the limit the sampled lengths are independent with tail
s_i (the fraction of servers with at least i jobs). With X_j ~ Bin(L, 1 - s_j), the
servers sampled that hold fewer than j jobs, the batch's jobs that join a server of
length at least j - 1 number (k - X_{j-1})^+, so

    ds_i/dt = (λ/k) (E[(k - X_{i-1})^+] - E[(k - X_i)^+]) - (s_i - s_{i+1}),

and summing the fixed point's equations from level i up (the flow across each cut
balances) gives the recursion

    s_i = (λ/k) E[(k - X_{i-1})^+],  s_0 = 1.

With k = 1 it is SQ(d)'s ``s_i = λ s_{i-1}^d`` (`sqd_tail`). s_1 = λ (every sampled
server counts). If d (1 - λ) > 1, E[X_1] = dk(1 - λ) exceeds k, so s_2 -> 0 as k grows:
the jobs of large batches find idle servers, and the mean response tends to 1.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from .mean_field import LEVELS
from .queues import check_load


def batch_tail(lam: float, d: int, k: int, tol: float = 1e-16) -> np.ndarray:
    """Mean-field fraction of servers with at least i jobs, i = 0, 1, ..., until it falls below ``tol``.

    Parameters
    ----------
    lam : float
        Load in [0, 1): jobs per server and unit time.
    d : int
        Servers sampled per job of a batch, >= 1.
    k : int
        Jobs per batch, >= 1 (every batch the same size).
    tol : float
        Truncation: the last entry is the first below ``tol``.

    Examples
    --------
    >>> np.round(batch_tail(0.5, 2, 1, tol=1e-3), 6).tolist()  # k = 1: SQ(2)
    [1.0, 0.5, 0.125, 0.007812, 3.1e-05]
    """
    check_load(lam)
    if d < 1 or k < 1:
        raise ValueError(f"expected d >= 1 and k >= 1, got d={d}, k={k}")
    values = [1.0]
    while values[-1] >= tol and lam > 0:
        if len(values) > LEVELS:
            raise ValueError(f"the batch-sampling tail at load {lam} holds more than {LEVELS:,} levels above {tol}")
        values.append(lam * _short(values[-1], d * k, k) / k)
    return np.asarray(values)


def _short(s: float, samples: int, k: int) -> float:
    """E[(k - X)^+] for X ~ Bin(samples, 1 - s): the batch's jobs that find no sampled server below the level.

    Summed over Y = samples - X ~ Bin(samples, s), the samples at or above the level, so that a
    tiny s keeps its digits (1 - s would round them away).
    """
    above = np.arange(samples - k + 1, samples + 1)  # Y > samples - k leaves Y - (samples - k) jobs
    return float(np.sum((above - (samples - k)) * stats.binom.pmf(above, samples, s)))


def batch_response(lam: float, d: int, k: int) -> float:
    """Mean-field mean response time: ``sum_{i>=1} s_i / lam`` (Little's law per server).

    >>> round(batch_response(0.5, 2, 1), 6)  # SQ(2): 1 + 0.25 + 0.015625 + ...
    1.265686
    """
    check_load(lam)
    if lam == 0:
        return 1.0
    return float(batch_tail(lam, d, k)[1:].sum() / lam)
