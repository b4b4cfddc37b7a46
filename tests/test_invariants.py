"""Tier 2: invariants and reproducibility, on seeded random workloads.

Nothing here is a statistic against theory: each check holds for every sample
path (conservation, FIFO order, message accounting, Little's law as an exact
identity on the window), or compares two runs that must agree.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from helpers.scenarios import make_point, scenario_dict, traced
from helpers.window import Windowed, listed_servers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import emulator
from emulator.contract import POISSON, check_conservation, check_little_exact, check_timestamps
from emulator.model.build import build_model
from emulator.model.trace import Trace
from emulator.workload.streams import replication_seed

POLICIES = [{"name": "random"}, {"name": "round_robin"}, {"name": "jsq"}, {"name": "sqd", "d": 2},
            {"name": "jiq"}, {"name": "jbt", "d": 2, "period": 5}, {"name": "threshold", "d": 2, "threshold": 2}]


@pytest.mark.parametrize("latency", [None, 0.1])
@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p["name"])
def test_conservation_timestamps_little(policy: dict[str, Any], latency: float | None) -> None:
    trace = traced(policy, servers=4, jobs=800, warmup=100, load=0.85, latency=latency, seed=7, **POISSON)
    trace.run()
    check_conservation(trace)
    check_timestamps(trace)
    check_little_exact(trace)


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p["name"])
def test_little_law_over_the_window(policy: dict[str, Any]) -> None:
    # L = λ W with L = mean_queue_length * N, λ = jobs / sim_time, W = mean_response (zero
    # latency, so the response is the time at the server). The two sides differ only by the
    # time at servers of warm-up jobs inside the window and of measured jobs after it: about
    # (jobs present at the ends) x W over jobs x W, i.e. L / jobs < 40 / 20,000 = 0.2% here
    # (random routing at load 0.8 on 10 servers holds about 40 jobs). 1% leaves room for
    # that and fails on any real accounting error (a per-server factor is 10x).
    row = emulator.simulate(policy["name"], servers=10, load=0.8, jobs=20_000, seed=3,
                            **{k: v for k, v in policy.items() if k != "name"})
    little = row["jobs"] / row["sim_time"] * row["mean_response"]
    assert row["mean_queue_length"] * 10 == pytest.approx(little, rel=0.01)


# -- message accounting --------------------------------------------------------------------------
@pytest.mark.parametrize("policy, per_job", [
    ({"name": "random"}, 0), ({"name": "round_robin"}, 0), ({"name": "jsq"}, 2 * 6),
    ({"name": "sqd", "d": 2}, 4), ({"name": "sqd", "d": 3}, 6), ({"name": "sqd", "d": 3, "replace": True}, 6),
    ({"name": "sqd", "d": "ceil(sqrt(N))"}, 6),
])
@pytest.mark.parametrize("dispatchers", [1, 3])
def test_exact_messages_per_job(policy: dict[str, Any], per_job: int, dispatchers: int) -> None:
    # Zero latency: every message of a job is sent when it arrives, so the window holds
    # exactly 2 per probed server per job: 0 for random and RR, 2N for JSQ, 2d for SQ(d).
    row = emulator.simulate(policy["name"], servers=6, load=0.9, jobs=2000, seed=11, dispatchers=dispatchers,
                            **{k: v for k, v in policy.items() if k != "name"})
    assert row["messages_per_job"] == per_job
    assert row["messages_per_job_query"] == row["messages_per_job_reply"] == per_job / 2
    others = ("idle", "report", "threshold")
    assert all(row[f"messages_per_job_{kind}"] == 0 for kind in others)
    assert row["messages_per_server_time"] == pytest.approx(per_job * 2000 / (6 * row["sim_time"]))


@pytest.mark.parametrize("policy, per_job", [({"name": "jsq"}, 5), ({"name": "sqd", "d": 2}, 2),
                                             ({"name": "least_work", "d": 3}, 3)])
def test_messages_with_latency_counted_when_sent(policy: dict[str, Any], per_job: int) -> None:
    # With latency L the queries still leave when the job arrives: exactly N (or d) per job in
    # the window. A query is answered when it arrives, so each job's replies are sent at
    # arrival + L, and they count where that falls: in the window [t0, t1) or not.
    latency = 0.1
    trace = traced(policy, servers=5, jobs=1000, warmup=50, load=0.9, latency=latency, seed=5, **POISSON)
    metrics = trace.run()
    assert metrics["messages_per_job_query"] == per_job
    t0 = trace.job(50).arrival
    t1 = trace.job(1050).arrival
    answered = sum(1 for job in trace.jobs if t0 <= job.arrival + latency < t1)
    assert answered != 1000  # the boundary effect is present in this sample (else the test is moot)
    assert metrics["messages_per_job_reply"] * 1000 == pytest.approx(per_job * answered)
    assert trace.message_times("reply") == sorted(trace.message_times("reply"))


# JIQ, JBT-d and the threshold policy: exact counts from the events that cause them, in
# test_accounting.py.


# -- reproducibility and common random numbers ----------------------------------------------------
def _without_wall(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != "wall_seconds"}


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p["name"])
def test_same_seed_same_row(policy: dict[str, Any]) -> None:
    params = {k: v for k, v in policy.items() if k != "name"}
    options = dict(servers=5, load=0.8, jobs=1500, dispatchers=2, latency={"kind": "exponential", "mean": 0.05})
    first = emulator.simulate(policy["name"], seed=9, **options, **params)
    again = emulator.simulate(policy["name"], seed=9, **options, **params)
    other = emulator.simulate(policy["name"], seed=10, **options, **params)
    assert _without_wall(first) == _without_wall(again)
    assert first["mean_response"] != other["mean_response"]


def test_progress_callback_does_not_change_results() -> None:
    # Running in slices (for progress bars) must give the same metrics as one run.
    point = make_point({"name": "jbt", "d": 2, "period": 3}, servers=4, jobs=3000, load=0.9, **POISSON)
    plain = build_model(point, point.policies[0], 21).run()
    seen: list[int] = []
    sliced = build_model(point, point.policies[0], 21).run(seen.append)
    assert plain == sliced
    assert seen == sorted(seen) and seen[-1] == 3000


def test_run_is_reproducible_and_independent_of_workers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    data = scenario_dict([{"name": "random"}, {"name": "sqd", "d": 2}, {"name": "jiq"}], servers=4,
                         jobs=600, warmup=60, replications=2, sweep={"workload.load": [0.5, 0.8]}, **POISSON)
    scenario = emulator.Scenario.from_dict(data)
    one = emulator.run(scenario, workers=1, out=tmp_path / "a")
    again = emulator.run(scenario, workers=1, out=tmp_path / "b")
    parallel = emulator.run(scenario, workers=2, out=tmp_path / "c")
    frames = [pd.read_csv(tmp_path / name / "runs.csv").drop(columns="wall_seconds") for name in "abc"]
    assert len(frames[0]) == 2 * 3 * 2
    pd.testing.assert_frame_equal(frames[0], frames[1])
    pd.testing.assert_frame_equal(frames[0], frames[2])
    summaries = [pd.read_csv(tmp_path / name / "summary.csv") for name in "abc"]
    keep = [c for c in summaries[0].columns if not c.startswith("wall_seconds")]
    pd.testing.assert_frame_equal(summaries[0][keep], summaries[1][keep])
    pd.testing.assert_frame_equal(summaries[0][keep], summaries[2][keep])
    assert one.runs.drop(columns="wall_seconds").equals(again.runs.drop(columns="wall_seconds"))
    assert parallel.runs.drop(columns="wall_seconds").equals(one.runs.drop(columns="wall_seconds"))
    # The seed column reproduces a row through simulate(); every policy of a replication
    # shares it (common random numbers).
    runs = one.runs
    assert runs.groupby("replication")["seed"].nunique().eq(1).all()
    row = runs[(runs.policy == "SQ(2)") & (runs.replication == 1) & (runs.point == 1)].iloc[0]
    assert int(row.seed) == replication_seed(scenario.seed, 1)
    again_row = emulator.simulate("sqd", d=2, servers=4, load=0.8, jobs=600, warmup_jobs=60,
                                  seed=int(row.seed), **POISSON)
    for metric in ("mean_response", "messages_per_job", "mean_queue_length", "sim_time", "p90_response"):
        assert again_row[metric] == row[metric]


def _job_stream(policy: dict[str, Any], **options: Any) -> list[tuple[float, float, int]]:
    trace = traced(policy, seed=13, servers=5, jobs=400, warmup=40, load=0.9, dispatchers=2,
                   arrivals={"kind": "mmpp2", "burstiness": 3, "switch_rate": 0.2},
                   service={"kind": "hyperexponential", "mean": 1, "scv": 4}, **options)
    trace.run()
    return [(job.arrival, job.size, dispatcher) for _, dispatcher, job in trace.received[:440]]


def test_every_policy_sees_the_same_jobs() -> None:
    # Common random numbers: arrival times, sizes and the dispatcher of each job come from
    # their own streams, so they do not depend on the policy or on the network.
    reference = _job_stream({"name": "random"})
    assert len(reference) == 440
    assert len({d for _, _, d in reference}) == 2 and len({s for _, s, _ in reference}) > 400
    for policy in POLICIES[1:]:
        assert _job_stream(policy) == reference, policy
    assert _job_stream({"name": "jsq"}, latency={"kind": "exponential", "mean": 0.2}) == reference


# -- property tests: random small scenarios ---------------------------------------------------------
@st.composite
def small_scenarios(draw: Any) -> dict[str, Any]:
    servers = draw(st.integers(1, 5))
    name = draw(st.sampled_from(sorted(emulator.REGISTRY)))
    policy: dict[str, Any] = {"name": name}
    if name in ("sqd", "threshold", "jbt"):
        replace = name != "jbt" and draw(st.booleans())
        policy["d"] = draw(st.integers(1, 4 if replace else servers))
        if name != "jbt":
            policy["replace"] = replace
    if name in ("lsq", "sqd_memory", "batch_sqd", "least_work", "redundancy", "late_binding", "lor", "sed"):
        policy["d"] = draw(st.integers(1, servers))
    if name == "sqd_memory":
        policy["m"] = draw(st.integers(0, servers - policy["d"]))
    if name == "jsq_sparse":
        if draw(st.booleans()):
            policy.update(feedback="asynchronous", rate=draw(st.sampled_from([0.1, 1.0, 5.0])))
        else:
            policy["period"] = draw(st.sampled_from([0.2, 2.0, 1e9]))
    if name == "threshold":
        policy["threshold"] = draw(st.integers(1, 3))
    if name == "jbt":
        policy["period"] = draw(st.sampled_from([0.5, 2.0, 10.0]))
    if name == "jiq":
        policy["memory"] = draw(st.sampled_from([None, 1, 3]))
    copies = name == "redundancy"  # FIFO queues of copies, without capacity: it refuses the rest
    if copies:
        policy.update(d=draw(st.integers(1, servers)), cancel=draw(st.sampled_from(["completion", "start"])),
                      copies=draw(st.sampled_from(["independent", "identical"])))
    dispatchers = draw(st.integers(1, 3))
    pool = not copies and name != "late_binding" and draw(st.booleans())  # reservations need FIFO servers
    return scenario_dict(
        policy, servers=servers, dispatchers=dispatchers, jobs=draw(st.integers(20, 150)),
        warmup=draw(st.integers(0, 20)),
        load=draw(st.sampled_from([0.3, 0.7, 0.95] + ([1.5, 3.0] if pool else []))),
        discipline="pool" if pool else "fifo",
        capacity=draw(st.sampled_from([None, 1, 3])) if pool or (not copies and draw(st.booleans())) else None,
        speeds=draw(st.none() | st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=servers, max_size=servers)),
        latency=draw(st.sampled_from([None, 0.05, {"kind": "exponential", "mean": 0.2}])),
        arrivals={"kind": draw(st.sampled_from(["poisson", "deterministic", "batch_poisson", "mmpp2"]))},
        service={"kind": draw(st.sampled_from(["exponential", "deterministic"])), "mean": 1},
        seed=draw(st.integers(0, 2**32)),
        allow_unstable=True,  # random routing may overload a slow server: the accounting must still hold
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_scenarios())
def test_random_small_scenarios_conserve_and_account(data: dict[str, Any]) -> None:
    scenario = emulator.Scenario.from_dict(data)
    point = scenario.points()[0]
    policy = point.policies[0]
    snapshot = listed_servers if policy.name == "jbt" else None
    window = Windowed(Trace(build_model(point, policy, scenario.seed)), snapshot)
    trace = window.trace
    metrics = trace.run()
    check_conservation(trace)
    check_timestamps(trace)
    check_little_exact(trace)
    jobs, n = metrics["jobs"], point.servers
    total = metrics["messages_per_job"] * jobs
    instant = scenario.network.latency.mean == 0
    if policy.name in ("random", "round_robin"):
        assert total == 0
    if not instant:
        return
    params = policy.params
    if policy.name == "jsq":
        assert total == 2 * n * jobs
    if policy.name == "sqd":
        assert total == 2 * params["d"] * jobs
    if policy.name == "threshold":
        assert total == pytest.approx(2 * len(window.inside("asks")))
    if policy.name == "jiq":
        idle_periods = sum(1 for _, _, left in window.inside("departures") if left == 0)
        probes = (params["d"] or 0) if point.scenario.system.dispatchers > 1 else 0
        assert window.count(metrics, "idle") == idle_periods
        assert total == pytest.approx(idle_periods * (1 + 2 * probes))
    if policy.name == "jbt":
        via_list = sum(1 for _, _, job_id in window.inside("accepted") if trace.job(job_id).via_list)
        change = window.edges[1]["extra"] - window.edges[0]["extra"]
        assert window.count(metrics, "report") == via_list + change
        updates = len(window.inside("asks"))
        assert window.count(metrics, "threshold") == n * updates
        assert window.count(metrics, "query") == window.count(metrics, "reply") == params["d"] * updates
