"""Scenario validation: every bad input is refused before anything runs, in one line that names the key.

The message of `emulator.ScenarioError` is ``<dotted key>: expected ..., got <value>``
(or states what the given value gives, for expressions), on one line.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest

import emulator
from emulator import Scenario, ScenarioError
from emulator.scenario.expressions import ExpressionError, evaluate, parse

BASE: dict[str, Any] = {
    "name": "base",
    "run": {"jobs": 100, "warmup_jobs": 10},
    "system": {"servers": 10},
    "workload": {"load": 0.9},
    "policies": [{"name": "sqd", "d": 2}, {"name": "jsq"}],
}


def with_key(dotted: str, value: Any, data: dict[str, Any] | None = None) -> dict[str, Any]:
    """BASE with ``dotted`` set to ``value`` (list items by index)."""
    data = copy.deepcopy(BASE if data is None else data)
    node: Any = data
    parts = dotted.split(".")
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    if isinstance(node, list):
        node[int(parts[-1])] = value
    else:
        node[parts[-1]] = value
    return data


def refused(data: Any, mistakes: int = 1) -> str:
    """The error for ``data``: one line per mistake."""
    with pytest.raises(ScenarioError) as info:
        Scenario.from_dict(data)
    message = str(info.value)
    assert len(message.split("\n")) == mistakes and all(line.strip() == line for line in message.split("\n"))
    assert "Traceback" not in message
    return message


# (dotted key to set, value, key named in the message, what the message must say of the value)
BAD = [
    # unknown keys, at every level
    ("bogus", 1, "bogus", "unknown key"),
    ("system.serverz", 3, "system.serverz", "unknown key"),
    ("run.job", 3, "run.job", "unknown key"),
    ("workload.service.sd", 1, "workload.service.sd", "unknown key"),
    ("network.delay", 1, "network.delay", "unknown key"),
    ("policies.0.dd", 2, "policies.0.dd", "unknown key"),
    # wrong types
    ("system.servers", "ten", "system.servers", "'ten'"),
    ("system.servers", 2.5, "system.servers", "2.5"),
    ("run.jobs", "many", "run.jobs", "'many'"),
    ("system.speeds", "fast", "system.speeds", "'fast'"),
    ("workload.service", "exponential", "workload.service", "'exponential'"),
    ("policies.0.replace", "sometimes", "policies.0.replace", "'sometimes'"),
    ("policies.0.d", 2.5, "policies.0.d", "2.5"),
    ("policies", {"name": "jsq"}, "policies", "jsq"),
    ("sweep", [1, 2], "sweep", "[1, 2]"),
    # out of range
    ("workload.load", 0, "workload.load", "0"),
    ("workload.load", -1, "workload.load", "-1"),
    ("workload.load", math.nan, "workload.load", "nan"),
    ("workload.load", "1 - 1/N", None, None),  # fine at N=10: a control, see test_bad_input
    ("workload.load", "2 - N/4", "workload.load", "'2 - N/4' gives -0.5 at N=10"),
    ("workload.load", 1.0, "workload.load", "1"),
    ("workload.load", 1.2, "workload.load", "1.2"),
    ("workload.load", "1 + 1/N", "workload.load", "1.1"),
    ("system.servers", 0, "system.servers", "0"),
    ("system.dispatchers", 0, "system.dispatchers", "0"),
    ("system.capacity", 0, "system.capacity", "0"),
    ("system.discipline", "lifo", "system.discipline", "'lifo'"),
    ("system.speeds", [1.0, 2.0], "system.speeds", "2"),
    ("replications", 0, "replications", "0"),
    ("seed", -1, "seed", "-1"),
    ("run.jobs", 0, "run.jobs", "0"),
    ("run.warmup_jobs", -5, "run.warmup_jobs", "-5"),
    # d > N, directly, by expression, and d < 1
    ("policies.0.d", 11, "policies.0.d", "11"),
    ("policies.0.d", "N + 1", "policies.0.d", "11"),
    ("policies.0.d", 0, "policies.0.d", "0"),
    ("policies.0.d", "N - 10", "policies.0.d", "0"),
    ("policies.0.d", "sqrt(N)", "policies.0.d", "'sqrt(N)' gives 3.16228"),
    # negative rates and means
    ("system.speeds", [1.0, -2.0] + [1.0] * 8, "system.speeds.1", "-2"),
    ("system.speeds", [1.0, 0.0] + [1.0] * 8, "system.speeds.1", "0"),
    ("workload.service.mean", -1, "workload.service.mean", "-1"),
    ("workload.service.mean", 0, "workload.service.mean", "0"),
    ("network.latency.mean", -0.1, "network.latency.mean", "-0.1"),
    ("workload.arrivals", {"kind": "mmpp2", "switch_rate": -1}, "workload.arrivals.switch_rate", "-1"),
    ("workload.arrivals", {"kind": "mmpp2", "burstiness": 0.5}, "workload.arrivals.burstiness", "0.5"),
    ("workload.arrivals", {"kind": "batch_poisson", "mean_batch": 0.5}, "workload.arrivals.mean_batch", "0.5"),
    ("workload.arrivals", {"kind": "batch_poisson", "mean_batch": 2.5, "batch": "deterministic"},
     "workload.arrivals.mean_batch", "2.5"),
    ("workload.arrivals", {"kind": "batch_poisson", "batch": "uniform"}, "workload.arrivals.batch", "'uniform'"),
    ("workload.arrivals", {"kind": "poisson", "batch": "deterministic"}, "workload.arrivals.batch", "deterministic"),
    # bad expressions: nothing outside the listed arithmetic is evaluated
    ("workload.load", "__import__('os')", "workload.load", "__import__"),
    ("workload.load", "N.__class__", "workload.load", "N.__class__"),
    ("policies.0.d", "open('x')", "policies.0.d", "open"),
    ("policies.0.d", "(lambda: 2)()", "policies.0.d", "lambda"),
    ("workload.load", "N % 3", "workload.load", "N % 3"),
    ("workload.load", "[0.5][0]", "workload.load", "[0.5][0]"),
    ("workload.load", "0.5 if N else 1", "workload.load", "0.5 if N else 1"),
    ("workload.load", "x / N", "workload.load", "'x'"),
    ("workload.load", "sqrt + 1", "workload.load", "'sqrt' is a function, not a value"),
    ("workload.load", "log(N - 10)", "workload.load", "log(N - 10)"),
    ("workload.load", "1 / (N - 10)", "workload.load", "1 / (N - 10)"),
    ("workload.load", "", "workload.load", "''"),
    # unknown policy name, missing name
    ("policies.0", {"name": "bogus"}, "policies.0.name", "'bogus'"),
    ("policies.0", {"d": 2}, "policies.0.name", None),
    ("policies", [], "policies", "[]"),
    ("policies.1", {"name": "sqd", "d": 2}, "policies", "'SQ(2)'"),  # duplicate labels
    ("policies.0", {"name": "jbt", "period": 0}, "policies.0.period", "0"),
    ("policies.0", {"name": "jbt", "below": "ge"}, "policies.0.below", "'ge'"),
    ("policies.0", {"name": "jbt", "reports": "crossing", "recheck": True}, "policies.0.recheck", "True"),
    ("policies.0", {"name": "jbt", "reports": "edge"}, "policies.0.reports", "'edge'"),
    ("system.slot", {"pull_delay": -1}, "system.slot.pull_delay", "-1"),
    ("policies.0", {"name": "jiq", "d": 2}, "policies.0.d", "2"),  # d > dispatchers
    ("policies.0", {"name": "threshold", "threshold": 0}, "policies.0.threshold", "0"),
    # distribution shape parameters on the wrong kind, or missing
    ("workload.service", {"kind": "exponential", "k": 3}, "workload.service.k", "3"),
    ("workload.service", {"kind": "erlang", "k": 2, "scv": 2}, "workload.service.scv", "2"),
    ("workload.service", {"kind": "lognormal", "scv": 2, "alpha": 3}, "workload.service.alpha", "3"),
    ("workload.service", {"kind": "deterministic", "alpha": 3}, "workload.service.alpha", "3"),
    ("workload.service", {"kind": "erlang"}, "workload.service.k", "nothing"),
    ("workload.service", {"kind": "pareto"}, "workload.service.alpha", "nothing"),
    ("workload.service", {"kind": "pareto", "alpha": 1}, "workload.service.alpha", "1"),
    ("workload.service", {"kind": "hyperexponential", "scv": 0.5}, "workload.service.scv", "0.5"),
    ("workload.service", {"kind": "weibull"}, "workload.service.kind", "'weibull'"),
    ("network.latency", {"kind": "erlang", "mean": 0.1}, "network.latency.k", "nothing"),
    ("workload.arrivals", {"kind": "poisson", "burstiness": 3}, "workload.arrivals.burstiness", "3"),
    ("workload.arrivals", {"kind": "mmpp2", "mean_batch": 3}, "workload.arrivals.mean_batch", "3"),
    ("workload.arrivals", {"kind": "poisson", "path": "x.csv"}, "workload.arrivals.path", "x.csv"),
    ("workload.arrivals", {"kind": "trace"}, "workload.arrivals.path", "nothing"),
    ("workload.arrivals", {"kind": "trace", "path": "/no/such/trace.csv"}, "workload.arrivals.path",
     "/no/such/trace.csv"),
    ("workload.arrivals", {"kind": "fractal"}, "workload.arrivals.kind", "'fractal'"),
    # faults (docs/faults.md)
    ("network", {"loss": 1.0, "timeout": 1.0}, "network.loss", "1.0"),
    ("network", {"loss": -0.1, "timeout": 1.0}, "network.loss", "-0.1"),
    ("network", {"loss": 0.1, "timeout": -1.0}, "network.timeout", "-1.0"),
    ("network", {"loss": 0.1}, "network.timeout", "nothing"),
    ("network", {"loss": 0.1, "timeout": 1.0}, None, None),
    ("system.failures", {"up": {"mean": 10.0}, "down": {"mean": 1.0}}, "network.timeout", "nothing"),
    ("system.failures", {"up": {"mean": -1.0}, "down": {"mean": 1.0}}, "system.failures.up.mean", "-1.0"),
    ("system.failures", {"up": {"kind": "erlang", "mean": 1.0}, "down": {"mean": 1.0}},
     "system.failures.up.k", "nothing"),
    ("system.failures", {"up": {"mean": 10.0}}, "system.failures.down", None),
    ("system.failures", {"up": {"mean": 10.0}, "down": {"mean": 1.0}, "on_down": "drop"},
     "system.failures.on_down", "'drop'"),
    ("system", {"servers": 10, "discipline": "pool", "failures": {"up": {"mean": 10.0}, "down": {"mean": 1.0}}},
     "system.failures", "pool"),
    # sweeps: bad keys and bad values are found before anything runs
    ("sweep", {"workload.lod": [0.5]}, "workload.lod", "0.5"),
    ("sweep", {"workload.load": [0.5, -1]}, "workload.load", "-1"),
    ("sweep", {"workload.load": []}, "sweep", "'workload.load'"),
    ("sweep", {"system.servers": [10, 1]}, "policies.0.d", "system.servers=1"),
    ("sweep", {"policies.5.d": [1]}, "policies.5", "'5'"),
    ("sweep", {"workload.load.x": [1]}, "workload.load.x", "x=1"),
    ("sweep", {"policies.0.d": ["N * 2"]}, "policies.0.d", "20"),
    ("zip", [{"workload.load": [0.5], "system.servers": [10, 20]}], "zip", None),
]


@pytest.mark.parametrize("dotted, value, key, given", BAD, ids=[f"{b[0]}={b[1]!r}" for b in BAD])
def test_bad_input(dotted: str, value: Any, key: str | None, given: str | None) -> None:
    data = with_key(dotted, value)
    if key is None:  # a control: the same key with a good value is accepted
        Scenario.from_dict(data)
        return
    message = refused(data)
    assert message.startswith(f"{key}: ") or message.startswith(f"{key} "), message
    assert "expected" in message or "unknown key" in message or "not a parameter" in message or \
        "not allowed" in message or "cannot" in message or "unknown name" in message, message
    if given is not None:
        assert given in message, message


def test_unknown_key_lists_the_accepted_ones() -> None:
    message = refused(with_key("system.serverz", 3))
    for key in ("servers", "discipline", "capacity", "speeds", "dispatchers"):
        assert key in message


def test_unknown_policy_lists_the_registry() -> None:
    message = refused(with_key("policies.0", {"name": "bogus"}))
    for name in emulator.REGISTRY:
        assert name in message


def test_one_problem_is_one_error() -> None:
    # d: 0 fails both members of "integer or expression"; that is one problem, not two.
    assert refused(with_key("policies.0.d", 0)) == "policies.0.d: expected a number >= 1, got 0"
    message = refused(with_key("policies.0", {"name": "jbt", "period": 0, "d": 0}), mistakes=2)
    assert message.split("\n") == ["policies.0.d: expected a number >= 1, got 0",
                                    "policies.0.period: expected a number > 0.0, got 0"]


def test_every_mistake_is_named_with_the_key_it_nearly_is() -> None:
    data = with_key("system.servres", 3, with_key("workload.lod", 0.5))
    first, second = refused(data, mistakes=2).split("\n")
    assert first.startswith("system.servres: unknown key (did you mean 'servers'?)"), first
    assert second.startswith("workload.lod: unknown key (did you mean 'load'?)"), second


def test_a_misspelt_policy_gets_the_name_it_nearly_is() -> None:
    assert refused(with_key("policies.0", {"name": "jqs"})).endswith("got 'jqs' (did you mean 'jsq'?)")


def test_a_file_with_many_mistakes_names_the_first_ones() -> None:
    from emulator.errors import MAX_LINES

    data = {"policies": [{"name": "jsq"}], "system": {f"key{i}": i for i in range(MAX_LINES + 5)}}
    lines = refused(data, mistakes=MAX_LINES).split("\n")
    assert lines[0].startswith("system.key0: unknown key")
    assert lines[-1] == "... and 6 more errors in the same input"


def test_several_mistakes_from_the_shell_are_one_line_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from emulator.cli import main

    path = tmp_path / "two.yaml"
    path.write_text("policies: [{name: jsq}]\nsystem: {servres: 3}\nworkload: {lod: 0.5}\n")
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "lbemu: error: system.servres: unknown key (did you mean 'servers'?) (expected one of servers, discipline, "
        "capacity, speeds, dispatchers, dispatcher_shares, time, slot, failures), got 3",
        "lbemu: error: workload.lod: unknown key (did you mean 'load'?) (expected one of load, arrivals, service), "
        "got 0.5"]


def test_load_at_or_above_one_needs_allow_unstable_or_room() -> None:
    for load in (1.0, 1.5, "1 + 1/N"):
        refused(with_key("workload.load", load))
        ok = with_key("workload.load", load)
        ok["allow_unstable"] = True
        assert Scenario.from_dict(ok).points()[0].load >= 1
        capped = with_key("system.capacity", 5, with_key("workload.load", load))
        Scenario.from_dict(capped)  # a FIFO queue with a capacity cannot grow without bound
        pool = with_key("system.discipline", "pool", with_key("workload.load", load))
        Scenario.from_dict(pool)  # pools: λ tasks per pool, any λ > 0
    message = refused(with_key("workload.load", 1.2))
    assert "allow_unstable" in message


def test_bad_sweep_point_is_named() -> None:
    message = refused(with_key("sweep", {"workload.load": [0.5, 0.9, 1.5]}))
    assert message.startswith("workload.load: ") and "sweep point 2" in message and "1.5" in message


def test_good_inputs_resolve() -> None:
    data = with_key("policies", [{"name": "sqd", "d": "ceil(sqrt(N) * log(N))"}, {"name": "jsq"},
                                 {"name": "sqd", "d": "min(N, 3)", "label": "SQ3"}])
    data["workload"] = {"load": "1 - 1/sqrt(N)", "service": {"kind": "erlang", "mean": 2, "k": 4},
                        "arrivals": {"kind": "mmpp2", "burstiness": 3}}
    data["sweep"] = {"system.servers": [4, 100]}
    scenario = Scenario.from_dict(data)
    small, large = scenario.points()
    assert small.policies[0].d == math.ceil(math.sqrt(4) * math.log(4)) == 3
    assert large.policies[0].d == 47 and large.policies[0].label == "SQ(47)"
    assert small.load == 0.5 and large.load == pytest.approx(0.9)
    # rate = load x total speed / mean size = 0.9 x 100 / 2
    assert large.rate == pytest.approx(45.0)
    assert [p.label for p in small.policies] == ["SQ(3)", "JSQ", "SQ3"]
    assert Scenario.from_dict(scenario.to_dict()) == scenario
    assert scenario.with_overrides(**{"system.servers": 8}).system.servers == 8
    with pytest.raises(ScenarioError, match=r"^system\.servers: "):
        scenario.with_overrides({"system.servers": 0})


def test_defaults_are_the_contract() -> None:
    scenario = Scenario.from_dict({"policies": [{"name": "jsq"}]})
    assert scenario.system.servers == 10 and scenario.system.discipline == "fifo"
    assert scenario.system.dispatchers == 1 and scenario.system.capacity is None
    assert scenario.workload.arrivals.kind == "poisson"
    assert scenario.workload.service.kind == "exponential" and scenario.workload.service.mean == 1
    assert scenario.network.latency.mean == 0
    assert scenario.allow_unstable is False


def test_scenario_files(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"^scenario: cannot read '.*missing\.yaml'"):
        emulator.load_scenario(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\npolicies: [\n  {name: jsq\n")
    with pytest.raises(ScenarioError, match=r"^scenario: '.*broken\.yaml' is not valid YAML"):
        emulator.load_scenario(broken)
    # Where it broke, what the parser found, and the line as written.
    for text, where in (
        ("name: x\n  servers: 3\n", "at line 2, column 10: mapping values are not allowed here; "
                                     "line 2 reads '  servers: 3'"),
        ("run: {jobs: 10\nseed: 1\n", "at line 2, column 5: expected ',' or '}', but got ':' (while parsing a "
                                      "flow mapping from line 1, column 6); line 2 reads 'seed: 1'"),
        ("name: x\npolicies: [\n\n", "at line 4, column 1: expected the node content, but found "
                                     "'<stream end>' (while parsing a flow node); line 2 reads 'policies: ['"),
        ("\tname: x\n", "at line 1, column 1: found character '\\t' that cannot start any token"),
    ):
        broken.write_text(text)
        with pytest.raises(ScenarioError) as raised:
            emulator.load_scenario(broken)
        assert f"broken.yaml' is not valid YAML {where}" in str(raised.value)
        assert "\n" not in str(raised.value)
    listed = tmp_path / "list.yaml"
    listed.write_text("- name: jsq\n")
    with pytest.raises(ScenarioError, match=r"^scenario: expected a mapping"):
        emulator.load_scenario(listed)
    bad = tmp_path / "bad.yaml"
    bad.write_text("policies:\n  - {name: sqd, d: 20}\n")
    with pytest.raises(ScenarioError, match=r"^policies\.0\.d: expected at most N=10"):
        emulator.load_scenario(bad)
    # Nothing runs: emulator.run refuses the file before creating the output folder.
    with pytest.raises(ScenarioError):
        emulator.run(bad, workers=1, out=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_trace_file_problems(tmp_path: Path) -> None:
    def trace(text: str, jobs: int = 3) -> str:
        path = tmp_path / "t.csv"
        path.write_text(text)
        data = with_key("workload.arrivals", {"kind": "trace", "path": str(path)})
        data["run"] = {"jobs": jobs, "warmup_jobs": 0}
        return refused(data)

    assert "'time' column" in trace("when\n1\n2\n3\n")
    assert "not a number" in trace("time\n1\nsoon\n3\n")
    assert "non-decreasing" in trace("time\n1\n3\n2\n")
    assert "sizes must be > 0" in trace("time,size\n1,1\n2,0\n3,1\n")
    assert "expected at least" in trace("time\n1\n2\n", jobs=3)


# -- the expression evaluator -------------------------------------------------------------------
@pytest.mark.parametrize("text, n, value", [
    ("N", 7, 7.0), ("2 * N + 1", 3, 7.0), ("N ** 0.5", 16, 4.0), ("-N + 10", 3, 7.0), ("+N", 2, 2.0),
    ("sqrt(N)", 9, 3.0), ("log(N)", math.e, 1.0), ("log2(N)", 8, 3.0), ("exp(0)", 1, 1.0),
    ("floor(N / 4)", 10, 2.0), ("ceil(N / 4)", 10, 3.0), ("min(N, 3)", 10, 3.0), ("max(N, 3, 12)", 10, 12.0),
    ("ceil(sqrt(N) * log(N))", 100, 47.0), ("1 - N**-0.5", 100, 0.9), ("(N - 1) / N", 4, 0.75),
])
def test_expressions_evaluate(text: str, n: float, value: float) -> None:
    assert evaluate(text, n) == pytest.approx(value)


@pytest.mark.parametrize("text", [
    "__import__('os').system('true')", "N.real", "N[0]", "N if N else 1", "N < 3", "N and 1", "not N",
    "lambda: N", "[N]", "(N, 1)", "{N}", "{'a': N}", "'N'", "b'N'", "True", "None", "N % 2", "N // 2",
    "N ^ 2", "N | 1", "N & 1", "N << 1", "~N", "x", "pi", "e", "abs(N)", "round(N)", "int(N)",
    "eval('N')", "sqrt(x=N)", "sqrt()", "N(2)", "sqrt(N)(1)", "f'{N}'", "[i for i in (1,)]",
    "(y := 2)", "N; N", "1 +", "",
])
def test_expressions_refuse_everything_else(text: str) -> None:
    with pytest.raises(ExpressionError):
        evaluate(text, 10)


def test_parse_refuses_before_evaluating() -> None:
    # A refused expression is refused by parse() alone: nothing of it is ever evaluated.
    with pytest.raises(ExpressionError):
        parse("__import__('os').getcwd()")
    assert parse("sqrt(N)") is parse("sqrt(N)")  # parsed once, cached
