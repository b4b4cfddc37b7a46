"""Statistics against theory for the paths that `test_theory` does not reach.

The same rules as there (its module docstring): fixed seeds, Student-t intervals
over independent replications, Bonferroni within a test, every reference from
`analysis.theory` or a closed form derived next to the check, and `check`
refuses a tolerance of 4% of the reference or more.

- the inputs: the moments of every service law and the long-run rate and
  burstiness of the bursty arrival processes, and that the model draws exactly
  these streams;
- random routing over unequal speeds, and FIFO capacity (M/M/1/K);
- JSQ(2) over pools with capacity against the mean-field blocking;
- JBT-d's weighting by speed, through the policy;
- JIQ with several dispatchers;
- latency: exact for the policies that ignore state, a paired check for the others.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from helpers.intervals import LEVEL, check, column, interval, replicate
from helpers.scenarios import traced
from scipy import stats

import analysis.theory as theory
import emulator
from emulator.workload import arrivals
from emulator.workload.distributions import Law
from emulator.workload.streams import generator


def normal_quantile(family: int) -> float:
    return float(stats.norm.ppf(1.0 - (1.0 - LEVEL) / family / 2.0))


# ---------------------------------------------------------------------------------------
# Inputs: service laws and arrival processes
# ---------------------------------------------------------------------------------------
LAWS = [
    Law("exponential", 2.0), Law("erlang", 2.0, k=3), Law("hyperexponential", 2.0, shape_scv=4.0),
    Law("lognormal", 2.0, shape_scv=0.5), Law("pareto", 2.0, alpha=6.0),
]


@pytest.mark.parametrize("law", LAWS, ids=lambda law: law.kind)
def test_service_law_mean_and_scv(law: Law) -> None:
    """Mean and squared coefficient of variation of 8 x 200,000 draws: a family of 2 intervals.

    The sample scv of each replication is a ratio estimator, biased by O(1/n) = 5e-6
    relative: far below the interval, so no allowance.
    """
    means, scvs = [], []
    for r in range(8):
        draws = law.sampler(np.random.default_rng(100 + r))
        x = np.fromiter((next(draws) for _ in range(200_000)), dtype=float, count=200_000)
        means.append(x.mean())
        scvs.append(x.var(ddof=1) / x.mean() ** 2)
    check(f"{law.kind} mean", interval(means, 2), law.mean)
    check(f"{law.kind} scv", interval(scvs, 2), law.scv)
    assert Law("deterministic", 2.0).scv == 0.0 and next(Law("deterministic", 2.0).sampler(None)) == 2.0  # type: ignore[arg-type]


def _counts(kind: str, rate: float, seed: int, horizon: float, window: float, **options: Any) -> np.ndarray:
    """Arrivals of ``arrivals.gaps`` in consecutive windows of length ``window`` over [0, horizon)."""
    gaps = arrivals.gaps(kind, rate, np.random.default_rng(seed), **options)
    times: list[float] = []
    now = 0.0
    while now < horizon:
        now += next(gaps)
        times.append(now)
    return np.bincount((np.asarray(times[:-1]) / window).astype(int), minlength=int(horizon / window))[
        : int(horizon / window)]


@pytest.mark.parametrize("kind, options, dispersion", [
    # MMPP-2 with rates b*lam (a fraction 1/(b+1) of the time) and lam/b, switching at total
    # rate s = (b+1)^2 c / b: Var N(t) = lam t + 2 pi_1 pi_2 (l_1 - l_2)^2 (s t - 1 + e^(-s t)) / s^2.
    ("mmpp2", {"burstiness": 3.0, "switch_rate": 0.5}, None),
    # Batch Poisson, geometric batches of mean m: compound Poisson, Var N(t) / E N(t) =
    # E[B^2] / E[B] = 2m - 1 for every t.
    ("batch_poisson", {"mean_batch": 3.0}, 5.0),
])
def test_bursty_arrivals_rate_and_dispersion(kind: str, options: dict[str, Any], dispersion: float | None) -> None:
    """Long-run rate and index of dispersion of counts in windows of 5 time units: a family of 2.

    8 replications of 20,000 time units at rate 4 (80,000 arrivals each). The sample
    variance of 4,000 windows that are correlated (MMPP-2 switches about every 1.3
    time units, well inside a window) is biased by O(1/windows): no allowance.
    """
    lam, window, horizon = 4.0, 5.0, 20_000.0
    if dispersion is None:
        b, c = options["burstiness"], options["switch_rate"]
        s = (b + 1.0) ** 2 * c / b
        pi_high, pi_low = 1.0 / (b + 1.0), b / (b + 1.0)
        excess = 2 * pi_high * pi_low * (b * lam - lam / b) ** 2 * (s * window - 1 + math.exp(-s * window)) / s**2
        dispersion = 1.0 + excess / (lam * window)
    rates, indices = [], []
    for r in range(8):
        counts = _counts(kind, lam, 200 + r, horizon, window, **options)
        rates.append(counts.sum() / horizon)
        indices.append(counts.var(ddof=1) / counts.mean())
    check(f"{kind} rate", interval(rates, 2), lam)
    check(f"{kind} index of dispersion", interval(indices, 2), dispersion)


@pytest.mark.parametrize("arrivals_kind, service", [
    ({"kind": "mmpp2", "burstiness": 3.0, "switch_rate": 0.5}, {"kind": "hyperexponential", "mean": 1, "scv": 4}),
    ({"kind": "batch_poisson", "mean_batch": 3.0}, {"kind": "lognormal", "mean": 1, "scv": 0.5}),
    ({"kind": "poisson"}, {"kind": "pareto", "mean": 1, "alpha": 6.0}),
])
def test_the_model_draws_these_streams(arrivals_kind: dict[str, Any], service: dict[str, Any]) -> None:
    # The streams tested above are the ones a model uses: arrival times are the running sum
    # of `arrivals.gaps` and sizes are `Law.sampler` draws, from the named per-seed streams.
    seed = 77
    trace = traced({"name": "random"}, seed=seed, servers=4, jobs=500, warmup=0, load=0.5, arrivals=arrivals_kind,
                   service=service)
    trace.run()
    point = trace.model
    options = {k: v for k, v in arrivals_kind.items() if k != "kind"}
    gaps = arrivals.gaps(arrivals_kind["kind"], point.rate, generator(seed, "arrivals"), **options)
    law = Law(service["kind"], 1.0, shape_scv=service.get("scv"), alpha=service.get("alpha"))
    sizes = law.sampler(generator(seed, "sizes"))
    now = 0.0
    for job in trace.jobs:
        now += next(gaps)
        assert job.arrival == pytest.approx(now, rel=1e-12) and job.size == next(sizes)


# ---------------------------------------------------------------------------------------
# Random routing: unequal speeds, FIFO capacity
# ---------------------------------------------------------------------------------------
def test_random_routing_over_unequal_speeds_is_a_mixture_of_mm1() -> None:
    """50 servers of speed 1 and 50 of speed 2 at load 0.5: each gets Poisson arrivals at rate
    a = 0.5 * 150 / 100 = 0.75 and is an M/M/1 queue of service rate mu, so a job's mean
    response is the average of 1 / (mu - a) over the servers: (4 + 0.8) / 2 = 2.4.
    Exact for every N (Poisson thinning); no systematic term."""
    speeds = [1.0, 2.0] * 50
    rows = replicate(1200, 8, policy="random", servers=100, load=0.5, jobs=100_000, speeds=speeds,
                     service="exponential")
    a = 0.5 * sum(speeds) / len(speeds)
    reference = float(np.mean([theory.mm1_response(a / mu) / mu for mu in speeds]))
    assert reference == pytest.approx(2.4)
    check("random, speeds 1 and 2", column(rows, "mean_response"), reference)


def test_random_routing_with_fifo_capacity_is_mm1k() -> None:
    """Random routing to FIFO servers holding at most K = 3 jobs, load 0.9: each is M/M/1/K.

    Blocking and mean response of accepted jobs from `theory.mm1k` (exact for every
    N, Poisson thinning): a family of 2 intervals."""
    rows = replicate(1300, 6, policy="random", servers=100, load=0.9, jobs=100_000, capacity=3,
                     service="exponential")
    exact = theory.mm1k(0.9, 3)
    check("random, M/M/1/3 blocking", column(rows, "blocked_fraction", family=2), exact["blocking"])
    check("random, M/M/1/3 response", column(rows, "mean_response", family=2), exact["mean_response"])


# ---------------------------------------------------------------------------------------
# JSQ(2) over pools with capacity
# ---------------------------------------------------------------------------------------
@pytest.mark.slow
def test_jsq2_pools_block_as_the_mean_field() -> None:
    """JSQ(2), N = 1000 pools of capacity 3 at lam = 2.5 tasks per pool: blocking =
    `pool_blocking(2.5, 3, d=2)` = q_3^2 = 0.148 (both sampled pools full).

    Systematic term: the mean-field occupancies q_i are off by at most about 2/N at
    finite N (the occupancy check in test_theory), so q_3^2 by at most 2 q_3 (2/N)
    = 0.0015 here: the allowance. Warm-up: the default 10% of 200,000 jobs is 8
    time units, where pools relax at rate 1 (e^-8 is negligible).
    """
    n, lam, capacity = 1000, 2.5, 3
    rows = replicate(1400, 6, policy="sqd", d=2, servers=n, load=lam, jobs=200_000, discipline="pool",
                     capacity=capacity)
    reference = theory.pool_blocking(lam, capacity, d=2)
    allowance = 2 * math.sqrt(reference) * 2.0 / n
    check("JSQ(2) pools B=3 blocking", column(rows, "blocked_fraction"), reference, allowance)


# ---------------------------------------------------------------------------------------
# JBT-d: weighting by speed
# ---------------------------------------------------------------------------------------
def test_jbt_picks_listed_servers_in_proportion_to_speed() -> None:
    """Every job taken from the list: P(server j) = mu_j / (sum of mu over the list then).

    The listed ids and the pick are recorded at each dispatch of a run with speeds
    1 and 3. Summing the indicator "a fast server was picked" over the dispatches
    gives a sum of independent-given-the-past Bernoulli terms whose conditional
    probabilities are known, so (picks - sum p) / sqrt(sum p (1 - p)) is
    asymptotically standard normal (martingale CLT): the tolerance is its 95%
    quantile. It must also be able to tell uniform picks apart.
    """
    speeds = [1.0, 1.0, 1.0, 1.0, 3.0, 3.0, 3.0, 3.0]
    trace = traced({"name": "jbt", "d": 2, "period": 2.0}, seed=5, servers=8, jobs=6000, warmup=0, load=0.7,
                   speeds=speeds, arrivals={"kind": "poisson"}, service={"kind": "exponential", "mean": 1})
    model = trace.model
    seen: list[tuple[list[int], Any]] = []

    def recorded(dispatcher: Any, receive: Any) -> Any:
        def receiving(job: Any) -> None:
            listed = list(dispatcher.state.ids)
            receive(job)
            if job.via_list:
                seen.append((listed, job))
        return receiving

    for dispatcher in model.dispatchers:  # each hands its jobs to the policy through `receive`
        dispatcher.receive = recorded(dispatcher, dispatcher.receive)
    trace.run()
    fast = {sid for sid, mu in enumerate(speeds) if mu > 1}
    p_weighted, p_uniform, picks = [], [], 0
    for listed, job in seen:
        weights = [speeds[sid] for sid in listed]
        p_weighted.append(sum(w for sid, w in zip(listed, weights, strict=True) if sid in fast) / sum(weights))
        p_uniform.append(sum(1 for sid in listed if sid in fast) / len(listed))
        picks += job.server in fast
    mixed = sum(1 for p in p_uniform if 0 < p < 1)
    assert mixed > 500  # lists holding both kinds, where the weights matter
    expected = float(np.sum(p_weighted))
    sd = math.sqrt(float(np.sum(np.multiply(p_weighted, np.subtract(1, p_weighted)))))
    z = normal_quantile(1)
    print(f"JBT weighted picks of fast servers: {picks} vs {expected:.1f} ± {z * sd:.1f}; "
          f"uniform would give {np.sum(p_uniform):.1f}")
    assert abs(picks - expected) <= z * sd
    assert abs(float(np.sum(p_uniform)) - expected) > 3 * z * sd  # a speed-blind pick would fail


# ---------------------------------------------------------------------------------------
# JIQ with several dispatchers
# ---------------------------------------------------------------------------------------
@pytest.mark.slow
def test_jiq_random_with_two_dispatchers_has_almost_no_waiting() -> None:
    """JIQ-Random, D = 2 dispatchers, N = 1000, load 0.8: response -> 1 as N -> infinity.

    With D fixed each I-queue holds O(N) ids, so a job almost always finds one, and a
    listed server is idle unless a random job (from a dispatcher whose I-queue was
    empty) reached it first. The fraction of jobs that land on a busy server is
    exactly ``prob_wait`` (exp service), and such a job waits the residual service
    of one job plus the few overflow jobs ahead of it: at most 2 on average, as in
    test_theory's single-dispatcher check. So the response lies in [1, 1 + 2 P(wait)]
    with P(wait) bounded by its interval on the same runs; it must itself be small
    (below 1%), the mean-field value being 0. The I-queues empty far more often
    than a binomial split of the idle servers suggests (each one is a nearly
    balanced random walk of tokens in and jobs out), which is why N / D is large
    here: at N = 500 and D = 4, 2.8% of jobs wait. A family of 2 intervals.
    """
    rows = replicate(1500, 6, policy="jiq", dispatchers=2, servers=1000, load=0.8, jobs=100_000)
    waiting = column(rows, "prob_wait", family=2)
    assert waiting.mean + waiting.half < 0.01
    bound = 2 * (waiting.mean + waiting.half)
    check("JIQ-Random D=2 response", column(rows, "mean_response", family=2), 1.0 + bound / 2, bound / 2)
    # Each idle token starts one busy period of a server that got a job while idle.
    check("JIQ-Random D=2 messages", column(rows, "messages_per_job", family=2), 1.0 - bound / 4, bound / 4)


# ---------------------------------------------------------------------------------------
# Latency
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["random", "round_robin"])
def test_state_blind_policies_shift_by_the_latency_seed_for_seed(name: str) -> None:
    # A policy that ignores server state makes the same choices whatever the latency, so
    # with deterministic latency m every job reaches its server m later and then waits
    # exactly as before: response + m, same waits, same jobs, on the same seed.
    m = 0.3
    options = dict(servers=10, load=0.9, jobs=20_000, seed=3)
    base = emulator.simulate(name, **options)
    late = emulator.simulate(name, latency={"kind": "deterministic", "mean": m}, **options)
    assert late["mean_response"] == pytest.approx(base["mean_response"] + m, rel=1e-9)
    assert late["mean_wait"] == pytest.approx(base["mean_wait"], rel=1e-9)
    assert late["prob_wait"] == base["prob_wait"]


HOPS = {"jsq": lambda k: 3, "sqd": lambda k: 3, "jiq": lambda k: 1, "jbt": lambda k: 1,
        "threshold": lambda k: 2 * k + 1}


@pytest.mark.parametrize("policy", [{"name": "jsq"}, {"name": "sqd", "d": 2}, {"name": "jiq"},
                                    {"name": "jbt", "d": 2, "period": 5.0},
                                    {"name": "threshold", "d": 3, "threshold": 1}], ids=lambda p: p["name"])
def test_dispatch_delay_is_the_message_hops(policy: dict[str, Any]) -> None:
    # Deterministic latency m: a job reaches its server after one hop (the transfer) plus a
    # round trip per probe made for it: 2 hops for JSQ's and SQ(d)'s parallel queries, 2 per
    # sequential probe of the threshold policy, none for JIQ's and JBT-d's lists.
    m = 0.1
    trace = traced(policy, seed=9, servers=6, jobs=1500, warmup=0, load=0.8, latency=m,
                   arrivals={"kind": "poisson"}, service={"kind": "exponential", "mean": 1})
    trace.run()
    hops = HOPS[policy["name"]]
    arrived = {job_id for _, _, job_id in trace.accepted}  # at a server by the end of the run
    rounds = 0
    for job in trace.jobs:
        if job.id not in arrived:
            continue
        delay = (job.at_server - job.arrival) / m
        if policy["name"] == "threshold":
            # Probes of different jobs interleave: read each job's count k off its delay, which
            # must then be 2k + 1 hops with 1 <= k <= d, and the k's add up to the rounds asked.
            k = round((delay - 1) / 2)
            assert 1 <= k <= policy["d"]
            rounds += k
        else:
            k = 0
        assert delay == pytest.approx(hops(k), abs=1e-9)
    if policy["name"] == "threshold":
        elsewhere = len(trace.jobs) - len(arrived)
        assert rounds <= len(trace.asks) <= rounds + policy["d"] * elsewhere
        assert rounds > 1.2 * len(arrived)  # some jobs needed more than one probe


@pytest.mark.slow
def test_stale_information_costs_waiting_on_the_same_jobs() -> None:
    """Latency 0.4 against none, N = 10, load 0.9, same seeds.

    A policy that acts on queue lengths, tokens or reports acts on older news with
    latency, so its jobs wait longer at the servers than on the same jobs without it;
    a latency path that delivered news at once would show no difference. Random
    routing, which uses no news, bounds the loss from above. Paired intervals over 8
    replications: a family of 2 per policy, 10 intervals.
    """
    latency = {"kind": "deterministic", "mean": 0.4}
    policies = [{"name": "jsq"}, {"name": "sqd", "d": 2}, {"name": "jiq"}, {"name": "jbt", "d": 2, "period": 5.0},
                {"name": "threshold", "d": 2, "threshold": 1}]
    options = dict(servers=10, load=0.9, jobs=20_000)
    random = replicate(1600, 8, policy="random", **options)
    for entry in policies:
        params = {k: v for k, v in entry.items() if k != "name"}
        fresh = replicate(1600, 8, policy=entry["name"], **options, **params)
        stale = replicate(1600, 8, policy=entry["name"], latency=latency, **options, **params)
        loss = interval([b["mean_wait"] - a["mean_wait"] for a, b in zip(fresh, stale, strict=True)], 10)
        gap = interval([c["mean_wait"] - b["mean_wait"] for b, c in zip(stale, random, strict=True)], 10)
        print(f"{entry['name']}: wait with latency - without {loss}; random - with latency {gap}")
        assert loss.mean - loss.half > 0, entry
        assert gap.mean - gap.half > 0, entry
