"""The Python API of results: a folder opened as `Results`, its repr, its keywords, its docstrings."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import emulator
from emulator import Results, ScenarioError

pytestmark = pytest.mark.xdist_group("test_results_api")  # one process runs its module fixtures, once

SCENARIO = {
    "name": "api", "seed": 5, "replications": 2, "run": {"jobs": 300, "warmup_jobs": 30, "engine": "simpy"},
    "system": {"servers": 4}, "policies": [{"name": "random"}, {"name": "jsq"}],
    "sweep": {"workload.load": [0.5, 0.8]},
}


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Results]:
    out = tmp_path_factory.mktemp("api")
    return out, emulator.run(SCENARIO, workers=1, out=out)


def test_a_results_folder_opens_as_the_results_that_wrote_it(ran: tuple[Path, Results]) -> None:
    out, results = ran
    loaded = emulator.load_results(out)
    assert loaded.scenario == results.scenario
    assert list(loaded.summary["policy"]) == list(results.summary["policy"])
    assert list(loaded.summary["mean_response"]) == pytest.approx(list(results.summary["mean_response"]))
    assert list(loaded.runs["seed"]) == list(results.runs["seed"])
    assert list(loaded.summary["load"]) == list(results.summary["load"])  # left out of the file, put back
    assert loaded.table() == results.table()


def test_a_folder_that_is_not_one_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"expected a results folder with summary\.csv") as info:
        Results.load(tmp_path)
    assert "\n" not in str(info.value)


def test_repr_is_one_short_line(ran: tuple[Path, Results]) -> None:
    text = repr(ran[1])
    assert text == "<Results api: 2 point(s) x 2 policies (Random, JSQ), 8 run(s)>"


def test_table_takes_metric_as_the_command_line_does(ran: tuple[Path, Results]) -> None:
    results = ran[1]
    one = results.table(metric="p99_response")
    assert one == results.table(metric=["p99_response"])
    assert "p99 response" in one and "mean response" not in one


@pytest.mark.parametrize(("call", "says"), [
    (lambda r: r.table(metrics="p99_response"), "got 'metrics' (did you mean 'metric'?)"),
    (lambda r: r.frame(colls=["policy"]), "got 'colls' (did you mean 'cols'?)"),
    (lambda r: r.table(metric="p99_respons"), "got 'p99_respons' (did you mean 'p99_response'?)"),
    (lambda r: r.plot("tradof"), "got 'tradof' (did you mean 'tradeoff'?)"),
])
def test_a_wrong_keyword_or_name_gets_the_valid_ones_in_one_line(ran: tuple[Path, Results], call, says) -> None:
    with pytest.raises(ScenarioError) as info:
        call(ran[1])
    message = str(info.value)
    assert says in message and "\n" not in message and "expected" in message, message


def test_the_scenario_signature_reads_in_one_line() -> None:
    text = str(inspect.signature(emulator.Scenario))
    assert "run={...}" in text and "RunConfig" not in text and len(text) < 250, text


@pytest.mark.parametrize("function", [emulator.simulate, emulator.run, Results.load, Results.table, Results.frame,
                                      Results.styler, Results.plot])
def test_public_functions_document_their_parameters_and_returns(function) -> None:
    doc = inspect.getdoc(function) or ""
    assert "Parameters\n----------" in doc and "Returns\n-------" in doc, function.__qualname__
    documented = doc.split("Parameters\n----------", 1)[1]
    for name in inspect.signature(function).parameters:
        if name not in ("self", "unknown", "cls"):
            assert name in documented, (function.__qualname__, name)
