"""Every setting that shaped a row is in the result files, the table caption and the figure titles."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import emulator

pytestmark = pytest.mark.xdist_group("test_results_settings")  # one process runs its module fixtures, once

SCENARIO = {
    "name": "settings", "description": "two policies on 4 servers", "seed": 3, "replications": 2,
    "run": {"jobs": 300, "warmup_jobs": 30, "engine": "simpy", "occupancy": False},
    "system": {"servers": 4, "capacity": 6},
    "network": {"latency": {"kind": "exponential", "mean": 0.05}, "loss": 0.01, "timeout": 2},
    "policies": [{"name": "random"}, {"name": "jsq"}],
    "sweep": {"workload.load": [0.5, 0.8]},
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("settings")
    emulator.run(SCENARIO, workers=1, out=out)
    return out


@pytest.mark.parametrize("name", ["runs.csv", "summary.csv"])
def test_settings_away_from_the_defaults_have_a_column_each(folder: Path, name: str) -> None:
    frame = pd.read_csv(folder / name)
    assert set(frame["network.latency"]) == {"exponential(0.05)"}
    assert set(frame["network.loss"]) == {0.01}
    assert set(frame["system.capacity"]) == {6}
    # Settings at their defaults add no column.
    assert set(frame["network.timeout"]) == {2}
    assert "system.dispatchers" not in frame.columns and "system.speeds" not in frame.columns


@pytest.mark.parametrize("name", ["runs.csv", "summary.csv"])
def test_a_swept_load_is_one_column(folder: Path, name: str) -> None:
    frame = pd.read_csv(folder / name)
    assert list(frame.columns).count("workload.load") == 1 and "load" not in frame.columns
    assert sorted(set(frame["workload.load"])) == [0.5, 0.8]


def test_a_load_swept_as_an_expression_keeps_the_resolved_load() -> None:
    data = {**SCENARIO, "sweep": {"workload.load": ["1 - 1/N"]}}
    row = emulator.Scenario.from_dict(data).points()[0]
    from emulator.experiment.results import identity

    columns = identity(row, row.policies[0])
    assert columns["workload.load"] == "1 - 1/N" and columns["load"] == pytest.approx(0.75)


def test_the_caption_names_every_fixed_setting(folder: Path) -> None:
    caption = emulator.load_results(folder).table().split("\n\n")[-1].replace("\n", " ")
    for part in ("N = 4", "network.latency = exponential(0.05)", "network.loss = 0.01", "network.timeout = 2",
                 "system.capacity = 6",
                 "2 replications per cell"):
        assert part in caption, caption


def test_the_caption_follows_the_scenario_as_run_not_its_description(tmp_path: Path) -> None:
    scenario = emulator.Scenario.from_dict(SCENARIO).with_overrides(**{"system.servers": 6})
    results = emulator.run(scenario, workers=1)
    caption = results.table().split("\n\n")[-1].replace("\n", " ")
    assert "N = 6" in caption and "4 servers" not in caption


def test_figure_titles_name_every_fixed_setting(folder: Path) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    fig = emulator.load_results(folder).plot("tradeoff")
    title = fig.texts[0].get_text().replace("\n", " ") if fig._suptitle is None else fig._suptitle.get_text()
    title = title.replace("\n", " ")
    for part in ("network.latency = exponential(0.05)", "network.loss = 0.01", "system.capacity = 6"):
        assert part in title, title
