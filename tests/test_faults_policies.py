"""The policies with pushed or remembered state under faults (docs/faults.md): JSQ-push, JSQ-sparse, LSQ, SQ(d, m).

Each runs with lost messages (``network.loss`` 0.2) and with failing servers
(``hold`` and ``lose``), alone and together, and keeps the contract's job
conservation; every message sent is delivered (counted at the receiver, apart
from the recorder) or lost, kind by kind; ``loss: 0`` gives the rows of the
scenario without the key. Then what each policy does with a message that did not
come: LSQ keeps its estimate, SQ(d, m) remembers only servers that answered, and
a down server pushes no update.
"""

from __future__ import annotations

from typing import Any

import pytest

from emulator.api import scenario_data
from emulator.contract import POISSON, check_conservation
from emulator.measure.messages import KINDS, NO_REPLY, Kind
from emulator.model.build import build_model
from emulator.model.trace import Trace
from emulator.policies.jsq import LengthIndex
from emulator.policies.lsq import _replied
from emulator.scenario.sweep import Scenario

POLICIES: dict[str, dict[str, Any]] = {
    "jsq_push": {},
    "jsq_sparse": {"period": 0.5},
    "lsq": {"d": 2},
    "sqd_memory": {"d": 2, "m": 2},
}
UP_DOWN = {"up": {"kind": "exponential", "mean": 50.0}, "down": {"kind": "exponential", "mean": 5.0}}
FAULTS: dict[str, dict[str, Any]] = {
    "loss": {"loss": 0.2, "timeout": 0.1},
    "hold": {"timeout": 0.1, "failures": {**UP_DOWN, "on_down": "hold"}},
    "lose": {"timeout": 0.1, "failures": {**UP_DOWN, "on_down": "lose"}},
    "loss+lose": {"loss": 0.2, "timeout": 0.1, "failures": {**UP_DOWN, "on_down": "lose"}},
}


def model(name: str, seed: int = 3, jobs: int = 3000, dispatchers: int = 1, loss: float | None = None,
          **options: Any) -> Any:
    """A built model of one policy, N = 10, load 0.8; ``loss`` is written as given, 0 included."""
    data = scenario_data(name, servers=10, load=0.8, jobs=jobs, seed=seed, dispatchers=dispatchers,
                         engine="simpy", **POISSON, **POLICIES[name], **options)
    if loss is not None:
        data.setdefault("network", {})["loss"] = loss
    point = Scenario.from_dict(data).points()[0]
    return build_model(point, point.policies[0], seed)


def count_deliveries(built: Any) -> list[int]:
    """Messages that reached their receiver, by kind, counted where the channel hands them over."""
    delivered = [0] * len(KINDS)
    channel = built.channel
    post = channel._post  # the faulty path: every control message goes through it

    def counting(kind: Kind, receiver: Any, deliver: Any, args: tuple[Any, ...]) -> None:
        def arrived(*a: Any) -> None:
            delivered[kind] += 1
            deliver(*a)

        post(kind, receiver, arrived, args)

    channel._post = counting
    return delivered


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("name", POLICIES)
@pytest.mark.parametrize("dispatchers", [1, 3])
def test_runs_conserves_jobs_and_accounts_every_message(name: str, fault: str, dispatchers: int) -> None:
    built = model(name, dispatchers=dispatchers, **FAULTS[fault])
    delivered = count_deliveries(built)
    trace = Trace(built)
    row = trace.run()
    check_conservation(trace, f"{name}, {fault}")
    recorder = built.recorder
    assert (row["lost_fraction"] > 0) == ("lose" in fault)
    # Zero latency: nothing is in flight at the end, so every message sent was delivered or lost.
    for kind, sent, lost, came in zip(KINDS, recorder.counts, recorder.lost, delivered, strict=True):
        assert sent == came + lost, (name, fault, kind, sent, came, lost)
    if "loss" in fault or name in ("lsq", "sqd_memory"):  # pushed updates go to dispatchers, never down
        assert sum(recorder.lost) > 0, (name, fault)  # the faults reached the policy's messages
    for kind in KINDS:
        total = row[f"delivered_per_job_{kind}"] + row[f"lost_per_job_{kind}"]
        assert total == pytest.approx(row[f"messages_per_job_{kind}"], abs=1e-12)


@pytest.mark.parametrize("name", POLICIES)
def test_faults_with_latency_run_and_conserve_jobs(name: str) -> None:
    trace = Trace(model(name, dispatchers=2, latency={"kind": "exponential", "mean": 0.05},
                       **FAULTS["loss+lose"]))
    trace.run()
    check_conservation(trace, name)


@pytest.mark.parametrize("latency", [None, {"kind": "exponential", "mean": 0.05}])
@pytest.mark.parametrize("name", POLICIES)
def test_loss_zero_gives_the_rows_without_the_key(name: str, latency: dict[str, Any] | None) -> None:
    def row(**network: Any) -> dict[str, str]:
        values = model(name, dispatchers=2, latency=latency, **network).run()
        return {key: repr(value) for key, value in values.items() if key != "wall_seconds"}

    plain = row()
    assert row(loss=0.0, timeout=1.0) == plain
    assert row(loss=0.2, timeout=1.0) != plain  # the comparison can fail


# ---------------------------------------------------------------------------------------
# What a missing message does
# ---------------------------------------------------------------------------------------
def test_lsq_keeps_its_estimate_when_a_reply_does_not_come() -> None:
    estimates = LengthIndex(3)
    _replied(estimates, 1, [4])
    _replied(estimates, 1, [NO_REPLY])
    assert estimates.length == [0, 4, 0] and len(estimates.buckets) == 5


@pytest.mark.parametrize("fault", FAULTS)
def test_lsq_estimates_stay_lengths_under_faults(fault: str) -> None:
    built = model("lsq", dispatchers=2, **FAULTS[fault])
    built.run()
    # An estimate is a reply plus the jobs sent since, so never above the jobs sent in all.
    for dispatcher in built.dispatchers:
        assert max(dispatcher.state.length) <= built.recorder.transfers


@pytest.mark.parametrize("fault", ["loss", "hold"])
def test_sqd_memory_remembers_only_servers_that_answered(fault: str) -> None:
    built = model("sqd_memory", **FAULTS[fault])
    trace = Trace(built)
    dispatcher = built.dispatchers[0]
    send = dispatcher.send
    counts = {"missing": 0, "remembered": 0}

    def sent(job: Any, server: Any) -> None:
        # The decision has just set the memory, right after the trace logged its replies.
        _, ids, replies = trace.asks[-1]
        answered = {sid for sid, value in zip(ids, replies, strict=True) if value != NO_REPLY}
        assert set(dispatcher.state) <= answered, (ids, replies, dispatcher.state)
        counts["missing"] += len(ids) - len(answered)
        counts["remembered"] += len(dispatcher.state)
        send(job, server)

    dispatcher.send = sent
    trace.run()
    assert counts["missing"] > 100 and counts["remembered"] > 1000  # replies went missing; memories were kept


@pytest.mark.parametrize("name", ["jsq_push", "jsq_sparse"])
def test_a_down_server_pushes_no_update(name: str) -> None:
    built = model(name, **FAULTS["hold"])
    channel, servers, env = built.channel, built.servers, built.env
    send = channel.send
    from_down: list[float] = []
    pushed = [0]

    def watched(kind: Kind, deliver: Any, *args: Any) -> None:
        if kind == Kind.UPDATE:
            pushed[0] += 1
            if not servers[args[1]].up:  # args: dispatcher, server id, length, stamp
                from_down.append(env.now)
        send(kind, deliver, *args)

    channel.send = watched
    built.run()
    assert pushed[0] > 1000 and from_down == []
