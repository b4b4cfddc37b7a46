"""Figures: drawn from Python without a file (`Results.plot`), and written as readable PNG files by
`analysis.plots.plot_folder` and ``lbemu plot``."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

import emulator
from analysis import canvas, plots
from analysis.source import Source
from emulator.cli import main
from emulator.experiment.output import with_load

pytestmark = pytest.mark.xdist_group("test_plots")  # one process runs its module fixtures, once

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
    """summary.csv as figures read it: with the resolved ``load`` beside the swept ``workload.load``."""
    return with_load(pd.read_csv(results_dir / "summary.csv"))


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


# -- figures from Python, as in a notebook --------------------------------------------
@pytest.fixture(scope="module")
def slotted_pools() -> emulator.Results:
    """Results with every optional figure: pools with a capacity (blocking, halfin_whitt), a swept JBT
    period (messages_vs_period), occupancies and response times; one replication (no intervals)."""
    return emulator.run({
        "name": "pools", "seed": 3, "replications": 1, "run": {"jobs": 1500, "warmup_jobs": 300},
        "system": {"servers": 20, "discipline": "pool", "capacity": 2},
        "policies": [{"name": "jsq"}, {"name": "sqd", "d": 2}, {"name": "jbt", "d": 2, "period": 5}],
        "sweep": {"workload.load": [0.9, 1.5], "policies.2.period": [5, 50]}}, workers=1)


@pytest.fixture(scope="module")
def continuous() -> emulator.Results:
    return emulator.run(emulator.Scenario.from_dict({
        "name": "plots", "seed": 7, "replications": 2, "run": {"jobs": 2000, "warmup_jobs": 500},
        "system": {"servers": 10}, "sweep": {"workload.load": [0.5, 0.9]},
        "policies": [{"name": "jsq"}, {"name": "sqd", "d": 2}, {"name": "jbt", "d": 5, "period": 10}]}), workers=1)


def visible(fig: object) -> list:
    return [ax for ax in fig.axes if ax.get_visible()]  # type: ignore[attr-defined]


def test_every_figure_from_python_writes_no_file(continuous: emulator.Results, slotted_pools: emulator.Results,
                                                 tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A notebook's session: each figure a Figure with its panels and labels, and not one file written."""
    from matplotlib.figure import Figure

    monkeypatch.chdir(tmp_path)
    assert continuous.figures() == ["response", "messages", "tradeoff", "messages_by_kind", "response_tail",
                                    "occupancy"]
    assert slotted_pools.figures() == [*continuous.figures()[:4], "blocking", "response_tail",
                                       "messages_vs_period", "occupancy", "halfin_whitt"]
    expected = {  # name -> (panels, x label, y label) for the continuous results (2 loads)
        "response": (1, "load (arrival rate / service capacity)", "mean response time (mean service times)"),
        "messages": (1, "load (arrival rate / service capacity)", "messages per job"),
        "tradeoff": (2, "messages per job", "mean response time (mean service times)"),
        "messages_by_kind": (2, "", "share of the messages"),
        "response_tail": (2, "response time t (mean service times)", "P(response > t)"),
        "occupancy": (2, "i (jobs)", "fraction with ≥ i jobs"),
    }
    for name, (panels, xlabel, ylabel) in expected.items():
        fig = continuous.plot(name)
        assert isinstance(fig, Figure), name
        axes = visible(fig)
        assert len(axes) == panels, name
        assert axes[0].get_xlabel() == xlabel and axes[0].get_ylabel() == ylabel, name
        assert "(95% CI" in fig.get_suptitle() or name in ("messages_by_kind", "response_tail"), name
    assert [ax.get_title() for ax in visible(continuous.plot("tradeoff"))] == ["load = 0.5", "load = 0.9"]
    for name in slotted_pools.figures():
        fig = slotted_pools.plot(name)
        assert isinstance(fig, Figure) and visible(fig), name
        assert "95% CI" not in fig.get_suptitle(), name  # one replication: no interval
    period = visible(slotted_pools.plot("messages_vs_period"))
    assert [ax.get_title() for ax in period] == ["load = 0.9", "load = 1.5"]
    assert period[0].get_xlabel() == "JBT-d period T (mean service times)"
    assert list(tmp_path.iterdir()) == []  # nothing written, here or (by the figures' paths) anywhere


def test_one_panel_figures_draw_into_the_callers_axes(continuous: emulator.Results) -> None:
    from matplotlib.figure import Figure

    fig = Figure()
    left, right = fig.subplots(1, 2)
    assert continuous.plot("response", ax=left) is fig
    assert plots.plot_messages(continuous, ax=right) is fig
    assert left.get_ylabel() == "mean response time (mean service times)" and right.get_lines()
    assert left.get_legend() is not None and fig.get_suptitle() == ""  # the caller's figure keeps its title
    with pytest.raises(emulator.ScenarioError, match="ax: expected a one-panel figure, 'tradeoff' has 2 panels"):
        continuous.plot("tradeoff", ax=left)
    with pytest.raises(emulator.ScenarioError, match="name: expected a figure these results have data for"):
        continuous.plot("halfin_whitt")
    with pytest.raises(emulator.ScenarioError, match="name: expected a figure name"):
        continuous.plot("nonsense")


def test_a_folder_draws_as_its_results(results_dir: Path, continuous: emulator.Results) -> None:
    """The same figure from the folder as from the Results of the same run."""
    from_folder = plots.draw(results_dir, "messages")
    from_results = continuous.plot("messages")
    lines = [[tuple(line.get_ydata()) for line in visible(fig)[0].get_lines()] for fig in (from_folder, from_results)]
    assert lines[0] == lines[1] and lines[0]


def test_messages_by_kind_bars_are_true_shares(continuous: emulator.Results) -> None:
    """Each bar's segments are the kinds' shares of its messages (JSQ: N queries, N replies: halves)."""
    fig = continuous.plot("messages_by_kind")
    ax = visible(fig)[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    jsq = labels.index("JSQ")
    heights = {container.get_label(): container.patches[jsq].get_height() for container in ax.containers}
    assert heights["query"] == pytest.approx(0.5) and heights["reply"] == pytest.approx(0.5)
    totals = [t.get_text() for t in ax.texts]
    assert totals[jsq] == "20"  # 2N messages per job written on the bar


def test_slotted_time_axes_and_subtitle() -> None:
    results = emulator.run({"name": "slots", "seed": 1, "replications": 2, "run": {"jobs": 1000, "warmup_jobs": 100},
                            "system": {"servers": 5, "time": "slotted"}, "workload": {"load": 0.8,
                            "service": {"kind": "deterministic", "mean": 1}},
                            "policies": [{"name": "jsq"}, {"name": "jiq"}]}, workers=1)
    fig = results.plot("response")
    assert visible(fig)[0].get_ylabel() == "mean response time (slots)"
    assert "slotted" in fig.get_suptitle() and "fifo" not in fig.get_suptitle()


def test_log_axis_intervals_reaching_zero_do_not_stretch_it() -> None:
    """A wide interval on a log axis is cut at half the smallest value, not drawn down towards 0."""
    summary = pd.DataFrame({"policy": ["A", "B"] * 2, "policy_name": ["a", "b"] * 2, "load": [0.5, 0.5, 0.9, 0.9],
                            "workload.load": [0.5, 0.5, 0.9, 0.9], "mean_response": [1.0, 2.0, 30.0, 60.0],
                            "mean_response_ci95": [0.1, 1.99, 40.0, 5.0], "messages_per_job": [1.0, 2.0, 1.0, 2.0],
                            "replications": 2})
    ax = visible(plots.plot_response(Source(summary)))[0]
    assert ax.get_yscale() == "log"
    assert ax.get_ylim()[0] == pytest.approx(1.0 / 2 / 1.1)


def test_panel_titles_and_wrapped_titles() -> None:
    assert canvas.panel_title(["system.servers", "workload.load"], [100, 0.9]) == "N = 100, load = 0.9"
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4, 3))
    canvas.title(fig, pd.DataFrame({"scenario": ["s"]}), "A title much longer than a four-inch figure is wide, "
                 "which would be clipped at both ends")
    assert all(len(line) <= 50 for line in fig.get_suptitle().splitlines())


# -- options for a paper: format, size, title, metric ----------------------------------------
def test_lbemu_plot_writes_one_metric_as_a_pdf_of_the_size_asked(results_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "paper"
    shutil.copytree(results_dir, folder)
    before = set(folder.iterdir())
    done = subprocess.run([*lbemu(), "plot", str(folder), "--format", "pdf", "--size", "3.5,2.6", "--no-title",
                           "--metric", "mean_wait"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"wrote {folder / 'mean_wait.pdf'}\n"
    assert set(folder.iterdir()) - before == {folder / "mean_wait.pdf"}  # that figure alone, no PNG twin
    page = (folder / "mean_wait.pdf").read_bytes()
    # 3.5 x 2.6 inches of 72 points
    assert page.startswith(b"%PDF") and re.search(rb"/MediaBox \[ ?0 0 252 187.2 ?\]", page)


def test_lbemu_plot_format_svg_writes_only_svg(results_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "svg"
    shutil.copytree(results_dir, folder)
    for drawn in [*folder.glob("*.png"), *folder.glob("*.svg")]:  # written by an earlier test
        drawn.unlink()
    done = subprocess.run([*lbemu(), "plot", str(folder), "--format", "svg"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not list(folder.glob("*.png"))
    assert {p.name for p in folder.glob("*.svg")} >= {Path(name).with_suffix(".svg").name for name in FIGURES}


@pytest.mark.parametrize("args, says", [
    (["--size", "0,3"], "--size: expected width,height in inches, each from 1 to 50, got '0,3'"),
    (["--size", "4"], "--size: expected width,height in inches, each from 1 to 50, got '4'"),
    (["--size", "wide,tall"], "--size: expected width,height in inches, each from 1 to 50, got 'wide,tall'"),
    (["--size", "1e9,3"], "--size: expected width,height in inches, each from 1 to 50, got '1e9,3'"),
    (["--metric", "colour"], "metric: expected a metric column of summary.csv (jobs, warmup_jobs, mean_response"),
    (["--size", "1,1"], "size: expected room for the 1 panel of 'response' and their labels, got '1,1' inches"),
])
def test_lbemu_plot_refuses_bad_options_in_one_line(results_dir: Path, args: list[str], says: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # In-process, as the shell's exit status is checked by test_lbemu_plot_bad_folder: an exception
    # other than the handled one fails the test here, and no interpreter starts for each option.
    code = main(["plot", str(results_dir), *args])
    err = capsys.readouterr().err
    assert code == 2 and says in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_the_same_options_from_python(continuous: emulator.Results) -> None:
    fig = continuous.plot("tradeoff", size=(7, 3), title=False)
    assert tuple(fig.get_size_inches()) == (7, 3) and fig.get_suptitle() == ""
    fig = continuous.plot(metric="p99_response")
    ax = visible(fig)[0]
    assert ax.get_ylabel() == "p99 response time (mean service times)"
    assert fig.get_suptitle().startswith("P99 response time (95% CI)")
    jsq = next(bars for bars in ax.containers if bars.get_label() == "JSQ")
    expected = continuous.summary.query("policy == 'JSQ'").sort_values("load")["p99_response"]
    assert list(jsq.lines[0].get_ydata()) == list(expected)
    from matplotlib.figure import Figure

    for call, says in ((lambda: continuous.plot("response", metric="mean_wait"), "name: expected a figure name or "
                        "a metric, one of the two, got both"),
                       (lambda: continuous.plot(), "got neither"),
                       (lambda: continuous.plot("response", ax=Figure().subplots(), size=(3, 3)),
                        "size: expected no size with ax"),
                       (lambda: continuous.plot("response", size=(3, 100)), "size: expected width,height in inches"),
                       (lambda: continuous.plot(metric="policy"), "metric: expected a metric column")):
        with pytest.raises(emulator.ScenarioError, match=re.escape(says)):
            call()


def test_a_series_under_another_with_the_same_values_shows() -> None:
    """Random routing and round robin both send 0 messages: Random's grey still shows under RR's line."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    summary = pd.DataFrame({"policy": ["Random", "RR"] * 3, "policy_name": ["random", "round_robin"] * 3,
                            "load": [0.5, 0.5, 0.7, 0.7, 0.9, 0.9], "workload.load": [0.5, 0.5, 0.7, 0.7, 0.9, 0.9],
                            "mean_response": [2.0, 1.5, 3.3, 2.0, 10.0, 5.0], "messages_per_job": 0.0,
                            "replications": 1})
    fig = plots.plot_messages(Source(summary))
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    pixels = np.asarray(canvas.buffer_rgba())[..., :3].astype(int)
    ax = visible(fig)[0]
    # The band of pixels along the two lines at 0, inside the axes (no text there: anti-aliased
    # text is grey at its edges), from its top down.
    (left, zero), right = ax.transData.transform((0.5, 0.0)), ax.transData.transform((0.9, 0.0))[0]
    row = pixels.shape[0] - round(zero)
    band = pixels[row - 8:row + 8, round(left) + 10:round(right) - 10]
    grey = np.all(np.abs(band - np.array([0x94, 0x94, 0x94])) <= 8, axis=-1)  # Random's colour
    assert grey.sum() > 50


def test_drawing_into_ones_own_axes_keeps_the_style_and_shows_one_legend(continuous: emulator.Results) -> None:
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    with rc_context({"axes.grid": False, "axes.facecolor": "#eeeeee"}):  # a caller's own style
        fig = Figure(layout="constrained")
        left, right = fig.subplots(1, 2)
    continuous.plot("response", ax=left)
    continuous.plot("messages", ax=right)
    assert sum(ax.get_legend() is not None for ax in fig.axes) == 1  # the same policies: one legend
    own = visible(continuous.plot("response"))[0]
    for ax in (left, right):
        assert ax.get_facecolor() == own.get_facecolor()
        assert [line.get_visible() for line in ax.get_ygridlines()] == [True] * len(ax.get_ygridlines())
        assert ax.get_ygridlines()[0].get_color() == own.get_ygridlines()[0].get_color()
        assert ax.yaxis.label.get_fontsize() == own.yaxis.label.get_fontsize()


def test_occupancy_legend_names_each_theory_once(continuous: emulator.Results) -> None:
    fig = continuous.plot("occupancy")
    labels = [text.get_text() for legend in fig.legends for text in legend.get_texts()]
    assert "SQ(2) mean field" in labels
    assert not [label for label in labels if ": " in label], labels


def test_every_policy_of_a_crowded_folder_has_its_own_colour_and_marker() -> None:
    """Seven JSQ-sparse variants and JIQ beside JBT-d, as in scenarios/sparse_feedback.yaml."""
    from analysis.style import policy_style

    labels = ["JSQ", "JIQ", "JBT-2", *(f"JSQ-sparse({k})" for k in range(7)), "JSQ-push"]
    names = {"JSQ": "jsq", "JIQ": "jiq", "JBT-2": "jbt", "JSQ-push": "jsq_push",
             **{label: "jsq_sparse" for label in labels if label.startswith("JSQ-sparse")}}
    style = policy_style(labels, names)
    assert len({style.colors[label] for label in labels}) == len(labels)
    assert len({(style.colors[label], style.markers[label]) for label in labels}) == len(labels)


def test_the_sparse_feedback_figure_tells_every_policy_apart_and_shows_zero_messages_whole() -> None:
    from analysis import sparse_feedback
    from analysis.style import style_of

    rows = [("Random", "random", 9.0, 0.0), ("JSQ", "jsq", 0.07, 200.0), ("JIQ", "jiq", 0.08, 0.9),
            ("JBT-2", "jbt", 1.0, 1.1), *((f"JSQ-sparse(T={t})", "jsq_sparse", 1.0 + t, 1 / t) for t in (1, 3, 10))]
    summary = pd.DataFrame([{"servers": 100, "load": 0.9, "policy": label, "policy_name": name, "mean_wait": wait,
                             "mean_wait_ci95": 0.01, "messages_per_job": messages, "messages_per_job_ci95": 0.0}
                            for label, name, wait, messages in rows])
    fig = sparse_feedback.draw(sparse_feedback.frontier(summary), style_of(summary))
    ax = visible(fig)[0]
    assert ax.get_xlim()[0] < 0  # the markers at 0 messages (Random) drawn whole, not cut at the axis
    looks = {bars.get_label(): (bars.lines[0].get_color(), bars.lines[0].get_marker()) for bars in ax.containers}
    assert set(looks) == {label for label, *_ in rows} and len(set(looks.values())) == len(rows)


def test_the_faults_figure_is_drawn_in_the_style_of_the_others(continuous: emulator.Results) -> None:
    from analysis import faults

    columns = [*faults.NUMBERS, "mean_response_ci95"]
    summary = pd.DataFrame({"policy": ["JSQ", "JIQ"] * 2, "policy_name": ["jsq", "jiq"] * 2,
                            **{column: 0.0 for column in columns}, faults.LOSS: [0, 0, 0.2, 0.2],
                            "mean_response": [1.5, 1.6, 2.5, 3.0], "service": "exponential(1)"})
    fig = faults.plot_degradation(summary)
    ax, own = visible(fig)[0], visible(continuous.plot("response"))[0]
    assert ax.get_facecolor() == own.get_facecolor()
    assert ax.get_ygridlines()[0].get_color() == own.get_ygridlines()[0].get_color()
    assert ax.get_ygridlines()[0].get_alpha() == own.get_ygridlines()[0].get_alpha()


def test_a_paired_comparisons_difference_is_not_a_kind_of_message() -> None:
    """With compare_to, summary.csv has messages_per_job_diff: the difference of the totals, not a kind."""
    results = emulator.run({"name": "paired", "seed": 7, "replications": 2, "run": {"jobs": 500, "warmup_jobs": 50},
                            "system": {"servers": 5}, "compare_to": "SQ(2)",
                            "policies": [{"name": "sqd", "d": 2}, {"name": "jiq"}]}, workers=1)
    assert "messages_per_job_diff" in results.summary
    assert plots.message_kinds(results.summary) == ["query", "reply", "idle"]
    ax = visible(results.plot("messages_by_kind"))[0]
    assert [bars.get_label() for bars in ax.containers] == ["query", "reply", "idle"]
    assert max(bar.get_y() + bar.get_height() for bars in ax.containers for bar in bars) == pytest.approx(1.0)
