"""JBT-d's ``reset`` option: each threshold update clears the lists and unlists every server."""

from __future__ import annotations

import emulator
from emulator.model import build_model


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
