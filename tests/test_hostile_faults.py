"""Hostile fault settings: each is refused in one line naming the key and the value, or runs right and fast.

The keys are ``network.loss``, ``network.timeout`` and ``system.failures`` (docs/faults.md). First the
settings that used to hang or count wrong, each as it was written, through the API and the CLI; then
runs just inside each bound, under a time guard, so that a regression fails instead of hanging; then
the accounting of a down server (it sends nothing; its losses count in the window they were sent in;
Little's law holds with jobs lost); then a sweep of extreme values of every fault key. The bounds
live in `emulator.scenario.checks.check_failures` and the Bounds table of docs/configuration-notes.md.
"""

from __future__ import annotations

import contextlib
import copy
import math
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from emulator import Scenario, ScenarioError
from emulator.cli import main
from emulator.contract import check_conservation, check_little_exact
from emulator.errors import MAX_LENGTH
from emulator.measure.messages import KINDS, Kind
from emulator.model.build import Model, build_model
from emulator.model.failures import FailingFifoServer
from emulator.model.trace import Trace

JOBS, WARMUP, SERVERS, LOAD = 400, 40, 10, 0.9
RATE = LOAD * SERVERS  # unit service mean and speeds
LENGTH = (JOBS + WARMUP) / RATE  # the run's length, in time units
UP_DOWN = {"up": {"kind": "exponential", "mean": 50.0}, "down": {"kind": "exponential", "mean": 5.0}}


def scenario(policy: dict[str, Any], network: dict[str, Any] | None = None,
             failures: dict[str, Any] | None = None, **top: Any) -> dict[str, Any]:
    """N = 10 servers at load 0.9, 400 jobs after 40, on the SimPy engine, one replication."""
    data: dict[str, Any] = {
        "name": "hostile", "seed": 1, "replications": 1,
        "run": {"jobs": JOBS, "warmup_jobs": WARMUP, "engine": "simpy"},
        "system": {"servers": SERVERS}, "workload": {"load": LOAD}, "policies": [policy],
        "network": {"timeout": 0.1, **(network or {})}, **top,
    }
    if failures is not None:
        data["system"]["failures"] = failures
    return data


def refused(data: dict[str, Any], key: str, value: Any) -> str:
    """The one-line refusal of ``data``: it names ``key`` first and shows ``value``."""
    with pytest.raises(ScenarioError) as info:
        Scenario.from_dict(data)
    message = str(info.value)
    assert "\n" not in message and len(message) <= MAX_LENGTH, message
    assert message.startswith(f"{key}:"), message
    assert f"got {value!r}" in message or f"{value:g}" in message, message
    return message


@contextlib.contextmanager
def within(seconds: float) -> Iterator[None]:
    """Fail, rather than hang, if the body runs longer than ``seconds`` (SimPy's loop is plain Python)."""
    def expire(_signum: int, _frame: Any) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def built(data: dict[str, Any], seed: int = 1) -> Model:
    point = Scenario.from_dict(data).points()[0]
    return build_model(point, point.policies[0], seed)


def runs_right(data: dict[str, Any], seconds: float = 60.0) -> dict[str, float]:
    """Run ``data`` traced under a time guard; every job is accounted for and Little's law holds exactly."""
    trace = Trace(built(data))
    with within(seconds):
        row = trace.run(limit=math.inf)
    check_conservation(trace)
    check_little_exact(trace)
    return row


# -- settings that used to hang: refused in one line, through the API and the CLI ------------------------
HANGS = {
    "timeout 1e300": (scenario({"name": "sqd", "d": 2}, {"loss": 0.3, "timeout": 1e300}),
                      "network.timeout", 1e300),
    "timeout 1e5": (scenario({"name": "sqd", "d": 2}, {"loss": 0.3, "timeout": 1e5}), "network.timeout", 1e5),
    "periods 1e-9": (scenario({"name": "jsq"}, failures={"up": {"kind": "exponential", "mean": 1e-9},
                                                          "down": {"kind": "exponential", "mean": 1e-9}}),
                     "system.failures.up.mean", 1e-9),
    "periods 1e-4": (scenario({"name": "jsq"}, failures={"up": {"kind": "exponential", "mean": 1e-4},
                                                          "down": {"kind": "exponential", "mean": 1e-4}}),
                     "system.failures.up.mean", 1e-4),
    "down 1e300, hold": (scenario({"name": "jsq"}, failures={"up": {"kind": "exponential", "mean": 200.0},
                                                              "down": {"kind": "deterministic", "mean": 1e300},
                                                              "on_down": "hold"}),
                         "system.failures.down.mean", 1e300),
}


@pytest.mark.parametrize("case", HANGS)
def test_a_setting_that_hung_is_refused_in_one_line(case: str) -> None:
    data, key, value = HANGS[case]
    refused(data, key, value)


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize("case", HANGS)
def test_the_cli_refuses_it_in_one_line_and_writes_nothing(case: str, command: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    data, key, value = HANGS[case]
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(data))
    monkeypatch.chdir(tmp_path)
    argv = [command, "s.yaml"] + (["--quiet", "--workers", "1"] if command == "run" else [])
    with within(60.0):  # one worker runs here: a run that was let through fails the test instead of hanging
        assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"lbemu: error: {key}:") and err.count("\n") == 1, err
    assert f"{value:g}" in err and "Traceback" not in err, err
    assert os.listdir(tmp_path) == ["s.yaml"]


# -- just inside each bound: the run ends, right, in time proportional to its jobs -----------------------
def edge_cases(jobs: int = JOBS) -> dict[str, dict[str, Any]]:
    """Scenarios just inside each bound, with ``jobs`` jobs after ``jobs`` / 10."""
    length = (jobs + jobs // 10) / RATE  # the run's length
    shortest = 2 * SERVERS / (1000 * RATE)  # up.mean + down.mean at 1,000 failure events per arriving job
    unchecked = 2 * SERVERS * 1.0 / 1000  # up.mean with a backlog allowed
    cases = {
        "timeout at the run's length": scenario({"name": "sqd", "d": 2}, {"loss": 0.3, "timeout": 0.999 * length}),
        "down at the run's length, hold": scenario({"name": "jsq"}, failures={
            "up": {"kind": "exponential", "mean": 10 * length},
            "down": {"kind": "deterministic", "mean": 0.999 * length}, "on_down": "hold"}),
        "down at the run's length, lose": scenario({"name": "jsq"}, failures={
            "up": {"kind": "exponential", "mean": length},
            "down": {"kind": "deterministic", "mean": 0.999 * length}, "on_down": "lose"}),
        "1,000 events per job, hold": scenario({"name": "jsq"}, failures={
            "up": {"kind": "exponential", "mean": 0.96 * shortest},
            "down": {"kind": "exponential", "mean": 0.05 * shortest}, "on_down": "hold"}),
        "up at the clock's resolution, lose": scenario({"name": "jiq"}, failures={
            "up": {"kind": "deterministic", "mean": 1.001 * length / 1e12},
            "down": {"kind": "exponential", "mean": shortest}, "on_down": "lose"}),
        "backlog allowed, hold": scenario({"name": "jsq"}, allow_unstable=True, failures={
            "up": {"kind": "exponential", "mean": 1.001 * unchecked},
            "down": {"kind": "exponential", "mean": 1.0}, "on_down": "hold"}),
    }
    for data in cases.values():
        data["run"]["jobs"], data["run"]["warmup_jobs"] = jobs, jobs // 10
    return cases


@pytest.mark.parametrize("case", list(edge_cases()))
def test_a_run_just_inside_a_bound_ends_right_and_fast(case: str) -> None:
    runs_right(edge_cases(jobs=200)[case], seconds=60.0)  # the bounds are per job: fewer jobs, same costs


def test_just_beyond_each_bound_is_refused() -> None:
    beyond = edge_cases()
    beyond["timeout at the run's length"]["network"]["timeout"] = 1.01 * LENGTH
    beyond["down at the run's length, lose"]["system"]["failures"]["down"]["mean"] = 1.01 * LENGTH
    failures = beyond["1,000 events per job, hold"]["system"]["failures"]
    failures["up"]["mean"] *= 0.95
    beyond["up at the clock's resolution, lose"]["system"]["failures"]["up"]["mean"] = 0.99 * LENGTH / 1e12
    beyond["backlog allowed, hold"]["system"]["failures"]["up"]["mean"] = 0.99 * 2 * SERVERS / 1000
    for case, key in (("timeout at the run's length", "network.timeout"),
                      ("down at the run's length, lose", "system.failures.down.mean"),
                      ("1,000 events per job, hold", "system.failures.up.mean"),
                      ("up at the clock's resolution, lose", "system.failures.up.mean"),
                      ("backlog allowed, hold", "system.failures.up.mean")):
        with pytest.raises(ScenarioError, match=f"^{key}:"):
            Scenario.from_dict(beyond[case])


def test_servers_that_cannot_carry_the_load_when_up_are_refused_with_hold() -> None:
    failures = {"up": {"kind": "exponential", "mean": 1.0}, "down": {"kind": "exponential", "mean": 1.0}}
    message = refused(scenario({"name": "jsq"}, failures=failures), "system.failures", 1.8)  # 0.9 x 2 / 1
    assert "allow_unstable" in message
    Scenario.from_dict(scenario({"name": "jsq"}, failures={**failures, "on_down": "lose"}))  # nothing builds up


# -- a down server sends nothing ---------------------------------------------------------------------------
# Policies that send from the server side, some after a round trip of their own.
SERVER_SENDS: dict[str, tuple[dict[str, Any], int]] = {
    "jiq-sq(2)": ({"name": "jiq", "d": 2}, 3),
    "jbt": ({"name": "jbt", "d": 2, "period": 2.0}, 3),
    "jsq_push": ({"name": "jsq_push"}, 3),
    "jsq_sparse": ({"name": "jsq_sparse", "period": 0.5}, 1),
}


def senders(model: Model) -> list[tuple[float, str, int, bool]]:
    """Every control message a server sends: ``(time, kind, server id, whether it was up)``.

    Idle tokens, reports and updates carry their server's id after the receiver; a
    JIQ-SQ(d) server's queries of I-queue lengths are caught where its token round begins.
    """
    log: list[tuple[float, str, int, bool]] = []
    channel = model.channel
    servers = [server for server in model.servers if isinstance(server, FailingFifoServer)]
    assert len(servers) == len(model.servers)
    post = channel._post

    def posting(kind: Kind, receiver: Any, deliver: Any, args: tuple[Any, ...]) -> None:
        if kind in (Kind.IDLE, Kind.REPORT, Kind.UPDATE):
            log.append((model.env.now, KINDS[kind], args[1], servers[args[1]].up))
        post(kind, receiver, deliver, args)

    channel._post = posting  # type: ignore[method-assign]
    send_token = getattr(model.policy, "_send_token", None)
    if send_token is not None:
        def token_round(server: Any) -> None:
            log.append((model.env.now, "query", server.id, server.up))
            send_token(server)

        model.policy._send_token = token_round  # type: ignore[union-attr]
    return log


@pytest.mark.parametrize("on_down", ["hold", "lose"])
@pytest.mark.parametrize("name", SERVER_SENDS)
def test_no_message_leaves_a_down_server(name: str, on_down: str) -> None:
    policy, dispatchers = SERVER_SENDS[name]
    data = scenario(policy, {"latency": {"kind": "deterministic", "mean": 0.05}},
                    {"up": {"kind": "exponential", "mean": 5.0}, "down": {"kind": "exponential", "mean": 2.0},
                     "on_down": on_down})
    data["system"]["dispatchers"] = dispatchers
    data["allow_unstable"] = True  # the load on the up time is 1.26: the point is the messages, not the delays
    model = built(data)
    log = senders(model)
    trace = Trace(model)
    with within(60.0):
        trace.run(limit=math.inf)
    check_conservation(trace, name)
    assert log, name
    from_down = [entry for entry in log if not entry[3]]
    assert not from_down, f"{name}: sent by a down server: {from_down[:5]}"


def test_a_server_that_fails_during_its_token_round_loses_the_replies_and_sends_no_token() -> None:
    # JIQ-SQ(2), 3 dispatchers, latency 0.05, seed 1: some servers fail with their queries out.
    data = scenario({"name": "jiq", "d": 2}, {"latency": {"kind": "deterministic", "mean": 0.05}},
                    {"up": {"kind": "exponential", "mean": 5.0}, "down": {"kind": "exponential", "mean": 2.0}},
                    allow_unstable=True)
    data["system"]["dispatchers"] = 3
    model = built(data)
    log = senders(model)
    with within(60.0):
        model.run()
    assert model.recorder.lost[Kind.REPLY] > 0  # replies reached their server down (no network loss here)
    assert all(up for _, _, _, up in log)


# -- losses at a down server count in the window their messages were sent in -------------------------------
def ledger(model: Model) -> list[list[Any]]:
    """Every control message as the channel takes it: ``[kind, edges passed when sent, time sent, delivered]``."""
    entries: list[list[Any]] = []
    channel, recorder = model.channel, model.recorder
    post = channel._post

    def posting(kind: Kind, receiver: Any, deliver: Any, args: tuple[Any, ...]) -> None:
        entry = [kind, len(recorder.window), model.env.now, False]
        entries.append(entry)

        def arrived(*a: Any) -> None:
            entry[3] = True
            deliver(*a)

        post(kind, receiver, arrived, args)

    channel._post = posting  # type: ignore[method-assign]
    return entries


LATENCY = 0.5


@pytest.mark.parametrize("servers, warmup, seed", [(10, 40, 8), (4, 40, 8), (10, 200, 3), (4, 1000, 5)])
def test_sent_lost_and_delivered_in_the_window_are_counted_over_the_same_messages(servers: int, warmup: int,
                                                                                     seed: int) -> None:
    # SQ(2), deterministic latency 0.5, failures with on_down: lose, 5 jobs: messages straddle the edges.
    data = scenario({"name": "sqd", "d": 2}, {"latency": {"kind": "deterministic", "mean": LATENCY}},
                    {"up": {"kind": "exponential", "mean": 5.0}, "down": {"kind": "exponential", "mean": 2.0},
                     "on_down": "lose"})
    data["system"]["servers"] = servers
    data["run"]["jobs"], data["run"]["warmup_jobs"] = 5, warmup
    model = built(data, seed)
    entries = ledger(model)
    with within(60.0):
        row = model.run()
    end = model.env.now
    for kind, name in enumerate(KINDS):
        inside = [entry for entry in entries if entry[0] == kind and entry[1] == 1]
        # No network loss: a message not delivered by the end was lost at a down server when it arrived,
        # LATENCY after it was sent; one still on its way counts as delivered.
        lost = sum(not delivered and sent + LATENCY <= end for _, _, sent, delivered in inside)
        assert row[f"messages_per_job_{name}"] * 5 == pytest.approx(len(inside), abs=1e-9), name
        assert row[f"lost_per_job_{name}"] * 5 == pytest.approx(lost, abs=1e-9), name
        assert row[f"delivered_per_job_{name}"] * 5 == pytest.approx(len(inside) - lost, abs=1e-9), name
        assert row[f"delivered_per_job_{name}"] >= 0, name


# -- Little's law, exactly, with jobs lost at down servers -------------------------------------------------
@pytest.mark.parametrize("latency", [0.0, 0.05])
@pytest.mark.parametrize("on_down", ["hold", "lose"])
@pytest.mark.parametrize("policy", [{"name": "sqd", "d": 2}, {"name": "jiq"}, {"name": "jsq"}])
def test_littles_law_holds_exactly_on_fault_runs(policy: dict[str, Any], on_down: str, latency: float) -> None:
    network = {"loss": 0.1, "latency": {"kind": "deterministic", "mean": latency}}
    row = runs_right(scenario(policy, network, {**UP_DOWN, "on_down": on_down}))
    assert (row["lost_fraction"] > 0) == (on_down == "lose")


# -- extreme values of every fault key: refused in one line, or run right ----------------------------------
def with_value(path: str, value: Any, down: dict[str, Any] | None = None) -> dict[str, Any]:
    data = scenario({"name": "sqd", "d": 2}, {"loss": 0.1}, {**copy.deepcopy(UP_DOWN), "on_down": "lose"})
    if down is not None:
        data["system"]["failures"]["down"] = down
    node = data
    *parents, last = path.split(".")
    for part in parents:
        node = node[part]
    node[last] = value
    return data


NAN, INF = math.nan, math.inf
LOGNORMAL = {"kind": "lognormal", "mean": 5.0, "scv": 0.5}
HYPER = {"kind": "hyperexponential", "mean": 5.0, "scv": 2.0}
PARETO = {"kind": "pareto", "mean": 5.0, "alpha": 3.0}
ERLANG = {"kind": "erlang", "mean": 5.0, "k": 2}
EXTREMES: list[tuple[str, Any, dict[str, Any] | None, str | None]] = [
    # (dotted key, value, down law, the key refused or None: runs)
    *[("network.loss", v, None, "network.loss") for v in (NAN, INF, -INF, -0.1, 1.0, 1e300)],
    ("network.loss", 1e-300, None, None), ("network.loss", 0.999, None, None),
    *[("network.timeout", v, None, "network.timeout") for v in (NAN, INF, -INF, -1.0, 1e300)],
    ("network.timeout", 0.0, None, None), ("network.timeout", 1e-300, None, None),
    *[(f"system.failures.{side}.mean", v, None, f"system.failures.{side}.mean")
      for side in ("up", "down") for v in (NAN, INF, -INF, -1.0, 0.0, 1e-300)],
    ("system.failures.down.mean", 1e300, None, "system.failures.down.mean"),
    ("system.failures.up.mean", 1e300, None, None),  # no server fails during the run
    *[("system.failures.down.scv", v, law, "system.failures.down.scv")
      for law in (LOGNORMAL, HYPER) for v in (NAN, INF, -1.0, 0.0, 1e16, 1e300)],
    ("system.failures.down.scv", 1e-300, LOGNORMAL, None),
    *[("system.failures.down.alpha", v, PARETO, "system.failures.down.alpha") for v in (NAN, INF, 2.0, -1.0)],
    ("system.failures.down.alpha", 1e300, PARETO, None),
    *[("system.failures.down.k", v, ERLANG, "system.failures.down.k") for v in (0, -1)],
    ("system.failures.down.k", 10**18, ERLANG, None),
    ("system.failures.on_down", "drop", None, "system.failures.on_down"),
]


@pytest.mark.parametrize("path, value, down, key", EXTREMES,
                         ids=[f"{path}={value}{'' if down is None else '-' + down['kind']}"
                              for path, value, down, _ in EXTREMES])
def test_an_extreme_fault_value_is_refused_in_one_line_or_runs_right(path: str, value: Any,
                                                                     down: dict[str, Any] | None,
                                                                     key: str | None) -> None:
    data = with_value(path, value, down)
    if key is None:
        runs_right(data, seconds=60.0)
    elif isinstance(value, str):
        with pytest.raises(ScenarioError, match=f"^{key}: "):
            Scenario.from_dict(data)
    else:
        refused(data, key, value)
