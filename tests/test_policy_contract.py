"""The contract every registered policy meets, parametrized over `emulator.policies.REGISTRY`.

A new policy is picked up here by its registry line alone: it must document
itself, validate its parameters, run in every system the emulator models
(latency, several dispatchers, pools with capacity, heterogeneous speeds),
conserve jobs and reproduce its results from a seed.
"""

from __future__ import annotations

import inspect
import re
import typing
from typing import Any

import pytest
from conftest import traced
from test_invariants import check_conservation, check_little_exact, check_timestamps

import emulator
from emulator.config import Scenario
from emulator.metrics import METRICS
from emulator.policies import REGISTRY
from emulator.policies.base import Policy, PolicyConfig

NAMES = sorted(REGISTRY)
POISSON = {"arrivals": {"kind": "poisson"}, "service": {"kind": "exponential", "mean": 1}}


def entry(name: str) -> dict[str, Any]:
    """The policy with its defaults (d kept small enough for the 4-server systems below)."""
    return {"name": name, "d": 2} if "d" in REGISTRY[name].Config.model_fields and name != "jiq" else {"name": name}


@pytest.mark.parametrize("name", NAMES)
def test_policy_is_documented(name: str) -> None:
    cls = REGISTRY[name]
    assert issubclass(cls, Policy) and cls.name == name
    assert issubclass(cls.Config, PolicyConfig)
    # Its Config is tagged by its registry name (the scenario's `name:` key) and forbids extras.
    name_field = cls.Config.model_fields["name"]
    assert typing.get_args(name_field.annotation) == (name,) and name_field.default == name
    assert cls.Config.model_config.get("extra") == "forbid"
    for field, info in cls.Config.model_fields.items():
        if field not in ("name", "label"):
            assert info.description, f"{name}.{field} has no description (shown by `lbemu policies`)"
    doc = inspect.getdoc(cls) or ""
    assert re.search(r"^References\n-{10}", doc, re.MULTILINE), f"{name}: docstring needs a References section"
    assert re.search(r"\.\. \[1\] ", doc), f"{name}: References need at least one entry"
    assert isinstance(cls.messages, str) and cls.messages.strip()
    params = cls.Config().model_dump(exclude={"name", "label"})
    params = {key: (2 if key == "d" and isinstance(value, str) else value) for key, value in params.items()}
    label = cls.label(params)
    assert isinstance(label, str) and label.strip()
    for key in cls.expressions:
        assert key in cls.Config.model_fields, f"{name}: expression parameter {key} is not in Config"


@pytest.mark.parametrize("name", NAMES)
def test_policy_validates_through_the_scenario(name: str) -> None:
    scenario = Scenario.from_dict({"policies": [entry(name)], "system": {"servers": 4}})
    (policy,) = scenario.points()[0].policies
    assert policy.name == name and policy.label == REGISTRY[name].label(policy.params)
    with pytest.raises(emulator.ScenarioError, match=r"^policies\.0\.no_such_parameter: unknown key"):
        Scenario.from_dict({"policies": [{**entry(name), "no_such_parameter": 1}]})
    labelled = Scenario.from_dict({"policies": [{**entry(name), "label": "mine"}]})
    assert labelled.points()[0].policies[0].label == "mine"


SYSTEMS = {
    "plain": {},
    "latency": {"latency": 0.1},
    "random-latency": {"latency": {"kind": "exponential", "mean": 0.2}},
    "dispatchers-3": {"dispatchers": 3},
    "dispatchers-3-latency": {"dispatchers": 3, "latency": 0.05},
    "pool-capacity": {"discipline": "pool", "capacity": 2, "load": 1.5},
    "fifo-capacity": {"capacity": 2},
    # Random and round robin overload the two slow servers here (refused unless allowed); the run is short.
    "speeds": {"speeds": [0.5, 1.0, 1.5, 3.0], "allow_unstable": True},
    "speeds-pool-latency": {"speeds": [0.5, 1.0, 1.5, 3.0], "discipline": "pool", "capacity": 3,
                            "load": 1.2, "latency": 0.1},
    "one-server": {"servers": 1},
}


@pytest.mark.parametrize("system", list(SYSTEMS))
@pytest.mark.parametrize("name", NAMES)
def test_policy_runs_everywhere_and_conserves_jobs(name: str, system: str) -> None:
    options = {"servers": 4, "load": 0.8, "jobs": 400, "warmup": 40, **POISSON, **SYSTEMS[system]}
    policy = entry(name)
    if options["servers"] == 1 and "d" in policy:
        policy["d"] = 1
    trace = traced(policy, seed=17, **options)
    metrics = trace.run()
    check_conservation(trace)
    check_timestamps(trace)
    check_little_exact(trace)
    assert metrics["jobs"] == 400
    assert set(METRICS) - {"wall_seconds"} <= set(metrics)
    if "latency" not in options:  # every query is answered at once, inside the window
        assert metrics["messages_per_job_query"] == metrics["messages_per_job_reply"]
    if "capacity" in options:
        assert 0 <= metrics["blocked_fraction"] < 1
    else:
        assert metrics["blocked_fraction"] == 0
    # Every job went to a real server, chosen from what the dispatcher could know.
    assert all(0 <= sid < options["servers"] for _, _, _, sid, _ in trace.sent)


@pytest.mark.parametrize("system", [name for name, options in SYSTEMS.items() if "latency" not in options])
@pytest.mark.parametrize("name", NAMES)
def test_policy_compiled_version_gives_the_same_row(name: str, system: str) -> None:
    """One policy, two implementations: with zero latency the compiled engine's row is SimPy's.

    A policy without a compiled version runs on SimPy under ``engine: compiled``.
    """
    from emulator.compiled import COMPILED

    options = {"servers": 4, "load": 0.8, "jobs": 400, "warmup_jobs": 40, **POISSON, **SYSTEMS[system]}
    params = {k: v for k, v in entry(name).items() if k != "name"}
    if options["servers"] == 1 and "d" in params:
        params["d"] = 1
    old = emulator.simulate(name, seed=17, engine="simpy", **options, **params)
    new = emulator.simulate(name, seed=17, engine="compiled", **options, **params)
    assert new["engine"] == ("compiled" if name in COMPILED else "simpy")
    for row in (old, new):
        row.pop("wall_seconds"), row.pop("engine")
    assert {k: repr(v) for k, v in new.items()} == {k: repr(v) for k, v in old.items()}


@pytest.mark.parametrize("name", NAMES)
def test_policy_is_reproducible(name: str) -> None:
    params = {k: v for k, v in entry(name).items() if k != "name"}
    options = dict(servers=4, load=0.85, jobs=1000, dispatchers=2, latency={"kind": "exponential", "mean": 0.1})
    first = emulator.simulate(name, seed=31, **options, **params)
    again = emulator.simulate(name, seed=31, **options, **params)
    first.pop("wall_seconds"), again.pop("wall_seconds")
    assert first == again
    compiled = [emulator.simulate(name, seed=31, engine="compiled", **{**options, "latency": None}, **params)
                for _ in range(2)]
    for row in compiled:
        row.pop("wall_seconds")
    assert compiled[0] == compiled[1]


@pytest.mark.parametrize("name", NAMES)
def test_policy_listed_by_the_cli(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    from emulator.cli import main

    assert main(["policies"]) == 0
    out = capsys.readouterr().out
    assert re.search(rf"^{name}\b", out, re.MULTILINE)
    assert REGISTRY[name].messages in out
