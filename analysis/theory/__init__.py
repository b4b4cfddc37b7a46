"""Theory references for lbemu, computed independently of the simulator.

Every function here is a closed form, a fixed point of a mean-field ODE, or the
stationary distribution of a small Markov chain; none of them imports
``emulator``. Published reference values (Mitzenmacher's SQ(2) table, the
threshold model's closed form) appear as doctests of the modules below, which
``tests/test_theory.py`` runs.

Conventions, as in the emulator: time is measured in mean service times of a
unit-speed server; ``lam`` is the load, i.e. the arrival rate per server
(FIFO servers, so ``lam < 1``) or the arrival rate per pool (pools, any
``lam > 0``); ``servers`` is N.

Every public function of the modules is importable from here
(``analysis.theory.erlang_b``, ``analysis.theory.slotted_queue``, ...).

Contents
--------
`analysis.theory.queues`: single queues and the central queue (a lower bound for any dispatcher)
    `mm1_response`, `mm1_response_quantile`, `mm1k`, `md1_response`, `mg1_response`
    (Pollaczek-Khinchine), `mg1_ps_response` (processor sharing); `erlang_b`, `erlang_c`, `mmn_response`.
`analysis.theory.mean_field`: N → ∞ mean fields of FIFO servers
    Supermarket model, SQ(d) (Mitzenmacher; Vvedenskaya, Dobrushin, Karpelevich):
    `sqd_tail`, `sqd_response`, `sqd_finite_n_correction`.
    Join-Idle-Queue with dispatcher memory A (Lu et al.; Gamarnik, Tsitsiklis, Zubeldia):
    `jiq_response`, `jiq_messages`.
    Threshold model (Mitzenmacher): `threshold_tail`, `threshold_response`,
    `threshold_probes`, `threshold_fixed_point`, `threshold_metrics`.
`analysis.theory.batch`: batch sampling (Ying, Srikant, Kang), batches of k jobs to the k shortest of dk
    sampled servers: `batch_tail`, `batch_response`.
`analysis.theory.least_loaded`: LL(d), the least unfinished work of d servers (Hellemans, Van Houdt)
    `least_loaded_tail`, `least_loaded_response`, `least_loaded_response_ode` (its check).
`analysis.theory.pools`: server pools (Mukherjee, Borst, van Leeuwaarden, Whiting)
    `jsq_pool_fluid`, `jsqd_pool_tail`, `pool_blocking`.
`analysis.theory.slotted`: slotted time (Zhou et al.)
    `slotted_md1_response`, `slotted_queue`: one server, Poisson arrivals per slot.
`analysis.theory.redundancy`: Redundancy-d, N → ∞ (Gardner et al.)
    `redundancy_response` (closed form), `redundancy_tail`; checked by
    `redundancy_response_series` and `redundancy_response_quadrature`.
`analysis.theory.chains`: exact finite N
    `exact_supermarket`: the stationary distribution of the lumped CTMC of N
    exponential FIFO servers under random, JSQ, SQ(d) or threshold routing.
`analysis.theory.heterogeneous`: exact finite N, unequal speeds
    `exact_speeds`: the stationary distribution of the CTMC of N exponential FIFO
    servers of unequal rates under SED or JSQ (ties at random or to the fastest).
"""

from __future__ import annotations

from .batch import batch_response, batch_tail
from .chains import exact_supermarket
from .heterogeneous import exact_speeds
from .least_loaded import least_loaded_response, least_loaded_response_ode, least_loaded_tail
from .mean_field import (
    jiq_messages,
    jiq_response,
    sqd_finite_n_correction,
    sqd_response,
    sqd_tail,
    threshold_fixed_point,
    threshold_metrics,
    threshold_probes,
    threshold_response,
    threshold_tail,
)
from .pools import jsq_pool_fluid, jsqd_pool_tail, pool_blocking
from .queues import (
    erlang_b,
    erlang_c,
    md1_response,
    mg1_ps_response,
    mg1_response,
    mm1_response,
    mm1_response_quantile,
    mm1k,
    mmn_response,
)
from .redundancy import (
    redundancy_response,
    redundancy_response_quadrature,
    redundancy_response_series,
    redundancy_tail,
)
from .slotted import slotted_md1_response, slotted_queue

__all__ = [
    "batch_response",
    "batch_tail",
    "erlang_b",
    "erlang_c",
    "exact_speeds",
    "exact_supermarket",
    "jiq_messages",
    "jiq_response",
    "jsq_pool_fluid",
    "jsqd_pool_tail",
    "least_loaded_response",
    "least_loaded_response_ode",
    "least_loaded_tail",
    "md1_response",
    "mg1_ps_response",
    "mg1_response",
    "mm1_response",
    "mm1_response_quantile",
    "mm1k",
    "mmn_response",
    "pool_blocking",
    "redundancy_response",
    "redundancy_response_quadrature",
    "redundancy_response_series",
    "redundancy_tail",
    "slotted_md1_response",
    "slotted_queue",
    "sqd_finite_n_correction",
    "sqd_response",
    "sqd_tail",
    "threshold_fixed_point",
    "threshold_metrics",
    "threshold_probes",
    "threshold_response",
    "threshold_tail",
]
