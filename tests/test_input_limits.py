"""Input that used to lose data, hang, raise a traceback or give a silently wrong run.

Each case is refused before anything is written, in one line that names the
dotted key, or runs correctly. The bounds themselves live in `emulator.scenario.checks`.
"""

from __future__ import annotations

import copy
import math
import os
import time
import warnings
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import emulator
from emulator import Scenario, ScenarioError
from emulator.cli import main
from emulator.errors import MAX_LENGTH
from emulator.measure.recorder import QuantileSketch
from emulator.model.build import build_model
from emulator.scenario.reading import load_scenario
from emulator.scenario.schema import LawConfig
from emulator.scenario.yaml_input import load
from emulator.workload.streams import generator

BASE: dict[str, Any] = {
    "name": "limits",
    "replications": 1,
    "run": {"jobs": 2000, "warmup_jobs": 200},
    "system": {"servers": 10},
    "workload": {"load": 0.9},
    "policies": [{"name": "random"}],
}


def with_keys(**dotted: Any) -> dict[str, Any]:
    """BASE with dotted keys (``__`` for ``.``) set."""
    data = copy.deepcopy(BASE)
    for key, value in dotted.items():
        node = data
        parts = key.split("__")
        for part in parts[:-1]:
            node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
        node[parts[-1]] = value
    return data


def one_line(call: Any, key: str) -> str:
    """The message of the `ScenarioError` that ``call()`` raises: one line starting with ``key``."""
    with pytest.raises(ScenarioError) as info:
        call()
    message = str(info.value)
    assert "\n" not in message and len(message) <= MAX_LENGTH, message
    assert message.startswith(f"{key}:"), message
    return message


def refused(key: str, **dotted: Any) -> str:
    return one_line(lambda: Scenario.from_dict(with_keys(**dotted)), key)


# -- 1. a name is one plain folder name, and nothing is written before validation passes ---
@pytest.mark.parametrize("name", ["..", ".", "", "a/b", "../x"])
def test_name_is_one_plain_folder(name: str) -> None:
    refused("name", name=name)


def test_cli_with_bad_name_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "s.yaml").write_text("name: '..'\npolicies: [{name: random}]\n")
    (tmp_path / "runs.csv").write_text("the user's own file\n")
    monkeypatch.chdir(tmp_path)
    assert main(["run", "s.yaml", "--quiet", "--workers", "1"]) == 2
    assert capsys.readouterr().err.startswith("lbemu: error: name:")
    assert sorted(os.listdir(tmp_path)) == ["runs.csv", "s.yaml"]
    assert (tmp_path / "runs.csv").read_text() == "the user's own file\n"


def test_a_name_too_long_for_a_folder_is_refused_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "s.yaml").write_text(f"name: {'a' * 300}\npolicies: [{{name: random}}]\n")
    monkeypatch.chdir(tmp_path)
    assert main(["run", "s.yaml", "--quiet", "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("lbemu: error: name: expected a folder name of at most 255 characters") and "got 300" in err
    assert err.count("\n") == 1 and len(err) < 200, err
    assert sorted(os.listdir(tmp_path)) == ["s.yaml"]
    refused("name", name="a" * 256)
    Scenario.from_dict(with_keys(name="a" * 255))


def test_an_unusable_out_folder_says_why_and_leaves_nothing(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "s.yaml").write_text("policies: [{name: random}]\nrun: {jobs: 100, warmup_jobs: 0}\n")
    out = tmp_path / "new" / "deeper" / ("b" * 300)
    assert main(["run", str(tmp_path / "s.yaml"), "--out", str(out), "--quiet", "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("lbemu: error: --out: expected a results folder lbemu can use (File name too long)"), err
    assert err.count("\n") == 1 and len(err) < 250, err
    assert sorted(os.listdir(tmp_path)) == ["s.yaml"]


@pytest.mark.parametrize("options, key", [({"workers": 0}, "workers"), ({"workers": -2}, "workers"),
                                          ({"workers": 1.5}, "workers"), ({"workers": True}, "workers")])
def test_api_run_refuses_bad_workers_before_writing(tmp_path: Path, options: dict[str, Any], key: str) -> None:
    out = tmp_path / "out"
    one_line(lambda: emulator.run(Scenario.from_dict(BASE), out=out, **options), key)
    assert not out.exists()


def test_api_run_takes_a_dict_and_numpy_workers(tmp_path: Path) -> None:
    data = with_keys(run={"jobs": 300, "warmup_jobs": 30})
    results = emulator.run(data, workers=np.int64(1), out=tmp_path / "out")
    assert list(results.summary["policy"]) == ["Random"]
    assert (tmp_path / "out" / "runs.csv").is_file()
    one_line(lambda: emulator.run(data["policies"], workers=1), "scenario")  # type: ignore[arg-type]
    one_line(lambda: emulator.run({**data, "name": ".."}, out=tmp_path / "other"), "name")
    assert not (tmp_path / "other").exists()


# -- 3. precision on a timing column would make results depend on the worker count ------
def test_precision_metric_must_be_simulated() -> None:
    refused("precision.metric", precision={"metric": "wall_seconds"})
    Scenario.from_dict(with_keys(precision={"metric": "p99_response"}))


# -- 4. one line where a traceback was ------------------------------------------------------
def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("name: caf\u00e9\npolicies: [{name: jsq}]\n".encode("latin-1"))
    message = one_line(lambda: load_scenario(path), "scenario")
    assert "UTF-8" in message and "0xe9" in message


@pytest.mark.parametrize("text, says", [
    ("-" * 1000 + "0.5", "at most 200 characters"),
    ("0.0001+" * 1100 + "0.5", "at most 200 characters"),
    ("1**" * 3000 + "0.5", "at most 200 characters"),
    ("-" * 150 + "0.5", "nested operations"),
    ("(" * 60 + "0.5" + ")" * 60, "0.5"),  # parentheses alone add no depth: a control, accepted
])
def test_long_or_deep_expressions(text: str, says: str) -> None:
    if says == "0.5":
        assert Scenario.from_dict(with_keys(workload__load=text)).points()[0].load == 0.5
        return
    assert says in refused("workload.load", workload__load=text)
    assert says in refused("policies.0.d", policies=[{"name": "sqd", "d": text.replace("0.5", "2")}])


@pytest.mark.parametrize("char", ["\x00", "\x01", "\x07"])
def test_control_characters_are_one_line(char: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "control.yaml"
    path.write_text(f"name: x{char}\npolicies: [{{name: random}}]\n")
    message = one_line(lambda: load_scenario(path), "scenario")
    assert f"control character {ord(char):#04x}" in message
    good = tmp_path / "good.yaml"
    good.write_text("policies: [{name: random}]\n")
    for argv, named in ((["validate", str(path)], "scenario:"),
                        (["validate", str(good), "--set", f"name=a{char}b"], "--set name:")):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"lbemu: error: {named}") and "Traceback" not in err, err
        assert char not in err  # echoed as an escape, not as the character itself


def test_deep_yaml_is_one_line(tmp_path: Path) -> None:
    # One bracket a line: on one line, PyYAML's scanner checks every open bracket as a possible key
    # at every token (seconds before it reaches Python's recursion limit, whatever the depth).
    path = tmp_path / "deep.yaml"
    path.write_text("description:\n" + " [\n" * 50_000 + " " + "]" * 50_000 + "\n")
    one_line(lambda: load_scenario(path), "scenario")


# -- 5. valid-looking input that hung, ate memory or failed at run time ----------------------
JSQ = {"name": "jsq"}
BOUNDS = [
    # (dotted key named, keys to set, a value just inside the bound that must be accepted)
    ("system.servers", {"system__servers": 1_000_000_000}, {"system__servers": 1000}),
    ("system.dispatchers", {"system__dispatchers": 10**12, "policies": [{"name": "jiq", "d": 10**11}]},
     {"system__dispatchers": 1_000_000, "policies": [{"name": "jiq", "d": 1_000_000}]}),
    ("workload.service.mean", {"workload__service": {"mean": 1.0e-310}}, {"workload__service": {"mean": 1e-90}}),
    ("workload.service.mean", {"workload__service": {"mean": 1e308}}, {"workload__service": {"mean": 1e90}}),
    ("workload.arrivals.mean_batch", {"workload__arrivals": {"kind": "batch_poisson", "mean_batch": 1e9}},
     {"workload__arrivals": {"kind": "batch_poisson", "mean_batch": 2}}),
    ("policies.0.period", {"policies": [{"name": "jbt", "period": 1e-300}]},
     {"policies": [{"name": "jbt", "period": 0.002}]}),
    ("policies.0.period", {"policies": [{"name": "jbt", "period": 1e-6}]},
     {"policies": [{"name": "jbt", "period": 0.002}]}),
    ("policies.0.period", {"policies": [{"name": "jbt", "d": "N", "period": 0.003}]},  # N + 2d = 30 messages
     {"policies": [{"name": "jbt", "d": "N", "period": 0.0034}]}),
    ("workload.arrivals.switch_rate", {"workload__arrivals": {"kind": "mmpp2", "switch_rate": 1e300}},
     {"workload__arrivals": {"kind": "mmpp2", "switch_rate": 900}}),
    ("workload.arrivals.switch_rate", {"workload__arrivals": {"kind": "mmpp2"}, "workload__service": {"mean": 1e5}},
     {"workload__arrivals": {"kind": "mmpp2", "switch_rate": 1e-5}, "workload__service": {"mean": 1e5}}),
    ("system.speeds.1", {"system__speeds": [1.0, 1e-300] + [1.0] * 8, "policies": [{"name": "jsq"}]},
     {"system__speeds": [1.0, 1e-90] + [1.0] * 8, "policies": [{"name": "jsq"}]}),
    ("system.speeds.mean", {"system__speeds": {"kind": "exponential", "mean": 1e300}, "policies": [{"name": "jsq"}]},
     {"system__speeds": {"kind": "exponential", "mean": 1e90}, "policies": [{"name": "jsq"}]}),
    ("network.latency.mean", {"network__latency": {"kind": "deterministic", "mean": 1e300}},
     {"network__latency": {"kind": "deterministic", "mean": 240}}),
    ("workload.service.scv", {"workload__service": {"kind": "hyperexponential", "scv": 1e16}},
     {"workload__service": {"kind": "hyperexponential", "scv": 99}}),
    ("network.latency.scv", {"network__latency": {"kind": "hyperexponential", "mean": 0.1, "scv": 1e16}},
     {"network__latency": {"kind": "hyperexponential", "mean": 0.1, "scv": 99}}),
    ("workload.load", {"system__discipline": "pool", "workload__load": 1e6},
     {"system__discipline": "pool", "workload__load": 1e5}),
    ("workload.arrivals.mean_batch", {"workload__arrivals": {"kind": "batch_poisson", "mean_batch": 221}},
     {"workload__arrivals": {"kind": "batch_poisson", "mean_batch": 220}}),
    # Arrival times of a run longer than 1e12 service times lose the service times in their rounding.
    ("workload.load", {"workload__load": 5.0e-324}, {"workload__load": 1e-8}),
    ("workload.load", {"workload__load": 1e-300}, {"workload__load": 1e-8}),
    ("workload.load", {"workload__load": 1e-15}, {"workload__load": 1e-8}),
    # Half a lognormal mean is in draws of probability 1 - Phi(sigma): 10 of them in 2,000 jobs.
    ("workload.service.scv", {"workload__service": {"kind": "lognormal", "scv": 1e6}},
     {"workload__service": {"kind": "lognormal", "scv": 750}}),
    ("network.latency.scv", {"network__latency": {"kind": "lognormal", "mean": 0.1, "scv": 1e6}},
     {"network__latency": {"kind": "lognormal", "mean": 0.1, "scv": 750}}),
    # Drawn speeds obey the bounds of listed ones.
    ("system.speeds.scv", {"system__speeds": {"kind": "lognormal", "mean": 1, "scv": 1e300}, "policies": [JSQ]},
     {"system__speeds": {"kind": "lognormal", "mean": 1, "scv": 1e20}, "policies": [JSQ]}),
]
SLOTTED = [
    # (key, keys to set, keys just inside the bound), all in slotted time
    ("workload.load", {"system__servers": 1, "workload__load": 1e-6},
     {"system__servers": 1, "workload__load": 0.5, "run": {"jobs": 1_000_000, "warmup_jobs": 5000}}),
    ("workload.load", {"workload__arrivals": {"kind": "deterministic"}, "workload__load": 5e-8,
                       "run": {"jobs": 1, "warmup_jobs": 0}},  # 5e-7 arrivals a slot round to 0
     {"workload__arrivals": {"kind": "deterministic"}, "workload__load": 1e-7, "run": {"jobs": 1, "warmup_jobs": 0}}),
    ("system.speeds.0", {"system__servers": 4, "system__speeds": [1e-9, 1, 1, 1], "policies": [JSQ]},
     {"system__servers": 4, "system__speeds": [1e-4, 1, 1, 1], "policies": [JSQ]}),
    ("system.speeds.scv", {"system__speeds": {"kind": "lognormal", "mean": 1, "scv": 1e300}, "policies": [JSQ]},
     {"system__speeds": {"kind": "lognormal", "mean": 1, "scv": 30}, "policies": [JSQ]}),
    ("run.jobs", {"workload__service": {"kind": "deterministic", "mean": 1e-6}},  # 9e6 arrivals a slot
     {"workload__service": {"kind": "deterministic", "mean": 0.1}}),
    ("run.jobs", {"system__servers": 200_000, "run": {"jobs": 100, "warmup_jobs": 0}},
     {"system__servers": 20, "run": {"jobs": 100, "warmup_jobs": 0}}),
    ("workload.arrivals.burstiness", {"workload__arrivals": {"kind": "mmpp2", "burstiness": 1e6, "switch_rate": 1e-7}},
     {"workload__arrivals": {"kind": "mmpp2", "burstiness": 10, "switch_rate": 0.05}}),
    ("workload.arrivals.switch_rate", {"workload__arrivals": {"kind": "mmpp2", "switch_rate": 1e-7}},
     {"workload__arrivals": {"kind": "mmpp2", "switch_rate": 1e-3}}),
    ("workload.service.mean", {"workload__service": {"kind": "exponential", "mean": 1e-20}},  # numpy's Poisson
     {"workload__service": {"kind": "exponential", "mean": 0.1}}),
    ("system.servers", {"system__servers": 20_000, "run": {"jobs": 1_000_000, "warmup_jobs": 0}},
     {"system__servers": 19_000, "run": {"jobs": 1_000_000, "warmup_jobs": 0}}),
]
BOUNDS += [(key, {"system__time": "slotted", **bad}, {"system__time": "slotted", **good})
           for key, bad, good in SLOTTED]


@pytest.mark.parametrize("key, bad, good", BOUNDS, ids=[f"{i}-{'slotted-' if 'system__time' in b[1] else ''}{b[0]}"
                                                         for i, b in enumerate(BOUNDS)])
def test_bounds_refuse_at_validation(key: str, bad: dict[str, Any], good: dict[str, Any]) -> None:
    started = time.perf_counter()
    refused(key, **bad)
    assert time.perf_counter() - started < 5
    Scenario.from_dict(with_keys(**good))


@pytest.mark.parametrize("options", [
    {"policies": [{"name": "jbt", "period": 0.002}], "run": {"jobs": 300, "warmup_jobs": 0}},
    {"workload__arrivals": {"kind": "mmpp2", "switch_rate": 900}},
    {"workload__service": {"kind": "hyperexponential", "scv": 99}},
])
def test_just_inside_the_bounds_runs(options: dict[str, Any]) -> None:
    # The cases the bounds were chosen against still run, quickly.
    scenario = Scenario.from_dict(with_keys(**options))
    point = scenario.points()[0]
    row = build_model(point, point.policies[0], 1).run()
    assert row["jobs"] == scenario.run.jobs and math.isfinite(row["mean_response"])


@pytest.mark.parametrize("options", [
    {"system__servers": 1, "workload__load": 1e-3, "run": {"jobs": 200, "warmup_jobs": 0}},  # 2e5 empty slots
    {"system__servers": 4, "system__speeds": [1e-4, 1, 1, 1], "policies": [JSQ]},
    {"workload__arrivals": {"kind": "deterministic"}, "workload__load": 1e-5, "run": {"jobs": 5, "warmup_jobs": 0}},
    {"workload__service": {"kind": "deterministic", "mean": 0.1}},
    {"system__servers": 20, "run": {"jobs": 100, "warmup_jobs": 0}},
    {"workload__arrivals": {"kind": "mmpp2", "burstiness": 10, "switch_rate": 0.05}},
    {"system__speeds": {"kind": "lognormal", "mean": 1, "scv": 30}, "policies": [JSQ]},
])
def test_just_inside_the_slotted_bounds_runs(options: dict[str, Any]) -> None:
    # A window of several slots: time averages are numbers, and the run is quick.
    scenario = Scenario.from_dict(with_keys(system__time="slotted", **options))
    point = scenario.points()[0]
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        row = build_model(point, point.policies[0], 1).run()
    assert time.perf_counter() - started < 10
    assert row["jobs"] == scenario.run.jobs and row["sim_time"] >= 1
    for metric in ("mean_response", "mean_queue_length", "messages_per_server_time", "p50_response"):
        assert math.isfinite(row[metric]) and row[metric] >= 0, metric


@pytest.mark.parametrize("jobs, seed, key", [
    (2000, 24, "run.jobs (speeds drawn with seed 24)"),  # a fast server: 891 arrivals a slot, a 2-slot window
    (20_000, 37, "system.speeds (drawn with seed 37) at server 5"),  # a slow one: 5.4e7 capacities to draw
    (20_000, 2792, "system.speeds (drawn with seed 2792) at server 1"),  # a slower one: 5.5e6 slots
])
def test_drawn_speeds_beyond_the_bounds_fail_their_replication(jobs: int, seed: int, key: str) -> None:
    # The law passes validation (its typical draws do), but these replications drew extremes.
    speeds = {"kind": "lognormal", "mean": 1, "scv": 1000}
    data = with_keys(system={"servers": 100, "time": "slotted", "speeds": speeds},
                     run={"jobs": jobs, "warmup_jobs": 0}, workload={"load": 0.5}, policies=[JSQ])
    point = Scenario.from_dict(data).points()[0]
    one_line(lambda: build_model(point, point.policies[0], seed), key)
    build_model(point, point.policies[0], 1)  # another replication's draws are within the bounds


def test_a_tiny_load_is_refused_where_arrival_times_lose_the_service_times() -> None:
    message = refused("workload.load", workload__load=1e-15)
    assert "1e+12" in message and "2.2e+17" in message
    # Just inside, times of 2e10 still resolve service times of 1: a correct run, without warnings.
    point = Scenario.from_dict(with_keys(workload__load=1e-8)).points()[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        row = build_model(point, point.policies[0], 1).run()
    assert row["mean_response"] == pytest.approx(1.0, rel=0.1) and 0.5 < row["p50_response"] < 0.9  # ln 2


# -- 6. silent wrong results --------------------------------------------------------------
@pytest.mark.parametrize("scale", [1e300, 1e-300, 1e-20, 1e20])
def test_quantile_sketch_bins_any_positive_float(scale: float) -> None:
    values = generator(5, "sketch").exponential(scale, 20_000)
    sketch = QuantileSketch()
    for value in values.tolist():
        sketch.add(value)
    for q in (0.01, 0.5, 0.99):
        exact = float(np.quantile(values, q, method="inverted_cdf"))
        assert abs(sketch.quantile(q) / exact - 1) < 0.005, q  # the bin's half-width, ratio 1.01


def test_quantile_sketch_extremes() -> None:
    sketch = QuantileSketch()
    for value in (0.0, 5e-324, 1.7976931348623157e308):
        sketch.add(value)
    assert sketch.quantile(1.0) <= 1.7976931348623157e308
    assert sketch.quantile(1.0) > 1e308
    assert 0 < sketch.quantile(0.1) < 1e-320


def test_jiq_memory_zero_is_refused() -> None:
    refused("policies.0.memory", policies=[{"name": "jiq", "memory": 0}])
    Scenario.from_dict(with_keys(policies=[{"name": "jiq", "memory": 1}]))


@pytest.mark.parametrize("key", ["workload.service", "network.latency", "system.speeds"])
def test_pareto_needs_finite_variance(key: str) -> None:
    law = {"kind": "pareto", "mean": 0.1, "alpha": 1.0001}
    dotted = key.replace(".", "__")
    assert "> 2" in refused(f"{key}.alpha", **{dotted: law})
    Scenario.from_dict(with_keys(policies=[{"name": "jsq"}], **{dotted: {**law, "alpha": 2.5}}))


def test_jiq_d_may_be_an_expression_in_n() -> None:
    # As for every other policy's d; JIQ's samples the dispatchers' I-queues.
    system = {"servers": 100, "dispatchers": 8}
    by_expression = with_keys(system=system, policies=[{"name": "jiq", "d": "ceil(log(N))"}])
    point = Scenario.from_dict(by_expression).points()[0]
    assert point.policies[0].params["d"] == 5 and point.policies[0].label == "JIQ-SQ(5)"
    rows = [build_model(point, point.policies[0], 3).run()]
    plain = Scenario.from_dict(with_keys(system=system, policies=[{"name": "jiq", "d": 5}])).points()[0]
    rows.append(build_model(plain, plain.policies[0], 3).run())
    assert rows[0]["mean_response"] == rows[1]["mean_response"] and rows[0]["messages_per_job_query"] > 0
    message = refused("policies.0.d", system=system, policies=[{"name": "jiq", "d": "N"}])
    assert "system.dispatchers=8" in message and "got 100" in message
    refused("policies.0.d", system=system, policies=[{"name": "jiq", "d": "N / 3"}])  # not a whole number


@pytest.mark.parametrize("policy", [
    {"name": "sqd", "d": 2**63, "replace": True},  # past a C long: every task failed
    {"name": "threshold", "d": 2**63 - 1, "threshold": 2, "replace": True},  # numpy: "array is too big"
    {"name": "sqd", "d": "N**40", "replace": True},  # the same, once resolved
    {"name": "threshold", "d": 1_000_001, "replace": True},
])
def test_a_sample_with_replacement_is_at_most_the_largest_n(policy: dict[str, Any]) -> None:
    # With replacement d may exceed N, but a job's d samples cost work and memory whatever N is.
    message = refused("policies.0.d", policies=[policy])
    resolved = round(10.0**40) if policy["d"] == "N**40" else policy["d"]  # expressions are evaluated in floats
    assert "expected at most 1,000,000" in message and message.endswith(f"got {resolved}"), message


@pytest.mark.parametrize("policy", ["sqd", "threshold"])
def test_a_sample_with_replacement_just_inside_the_bound_runs_on_both_engines(policy: str) -> None:
    # The compiled engine must give SimPy's row; 10**30 is a threshold (random routing in effect), no sample size.
    options: dict[str, Any] = {"servers": 6, "jobs": 10, "warmup_jobs": 0, "d": 1_000_000, "replace": True}
    if policy == "threshold":
        options["threshold"] = 10**30
    rows = [emulator.simulate(policy, engine=engine, **options) for engine in ("simpy", "compiled")]
    assert [row.pop("engine") for row in rows] == ["simpy", "compiled"]
    assert rows[0]["jobs"] == 10 and rows[0]["messages_per_job"] == (2_000_000 if policy == "sqd" else 2)
    for row in rows:
        del row["wall_seconds"]
    assert repr(rows[0]) == repr(rows[1])


@pytest.mark.parametrize("faults", [{}, {"loss": 1e-9, "timeout": 1.0}])
def test_the_threshold_policy_probes_many_servers_without_nesting_calls(faults: dict[str, Any]) -> None:
    # Zero latency: each reply comes within its query. 2,000 probes of busy servers once nested 2,000 calls deep.
    row = emulator.simulate("threshold", servers=10, load=0.95, jobs=300, warmup_jobs=0, d=2000, replace=True,
                            engine="simpy", **faults)
    assert row["jobs"] == 300 and row["messages_per_job"] > 2


@pytest.mark.parametrize("label, says", [
    ("a\rb", "got 'a\\rb'"),  # once written unquoted into summary.csv, which then read as cut short
    ("a\nb", "got 'a\\nb'"),
    ("a\x00b", "got 'a\\x00b'"),
    ("a\u2028b", "got 'a\\u2028b'"),  # a line separator: str.splitlines splits there
    ("x" * 201, "got 201 characters"),
    ("  ", "expected a non-empty string"),
])
def test_a_label_is_one_short_line_of_text(label: str, says: str) -> None:
    message = refused("policies.0.label", policies=[{"name": "random", "label": label}, {"name": "jsq"}])
    assert says in message, message
    Scenario.from_dict(with_keys(policies=[{"name": "random", "label": "x" * 200}, {"name": "jsq", "label": "é ≤ λ"}]))


def test_a_key_swept_twice_is_refused() -> None:
    refused("zip.0", sweep={"workload.load": [0.5, 0.6]}, zip=[{"workload.load": [0.7], "system.servers": [10]}])
    refused("zip.1", zip=[{"workload.load": [0.7]}, {"workload.load": [0.5], "system.servers": [10]}])


def test_repeated_yaml_keys_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("policies: [{name: jsq}]\nrun:\n  jobs: 100\n  warmup_jobs: 10\n  jobs: 200\n")
    message = one_line(lambda: load_scenario(path), "run.jobs")
    assert "line 5" in message and "line 3" in message
    path.write_text("policies: [{name: jsq, d: 2, name: sqd}]\n")
    one_line(lambda: load_scenario(path), "policies.0.name")


def test_yaml_reads_exponents_without_a_dot() -> None:
    assert load("workload: {service: {mean: 1e-3}, load: 9e-1}") == {"workload": {"service": {"mean": 0.001},
                                                                                  "load": 0.9}}


SPEEDS = [0.5, 1.0, 1.5, 1.0]  # load 0.8: each server gets 0.8 units of work per unit time


@pytest.mark.parametrize("policy", ["random", "round_robin"])
def test_speed_oblivious_policies_that_overload_a_server(policy: str) -> None:
    data = with_keys(system={"servers": 4, "speeds": SPEEDS}, workload__load=0.8, policies=[{"name": policy}])
    message = one_line(lambda: Scenario.from_dict(data), "system.speeds")
    assert "server(s) 0 (speed 0.5)" in message and "1 (" not in message
    Scenario.from_dict({**data, "allow_unstable": True})
    Scenario.from_dict(with_keys(system={"servers": 4, "speeds": SPEEDS, "capacity": 5}, workload__load=0.8,
                                 policies=[{"name": policy}]))
    Scenario.from_dict(with_keys(system={"servers": 4, "speeds": SPEEDS}, workload__load=0.8,
                                 policies=[{"name": "jsq"}, {"name": "sqd", "d": 2}, {"name": "jiq"}]))
    # At load 0.6 each server gets 0.6 < 1.0: the speed-1 servers are fine, the speed-0.5 one is not.
    assert "server(s) 0 " in one_line(lambda: Scenario.from_dict({**data, "workload": {"load": 0.6}}),
                                      "system.speeds")
    Scenario.from_dict({**data, "workload": {"load": 0.45}})


@pytest.mark.parametrize("policy", [{"name": "sqd", "d": 2}, {"name": "threshold", "d": 2, "threshold": 3}])
def test_sampling_policies_that_provably_overload_the_slowest_servers(policy: dict[str, Any]) -> None:
    # N = 10, speeds 0.1 x 8 and 10 x 2, capacity 20.8. The k slowest receive at least the jobs whose two
    # samples both fall among them, rate C(k,2)/C(10,2); with k = 6 that is rate/3 > 0.6 from rate 1.8,
    # i.e. load 0.0865, and no k is overloaded below rate 9/7 (k = 8), i.e. load 0.0618.
    system = {"servers": 10, "speeds": [0.1] * 8 + [10.0] * 2}
    message = refused("system.speeds", system=system, workload__load=0.1, policies=[policy])
    assert "among the 6 slowest (servers 0, 1, 2, 3, 4, 5)" in message, message
    assert "the 2 slowest" in refused("system.speeds", system=system, workload__load=0.8, policies=[policy])
    Scenario.from_dict(with_keys(system=system, workload__load=0.06, policies=[policy]))
    Scenario.from_dict(with_keys(system=system, workload__load=0.8, policies=[policy], allow_unstable=True))
    Scenario.from_dict(with_keys(system=system, workload__load=0.8, policies=[{"name": "jsq"}]))


# -- 8. smaller ----------------------------------------------------------------------------
def test_anchor_bomb_gives_a_short_line_quickly(tmp_path: Path) -> None:
    # About 400 bytes that expand to 9^9 strings (hundreds of MB when printed in full).
    levels = ["&a [x, x, x, x, x, x, x, x, x]"]
    for name, previous in zip("bcdefghi", "abcdefgh", strict=True):
        levels.append(f"&{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
    path = tmp_path / "bomb.yaml"
    path.write_text("policies: [{name: random}]\ndescription: [" + ", ".join(levels) + "]\n")
    assert path.stat().st_size < 500
    started = time.perf_counter()
    one_line(lambda: load_scenario(path), "description")
    assert time.perf_counter() - started < 5


def test_scenario_error_is_one_bounded_line() -> None:
    message = str(ScenarioError("key: " + "x" * 10_000 + "\nsecond line"))
    assert "\n" not in message and len(message) <= MAX_LENGTH and message.startswith("key: xxx")


def test_numpy_scalars_are_accepted() -> None:
    plain = emulator.simulate("sqd", d=2, servers=10, load=0.8, jobs=1000, seed=3)
    numpy = emulator.simulate("sqd", d=np.int64(2), servers=np.int64(10), load=np.float32(0.8), jobs=np.int32(1000),
                              seed=np.uint8(3), allow_unstable=np.bool_(False), replace=np.bool_(False))
    numpy_load = float(np.float32(0.8))
    assert numpy["load"] == numpy_load and plain["load"] == 0.8
    assert numpy["policy"] == "SQ(2)" and numpy["jobs"] == 1000
    again = emulator.simulate("sqd", d=2, servers=10, load=numpy_load, jobs=1000, seed=3)
    assert {k: v for k, v in numpy.items() if k != "wall_seconds"} == \
        {k: v for k, v in again.items() if k != "wall_seconds"}
    Scenario.from_dict(with_keys(system={"servers": 4, "speeds": np.array([1.0, 2.0, 1.0, 2.0])},
                                 policies=[{"name": "jsq"}]))


def test_resolved_scenario_with_a_trace_runs_again_from_anywhere(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "trace.csv").write_text("time\n" + "".join(f"{0.1 * i:.1f}\n" for i in range(1, 301)))
    (tmp_path / "s.yaml").write_text(
        "name: traced\nreplications: 1\nrun: {jobs: 200, warmup_jobs: 20}\n"
        "workload: {arrivals: {kind: trace, path: data/trace.csv}}\npolicies: [{name: jsq}]\n")
    monkeypatch.chdir(tmp_path)
    first = emulator.run("s.yaml", workers=1, out="results/traced")
    monkeypatch.chdir(tmp_path / "results")
    again = load_scenario("traced/scenario.yaml")  # relative to the results folder, not to where it ran
    assert Path(again.workload.arrivals.path).samefile(tmp_path / "data" / "trace.csv")  # type: ignore[arg-type]
    rerun = emulator.run(again, workers=1, out="traced")  # the same scenario: resumed, nothing recomputed
    assert rerun.runs.drop(columns="wall_seconds").equals(first.runs.drop(columns="wall_seconds"))


# -- issue 7: dispatcher shares and speeds drawn from a law --------------------------------
@pytest.mark.parametrize("shares, key, says", [
    ([0.5, 0.3], "", "summing to 1"), ([1.0], "", "expected 2 fractions (one per dispatcher), got [1.0]"),
    ([1.5, -0.5], ".1", "> 0"),
    ([0.5, "half"], ".1", "'half'"), ("half", "", "'half'")])
def test_dispatcher_shares_are_checked(shares: list[Any], key: str, says: str) -> None:
    message = refused(f"system.dispatcher_shares{key}", system={"servers": 10, "dispatchers": 2,
                                                                "dispatcher_shares": shares})
    assert says in message, message


def test_equal_shares_are_the_default_seed_for_seed() -> None:
    options = dict(servers=10, load=0.9, jobs=3000, seed=2, dispatchers=2)
    default = emulator.simulate("jiq", **options)
    equal = emulator.simulate("jiq", dispatcher_shares=[0.5, 0.5], **options)
    # The same rows; the setting columns (dotted keys) say how each was asked for.
    assert {k: v for k, v in default.items() if k != "wall_seconds" and "." not in k} == \
        {k: v for k, v in equal.items() if k != "wall_seconds" and "." not in k}


def test_unequal_shares_split_the_arrivals() -> None:
    shares = [0.7, 0.2, 0.1]
    scenario = Scenario.from_dict(with_keys(system={"servers": 10, "dispatchers": 3, "dispatcher_shares": shares},
                                            run={"jobs": 20_000, "warmup_jobs": 0}))
    point = scenario.points()[0]
    model = build_model(point, point.policies[0], 11)
    counts = [0, 0, 0]
    for dispatcher in model.dispatchers:
        receive = dispatcher.receive

        def counted(job: Any, receive: Any = receive, i: int = dispatcher.id) -> None:
            counts[i] += 1
            receive(job)

        dispatcher.receive = counted  # type: ignore[method-assign]
    model.run()
    total = sum(counts)
    for count, share in zip(counts, shares, strict=True):
        # Binomial: 3.4 standard deviations is a 99.93% interval, Bonferroni over the three shares.
        assert abs(count / total - share) <= 3.4 * math.sqrt(share * (1 - share) / total)


LAW = {"kind": "pareto", "mean": 1.0, "alpha": 3.0}  # speeds >= 2/3


def test_speeds_drawn_once_per_replication_from_their_stream() -> None:
    scenario = Scenario.from_dict(with_keys(system={"servers": 8, "speeds": LAW}, workload__load=0.3,
                                            policies=[{"name": "random"}, {"name": "jbt", "d": 2, "period": 5}]))
    point = scenario.points()[0]
    expected = list(islice(scenario.system.speeds.law().sampler(generator(7, "speeds")), 8))  # type: ignore[union-attr]
    models = [build_model(point, policy, 7) for policy in point.policies]
    for model in models:
        assert [server.speed for server in model.servers] == expected
        assert model.rate == pytest.approx(0.3 * sum(expected) / 1.0)
    assert models[1].policy.weights == expected  # type: ignore[union-attr]  # JBT-d weights by the drawn speeds
    other = build_model(point, point.policies[0], 8)
    assert [server.speed for server in other.servers] != expected


def test_drawn_speeds_set_the_rate_against_their_capacity() -> None:
    jobs = 20_000
    for seed in (1, 2):
        row = emulator.simulate("jsq", servers=8, load=0.7, jobs=jobs, seed=seed, speeds=LAW)
        speeds = list(islice(LawConfig(**LAW).law().sampler(generator(seed, "speeds")), 8))
        rate = 0.7 * sum(speeds)
        assert row["load"] == 0.7
        # jobs Poisson arrivals in sim_time: the count's relative sd is 1/sqrt(jobs); 3.3 sd, both seeds.
        assert abs(jobs / row["sim_time"] / rate - 1) <= 3.3 / math.sqrt(jobs)


def test_deterministic_speed_law_is_the_list() -> None:
    options = dict(servers=6, load=0.8, jobs=2000, seed=4, d=2, period=5)
    listed = emulator.simulate("jbt", speeds=[2.0] * 6, **options)
    drawn = emulator.simulate("jbt", speeds={"kind": "deterministic", "mean": 2.0}, **options)
    # The same rows; the setting columns (dotted keys) say how each was asked for.
    assert {k: v for k, v in listed.items() if k != "wall_seconds" and "." not in k} == \
        {k: v for k, v in drawn.items() if k != "wall_seconds" and "." not in k}


def test_drawn_speeds_that_overload_a_server_under_random_are_refused() -> None:
    law = {"kind": "exponential", "mean": 1.0}  # about 30% of servers draw a speed below 0.8 * mean speed
    message = one_line(lambda: emulator.simulate("random", servers=20, load=0.8, jobs=500, speeds=law),
                       "system.speeds (drawn with seed 1)")
    assert "overloads server(s)" in message
    emulator.simulate("random", servers=20, load=0.8, jobs=500, speeds=law, allow_unstable=True)
    emulator.simulate("jsq", servers=20, load=0.8, jobs=500, speeds=law)
    refused("system.speeds", system={"speeds": law}, workload__arrivals={"kind": "trace", "path": "x.csv"})
