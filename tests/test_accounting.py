"""Exact message accounting of the pull-based and probing policies, recomputed from what happened.

Each check counts, from a `Trace` of the run (`helpers.window.Windowed`), the events that must
cause a message (a server going idle, a job taken from a list, a probe) inside
the measurement window, and compares that count with the metrics. The events are
located by their position in the run (snapshots at the window's edges), not by
their time, so jobs arriving at the edge itself are counted exactly.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.scenarios import traced
from helpers.window import Windowed, listed_servers

from emulator.contract import POISSON


# -- JIQ: one idle token per idle period ------------------------------------------------------------
@pytest.mark.parametrize("options", [
    {"servers": 8, "load": 0.3}, {"servers": 8, "load": 0.95},
    {"servers": 8, "load": 0.9, "dispatchers": 3},
    {"servers": 6, "load": 0.8, "memory": 2},
    {"servers": 6, "load": 0.8, "dispatchers": 3, "d": 2},
], ids=["low", "high", "dispatchers-3", "memory-2", "jiq-sq2"])
def test_jiq_sends_one_token_per_idle_period(options: dict[str, Any]) -> None:
    # A token goes out exactly when a departure leaves its server empty (the I-queue's
    # memory drops tokens at the dispatcher, after they are counted). JIQ-SQ(d) adds d
    # queries and d replies per token.
    options = dict(options)
    policy = {"name": "jiq", **{k: options.pop(k) for k in ("memory", "d") if k in options}}
    window = Windowed(traced(policy, jobs=3000, warmup=300, seed=23, **POISSON, **options))
    metrics = window.trace.run()
    idle_periods = sum(1 for _, _, left in window.inside("departures") if left == 0)
    assert window.count(metrics, "idle") == idle_periods > 0
    probes = policy.get("d", 0) if options.get("dispatchers", 1) > 1 else 0
    assert window.count(metrics, "query") == window.count(metrics, "reply") == probes * idle_periods
    assert metrics["messages_per_job"] * metrics["jobs"] == pytest.approx(idle_periods * (1 + 2 * probes))


def test_jiq_sends_jobs_to_idle_servers_when_it_knows_one() -> None:
    # One dispatcher, unbounded memory: the I-queue is exactly the set of idle servers, so a
    # job finds an idle server whenever one exists, and goes to a random one otherwise.
    trace = traced({"name": "jiq"}, servers=8, jobs=3000, warmup=0, load=0.9, seed=29, **POISSON)
    trace.run()
    some_idle = [(lengths[sid], min(lengths)) for _, _, _, sid, lengths in trace.sent]
    assert all(length == 0 for length, low in some_idle if low == 0)
    assert sum(1 for _, low in some_idle if low > 0) > 100  # the other branch is exercised


# -- JBT-d: reports against list dispatches -----------------------------------------------------------
@pytest.mark.parametrize("options", [
    {"load": 0.3, "period": 1.0}, {"load": 0.95, "period": 1.0}, {"load": 0.9, "period": 10.0},
    {"load": 0.9, "period": 2.0, "dispatchers": 3}, {"load": 0.9, "period": 2.0, "below": "lt"},
    {"load": 0.8, "period": 2.0, "speeds": [0.5, 1.0, 1.0, 1.5, 2.0, 0.5, 1.0, 2.5]},
], ids=["low", "high", "long-period", "dispatchers-3", "lt", "speeds"])
def test_jbt_reports_match_list_dispatches(options: dict[str, Any]) -> None:
    # A server's "listed" flag goes up only by a report and down only when a job taken from a
    # list reaches it. So, over the window: reports = list dispatches + (listed at close -
    # listed at open). Each threshold update costs d queries, d replies and N thresholds, and
    # the dispatchers' lists together hold exactly the listed servers (zero latency).
    n, d = 8, 3
    options = dict(options)
    policy = {"name": "jbt", "d": d, **{k: options.pop(k) for k in ("period", "below") if k in options}}
    window = Windowed(traced(policy, servers=n, jobs=3000, warmup=300, seed=37, **POISSON, **options), listed_servers)
    metrics = window.trace.run()
    model = window.trace.model
    via_list = sum(1 for _, _, job_id in window.inside("accepted") if window.trace.job(job_id).via_list)
    change = window.edges[1]["extra"] - window.edges[0]["extra"]
    assert window.count(metrics, "report") == via_list + change
    assert via_list > 100
    updates = len(window.inside("asks"))
    assert abs(updates - metrics["sim_time"] / policy["period"]) <= 1
    assert window.count(metrics, "query") == window.count(metrics, "reply") == d * updates
    assert window.count(metrics, "threshold") == n * updates
    assert sorted(sid for each in model.dispatchers for sid in each.state.ids) == [
        sid for sid in range(n) if model.policy.listed[sid]]


def test_jbt_jobs_go_to_listed_servers_below_the_threshold() -> None:
    # Zero latency, recheck on: a listed server is one that was below r when it reported and
    # has received no job from the list since. A job taken from the list therefore finds its
    # server at most r (+ the jobs it got at random since, which are rare at this load).
    trace = traced({"name": "jbt", "d": 2, "period": 2.0}, servers=10, jobs=4000, warmup=0, load=0.7, seed=41,
                   **POISSON)
    trace.run()
    sent = {job_id: lengths[sid] for _, _, job_id, sid, lengths in trace.sent}
    listed = [sent[job.id] for job in trace.jobs if job.via_list]
    others = [sent[job.id] for job in trace.jobs if not job.via_list]
    assert len(listed) > 2000 and len(others) > 50
    # Listed picks find shorter queues than random ones.
    assert sum(listed) / len(listed) < 0.5 * sum(others) / len(others)


# -- threshold: probe until one is below T, at most d ----------------------------------------------
@pytest.mark.parametrize("d, threshold", [(2, 1), (3, 2), (4, 3)])
def test_threshold_probe_sequences_are_exact(d: int, threshold: int) -> None:
    # Zero latency: a job's probes are consecutive query rounds of one server each. A job's
    # sequence ends at the first reply below T, or after d probes; it then joins the last
    # probed server. Messages in the window are 2 per probe made in it.
    window = Windowed(traced({"name": "threshold", "d": d, "threshold": threshold}, servers=6, jobs=2000,
                             warmup=200, load=0.9, seed=43, **POISSON))
    metrics = window.trace.run()
    trace = window.trace
    groups: list[list[tuple[int, int]]] = [[]]
    for _, ids, replies in trace.asks:
        assert len(ids) == 1
        groups[-1].append((ids[0], replies[0]))
        if replies[0] < threshold or len(groups[-1]) == d:
            groups.append([])
    assert groups.pop() == []
    assert [group[-1][0] for group in groups] == [sid for _, _, _, sid, _ in trace.sent]
    lengths = [len(group) for group in groups]
    assert min(lengths) == 1 and max(lengths) == d  # both ends are exercised
    probes = len(window.inside("asks"))
    assert window.count(metrics, "query") == window.count(metrics, "reply") == probes
    assert metrics["messages_per_job"] * metrics["jobs"] == 2 * probes
