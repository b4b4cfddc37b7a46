"""Persistent-Idle, LOR and SED: exact message accounting, and the exact statements that tie them to JSQ."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.intervals import check, column, interval, replicate
from helpers.scenarios import traced
from helpers.window import Windowed

import analysis.theory as theory
from emulator import simulate
from emulator.contract import POISSON
from emulator.policies.sed import least

# The columns of a row that say how jobs fared (not what the policy is called or what it cost).
DELAYS = ("mean_response", "mean_wait", "p50_response", "p90_response", "p99_response", "prob_wait",
          "mean_queue_length", "blocked_fraction", "sim_time")


def delays(row: dict[str, Any]) -> dict[str, str]:
    return {key: repr(row[key]) for key in DELAYS}


# -- Persistent-Idle: one idle message per departure that empties its server ----------------------
@pytest.mark.parametrize("options", [{"load": 0.3}, {"load": 0.3, "dispatchers": 3}], ids=["one", "dispatchers-3"])
def test_persistent_idle_sends_one_message_per_idle_period(options: dict[str, Any]) -> None:
    window = Windowed(traced({"name": "persistent_idle"}, servers=2, jobs=3000, warmup=300, seed=23,
                             **POISSON, **options))
    metrics = window.trace.run()
    idle_periods = sum(1 for _, _, left in window.inside("departures") if left == 0)
    assert window.count(metrics, "idle") == idle_periods > 100
    assert metrics["messages_per_job"] * metrics["jobs"] == pytest.approx(idle_periods)


@pytest.mark.parametrize("dispatchers", [1, 3])
def test_persistent_idle_reports_every_server_at_start_then_each_emptying_departure(dispatchers: int) -> None:
    trace = traced({"name": "persistent_idle"}, servers=5, jobs=2000, warmup=0, load=0.7, seed=4,
                   dispatchers=dispatchers, **POISSON)
    trace.run()
    idle = [(t, n) for t, kind, n in trace.messages if kind == "idle"]
    emptied = sum(1 for _, _, left in trace.departures if left == 0)
    assert sum(n for t, n in idle if t == 0) == 5
    assert sum(n for _, n in idle) == 5 + emptied


def persistent_idle_choices(reports: list[tuple[float, int]],
                            sent: list[tuple[float, int]]) -> list[tuple[int, int | None]]:
    """The rule replayed on one dispatcher's reports and jobs: (server sent to, server the rule names).

    The rule names None while the dispatcher has no target yet (a uniformly random server).
    """
    events = sorted([(t, 0, sid) for t, sid in reports] + [(t, 1, sid) for t, sid in sent])
    idle: list[int] = []
    target = None
    pairs = []
    for _, is_job, sid in events:
        if not is_job:
            if sid not in idle:
                idle.append(sid)
            continue
        if idle:
            target = idle.pop()
        pairs.append((sid, target))
    return pairs


def test_persistent_idle_sends_each_job_to_the_last_idle_reporter_else_its_target() -> None:
    # One dispatcher, zero latency: every server reports at time 0, then at each departure that
    # empties it; a job takes the last reporter not yet sent a job, or with none the last one taken.
    trace = traced({"name": "persistent_idle"}, servers=6, jobs=3000, warmup=0, load=0.9, seed=5, **POISSON)
    trace.run()
    reports = [(0.0, sid) for sid in range(6)] + [(t, sid) for t, sid, left in trace.departures if left == 0]
    pairs = persistent_idle_choices(reports, [(t, sid) for t, _, _, sid, _ in trace.sent])
    assert [sid for sid, rule in pairs if sid != rule] == []
    persisted = sum(1 for i in range(1, len(pairs)) if pairs[i][0] == pairs[i - 1][0])
    assert persisted > 300  # the set was empty often enough for the target to matter


def test_persistent_idle_is_stable_at_high_load() -> None:
    # N = 10, load 0.9: random routing gives M/M/1's 1/(1-load) = 10, and PI must do better;
    # starving servers (the rule read as "only the last reporter") gives thousands.
    rows = replicate(31, 3, policy="persistent_idle", servers=10, load=0.9, jobs=20_000, **POISSON)
    response = column(rows, "mean_response")
    assert response.mean + response.half < theory.mm1_response(0.9)


# -- LOR: one completion per job, and JSQ's decisions with one dispatcher ---------------------------
@pytest.mark.parametrize("options", [{"load": 0.9}, {"load": 0.95, "dispatchers": 3, "capacity": 2}],
                         ids=["one", "dispatchers-3-capacity"])
def test_lor_sends_one_completion_per_job(options: dict[str, Any]) -> None:
    # A completion goes out when a job leaves and when one is blocked, to the job's dispatcher.
    trace_box: list[Any] = []
    window = Windowed(traced({"name": "lor", "d": 2}, servers=6, jobs=3000, warmup=300, seed=31,
                             **POISSON, **options), lambda model: len(trace_box[0].blocked))
    trace_box.append(window.trace)
    metrics = window.trace.run()
    departures = len(window.inside("departures"))
    blocked = window.edges[1]["extra"] - window.edges[0]["extra"]
    assert window.count(metrics, "completion") == departures + blocked
    assert (blocked > 100) == ("capacity" in options)
    assert metrics["messages_per_job"] * metrics["jobs"] == pytest.approx(departures + blocked)
    for dispatcher in window.trace.model.dispatchers:  # every count is this dispatcher's jobs unanswered
        assert all(count >= 0 for count in dispatcher.state.length)


def test_lor_counts_are_the_lengths_and_its_rows_jsqs() -> None:
    # One dispatcher, zero latency, d = N: a job's count rises when it is sent and falls when
    # it leaves, at the instants JSQ's index moves, so the two share index moves and draws.
    common: dict[str, Any] = {"servers": 10, "load": 0.95, "jobs": 5000, "seed": 17, "engine": "simpy"}
    lor, jsq = simulate("lor", **common), simulate("jsq", **common)
    assert delays(lor) == delays(jsq)
    assert lor["messages_per_job"] == pytest.approx(1.0, abs=1e-2) and jsq["messages_per_job"] == 20.0


def test_lor_d_is_sqd_with_one_dispatcher() -> None:
    # LOR(d) draws its d servers as SQ(d) does and compares counts that are the lengths SQ(d) queries.
    common: dict[str, Any] = {"servers": 10, "load": 0.95, "jobs": 5000, "seed": 19, "engine": "simpy", "d": 3}
    assert delays(simulate("lor", **common)) == delays(simulate("sqd", **common))


def test_lor_with_several_dispatchers_is_not_jsq() -> None:
    # Each dispatcher sees only its own jobs: the statement above does not extend (a check that it can fail).
    common: dict[str, Any] = {"servers": 10, "load": 0.95, "jobs": 5000, "seed": 17, "engine": "simpy",
                              "dispatchers": 3}
    assert delays(simulate("lor", **common)) != delays(simulate("jsq", **common))


# -- SED: 2d messages, JSQ with equal speeds, ties to the fastest -----------------------------------
@pytest.mark.parametrize("d", [None, 3])
def test_sed_queries_d_servers_per_job(d: int | None) -> None:
    policy = {"name": "sed"} if d is None else {"name": "sed", "d": d}
    window = Windowed(traced(policy, servers=6, jobs=2000, warmup=200, load=0.9, seed=41,
                             speeds=[1.0, 2.0, 1.0, 0.5, 1.5, 3.0], **POISSON))
    metrics = window.trace.run()
    sent = len(window.inside("sent"))
    assert window.count(metrics, "query") == window.count(metrics, "reply") == (d or 6) * sent


def test_sed_with_equal_speeds_decides_as_jsq() -> None:
    # With latency JSQ asks all N servers in order and takes the shortest reply, ties by reservoir
    # draws; SED with d = N asks the same servers and (length + 1) / 1 orders as the length.
    common: dict[str, Any] = {"servers": 8, "load": 0.9, "jobs": 3000, "seed": 13, "engine": "simpy",
                              "latency": {"kind": "exponential", "mean": 0.05}}
    sed, jsq = simulate("sed", **common), simulate("jsq", **common)
    assert delays(sed) == delays(jsq)
    assert sed["messages_per_job"] == jsq["messages_per_job"]


def test_sed_joins_the_least_expected_delay() -> None:
    # Lengths 3 and 1 at speeds 4 and 1: (3 + 1) / 4 = 1 < (1 + 1) / 1 = 2, so the longer queue wins.
    assert least([4 / 4, 2 / 1], None, lambda: 0.0) == 0
    # Ties: "fastest" keeps the faster server whatever the draw; "random" follows the draw.
    assert least([1.0, 1.0, 1.0], [1.0, 3.0, 2.0], lambda: 0.0) == 1
    assert least([1.0, 1.0, 1.0], None, lambda: 0.0) == 2
    assert least([1.0, 1.0, 1.0], None, lambda: 0.99) == 0


def test_sed_fastest_ties_send_more_to_fast_servers() -> None:
    # JSQ with ties to the fastest (rule: length): at low load most jobs find several idle servers,
    # and then the fastest idle one is joined; with random ties it is one of them at random.
    common: dict[str, Any] = {"servers": 4, "load": 0.3, "jobs": 3000, "seed": 3, "engine": "simpy",
                              "speeds": [1.0, 1.0, 1.0, 3.0]}
    fastest = simulate("sed", rule="length", ties="fastest", **common)
    randomly = simulate("sed", rule="length", **common)
    assert fastest["mean_response"] < randomly["mean_response"]


# -- bad parameters: one line naming the key ------------------------------------------------------
@pytest.mark.parametrize("policy", ["sed", "lor"])
def test_d_above_n_is_refused(policy: str) -> None:
    with pytest.raises(Exception, match=r"d: expected at most N=4 servers to sample, got 5"):
        simulate(policy, servers=4, d=5, jobs=100, engine="simpy")


# -- theory: the exact chain of unequal servers ------------------------------------------------------
def test_exact_speeds_with_equal_speeds_is_the_lumped_jsq_chain() -> None:
    # Two computations of one chain: the vector of lengths here, the sorted vector in `exact_supermarket`.
    from analysis.theory import exact_supermarket
    from analysis.theory.heterogeneous import exact_speeds

    lumped = exact_supermarket("jsq", 3, 0.7, levels=20)["mean_response"]
    for rule in ("expected_delay", "length"):
        assert exact_speeds([1.0, 1.0, 1.0], 0.7, rule, levels=20)["mean_response"] == pytest.approx(lumped, rel=1e-9)
    assert exact_speeds([2.0], 0.6, levels=80)["mean_response"] == pytest.approx(1 / (2.0 - 1.2), rel=1e-9)


@pytest.mark.slow  # (the compiled engine's first SED run compiles its kernel: half a minute)
@pytest.mark.parametrize("rule, ties", [("expected_delay", "random"), ("length", "fastest")])
def test_sed_matches_its_exact_chain_on_two_unequal_servers(rule: str, ties: str) -> None:
    # Servers of rates 1 and 3 at load 0.8: the replications' mean response against the exact
    # stationary mean (the rules of tests/test_theory.py). Long runs on the compiled engine (its
    # rows are SimPy's: the equivalence cases), so that the tolerance is below half the gap
    # between the two rules' exact means (1.505 and 1.584): each check tells them apart.
    from analysis.theory.heterogeneous import exact_speeds

    exact = exact_speeds([1.0, 3.0], 0.8, rule, ties, levels=80)
    assert exact["truncation"] < 1e-9
    rows = [simulate("sed", rule=rule, ties=ties, servers=2, speeds=[1.0, 3.0], load=0.8, jobs=200_000, seed=seed,
                     engine="compiled") for seed in range(1, 9)]
    measured = interval([row["mean_response"] for row in rows])
    check(f"SED rule={rule} ties={ties}, speeds 1 and 3, load 0.8", measured, exact["mean_response"])
    assert measured.half < 0.039
