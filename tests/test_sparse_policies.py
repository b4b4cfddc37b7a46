"""JSQ with push updates, JSQ with sparse feedback, LSQ and SQ(d) with memory: exact and statistical checks.

Exact: each policy reduces to a seed policy in a limit, seed for seed (the same
response columns) or decision for decision. Statistical: message counts against
their rates, the sparse-feedback limit, and SQ(d) with memory against the exact
stationary law of its Markov chain on two servers.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from scipy import sparse, stats
from scipy.sparse.linalg import spsolve

import emulator
from emulator import Scenario, ScenarioError
from emulator.model.build import build_model

RESPONSE = ("mean_response", "mean_wait", "prob_wait", "p50_response", "p90_response", "p99_response",
            "mean_queue_length")
EXP = {"kind": "exponential", "mean": 0.05}


def run(policy: str, seed: int, engine: str = "simpy", **options: Any) -> dict[str, Any]:
    settings: dict[str, Any] = {"servers": 10, "load": 0.9, "jobs": 20_000, "warmup_jobs": 2_000, **options}
    row = emulator.simulate(policy, seed=seed, engine=engine, **settings)
    assert row["engine"] == engine, f"{policy}: the engine asked for did not run"
    return row


# JSQ-sparse's and SQ(d) with memory's long runs go to the compiled engine, whose rows are SimPy's, seed for
# seed, at zero latency (their cases in `tests/test_compiled.py`, on kernels the suite builds ahead): the same
# numbers in a fraction of the time.
LONG_RUNS = "compiled"


def same_responses(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(repr(a[key]) == repr(b[key]) for key in RESPONSE)


def interval(values: list[float], confidence: float = 0.99) -> tuple[float, float]:
    """Mean and half-width of the Student-t interval over replications."""
    sample = np.asarray(values)
    half = stats.t.ppf(0.5 + confidence / 2, len(sample) - 1) * sample.std(ddof=1) / np.sqrt(len(sample))
    return float(sample.mean()), float(half)


# -- exact reductions -------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_jsq_push_is_jsq_seed_for_seed_at_zero_latency_with_one_dispatcher(seed: int) -> None:
    push, jsq = run("jsq_push", seed), run("jsq", seed)
    assert same_responses(push, jsq)
    assert push["messages_per_job_query"] == push["messages_per_job_reply"] == 0
    # One update per arrival and per departure: the window's departures differ from its
    # 20,000 arrivals by the change in jobs in system (tens at this load), so 2 to within 0.01.
    assert push["messages_per_job_update"] == push["messages_per_job"]
    assert abs(push["messages_per_job_update"] - 2.0) < 0.01


def test_jsq_push_sends_one_update_per_change_to_each_dispatcher() -> None:
    row = run("jsq_push", 4, dispatchers=3, latency=EXP)
    assert abs(row["messages_per_job_update"] - 2.0 * 3) < 0.03
    assert not same_responses(row, run("jsq", 4, dispatchers=3, latency=EXP))


@pytest.mark.parametrize("period", [1e12, float("inf")])  # no update in the run, and none at all
@pytest.mark.parametrize("options", [{}, {"dispatchers": 3}, {"dispatchers": 3, "dispatcher_shares": [0.5, 0.3, 0.2]},
                                     {"dispatchers": 2, "latency": EXP}, {"time": "slotted"}])
def test_jsq_sparse_without_updates_is_round_robin(options: dict[str, Any], period: float) -> None:
    for seed in (1, 2):
        sparse_row = run("jsq_sparse", seed, period=period, **options)
        assert same_responses(sparse_row, run("round_robin", seed, **options))
        assert sparse_row["messages_per_job"] == 0


def test_lsq_with_one_dispatcher_and_d_equal_n_joins_a_shortest_queue_every_time() -> None:
    # Its choice among the shortest is its own uniform draw, not JSQ's (their indexes order ties
    # apart), so the check is per decision: every job goes to a server of the smallest length.
    point = Scenario.from_dict({"seed": 5, "run": {"jobs": 5_000, "warmup_jobs": 0}, "system": {"servers": 8},
                                "workload": {"load": 0.95}, "policies": [{"name": "lsq", "d": 8}]}).points()[0]
    model = build_model(point, point.policies[0], 5)
    dispatcher, servers = model.dispatchers[0], model.servers
    send, gaps, ties = dispatcher.send, [], []

    def checked(job: Any, server: Any) -> None:
        lengths = [s.length for s in servers]
        gaps.append(server.length - min(lengths))
        ties.append(lengths.count(min(lengths)))
        send(job, server)

    dispatcher.send = checked  # type: ignore[method-assign]
    metrics = model.run()
    assert len(gaps) >= 5_000 and set(gaps) == {0}
    assert max(ties) > 1  # ties happened, so the check covered the tie-break too
    assert metrics["messages_per_job"] == 2 * 8


def test_lsq_with_d_equal_n_matches_jsq_in_law() -> None:
    # Same law, different tie draws: the paired difference over replications is centred on 0.
    differences = [run("lsq", seed, d=10)["mean_response"] - run("jsq", seed)["mean_response"]
                   for seed in range(1, 11)]
    mean, half = interval(differences)
    assert abs(mean) <= half


@pytest.mark.parametrize("options", [{"d": 2}, {"d": 3}, {"d": 2, "dispatchers": 3}, {"d": 2, "latency": EXP}])
def test_sqd_memory_without_memory_is_sqd_seed_for_seed(options: dict[str, Any]) -> None:
    memory, sqd = run("sqd_memory", 6, m=0, **options), run("sqd", 6, **options)
    assert same_responses(memory, sqd)
    assert memory["messages_per_job"] == sqd["messages_per_job"]


def test_jbt_with_a_fixed_threshold_of_zero_is_jiq_seed_for_seed() -> None:
    # JIQ's lightly-loaded extension is JBT-d with a fixed threshold (docs/policies.md); at 0 it is JIQ.
    fixed = {"period": 1e12, "reports": "crossing", "initial_threshold": 0}
    assert same_responses(run("jbt", 7, **fixed), run("jiq", 7))


# -- message counts against their rates --------------------------------------------------------------
@pytest.mark.parametrize("feedback, options, per_server", [
    ("synchronous", {"period": 2.0}, 0.5), ("asynchronous", {"rate": 0.5}, 0.5)])
def test_jsq_sparse_updates_per_job_are_the_update_rate_over_the_arrival_rate(
        feedback: str, options: dict[str, Any], per_server: float) -> None:
    # N D updates per unit time at rate per_server each, over arrivals at 0.9 N: D per_server / 0.9.
    rows = [run("jsq_sparse", seed, feedback=feedback, dispatchers=2, **options) for seed in range(1, 11)]
    mean, half = interval([row["messages_per_job_update"] for row in rows])
    expected = 2 * per_server / 0.9
    assert abs(mean - expected) <= half


def test_jsq_sparse_tends_to_jsq_as_updates_become_continuous() -> None:
    seeds = range(1, 6)
    jsq = [run("jsq", seed, LONG_RUNS)["mean_response"] for seed in seeds]
    gaps = []
    for period in (1.0, 0.1, 0.01):
        rows = [run("jsq_sparse", seed, LONG_RUNS, period=period)["mean_response"] for seed in seeds]
        gaps.append(interval([a - b for a, b in zip(rows, jsq, strict=True)]))
    assert gaps[0][0] > gaps[1][0] > gaps[2][0]
    # At period 0.01 a bound is refreshed every 0.09 arrivals: within 1% of JSQ's mean at the upper end.
    assert gaps[2][0] + gaps[2][1] < 0.01 * np.mean(jsq)


# -- SQ(d) with memory against its exact chain -------------------------------------------------------
def exact_sqd1_memory1(lam: float, levels: int = 80) -> float:
    """Mean response of SQ(1) with memory 1 on two exp(1) servers, arrivals at rate 2 lam, exactly.

    The state is (q0, q1, remembered server) with each q at most ``levels``. An
    arrival draws server s uniformly; if the memory is s it joins s and s stays
    remembered; else it joins the shorter of s and the remembered r (ties: each
    with probability 1/2), and the less loaded of the two after that job is
    remembered (a tie keeps s, the drawn one). Mean response by Little's law.
    """
    states = list(itertools.product(range(levels + 1), range(levels + 1), range(2)))
    index = {state: i for i, state in enumerate(states)}
    rows: list[int] = []
    cols: list[int] = []
    rates: list[float] = []

    def add(source: tuple[int, int, int], target: tuple[int, int, int], rate: float) -> None:
        if max(target[0], target[1]) <= levels:  # beyond the truncation: dropped
            rows.append(index[source])
            cols.append(index[target])
            rates.append(rate)

    for q0, q1, r in states:
        q = [q0, q1]
        for s in (0, 1):
            if s == r:
                after = list(q)
                after[s] += 1
                add((q0, q1, r), (after[0], after[1], s), lam)  # 2 lam x 1/2
                continue
            choices = [(s, 1.0)] if q[s] < q[r] else [(r, 1.0)] if q[r] < q[s] else [(s, 0.5), (r, 0.5)]
            for chosen, p in choices:
                after = list(q)
                after[chosen] += 1
                remembered = s if after[s] <= after[r] else r
                add((q0, q1, r), (after[0], after[1], remembered), lam * p)
        if q0 > 0:
            add((q0, q1, r), (q0 - 1, q1, r), 1.0)
        if q1 > 0:
            add((q0, q1, r), (q0, q1 - 1, r), 1.0)
    n = len(states)
    generator = sparse.csr_matrix((rates, (rows, cols)), shape=(n, n))
    generator = generator - sparse.diags(np.asarray(generator.sum(axis=1)).ravel())
    system = generator.T.tolil()
    system[0, :] = 1.0  # replace one balance equation by the normalisation
    right = np.zeros(n)
    right[0] = 1.0
    pi = spsolve(system.tocsr(), right)
    jobs = sum(p * (q0 + q1) for p, (q0, q1, _) in zip(pi, states, strict=True))
    edge = sum(p for p, (q0, q1, _) in zip(pi, states, strict=True) if max(q0, q1) >= levels - 10)
    assert edge < 1e-9, "truncation too tight"
    return float(jobs / (2 * lam))


def test_sqd_memory_matches_its_exact_chain_on_two_servers() -> None:
    exact = exact_sqd1_memory1(0.8)
    rows = [run("sqd_memory", seed, LONG_RUNS, servers=2, load=0.8, d=1, m=1, jobs=100_000, warmup_jobs=5_000)
            for seed in range(1, 11)]
    mean, half = interval([row["mean_response"] for row in rows])
    assert abs(mean - exact) <= half
    # Memory helps: below SQ(1) = random routing, M/M/1 at 0.8, mean response 5.
    assert exact < 5.0


# -- parameters refused in one line -----------------------------------------------------------------
def refused(policy: dict[str, Any], servers: int = 10) -> str:
    with pytest.raises(ScenarioError) as info:
        Scenario.from_dict({"run": {"jobs": 100, "warmup_jobs": 0}, "system": {"servers": servers},
                            "workload": {"load": 0.9}, "policies": [policy]})
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    return message


@pytest.mark.parametrize("policy, start", [
    ({"name": "sqd_memory", "d": 3, "m": 8}, "policies.0.m: expected at most N - d = 7 servers to remember"),
    ({"name": "sqd_memory", "d": 11, "m": 0}, "policies.0.d: expected at most N=10"),
    ({"name": "sqd_memory", "d": 0}, "policies.0.d: expected a number >= 1, got 0"),
    ({"name": "sqd_memory", "m": -1}, "policies.0.m: expected a number >= 0, got -1"),
    ({"name": "lsq", "d": 11}, "policies.0.d: expected at most N=10"),
    ({"name": "lsq", "d": 0}, "policies.0.d: expected a number >= 1, got 0"),
    ({"name": "jsq_sparse", "period": 0}, "policies.0.period: expected a number > 0"),
    ({"name": "jsq_sparse", "period": -1}, "policies.0.period: expected a number > 0"),
    ({"name": "jsq_sparse", "feedback": "asynchronous"}, "policies.0.rate: expected a number > 0"),
    ({"name": "jsq_sparse", "feedback": "asynchronous", "rate": 0}, "policies.0.rate: expected a number > 0"),
    ({"name": "jsq_sparse", "feedback": "asynchronous", "period": 1}, "policies.0.period: expected no period"),
    ({"name": "jsq_sparse", "rate": 1}, "policies.0.rate: expected no rate with feedback: synchronous"),
    ({"name": "jsq_sparse", "feedback": "sometimes"}, "policies.0.feedback: expected"),
    ({"name": "jsq_sparse", "period": 1e-6}, "policies.0.period: expected at most 1,000 update messages"),
    ({"name": "jsq_sparse", "period": float("nan")}, "policies.0.period: expected a number > 0.0, got nan"),
    ({"name": "jsq_sparse", "feedback": "asynchronous", "rate": float("inf")},
     "policies.0.rate: expected at most 1,000 update messages"),
])
def test_bad_parameters_are_refused_in_one_line(policy: dict[str, Any], start: str) -> None:
    assert refused(policy).startswith(start)
