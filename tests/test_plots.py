"""Figures: `analysis.plots.plot_folder` and ``lbemu plot`` write readable PNG files."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

import emulator
from analysis import plots

FIGURES = ["response.png", "messages.png", "tradeoff.png", "messages_by_kind.png"]


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results folder from a tiny run: 2 loads x 3 policies x 2 replications."""
    scenario = emulator.Scenario.from_dict({
        "name": "plots", "seed": 7, "replications": 2,
        "run": {"jobs": 2000, "warmup_jobs": 500},
        "system": {"servers": 10},
        "policies": [{"name": "jsq"}, {"name": "sqd", "d": 2}, {"name": "jbt", "d": 5, "period": 10}],
        "sweep": {"workload.load": [0.5, 0.9]},
    })
    out = tmp_path_factory.mktemp("results")
    emulator.run(scenario, workers=1, out=out)
    return out


@pytest.fixture(scope="module")
def summary(results_dir: Path) -> pd.DataFrame:
    return pd.read_csv(results_dir / "summary.csv")


def check_png(path: Path, min_width: int = 400, min_height: int = 250) -> None:
    """A valid PNG of a reasonable size with something drawn on it (many distinct colours)."""
    assert path.is_file(), path
    with Image.open(path) as image:
        assert image.format == "PNG"
        width, height = image.size
        assert width >= min_width and height >= min_height, (path.name, image.size)
        colours = image.convert("RGB").getcolors(maxcolors=1_000_000)
        assert colours is not None and len(colours) > 50, path.name
    assert path.stat().st_size > 10_000, path.name


@pytest.fixture(scope="module")
def written(summary: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return plots.plot_folder(summary, tmp_path_factory.mktemp("figures"))


def test_plot_folder_writes_the_four_figures(written: list[Path]) -> None:
    assert [p.name for p in written] == FIGURES  # no blocking.png: nothing was blocked
    assert len({p.parent for p in written}) == 1
    for path in written:
        check_png(path)


def test_single_point_gives_bar_charts(summary: pd.DataFrame, tmp_path: Path) -> None:
    one = summary[summary["load"] == 0.9]
    plan = plots.layout(one)
    assert plan.x is None and not plan.numeric
    paths = plots.plot_folder(one, tmp_path)
    assert [p.name for p in paths] == FIGURES
    for path in paths:
        check_png(path, min_width=300)


def test_blocking_figure_and_missing_ci(summary: pd.DataFrame, tmp_path: Path) -> None:
    frame = summary.copy()
    for column in [c for c in frame.columns if c.endswith("_ci95")]:
        frame[column] = float("nan")  # one replication: no confidence interval
    frame["blocked_fraction"] = [0.0, 0.01, 0.2] * (len(frame) // 3)
    paths = plots.plot_folder(frame, tmp_path / "blocked")
    assert [p.name for p in paths] == [*FIGURES, "blocking.png"]
    for path in paths:
        check_png(path)


def test_layout_picks_the_swept_load_and_panels(summary: pd.DataFrame) -> None:
    plan = plots.layout(summary)
    assert (plan.x, plan.numeric, plan.panels) == ("load", True, [])
    assert plan.policies == ["JSQ", "SQ(2)", "JBT-5"]

    frame = pd.concat([summary.assign(**{"system.servers": n, "servers": n,
                                         "workload.service.kind": kind})
                       for n in (10, 100) for kind in ("exponential", "deterministic")])
    plan = plots.layout(frame)
    assert plan.x == "load"
    assert plan.panels == ["servers", "workload.service.kind"]
    assert len(plots.panel_groups(frame, plan)) == 4

    # A key tied to another (a zip group) adds no panel.
    frame["run.jobs"] = frame["servers"] * 1000
    assert plots.layout(frame).panels == ["servers", "workload.service.kind"]


def test_layout_servers_sweep_with_load_expression(summary: pd.DataFrame) -> None:
    frame = summary[summary["load"] == 0.5].drop(columns=["workload.load"])
    frame = pd.concat([frame.assign(**{"system.servers": n, "servers": n, "load": 1 - n ** -0.5})
                       for n in (10, 100, 1000)])
    plan = plots.layout(frame)
    assert (plan.x, plan.numeric, plan.panels) == ("servers", True, [])
    assert plan.x_label == "servers N"


def test_swept_expressions_stay_categories(summary: pd.DataFrame) -> None:
    frame = summary[summary["load"] == 0.5].drop(columns=["workload.load"])
    frame = pd.concat([frame.assign(**{"workload.load": text, "load": value})
                       for text, value in (("1 - N**-0.5", 0.68), ("1 - N**-1", 0.9))])
    plan = plots.layout(frame)
    assert plan.x == "workload.load" and not plan.numeric


def test_empty_summary_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(emulator.ScenarioError):
        plots.plot_folder(pd.DataFrame(), tmp_path)


def test_import_is_cheap() -> None:
    code = ("import sys, analysis.plots; "
            "assert not {'matplotlib', 'seaborn', 'pandas'} & set(sys.modules), sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


def lbemu() -> list[str]:
    found = shutil.which("lbemu")
    return [found] if found else [sys.executable, "-m", "emulator"]


def test_lbemu_plot(results_dir: Path) -> None:
    done = subprocess.run([*lbemu(), "plot", str(results_dir)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for name in FIGURES:
        assert f"wrote {results_dir / name}" in done.stdout
        check_png(results_dir / name)


def test_lbemu_plot_bad_folder(tmp_path: Path) -> None:
    done = subprocess.run([*lbemu(), "plot", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 2
    assert "summary.csv" in done.stderr and "Traceback" not in done.stderr
