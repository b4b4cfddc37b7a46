"""The least-work policy: the servers' unfinished work, its decisions, its messages, its refusals.

A server's unfinished work (`Server.work`) is checked against a recomputation from
the jobs it holds at every decision; least-work-left (d = N) with FIFO servers
against an independent FCFS central queue fed the same arrivals and sizes, job by
job; the LL(d) mean field and the M/M/N queue against simulation in
tests/test_theory.py.
"""

from __future__ import annotations

import heapq
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from helpers.intervals import check, column, interval, replicate
from helpers.scenarios import traced
from scipy.integrate import quad

import analysis.theory as theory
import emulator
from emulator.contract import POISSON
from emulator.errors import ScenarioError
from emulator.policies import least_work
from emulator.policies.least_work import LeastWorkConfig, LeastWorkPolicy


def _held(trace: Any) -> list[dict[int, Any]]:
    """Per server, the jobs it holds now (id -> job), kept up to date from the model's own calls."""
    held: list[dict[int, Any]] = [{} for _ in trace.model.servers]
    for server in trace.model.servers:
        accept = server.accept

        def accepting(job: Any, accept: Any = accept, here: dict[int, Any] = held[server.id]) -> None:
            accept(job)
            if not job.blocked:
                here[job.id] = job
        server.accept = accepting
    leave = trace.model.recorder.leave

    def leaving(job: Any, now: float) -> None:
        del held[job.server][job.id]
        leave(job, now)
    trace.model.recorder.leave = leaving
    return held


def _remaining(server: Any, jobs: dict[int, Any], now: float) -> float:
    """The unfinished work recomputed from the jobs held: each one's size at this speed, less what is done."""
    total = 0.0
    for job in jobs.values():
        service = job.size * server.inv_speed
        started = getattr(job, "start", None)
        done = 0.0 if started is None or (server.discipline == "fifo" and job is not server.queue[0]) \
            else now - started
        total += service - done
    return total


@pytest.mark.parametrize("options", [
    {},
    {"speeds": [0.5, 1.0, 2.0, 1.5, 1.0, 3.0]},
    {"discipline": "pool", "capacity": 3, "load": 1.5},
    {"discipline": "pool", "capacity": 4, "load": 2.0, "speeds": [0.5, 1.0, 2.0, 1.5, 1.0, 3.0]},
    {"capacity": 2},
], ids=["fifo", "fifo-speeds", "pool", "pool-speeds", "fifo-capacity"])
def test_every_job_joins_the_least_unfinished_work(options: dict[str, Any]) -> None:
    # d = N: at every decision each server's answer is its unfinished work recomputed from the
    # jobs it holds (never negative; 0 exactly when it is empty), and the job joins the least.
    trace = traced({"name": "least_work", "d": "N"}, servers=6, jobs=3000, warmup=0, seed=7,
                   **{"load": 0.9, **POISSON, **options})
    held = _held(trace)
    servers = trace.model.servers
    env = trace.model.env
    checked = []
    for dispatcher in trace.model.dispatchers:
        send = dispatcher.send

        def sending(job: Any, server: Any, send: Any = send) -> None:
            now = env.now
            works = [s.work() for s in servers]
            expected = [_remaining(s, held[s.id], now) for s in servers]
            assert works == pytest.approx(expected, rel=1e-9, abs=1e-9)
            assert all(w > 0.0 if s.length else w == 0.0 for w, s in zip(works, servers, strict=True))
            assert works[server.id] == min(works)
            checked.append(min(works) > 0.0)
            send(job, server)
        dispatcher.send = sending
    trace.run()
    assert len(checked) >= 3000 and any(checked) and not all(checked)  # both busy and idle choices


def test_least_work_left_is_the_central_fcfs_queue() -> None:
    # With FIFO servers and d = N every job starts when the first server is free: the FCFS M/G/N
    # queue. Recomputed from the run's own arrivals and sizes, each job's start and departure match.
    trace = traced({"name": "least_work", "d": "N"}, servers=5, jobs=4000, warmup=0, seed=3, load=0.95,
                   arrivals={"kind": "poisson"}, service={"kind": "lognormal", "mean": 1.0, "scv": 4.0})
    trace.run()
    jobs = sorted((job for _, _, job in trace.left), key=lambda job: job.id)
    assert len(jobs) > 3000
    free = [0.0] * 5  # when each server of the central queue is next free
    for job in jobs:
        start = max(job.arrival, heapq.heappop(free))
        assert job.start == pytest.approx(start, rel=1e-12, abs=1e-9)
        heapq.heappush(free, start + job.size)
    assert any(job.start > job.arrival for job in jobs)  # jobs did wait


@pytest.mark.parametrize("options", [
    {"d": 2}, {"d": 3, "dispatchers": 3}, {"d": "N", "discipline": "pool", "capacity": 2, "load": 1.2},
], ids=["d2", "d3-dispatchers-3", "lwl-pool"])
def test_messages_are_d_queries_and_d_replies_per_job(options: dict[str, Any]) -> None:
    options = dict(options)
    d = options.pop("d")
    row = emulator.simulate("least_work", servers=6, jobs=3000, seed=5, engine="simpy", d=d, **options)
    per = 6 if d == "N" else d
    assert row["messages_per_job_query"] == row["messages_per_job_reply"] == per
    assert row["messages_per_job"] == 2 * per


def test_with_latency_each_reply_is_the_work_when_its_query_arrives(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every ask queries d distinct servers and gets d answers, each the target's unfinished work
    # computed when its query arrived (recorded there, with the time); and every ask sends its job.
    trace = traced({"name": "least_work", "d": 3}, servers=6, jobs=2000, warmup=0, seed=11, load=0.9,
                   latency={"kind": "exponential", "mean": 0.2}, **POISSON)
    answered: dict[float, float] = {}
    original = least_work.unfinished_work

    def recording(server: Any) -> float:
        answered.setdefault(original(server), trace.model.env.now)  # (0.0, idle, recurs)
        return original(server)
    monkeypatch.setattr(least_work, "unfinished_work", recording)
    trace.run()
    assert len(trace.asks) > 1500
    for decided, targets, replies in trace.asks:
        assert len(set(targets)) == 3 and len(replies) == 3
        assert all(answered[reply] < decided for reply in replies)  # asked on arrival, before the decision
    assert len({job_id for _, _, job_id, _, _ in trace.sent}) == len(trace.asks)


def _point(discipline: str = "fifo", time: str = "continuous", failures: Any = None, servers: int = 4) -> Any:
    system = SimpleNamespace(discipline=discipline, time=time, failures=failures)
    return SimpleNamespace(servers=servers, dispatchers=1, rate=1.0, scenario=SimpleNamespace(system=system))


def test_check_refuses_what_the_servers_cannot_answer() -> None:
    config = LeastWorkConfig(d=2)
    assert LeastWorkPolicy.check(config, _point()) == {}
    assert LeastWorkPolicy.check(config, _point("pool")) == {}
    assert LeastWorkPolicy.check(config, _point("ps")) == {
        "name": "expected system.discipline fifo or pool (the servers whose unfinished work least_work reads), "
                "got 'ps'"}
    assert "expected at most N=1" in LeastWorkPolicy.check(config, _point(servers=1))["d"]


@pytest.mark.parametrize(("system", "message"), [
    ({"time": "slotted"}, "policies.0.name: expected system.time: continuous (a slotted server's unfinished "
                          "work is not defined), got 'slotted'"),
    ({"failures": {"up": {"kind": "exponential", "mean": 100}, "down": {"kind": "exponential", "mean": 1}}},
     "policies.0.name: expected no system.failures (a failing server's unfinished work is not tracked), "
     "got failures"),
])
def test_a_scenario_it_cannot_run_is_refused_in_one_line(system: dict[str, Any], message: str) -> None:
    data = {"system": {"servers": 4, **system}, "workload": {"load": 0.5},
            "network": {"timeout": 1.0} if "failures" in system else {},
            "policies": [{"name": "least_work", "d": 2}]}
    with pytest.raises(ScenarioError) as error:
        emulator.Scenario.from_dict(data).points()
    assert str(error.value) == message


# -- theory: the LL(d) mean field, and LWL as the central queue ------------------------------------------
@pytest.mark.parametrize("lam", [0.3, 0.7, 0.9, 0.99])
@pytest.mark.parametrize("d", [1, 2, 3, 10, 1000])
def test_mean_field_closed_form_matches_its_ode_and_its_tail(lam: float, d: int) -> None:
    # Three computations of E[R]: the hypergeometric closed form, a numerical solve of the ODE
    # F' = lam F^d - F (scipy's LSODA), and the integral of the closed-form tail's d-th power.
    closed = theory.least_loaded_response(lam, d)
    assert theory.least_loaded_response_ode(lam, d) == pytest.approx(closed, rel=1e-8)
    tail = quad(lambda w: float(theory.least_loaded_tail(lam, d, w)) ** d, 0.0, np.inf, limit=500)[0]
    assert 1.0 + tail == pytest.approx(closed, rel=1e-8)
    # Brumelle's law for exp(1) sizes: E[W] = lam E[R], with E[W] the integral of the tail itself.
    work = quad(lambda w: float(theory.least_loaded_tail(lam, d, w)), 0.0, np.inf, limit=500)[0]
    assert work == pytest.approx(lam * closed, rel=1e-8)


def test_mean_field_limits() -> None:
    assert theory.least_loaded_response(0.8, 1) == pytest.approx(theory.mm1_response(0.8), rel=1e-12)
    assert theory.least_loaded_response(0.9, 2) == pytest.approx(-np.log(1 - 0.81) / 0.81, rel=1e-12)
    # Joining the least work beats joining the shortest queue of the same d servers, in the mean field.
    assert theory.least_loaded_response(0.9, 2) < theory.sqd_response(0.9, 2)
    assert float(theory.least_loaded_tail(0.9, 3, 0.0)) == pytest.approx(0.9)  # busy fraction = load


@pytest.mark.slow
def test_ll2_converges_to_its_mean_field() -> None:
    """LL(2) at N = 100 and 300, loads 0.7 and 0.9: the mean field, with the 1/N term extrapolated away.

    A mean field's error at finite N is O(1/N) (measured here: N (E_N - E) stays near 0.6 at
    load 0.7 and 3.7 at 0.9 from N = 100 to 600), so ``(3 E_300 - E_100) / 2`` estimates the
    limit with an error of o(1/N); its interval comes from the replications' pairs. On the
    compiled engine, whose rows are SimPy's (the equivalence cases ``least_work*``): 400,000
    jobs a replication, about 0.3 s each. Two intervals (Bonferroni).
    """
    for lam in (0.7, 0.9):
        small = replicate(610, 8, policy="least_work", d=2, servers=100, load=lam, jobs=400_000,
                          warmup_jobs=40_000, engine="compiled")
        large = replicate(620, 8, policy="least_work", d=2, servers=300, load=lam, jobs=400_000,
                          warmup_jobs=40_000, engine="compiled")
        limit = [(3 * b["mean_response"] - a["mean_response"]) / 2 for a, b in zip(small, large, strict=True)]
        check(f"LL(2) load {lam}, N -> inf", interval(limit, 2), theory.least_loaded_response(lam, 2))
        assert column(large, "messages_per_job").mean == 4.0


@pytest.mark.slow
def test_least_work_left_matches_erlang_c() -> None:
    """LWL (d = N) at N = 20, load 0.9: the M/M/N queue, exactly (no systematic term)."""
    rows = replicate(630, 8, policy="least_work", d="N", servers=20, load=0.9, jobs=400_000,
                     warmup_jobs=40_000, engine="compiled")
    check("LWL N=20 load 0.9", column(rows, "mean_response"), theory.mmn_response(20, 0.9))


def test_theory_rows_name_the_mean_field_and_the_central_queue() -> None:
    from analysis.references import references

    scenario = emulator.Scenario.from_dict({"system": {"servers": 50}, "workload": {"load": 0.9},
                                            "policies": [{"name": "least_work", "d": 2},
                                                         {"name": "least_work", "d": "N"},
                                                         {"name": "least_work", "d": 1}]})
    point = scenario.points()[0]
    ll2, lwl, one = (references(point, policy)["mean_response"] for policy in point.policies)
    assert (ll2.value, ll2.label) == (theory.least_loaded_response(0.9, 2), "mean field, N → ∞")
    assert (lwl.value, lwl.label) == (theory.mmn_response(50, 0.9), "M/M/N (Erlang C), exact")
    assert (one.value, one.label) == (theory.mm1_response(0.9), "M/M/1, exact")
