"""When a replication ends: arrivals stop once the window has closed and every measured job is at its server.

Nothing that happens after that can change a measured job's response (a FIFO
server serves later jobs after it, a pool serves each job on its own), and the
window's time averages and message counts are fixed when it closes. So stopping
there changes no metric, and an unstable run ends when its backlog drains.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.scenarios import make_point, traced

from emulator.model import build as model_module
from emulator.model.build import build_model


def test_an_unstable_run_ends_when_its_backlog_drains() -> None:
    # One FIFO server, unit sizes, deterministic arrivals at rate 50: job k arrives at
    # (k + 1)/50, and the server is busy from the first arrival on, so job k starts at
    # 1/50 + k and leaves at 1/50 + k + 1. Its response is k + 1 - k/50; the mean over
    # k = 0..199 is 100.5 - 99.5/50. The window closes at job 200's arrival (t = 4.02),
    # when every measured job is queued: no job after it is admitted. Before, the source
    # kept admitting jobs (about 10,000) until the last measured one left at t = 200.
    trace = traced({"name": "random"}, servers=1, jobs=200, load=50, allow_unstable=True)
    metrics = trace.run()
    assert metrics["mean_response"] == pytest.approx(100.5 - 99.5 / 50, rel=1e-12)
    assert len(trace.received) == 200
    assert trace.model.env.now == pytest.approx(200.02, rel=1e-12)  # the last departure ends the run


CASES: dict[str, dict[str, Any]] = {
    "jsq": {"policy": {"name": "jsq"}},
    "jbt-3-dispatchers": {"policy": {"name": "jbt", "d": 2, "period": 2.0}, "dispatchers": 3},
    "jiq-pool": {"policy": {"name": "jiq"}, "discipline": "pool", "capacity": 3},
    "sqd-latency": {"policy": {"name": "sqd", "d": 2}, "latency": {"kind": "exponential", "mean": 0.3}},
    "jsq-latency-unstable": {"policy": {"name": "jsq"}, "latency": {"kind": "exponential", "mean": 0.3},
                             "load": 1.2, "allow_unstable": True},
    "threshold-latency": {"policy": {"name": "threshold", "d": 3, "threshold": 1},
                          "latency": {"kind": "deterministic", "mean": 0.25}},
}


def _run(case: dict[str, Any], all_arrived: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, float], int]:
    options = {"servers": 10, "jobs": 3000, "warmup": 300, "load": 0.9, "seed": 7,
               "arrivals": {"kind": "poisson"}, "service": {"kind": "exponential", "mean": 1.0}, **case}
    point = make_point(options.pop("policy"), **options)
    with monkeypatch.context() as patch:
        if all_arrived is not None:
            patch.setattr(model_module, "_all_arrived", all_arrived)
        model = build_model(point, point.policies[0], 7)
        admitted = [0]  # jobs the source handed to a dispatcher
        for dispatcher in model.dispatchers:

            def counted(job: Any, forward: Any = dispatcher.receive) -> None:
                admitted[0] += 1
                forward(job)

            dispatcher.receive = counted  # type: ignore[method-assign]
        return model.run(), admitted[0]


@pytest.mark.parametrize("name", list(CASES))
def test_stopping_arrivals_changes_no_metric(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    case = CASES[name]
    stopped, admitted = _run(case, None, monkeypatch)
    endless, admitted_endless = _run(case, lambda *args: False, monkeypatch)  # arrivals never stop
    assert stopped == endless
    assert admitted < admitted_endless
    if "latency" in case:
        # Some measured jobs were still in flight when the window closed: arrivals went on
        # until they reached their servers, and stopping at the window's close instead
        # would have changed the results.
        assert admitted > 3300
        early, _ = _run(case, lambda *args: True, monkeypatch)  # stop when the window closes
        assert early != stopped
    else:
        assert admitted == 3300  # zero latency: every measured job is at its server at once
