"""JBT-d's ``reset`` option: each threshold update clears the lists and unlists every server."""

from __future__ import annotations

from helpers.scenarios import traced

import emulator
from emulator.model.build import build_model


def _model(reset: bool, seed: int = 4):  # type: ignore[no-untyped-def]
    scenario = emulator.Scenario.from_dict({
        "seed": seed, "run": {"jobs": 20_000, "warmup_jobs": 0}, "system": {"servers": 20},
        "workload": {"load": 0.9}, "policies": [{"name": "jbt", "d": 2, "period": 5, "reset": reset}]})
    point = scenario.points()[0]
    return build_model(point, point.policies[0], seed)


def _listed_is_below_after_each_update(reset: bool) -> list[bool]:
    model = _model(reset)
    policy, listed = model.policy, model.dispatchers[0].state
    exact = []
    for update in range(1, 40):
        # Zero latency: the update at t = 5k, the lists' clearing and every report it triggers
        # happen at 5k; nothing else happens in the next 1e-9 (arrivals come at rate 18).
        model.env.run(until=5.0 * update + 1e-9)
        r = policy.threshold[0]
        assert all(policy.threshold[sid] == r for sid in range(20))
        below = {sid for sid, server in enumerate(model.servers) if server.length <= r}
        exact.append(set(listed.ids) == below)
    return exact


def test_after_each_update_exactly_the_servers_below_the_new_threshold_are_listed() -> None:
    assert all(_listed_is_below_after_each_update(reset=True))
    # Without reset, servers listed under an earlier, higher threshold stay listed.
    assert not all(_listed_is_below_after_each_update(reset=False))


def test_reset_bounds_reports_by_jobs_plus_n_per_update() -> None:
    model = _model(reset=True)
    metrics = model.run()
    updates = metrics["messages_per_job_threshold"] * metrics["jobs"] / 20
    reports = metrics["messages_per_job_report"] * metrics["jobs"]
    # A server reports only while unlisted: once per job taken from a list, plus once per
    # update that unlists it (at most N per update), plus its first report.
    assert reports <= metrics["jobs"] + 20 * (updates + 1)
    without = _model(reset=False).run()
    assert metrics["messages_per_job_report"] > without["messages_per_job_report"]


# -- several dispatchers: the update reaches the others as threshold messages ----------------------
# N=2 servers, D=3 dispatchers, d=2, period 2; sizes 10, so nothing leaves before t=11.
RESET = {"name": "jbt", "d": 2, "period": 2, "reset": True}
ROWS = [(1.0, 10.0), (2.625, 10.0), (3.0, 10.0), (5.0, 10.0), (6.5, 10.0)]


def test_reset_update_reaches_every_dispatcher_as_a_counted_message(trace_rows) -> None:  # type: ignore[no-untyped-def]
    # Zero latency: updates at t=2, 4, 6, each sending r to both servers and the update to
    # dispatchers 1 and 2: 4 threshold messages per update, 12 in the window [1, 6.5] of 5 jobs
    # (without reset only the 2 to the servers: 6). Right after each update, the lists hold
    # exactly the servers below the new r, each on one list.
    trace = traced(RESET, servers=2, dispatchers=3, **trace_rows(ROWS))
    model = trace.model
    for update in (2.0, 4.0, 6.0):
        model.env.run(until=update + 1e-9)
        r = model.policy.threshold[0]
        lists = [list(dispatcher.state.ids) for dispatcher in model.dispatchers]
        below = sorted(sid for sid, server in enumerate(model.servers) if server.length <= r)
        assert sorted(sid for ids in lists for sid in ids) == below
    metrics = trace.run()
    assert [t for t in trace.message_times("threshold") if t <= 6.5] == [2.0] * 4 + [4.0] * 4 + [6.0] * 4
    assert metrics["messages_per_job_threshold"] == 12 / 5
    plain = traced({**RESET, "reset": False}, servers=2, dispatchers=3, **trace_rows(ROWS))
    assert plain.run()["messages_per_job_threshold"] == 6 / 5


def test_reset_update_clears_each_list_when_its_message_arrives(trace_rows) -> None:  # type: ignore[no-untyped-def]
    # Latency 0.25. At t=0 both servers report (arriving at 0.25 at random dispatchers; with
    # seed 6, server 0 to dispatcher 1 and server 1 to dispatcher 2). Job 0 (t=1, dispatcher 0,
    # empty list) goes at random. Update at t=2: queries reach the servers at 2.25, replies
    # dispatcher 0 at 2.5; then it clears its own list and sends 4 threshold messages (2 to
    # servers, 2 to dispatchers), which arrive at 2.75: only then do dispatchers 1 and 2 clear
    # theirs. The servers' new reports (sent at 2.75) arrive at 3.0.
    trace = traced(RESET, servers=2, dispatchers=3, latency=0.25, seed=6, **trace_rows(ROWS))
    env, dispatchers = trace.model.env, trace.model.dispatchers

    def lists_at(when: float) -> list[list[int]]:
        env.run(until=when)
        return [sorted(dispatcher.state.ids) for dispatcher in dispatchers]

    assert lists_at(2.49) == [[], [0], [1]]
    assert lists_at(2.74) == [[], [0], [1]]  # the update is on its way
    assert lists_at(2.76) == [[], [], []]
    assert sum(map(len, lists_at(3.01))) == 1  # r = 0: the server without job 0 reported again
    trace.run()
    assert [t for t in trace.message_times("threshold") if t < 6] == [2.5] * 4 + [4.5] * 4
    assert [t for t in trace.message_times("report") if t < 2.5] == [0.0, 0.0]
