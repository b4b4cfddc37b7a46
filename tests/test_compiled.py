"""The compiled engine gives the SimPy engine's rows, seed for seed, wherever it claims to.

Every column of ``runs.csv`` but ``wall_seconds`` and ``engine`` must be equal
(floats compared by repr): the equivalence harness's cases, a hypothesis-drawn
family of small scenarios (with and without latency), traces. And the engine choice:
``auto``/``compiled`` fall back to SimPy for what the compiled engine does not
reproduce exactly, and ``runs.csv`` says which engine ran.
"""

from __future__ import annotations

import functools
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import equivalence
from helpers.scenarios import make_point, scenario_dict, trace_arrivals
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import emulator
from emulator import compiled
from emulator.api import scenario_data
from emulator.compiled import ahead
from emulator.compiled import eligibility as compiled_supports
from emulator.compiled import engine as compiled_engine
from emulator.errors import ScenarioError
from emulator.experiment.runner import Task, choose_engine, run_task
from emulator.model.build import build_model

ROOT = Path(__file__).resolve().parents[1]
CASES = equivalence.CASES
IGNORED = equivalence.IGNORED


def full_row(policy: str, **options: Any) -> dict[str, Any]:
    """`emulator.simulate`'s row with the sketch's ``response_bins`` (runs.csv's store has them)."""
    return emulator.simulate(policy, response_bins=True, **options)


def same_row(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Simulate on both engines; assert the rows are equal but for the ignored columns.

    A scenario that one engine refuses (drawn speeds that overload a server under a
    speed-oblivious policy) must be refused by the other with the same message.
    """
    policy = options.pop("policy")
    try:
        old = full_row(policy, engine="simpy", **options)
    except ScenarioError as exc:
        with pytest.raises(ScenarioError) as refused:
            full_row(policy, engine="compiled", **options)
        assert str(refused.value) == str(exc)
        return {}, {}
    new = full_row(policy, engine="compiled", **options)
    assert old["engine"] == "simpy"
    assert new["engine"] == "compiled", "the compiled engine did not run this case"
    differ = {k: (old[k], new[k]) for k in old if k not in IGNORED and repr(old[k]) != repr(new[k])}
    assert not differ, differ
    return old, new


def test_the_suite_runs_every_policy_and_variant_of_the_equivalence_set() -> None:
    """The suite's selection (`helpers.equivalence.tier`) leaves out no policy and no variant in continuous
    time at FIFO and zero latency: only latency, processor sharing, slotted time, failing servers and
    zero-latency loss under policies outside `SAMPLED`."""
    assert len(equivalence.SUITE) >= 500
    left_out = [CASES[key] for key in CASES if key not in equivalence.SUITE]
    assert all(o["latency"] is not None or o.get("discipline") == "ps" or o.get("time") == "slotted"
               or o.get("failures") is not None or o.get("loss", 0) > 0 for o in left_out)
    assert all(o["policy"] not in equivalence.SAMPLED["latency"] for o in left_out
               if o["latency"] is not None and o.get("discipline") != "ps" and o.get("time") != "slotted"
               and o.get("failures") is None)
    assert {o["policy"] for o in equivalence.SUITE.values()} == {o["policy"] for o in CASES.values()}


@pytest.mark.parametrize("key", sorted(equivalence.SUITE))
def test_an_equivalence_case_is_identical(key: str) -> None:
    """A case of `benchmarks/equivalence_cases.py` (`helpers.equivalence.SUITE`: every policy and variant at
    zero latency, the extras and the faults, and latency, processor sharing, slotted time and failing servers
    for the policies of `helpers.equivalence.SAMPLED`),
    on a short run (`helpers.equivalence.shortened`): identical rows. The full set, at its full lengths, is
    `benchmarks/equivalence.py --engines`'s."""
    options = dict(equivalence.SUITE[key])
    if equivalence.simpy_only(options):
        policy = options.pop("policy")
        assert emulator.simulate(policy, engine="compiled", **options)["engine"] == "simpy"
        return
    same_row(options)


PLAIN_RUN = """
import json, sys
sys.path.insert(0, {tests!r})
import emulator
from emulator.errors import ScenarioError
from helpers.equivalence import IGNORED, PLAIN_SUITE
out = {{}}
for key, options in PLAIN_SUITE.items():
    options = dict(options)
    policy = options.pop("policy")
    rows = []
    for engine in ("simpy", "compiled"):
        try:
            rows.append(emulator.simulate(policy, engine=engine, response_bins=True, **options))
        except ScenarioError as exc:
            rows.append({{"refused": str(exc)}})
    old, new = rows
    differ = {{k: [repr(old[k]), repr(new.get(k))] for k in old
              if k not in IGNORED and repr(old[k]) != repr(new.get(k))}}
    if "refused" not in old and new.get("engine") != "compiled":
        differ["engine"] = new.get("engine")
    out[key] = differ
print(json.dumps(out))
"""


def test_the_cases_run_as_plain_python_are_identical() -> None:
    """The cases of `helpers.equivalence.PLAIN_SUITE` (further policies' faults, processor sharing and held
    messages), the compiled engine's code run as plain Python (``NUMBA_DISABLE_JIT=1``, numpy checking every
    index), in one process: each row SimPy's, or refused alike."""
    import subprocess

    assert len(equivalence.PLAIN_SUITE) >= 20
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    done = subprocess.run([sys.executable, "-c", PLAIN_RUN.format(tests=str(ROOT / "tests"))], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    differ = {key: found for key, found in json.loads(done.stdout.strip().splitlines()[-1]).items() if found}
    assert set(json.loads(done.stdout.strip().splitlines()[-1])) == set(equivalence.PLAIN_SUITE)
    assert not differ, differ


LOST_MESSAGES = ["jsq_loss/exp", "sqd_loss_d3/exp", "sqd_loss_timeout_tie/det", "jsq_loss_timeout_0/exp",
                 "jbt_loss/det", "jiq_sqd_loss/exp", "jbt_reset_loss_d3/det",
                 "jiq_loss/exp", "redundancy_lost_cancels/det",
                 "jiq_loss/zero", "jiq_loss_d3/zero", "sqd_loss_d3/zero"]


@pytest.mark.parametrize("key", LOST_MESSAGES)
def test_lost_messages_and_timeouts_give_simpys_rows(key: str) -> None:
    """With ``network.loss`` (and latency, or at zero latency JIQ's tokens and SQ(d)'s asks) the compiled engine
    runs the case, and its row is SimPy's, lost counts too."""
    options = dict(CASES[key])
    options["jobs"] = 1500
    assert on_a_kernel_built_ahead(options), "a kernel the suite does not build ahead (`helpers.equivalence`)"
    old, _ = same_row(options)
    assert sum(value for column, value in old.items() if column.startswith("lost_per_job_")) > 0


def test_lost_messages_at_zero_latency_draw_on_past_the_loss_uniforms_drawn_first() -> None:
    """At zero latency the kernel draws each message's loss when it is sent (LOR's completions): a run that sends
    more messages than the uniforms drawn at its start (16 blocks of 4,096) has them refilled before a step that
    may send one, and its row is SimPy's."""
    options = {"policy": "lor", "servers": 10, "load": 0.9, "jobs": 70_000, "warmup_jobs": 0, "seed": 5,
               "loss": 0.2, "timeout": 0.1}
    old, _ = same_row(options)
    assert old["messages_per_job"] * options["jobs"] > 16 * 4096


def test_a_job_that_waits_for_its_timeout_at_zero_latency_finds_room_to_count_its_occupancy() -> None:
    """At zero latency with lost messages, a job whose replies did not all come reaches its server at its ask's
    timeout, an event: the occupancy arrays grow before it as before an arrival (an overloaded system, whose
    queues keep growing them)."""
    same_row({"policy": "sqd", "d": 2, "servers": 10, "load": 1.3, "allow_unstable": True, "jobs": 600,
              "warmup_jobs": 0, "seed": 4, "occupancy": True, "loss": 0.3, "timeout": 0.5})


FAILING_SERVERS = ["lor_fail_hold_capacity_1_shares/zero", "lor_d2_fail_hold_capacity_1_shares_loss/zero",
                   "lor_fail_lose_capacity_occupancy/zero", "lor_fail_hold_capacity_2_speeds_erlang_d3/zero",
                   "sqd_fail_hold_d3/zero",
                   "sqd_fail_lose_d3/exp", "sqd_fail_lose_loss/zero"]


@pytest.mark.parametrize("key", FAILING_SERVERS)
def test_failing_servers_give_simpys_rows(key: str) -> None:
    """With ``system.failures`` (hold and lose, with and without latency) the compiled engine runs a policy
    whose servers send their dispatchers messages (LOR's completions, of a job blocked at a down server too, sent
    at its recovery), or that asks its servers (SQ(d): a query lost at a down server), and its row is SimPy's, the
    jobs lost at down servers too (JIQ's and batch SQ(d)'s: `test_the_cases_run_as_plain_python_are_identical`)."""
    options = dict(CASES[key])
    options["jobs"] = 1500
    assert on_a_kernel_built_ahead(options), "a kernel the suite does not build ahead (`helpers.equivalence`)"
    lose = options["failures"]["on_down"] == "lose"
    old, _ = same_row(options)
    assert (old["lost_fraction"] > 0) == lose


POLICIES = st.sampled_from([
    {"policy": "random"}, {"policy": "round_robin"}, {"policy": "jsq"},
    {"policy": "sqd", "d": 2}, {"policy": "sqd", "d": 3}, {"policy": "sqd", "d": 2, "replace": True},
    {"policy": "threshold", "d": 2, "threshold": 1}, {"policy": "threshold", "d": 3, "threshold": 2},
    {"policy": "jiq"}, {"policy": "jiq", "memory": 1}, {"policy": "jiq", "d": 2},
    {"policy": "jbt", "d": 2, "period": 2.0}, {"policy": "jbt", "d": 1, "period": 0.5, "below": "lt"},
    {"policy": "jbt", "d": 3, "period": 3.0, "rereport": False, "recheck": False, "initial_threshold": 1},
    {"policy": "jbt", "d": 2, "period": 1.0, "reset": True},
    {"policy": "jbt", "d": 3, "period": 0.7, "reset": True, "below": "lt", "rereport": False},
    {"policy": "jsq_push"}, {"policy": "jsq_sparse", "period": 0.5},
    {"policy": "jsq_sparse", "feedback": "asynchronous", "rate": 2.0}, {"policy": "lsq", "d": 2},
    {"policy": "lsq", "d": 4}, {"policy": "sqd_memory", "d": 2, "m": 1}, {"policy": "sqd_memory", "d": 1, "m": 2},
    {"policy": "persistent_idle"}, {"policy": "lor"}, {"policy": "lor", "d": 2},
    {"policy": "sed", "d": 3, "ties": "fastest"},
])
SERVICE = st.sampled_from([
    "exponential", "deterministic", {"kind": "erlang", "k": 3}, {"kind": "hyperexponential", "scv": 4.0},
    {"kind": "lognormal", "scv": 2.0}, {"kind": "pareto", "alpha": 2.5},
])
ARRIVALS = st.sampled_from([
    "poisson", "deterministic", {"kind": "mmpp2", "burstiness": 3.0, "switch_rate": 0.5},
    {"kind": "batch_poisson", "mean_batch": 3.0},
])


# Latency makes every message an event and lets replies overtake later jobs' decisions (SQ(d) with memory).
LATENCIES = st.sampled_from([None, None, {"kind": "exponential", "mean": 0.2}, {"kind": "exponential", "mean": 2.0},
                             {"kind": "deterministic", "mean": 0.1}])


SPEED_LAWS = st.sampled_from([
    {"kind": "exponential", "mean": 1.0}, {"kind": "erlang", "k": 2, "mean": 2.0}, {"kind": "lognormal", "scv": 0.5},
])


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    servers = draw(st.integers(1, 24))
    policy = dict(draw(POLICIES))
    if "d" in policy and policy["policy"] != "jiq":
        policy["d"] = min(policy["d"], servers)
    if "m" in policy:  # SQ(d) with memory: at most N - d remembered
        policy["m"] = min(policy["m"], servers - policy["d"])
    dispatchers = draw(st.integers(1, 4))
    if policy["policy"] == "jiq" and "d" in policy:
        dispatchers = max(dispatchers, 2)
    if policy["policy"] == "lsq":  # compiled for one dispatcher only (its estimates in the one length index)
        dispatchers = 1
    options: dict[str, Any] = {
        **policy, "servers": servers, "dispatchers": dispatchers,
        "load": draw(st.sampled_from([0.3, 0.7, 0.95, 1.1])), "allow_unstable": draw(st.booleans()),
        # From 100 jobs: a hyperexponential law with scv 4 needs 80 (`limits.RARE_JOBS`).
        "jobs": draw(st.integers(100, 1500)), "warmup_jobs": draw(st.integers(0, 300)),
        "seed": draw(st.integers(0, 2**31)), "service": draw(SERVICE), "arrivals": draw(ARRIVALS),
        "discipline": draw(st.sampled_from(["fifo", "fifo", "pool", "ps"])),
        "occupancy": draw(st.booleans()), "latency": draw(LATENCIES),
    }
    # Drawn on the kernels the suite builds: latency and processor sharing for the policies sampled there.
    if policy["policy"] not in equivalence.SAMPLED["latency"]:
        options["latency"] = None
    if options["discipline"] == "ps" and policy["policy"] not in equivalence.SAMPLED["ps"]:
        options["discipline"] = "fifo"
    if options["load"] >= 1:
        options["allow_unstable"] = True
    if dispatchers > 1 and draw(st.booleans()):
        weights = draw(st.lists(st.integers(1, 5), min_size=dispatchers, max_size=dispatchers))
        options["dispatcher_shares"] = [w / sum(weights) for w in weights]
    if draw(st.booleans()):
        options["capacity"] = draw(st.integers(1, 4))
    speeds = draw(st.sampled_from(["equal", "listed", "drawn"]))
    if speeds == "listed":
        options["speeds"] = draw(st.lists(st.sampled_from([0.5, 1.0, 1.5, 3.0]), min_size=servers,
                                          max_size=servers))
    elif speeds == "drawn":
        options["speeds"] = draw(SPEED_LAWS)
    return options


@functools.cache
def built_ahead() -> set[tuple[str, str, tuple[bool, ...]]]:
    """The kernels the suite builds before its tests (`tests/conftest.py`): its equivalence cases'."""
    return {ahead.kernel(point, policy) for point, policy in equivalence.kernel_cases()}


def on_a_kernel_built_ahead(options: dict[str, Any]) -> bool:
    """Whether the drawn scenario runs on a kernel `built_ahead`, or is refused (both engines must refuse it)."""
    rest = {key: value for key, value in options.items() if key != "policy"}
    try:
        point = emulator.Scenario.from_dict(scenario_data(options["policy"], **rest)).points()[0]
    except ScenarioError:
        return True
    return ahead.kernel(point, point.policies[0]) in built_ahead()


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_drawn_scenarios_are_identical(options: dict[str, Any]) -> None:
    """Drawn scenarios on the kernels built ahead (`built_ahead`), so that no test compiles one: processor
    sharing with latency under the policies of the equivalence set's processor-sharing extras alone."""
    assume(on_a_kernel_built_ahead(options))
    same_row(options)


def test_a_trace_replays_identically(tmp_path: Path) -> None:
    """Trace arrivals with sizes, ties and a window closed by the end of the trace."""
    rows = [(0.0, 1.0), (0.0, 0.5), (0.4, 2.0), (0.4, 0.1), (1.5, 1.0), (2.0, 3.0), (2.0, 0.2), (2.1, 0.7)]
    rows += [(3.0 + 0.37 * i, 0.3 + (i % 5) * 0.4) for i in range(200)]
    for policy in ({"name": "jsq"}, {"name": "jbt", "d": 2, "period": 1.0}, {"name": "sqd", "d": 2}):
        for jobs in (None, 150):
            options = trace_arrivals(tmp_path, rows, jobs)
            point = make_point(policy, servers=3, **options)
            task = Task(point, point.policies[0], 0, 5)
            assert compiled.supports(point, point.policies[0]) is None
            expected = build_model(point, point.policies[0], 5).run()
            got = compiled.run(point, point.policies[0], 5)
            assert {k: repr(v) for k, v in got.items()} == {k: repr(v) for k, v in expected.items()}, \
                (policy, jobs)
            assert choose_engine(task.point, task.policy) == "simpy"  # auto: too short for the kernel


def test_what_is_not_compiled_runs_on_simpy() -> None:
    # LSQ, and JSQ-push with latency, keep an index per dispatcher: compiled, as long as D x N ids fit.
    several = emulator.simulate("lsq", d=2, dispatchers=2, servers=4, jobs=200, engine="compiled")
    assert several["engine"] == "compiled"
    late = make_point({"name": "jsq_push"}, dispatchers=2, servers=4, jobs=200, latency={"kind": "exponential",
                                                                                       "mean": 0.1})
    assert compiled.supports(late, late.policies[0]) is None  # (its rows: benchmarks/equivalence.py --engines)
    latency = {"kind": "exponential", "mean": 1e-6}  # (within the run's length at N = 10^6)
    for policy, options in (({"name": "lsq", "d": 2}, {}), ({"name": "jsq_push"}, {"latency": latency})):
        wide = make_point(policy, servers=900_000, dispatchers=5, jobs=100, **options)
        assert "D x N = 4,500,000" in (compiled.supports(wide, wide.policies[0]) or ""), policy
        one = make_point(policy, servers=1_000_000, jobs=100, **options)  # one index, as JSQ's
        assert compiled.supports(one, one.policies[0]) is None, policy
    instant = make_point({"name": "jsq_push"}, servers=900_000, dispatchers=5, jobs=100)
    assert compiled.supports(instant, instant.policies[0]) is None  # zero latency: one index for all
    assert emulator.simulate("jsq", servers=4, jobs=200, engine="simpy")["engine"] == "simpy"


def test_a_scenario_option_the_kernel_does_not_know_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    point = make_point({"name": "jsq"}, servers=4, jobs=100)
    policy = point.policies[0]
    assert compiled.supports(point, policy) is None
    known = dict(compiled_supports._KNOWN_FIELDS)
    known["system"] = known["system"] - {"speeds"}  # as if `speeds` were a new option
    monkeypatch.setattr(compiled_supports, "_KNOWN_FIELDS", known)
    reason = compiled.supports(point, policy)
    assert reason is not None and "speeds" in reason
    monkeypatch.undo()
    from emulator.compiled.policies import sqd as compiled_sqd

    monkeypatch.setattr(compiled_sqd, "PARAMS", frozenset({"d"}))  # as if `replace` were a new option
    sqd = make_point({"name": "sqd", "d": 2}, servers=4, jobs=100)
    assert "replace" in (compiled.supports(sqd, sqd.policies[0]) or "")
    monkeypatch.undo()
    monkeypatch.setattr(compiled_supports, "_KNOWN_METRICS", compiled_supports._KNOWN_METRICS[:-1])
    assert "metric columns" in (compiled.supports(point, policy) or "")  # a column it does not fill


def test_slotted_time_runs_compiled_with_held_tokens_and_reports() -> None:
    """The slot clock runs every compiled policy, with pull_delay > 0 too (tokens and reports held as messages)."""
    def point(policy: dict[str, Any], pull_delay: int) -> Any:
        data = scenario_dict(policy, servers=4, jobs=100)
        data["system"].update(time="slotted", slot={"pull_delay": pull_delay})
        return emulator.Scenario.from_dict(data).points()[0]

    for policy in ({"name": "jsq"}, {"name": "sqd", "d": 2}, {"name": "jiq"}, {"name": "jbt", "d": 2, "period": 2}):
        for pull_delay in (0, 1, 5):
            late = point(policy, pull_delay)
            assert compiled.supports(late, late.policies[0]) is None, (policy, pull_delay)


def test_the_lists_grow_where_the_kernel_can_go_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """JIQ and JBT-d with 200 dispatchers for 60 servers: the lists' pool runs out of room while the
    policy is built, during a threshold update (reset: every list refills) and between events; the
    kernel stops there for more and goes on, with the SimPy engine's rows."""
    from emulator.compiled import build
    from emulator.compiled import state as S

    seen: set[str] = set()

    def spy(simulate: Any) -> Any:
        def spied(*args: Any) -> int:
            status = int(simulate(*args))
            if status == S.NEED_LISTS:
                iv = args[0].iv  # the `state.Run` record
                seen.add("construction" if iv[S.I_INIT] >= 0 else "update" if iv[S.I_UPDATING] >= 0 else "event")
            return status
        return spied

    for name in ("jiq", "jbt"):
        kernel = build.loop("kernel", f"emulator.compiled.policies.{name}", (False,) * len(build.FEATURES["kernel"]))
        monkeypatch.setattr(kernel, "simulate", spy(kernel.simulate))
    many = {"servers": 60, "dispatchers": 200, "jobs": 20_000, "seed": 5, "occupancy": True}
    same_row({"policy": "jiq", **many})
    same_row({"policy": "jbt", "d": 2, "period": 0.5, "reset": True, **many})
    assert seen == {"construction", "update", "event"}


def test_lists_take_memory_for_what_they_hold_not_dispatchers_times_servers() -> None:
    """10,000 dispatchers for 10^5 servers: a dense list per dispatcher would take 16 GB."""
    import numpy as np

    from emulator.compiled.tools import Description, Toolkit

    point = make_point({"name": "jiq"}, servers=100_000, dispatchers=10_000, jobs=1000)
    toolkit = Toolkit(Description(lists=True, chained=True), 100_000, 10_000, np.ones(1), np.zeros(64, dtype="int64"))
    held = sum(a.nbytes for a in (toolkit.lists, toolkit.lstart, toolkit.lcap, toolkit.count, toolkit.chain,
                                  toolkit.node_d, toolkit.node_next))
    assert held < 100 * point.servers + 100 * point.scenario.system.dispatchers  # bytes


def test_auto_picks_the_compiled_engine_for_long_runs_only() -> None:
    short = make_point({"name": "sqd", "d": 2}, servers=10, jobs=1000)
    assert choose_engine(short, short.policies[0]) == "simpy"
    long = make_point({"name": "sqd", "d": 2}, servers=10, jobs=300_000)  # 1.5 s of SimPy at 5 us per job
    assert choose_engine(long, long.policies[0]) == "compiled"
    latency = make_point({"name": "sqd", "d": 2}, servers=10, jobs=300_000, latency=0.1)
    assert choose_engine(latency, latency.policies[0]) == "compiled"
    row = run_task(Task(short, short.policies[0], 0, 3))
    assert row["engine"] == "simpy"


def test_auto_runs_lost_messages_with_latency_compiled_and_weighs_what_they_cost_simpy() -> None:
    data = scenario_dict({"name": "sqd", "d": 2}, servers=10, jobs=300_000, latency=0.1)
    data["network"].update(loss=0.05, timeout=0.3)
    lossy = emulator.Scenario.from_dict(data).points()[0]
    assert compiled.supports(lossy, lossy.policies[0]) is None
    assert choose_engine(lossy, lossy.policies[0]) == "compiled"
    plain = make_point({"name": "sqd", "d": 2}, servers=10, jobs=300_000, latency=0.1)
    assert compiled.simpy_seconds(lossy, lossy.policies[0]) > compiled.simpy_seconds(plain, plain.policies[0])


def test_auto_runs_compiled_a_short_run_whose_jobs_each_ask_a_thousand_servers_with_latency() -> None:
    """JSQ with latency at N = 1,000: 110 jobs took SimPy 4.8 s (its 2,000 messages a job in flight cost more
    each), the cost model without its crowding term said 0.58 s, and auto ran it on SimPy."""
    point = make_point({"name": "jsq"}, servers=1000, jobs=100, warmup=10, load=0.9, latency=0.01)
    assert compiled.simpy_seconds(point, point.policies[0]) > compiled.AUTO_SECONDS
    assert choose_engine(point, point.policies[0]) == "compiled"
    few = make_point({"name": "sqd", "d": 2}, servers=1000, jobs=100, warmup=10, load=0.9, latency=0.01)
    assert choose_engine(few, few.policies[0]) == "simpy"  # two messages a job: no crowd


def test_auto_weighs_what_a_job_costs_and_a_shorter_run_never_moves_to_simpy_where_it_is_slower() -> None:
    """30,000 jobs of SQ(100): 3 million samples, seconds of SimPy; the same jobs of Random are a tenth."""
    def point(policy: dict[str, Any], jobs: int, **options: Any) -> Any:
        return make_point(policy, servers=1000, jobs=jobs, load=0.9, **options)

    costly = point({"name": "sqd", "d": 100}, 30_000)
    cheap = point({"name": "random"}, 30_000)
    assert compiled.simpy_seconds(costly, costly.policies[0]) > 10 * compiled.simpy_seconds(cheap, cheap.policies[0])
    assert choose_engine(costly, costly.policies[0]) == "compiled"
    assert choose_engine(cheap, cheap.policies[0]) == "simpy"
    for policy in ({"name": "sqd", "d": 2}, {"name": "sqd", "d": 30}, {"name": "jsq"}, {"name": "threshold", "d": 5},
                   {"name": "jiq", "d": 2}, {"name": "jbt", "d": 2, "period": 0.1}):
        engines = [choose_engine(p, p.policies[0]) for p in
                   (point(policy, jobs, dispatchers=3) for jobs in (1000, 10_000, 100_000, 1_000_000, 10_000_000))]
        assert engines == sorted(engines, reverse=True), (policy, engines)  # simpy..., then compiled...
        assert engines[0] == "simpy" and engines[-1] == "compiled", (policy, engines)


def test_the_short_pool_scenario_runs_its_costly_policies_compiled() -> None:
    """power_of_d_pools with 3,000 measured jobs (103,000 with warm-up): JSQ(√N log N) at N = 10,000 samples
    922 pools per job, about 95 million samples, minutes of SimPy; its N = 100 points are a fraction of a second."""
    from emulator.scenario.reading import load_scenario

    scenario = load_scenario(ROOT / "scenarios" / "power_of_d_pools.yaml").with_overrides(
        {"run.jobs": 3000, "replications": 1})
    chosen = {(point.servers, policy.label): choose_engine(point, policy)
              for point in scenario.points() for policy in point.policies}
    assert chosen[10_000, "JSQ(√N log N)"] == "compiled"
    assert chosen[100, "JSQ"] == "simpy"
    assert all(engine == "compiled" for (n, _), engine in chosen.items() if n == 10_000)


def test_the_cli_lists_the_compiled_policies(capsys: pytest.CaptureFixture[str]) -> None:
    from emulator.cli import main

    assert main(["policies"]) == 0
    lines = {line.split(" ", 1)[0]: line for line in capsys.readouterr().out.splitlines()
             if not line.startswith(" ")}
    for name in compiled.COMPILED:
        assert lines[name].endswith("engines: simpy, compiled")


def test_progress_reports_do_not_change_the_row() -> None:
    point = make_point({"name": "jsq"}, servers=8, jobs=30_000, warmup=100, load=0.8)
    task = Task(point, point.policies[0], 0, 4)
    seen: list[int] = []
    reported = compiled.run(point, point.policies[0], 4, seen.append)
    assert seen == sorted(seen) and seen[0] > 0 and seen[-1] == 30_000  # the last report: all done
    assert len(seen) >= 3  # every 8,192 measured jobs, then the last
    assert reported == compiled.run(task.point, task.policy, 4)
    simpy_seen: list[int] = []
    assert build_model(point, point.policies[0], 4).run(simpy_seen.append) == reported
    assert simpy_seen == sorted(simpy_seen) and simpy_seen[-1] == 30_000


def test_tiny_and_huge_responses_are_binned_alike(tmp_path: Path) -> None:
    """The quantile sketch's dynamic range: responses from 0 (binned as 5e-324) to 1e300, on both engines."""
    sizes = [5e-324, 1e-320, 1e-300, 1e-200, 1.0, 0.5, 1e200, 1e300, 2.0, 3e-310]
    rows = [(0.0, 5e-324), (0.0, 1e-300)] + [(1.0 + i, sizes[i % len(sizes)]) for i in range(60)]
    options = {"policy": "jsq", "servers": 3, "occupancy": True, "seed": 2,
               **trace_arrivals(tmp_path, rows)}
    options["warmup_jobs"] = options.pop("warmup")
    old, _ = same_row(options)
    bins = [b for b, _ in old["response_bins"]]
    sketch = compiled_engine.QuantileSketch

    def index(x: float) -> float:
        return (math.log(x) - math.log(sketch.LOW)) / math.log(sketch.RATIO)

    assert min(bins) < index(1e-323)  # zero responses (1.0 + 1e-320 == 1.0) and 5e-324 at time 0
    assert max(bins) > index(1e299)


def test_drawn_speeds_that_overload_are_refused_by_the_compiled_engine() -> None:
    """The compiled engine draws the speeds as the model does, and refuses the same replications."""
    point = make_point({"name": "random"}, servers=10, load=0.95, jobs=2000,
                       speeds={"kind": "exponential", "mean": 1.0})
    assert compiled.supports(point, point.policies[0]) is None
    with pytest.raises(ScenarioError) as simpy_error:
        build_model(point, point.policies[0], 1)
    with pytest.raises(ScenarioError) as compiled_error:
        compiled.record(point, point.policies[0], 1)
    assert str(compiled_error.value) == str(simpy_error.value)
    assert "drawn with seed 1" in str(compiled_error.value)


@pytest.mark.slow
def test_a_changed_sibling_of_the_kernel_is_not_read_from_a_stale_cache(tmp_path: Path) -> None:
    """Numba checks a cached function against its own file only; the kernel inlines its siblings'.

    A copy of the package with its cache: after a change to ``policies/random.py`` alone
    (Random sends every job to server 0), the compiled engine must run the changed code, as
    the SimPy engine would, not the kernel cached before the change.
    """
    import shutil
    import subprocess

    shutil.copytree(ROOT / "emulator", tmp_path / "emulator")
    script = ("import emulator; row = emulator.simulate('random', servers=4, load=0.5, jobs=2000, seed=1, "
              "engine='compiled'); print(row['engine'], row['mean_response'])")

    def run() -> list[str]:
        done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                              check=True)
        return done.stdout.split()

    engine, before = run()
    assert engine == "compiled"
    policies = tmp_path / "emulator" / "compiled" / "policies" / "random.py"
    text = policies.read_text()
    original = "    return int(uniform(rng, ubuf, iv) * P[P_N]), False\n"
    assert text.count(original) == 1
    policies.write_text(text.replace(original, "    return 0, False\n"))
    engine, after = run()
    assert engine == "compiled"
    assert float(after) > 2 * float(before)  # one server at load 2 instead of four at 0.5


def test_a_folder_started_on_simpy_resumes_on_the_compiled_engine(tmp_path: Path) -> None:
    """The store ignores ``run.engine``: the mixed folder's files are the one-engine folder's, and its
    summary's ``engine`` names both engines where a (point, policy) mixes them, not the first one's."""
    import pandas as pd

    data = {"name": "mixed", "seed": 3, "replications": 1, "run": {"jobs": 3000, "warmup_jobs": 300},
            "system": {"servers": 8}, "policies": [{"name": "jsq"}, {"name": "jbt", "d": 2, "period": 5}]}
    emulator.run({**data, "run": {**data["run"], "engine": "simpy"}}, workers=1, out=tmp_path / "mixed")
    data = {**data, "replications": 3, "run": {**data["run"], "engine": "compiled"}}
    emulator.run(data, workers=1, out=tmp_path / "mixed")
    emulator.run(data, workers=1, out=tmp_path / "compiled")
    for name in ("runs", "summary", "occupancy", "total_jobs", "response_cdf"):
        mixed, alone = (pd.read_csv(tmp_path / folder / f"{name}.csv") for folder in ("mixed", "compiled"))
        ignored = [c for c in mixed.columns if c.startswith(IGNORED)]
        pd.testing.assert_frame_equal(mixed.drop(columns=ignored), alone.drop(columns=ignored))
    runs = pd.read_csv(tmp_path / "mixed" / "runs.csv")
    assert list(runs["engine"]) == ["simpy", "compiled", "compiled"] * 2
    assert list(pd.read_csv(tmp_path / "mixed" / "summary.csv")["engine"]) == ["compiled+simpy"] * 2
    assert list(pd.read_csv(tmp_path / "compiled" / "summary.csv")["engine"]) == ["compiled"] * 2


def test_the_kernel_runs_as_plain_python_without_jit() -> None:
    """NUMBA_DISABLE_JIT=1 runs the compiled engine's code as Python (a debugger and coverage see it),
    with the rows of the compiled engine: the SimPy engine's, in a case per built-in compiled policy, and where
    numpy's bounds checks see arrays too short for many jobs of one instant."""
    import subprocess

    script = """
import json, emulator
from emulator.compiled import COMPILED
cases = {"jsq": {}, "sqd": {"d": 3}, "jiq": {"dispatchers": 2}, "jbt": {"d": 2, "period": 2.0},
         "threshold": {"d": 9}, "random": {}, "round_robin": {"dispatchers": 2},
         "jsq_push": {"dispatchers": 2}, "jsq_sparse": {"feedback": "asynchronous", "rate": 0.5},
         "lsq": {"d": 3}, "sqd_memory": {"d": 2, "m": 3, "dispatchers": 2},
         "persistent_idle": {"dispatchers": 2}, "lor": {"d": 3, "dispatchers": 2, "capacity": 3},
         "sed": {"ties": "fastest", "speeds": [1.0, 2.0] * 5},
         "batch_sqd": {"d": 2, "arrivals": {"kind": "batch_poisson", "mean_batch": 3.0}},
         "least_work": {"d": 3}}
cases["late_binding"] = {"d": 3, "dispatchers": 2}
cases["redundancy"] = {"d": 3, "cancel": "start", "dispatchers": 2}
assert set(cases) == set(COMPILED), sorted(COMPILED)
runs = {name: (name, options) for name, options in cases.items()}
# Where the kernel's arrays must have room for many jobs of one instant (numpy checks the bounds here):
# batches of 100 at 4 processor-sharing servers, and batches placed at their ask's timeout.
down = {"kind": "exponential", "mean": 2.0}
runs["batch_sqd, ps"] = ("batch_sqd", {"servers": 4, "discipline": "ps", "arrivals": {
    "kind": "batch_poisson", "mean_batch": 100.0, "batch": "deterministic"}})
runs["batch_sqd, faults"] = ("batch_sqd", {
    "servers": 4, "loss": 0.3, "timeout": 0.0, "capacity": 3, "arrivals": {"kind": "batch_poisson", "mean_batch": 20.0},
    "failures": {"up": {"kind": "exponential", "mean": 20.0}, "down": down}})
out = {}
for key, (name, options) in runs.items():
    options = {"servers": 10, "load": 0.8, "jobs": 1500, "seed": 5, **options}
    rows = [emulator.simulate(name, engine=engine, **options) for engine in ("simpy", "compiled")]
    for row in rows:
        row.pop("wall_seconds")
    out[key] = [rows[1].pop("engine"), rows[0].pop("engine"), rows[0] == rows[1]]
print(json.dumps(out))
"""
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert all(value == ["compiled", "simpy", True] for value in result.values()), result


HEAP_CHECK = """
import heapq

import numpy as np

from emulator.compiled import state as S
from emulator.compiled.core import pop, push, replace_first

rng = np.random.default_rng(11)
heap, iv = np.zeros(3 * 400), np.zeros(S.I_NIV, dtype=np.int64)
reference = []
popped, expected = [], []
for step in range(20_000):
    action = rng.integers(3) if reference else 0
    t = float(rng.integers(5)) + (reference[0][0] if reference else 0.0)
    code = int(rng.integers(1000))
    if action == 0 and len(reference) < 390:
        heapq.heappush(reference, (t, int(iv[S.I_EID]), code))
        push(heap, iv, t, code)
    elif reference:
        popped.append((heap[0], int(heap[1]), int(heap[2])))
        expected.append(heapq.heappop(reference))
        if action == 1:
            pop(heap, iv)
        else:  # the first record replaced by a later one, with the next id
            heapq.heappush(reference, (t, int(iv[S.I_EID]), code))
            replace_first(heap, iv, t, code)
    assert iv[S.I_HEAP] == len(reference), step
assert popped == expected and len(popped) > 5_000, (len(popped), popped[:3], expected[:3])
print("ok")
"""


UNLITERAL_CHECK = """
from numba import njit

from emulator.compiled.core import compiled_only


@compiled_only
def scaled(x, k):
    return x * k


@njit
def caller(x):
    return scaled(x, 3) + scaled(x, 4) + scaled(x, 0.5)


assert caller(2.0) == 15.0
print(sorted(str(signature) for signature in scaled.signatures))
"""


def test_a_function_only_kernels_call_is_compiled_once_per_argument_types(tmp_path: Path) -> None:
    """`core.compiled_only`: calls passing the constants 3 and 4 share one compilation, for int64, where
    numba's own would compile one for each (``Literal[int](3)``, ``Literal[int](4)``); a float is another type.
    In a process of its own, its numba cache in ``tmp_path``."""
    import subprocess

    script = tmp_path / "unliteral.py"
    script.write_text(UNLITERAL_CHECK)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "NUMBA_DISABLE_JIT": "0"}
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split("\n")[0] == "['(float64, float64)', '(float64, int64)']", done.stdout


def test_the_event_heap_pops_in_time_then_id_order_with_ties_and_replacements() -> None:
    """`core.push`, `pop` and `replace_first` (a departure's next service) give SimPy's (time, id) order.

    Times drawn from five values, so that most comparisons are ties broken by the id,
    and heaps of every size from 0 up, where a record has one to four children. The
    functions run as Python (NUMBA_DISABLE_JIT, in a process of its own): compiled
    one by one here, they would add entries to the package's checked cache behind its
    manifest, and the next process would discard and recompile the kernel.
    """
    import os
    import subprocess

    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    done = subprocess.run([sys.executable, "-c", HEAP_CHECK], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0 and done.stdout.split() == ["ok"], done.stderr[-3000:]
