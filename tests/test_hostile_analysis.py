"""Analysis entry points given what they cannot use: one line naming what is missing, or the right output.

The ``python -m analysis.<module>`` commands on missing, empty and damaged
folders, on folders without what their table needs (a swept loss, a JSQ row, a
value), and the figures of `Results.plot` given an ``ax`` that is not where a
figure can be drawn. Results folders come from tiny SimPy runs, or are written
by hand from one.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from helpers.scenarios import scenario_dict
from matplotlib.figure import Figure

import emulator
from analysis import faults, sparse_feedback

pytestmark = pytest.mark.xdist_group("test_hostile_analysis")  # one process runs its module fixtures, once

ROOT = Path(__file__).resolve().parents[1]
MAINS: dict[str, Callable[[list[str]], int]] = {"faults": faults.main, "sparse_feedback": sparse_feedback.main}


def _run(out: Path, policies: list[dict[str, Any]], sweep: dict[str, list[Any]], replications: int = 1,
         **network: Any) -> emulator.Results:
    data = scenario_dict(policies, servers=4, jobs=300, warmup=30, replications=replications, sweep=sweep,
                         arrivals={"kind": "poisson"}, service={"kind": "exponential", "mean": 1})
    data["run"]["engine"] = "simpy"
    if network:
        data["network"] = network
    return emulator.run(data, workers=1, out=out)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, emulator.Results]:
    """A folder without faults: random and JSQ at loads 0.5 and 0.8, one replication."""
    out = tmp_path_factory.mktemp("plain")
    return out, _run(out, [{"name": "random"}, {"name": "jsq"}], {"workload.load": [0.5, 0.8]})


@pytest.fixture(scope="module")
def lossy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A faults folder: JSQ and JIQ at losses 0 and 0.2, two replications."""
    out = tmp_path_factory.mktemp("lossy")
    _run(out, [{"name": "jsq"}, {"name": "jiq"}], {"network.loss": [0, 0.2]}, replications=2, timeout=0.1)
    return out


def _edited(source: Path, folder: Path, edit: Callable[[pd.DataFrame], pd.DataFrame]) -> Path:
    """A copy of the results folder ``source`` whose summary.csv is ``edit`` of the original."""
    shutil.copytree(source, folder)
    edit(pd.read_csv(source / "summary.csv")).to_csv(folder / "summary.csv", index=False)
    return folder


def _one_line(code: int, err: str, module: str, *named: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"python -m analysis.{module}: error: "), lines[0]
    for part in named:
        assert part in lines[0], (part, lines[0])


# -- the reported reproductions, as users run them ---------------------------------------
def _shell(module: str, *args: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", f"analysis.{module}", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_faults_without_a_swept_loss_from_the_shell(plain: tuple[Path, emulator.Results]) -> None:
    result = _shell("faults", plain[0])
    assert "Traceback" not in result.stderr
    _one_line(result.returncode, result.stderr, "faults", "network.loss: expected", "sweeps")
    assert result.stdout == "" and not (plain[0] / "faults.png").exists()


def test_sparse_feedback_without_jsq_from_the_shell(plain: tuple[Path, emulator.Results], tmp_path: Path) -> None:
    folder = _edited(plain[0], tmp_path / "random", lambda s: s[s["policy_name"] == "random"])
    result = _shell("sparse_feedback", folder)
    assert "Traceback" not in result.stderr
    _one_line(result.returncode, result.stderr, "sparse_feedback", "policies: expected jsq", "workload.load=0.5")
    assert result.stdout == ""



def _set(column: str, value: Any, every: bool = False) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """An edit of summary.csv: ``value`` in ``column``, on its first row or, with ``every``, on all of them."""
    def edit(summary: pd.DataFrame) -> pd.DataFrame:
        summary[column] = summary[column].astype(object)
        summary.loc[summary.index if every else summary.index[:1], column] = value
        return summary

    return edit


@pytest.mark.parametrize(("column", "value", "every", "says"), [
    ("messages_per_job", math.inf, False, "expected finite numbers in column 'messages_per_job'"),
    ("policy", "", False, "expected a value in column 'policy' on every line"),
])
def test_sparse_feedback_on_a_hand_edited_summary_from_the_shell(
        plain: tuple[Path, emulator.Results], tmp_path: Path, column: str, value: Any, every: bool, says: str) -> None:
    folder = _edited(plain[0], tmp_path / "edited", _set(column, value, every))
    result = _shell("sparse_feedback", folder)
    assert "Traceback" not in result.stderr
    _one_line(result.returncode, result.stderr, "sparse_feedback", says, "got ")
    assert result.stdout == ""


# -- folders that are not results folders, for every command -----------------------------
def _hostile(kind: str, folder: Path) -> Path:
    """What is given as the results folder: ``folder`` made as ``kind`` says (or left missing)."""
    if kind != "missing":
        folder.mkdir()
    text = {"a file": "policy\nJSQ\n", "empty summary": "", "header only": "policy,mean_wait\n"}.get(kind)
    if text is not None:
        (folder / "summary.csv").write_text(text)
    return folder / "summary.csv" if kind == "a file" else folder


HOSTILE = {"missing": "expected a results folder with summary.csv",
           "empty folder": "expected a results folder with summary.csv",
           "a file": "expected a results folder with summary.csv",
           "empty summary": "expected a readable summary.csv",
           "header only": "has only its header"}


@pytest.mark.parametrize("module", MAINS)
@pytest.mark.parametrize("kind", HOSTILE)
def test_not_a_results_folder(module: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _hostile(kind, tmp_path / "results")
    code = MAINS[module]([str(folder)])
    captured = capsys.readouterr()
    _one_line(code, captured.err, module, HOSTILE[kind], str(folder))
    assert captured.out == ""


@pytest.mark.parametrize("module", MAINS)
def test_bad_options_and_an_unwritable_figure(module: str, plain: tuple[Path, emulator.Results], lossy: Path,
                                              tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = lossy if module == "faults" else plain[0]
    assert MAINS[module]([str(folder), "--bogus"]) == 2
    _one_line(2, capsys.readouterr().err, module, "options: unrecognized arguments: --bogus")
    nowhere = tmp_path / "no_such_folder" / "figure.png"
    assert MAINS[module]([str(folder), "--figure", str(nowhere)]) == 2
    _one_line(2, capsys.readouterr().err, module, "--figure: expected a file that can be written", str(nowhere))


# -- folders without what a table needs --------------------------------------------------
def test_faults_table_needs_a_swept_loss(plain: tuple[Path, emulator.Results]) -> None:
    summary = plain[1].summary
    for function in (faults.degradation_table, faults.plot_degradation):
        with pytest.raises(emulator.ScenarioError, match=r"^network\.loss: expected a results folder whose"):
            function(summary)


def test_faults_table_names_a_missing_column(lossy: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    folder = _edited(lossy, tmp_path / "old", lambda s: s.drop(columns=["lost_fraction"]))
    assert faults.main([str(folder)]) == 2
    _one_line(2, capsys.readouterr().err, "faults", "expected a column 'lost_fraction' for the faults table")


def test_faults_with_missing_values_prints_them_as_dashes(lossy: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    def blank(summary: pd.DataFrame) -> pd.DataFrame:
        summary.loc[0, "mean_response"] = math.nan
        return summary

    folder = _edited(lossy, tmp_path / "nan", blank)
    assert faults.main([str(folder)]) == 0
    out = capsys.readouterr().out
    header, _, first, *_ = [[cell.strip() for cell in line.split("|")[1:-1]] for line in out.splitlines()
                            if line.startswith("|")]
    row = dict(zip(header, first, strict=True))
    assert (row["policy"], row["loss"], row["mean response"]) == ("JSQ", "0", "–")  # the cell without a value
    assert row["p99 response"] not in ("", "–")  # and the rest of the row as it is
    assert out.rstrip().endswith(f"wrote {folder / 'faults.png'}") and (folder / "faults.png").stat().st_size > 0


def test_sparse_feedback_needs_jsq_at_every_point(plain: tuple[Path, emulator.Results]) -> None:
    summary = plain[1].summary
    at_one_load = summary[(summary["policy_name"] == "random") | (summary["load"] == 0.5)]
    with pytest.raises(emulator.ScenarioError, match=r"^policies: expected jsq .* got none at workload\.load=0\.8$"):
        sparse_feedback.frontier(at_one_load)


def test_sparse_feedback_compares_at_each_sweep_point_whatever_is_swept(
        lossy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Swept over the loss, each point holds JSQ once: the reference is JSQ at that loss.
    assert sparse_feedback.main([str(lossy), "--figure", str(tmp_path / "f.png")]) == 0
    ratios, loss = {}, ""
    for line in capsys.readouterr().out.splitlines()[2:]:
        cells = [cell.strip() for cell in line.split("|")[1:-1]]
        if cells:
            loss = cells[0] or loss  # a key repeated from the row above is left blank
            if cells[1] == "JSQ":
                ratios[loss] = cells[-1]
    assert ratios == {"0": "1", "0.2": "1"}


def test_sparse_feedback_needs_a_mean_wait(plain: tuple[Path, emulator.Results], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    def blank(summary: pd.DataFrame) -> pd.DataFrame:
        summary.loc[summary["policy_name"] == "jsq", "mean_wait"] = math.nan
        return summary

    folder = _edited(plain[0], tmp_path / "nan", blank)
    assert sparse_feedback.main([str(folder)]) == 2
    _one_line(2, capsys.readouterr().err, "sparse_feedback", "expected a positive mean_wait to compare with",
              "at workload.load=0.5, got nan")


def test_sparse_feedback_with_one_replication_does_not_claim_intervals(
        plain: tuple[Path, emulator.Results], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Random waits far longer than 1.1 times JSQ at these loads; with one replication there is no interval.
    figure = tmp_path / "f.png"
    assert sparse_feedback.main([str(plain[0]), "--figure", str(figure)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if "| Random " in line]
    assert len(rows) == 2 and all("±" not in row for row in rows), rows
    assert figure.stat().st_size > 0



DAMAGED: dict[str, tuple[str, Any, bool, str]] = {
    # what the cell says, whether every row says it, and what the refusal names
    "an infinite number": ("mean_response", math.inf, False, "expected finite numbers in column 'mean_response'"),
    "a negative infinity": ("messages_per_job", -math.inf, False, "column 'messages_per_job'"),
    "an infinite interval": ("mean_response_ci95", -math.inf, False,
                             "expected finite numbers of at least 0 in column 'mean_response_ci95'"),
    "a row without a policy": ("policy", "", False, "expected a value in column 'policy' on every line"),
    "no loss": ("network.loss", "", True, "expected a value in column 'network.loss' on every line"),
    "no N": ("servers", "", True, "expected a value in column 'servers' on every line"),
    "no load": ("load", "", True, "expected a value in column 'load' on every line"),
    "a row without a policy name": ("policy_name", "", False, "column 'policy_name'"),
    "a negative interval": ("mean_wait_ci95", -1.0, False, "got -1 on line 2"),
}
"""Hand-edited summaries, refused by the command that reads the column (faults or sparse_feedback)."""
READS = {"faults": ("mean_response", "messages_per_job", "mean_response_ci95", "policy", "network.loss"),
         "sparse_feedback": ("messages_per_job", "policy", "policy_name", "mean_wait_ci95")}


@pytest.mark.parametrize(("module", "case"), [(m, c) for m, columns in READS.items() for c in DAMAGED
                                              if DAMAGED[c][0] in columns])
def test_a_damaged_value_is_refused_in_one_line(module: str, case: str, plain: tuple[Path, emulator.Results],
                                                lossy: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    column, value, every, says = DAMAGED[case]
    source = lossy if module == "faults" else plain[0]
    folder = _edited(source, tmp_path / "edited", _set(column, value, every))
    assert MAINS[module]([str(folder)]) == 2
    captured = capsys.readouterr()
    _one_line(2, captured.err, module, says)
    assert captured.out == "" and not list(folder.glob("*.png"))


def test_sparse_feedback_draws_jsq_under_its_own_label(plain: tuple[Path, emulator.Results], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # A label is the user's choice (`label:` in the scenario): JSQ is the reference by its name, not its label.
    def relabel(summary: pd.DataFrame) -> pd.DataFrame:
        summary.loc[summary["policy_name"] == "jsq", "policy"] = "JSQ (all)"
        return summary

    folder = _edited(plain[0], tmp_path / "relabelled", relabel)
    assert sparse_feedback.main([str(folder)]) == 0
    out = capsys.readouterr().out
    rows = [[cell.strip() for cell in line.split("|")[1:-1]] for line in out.splitlines() if "JSQ (all)" in line]
    assert len(rows) == 2 and all(row[-1] == "1" for row in rows), out  # its own wait over itself
    assert (folder / "sparse_feedback.png").stat().st_size > 0


# -- figures given an ax that is not where they can be drawn -----------------------------
def test_a_figure_given_as_ax_gets_the_whole_figure(plain: tuple[Path, emulator.Results]) -> None:
    results = plain[1]
    one_load = emulator.Results(results.runs, results.summary[results.summary["load"] == 0.5], results.scenario)
    for name, panels in (("response", 1), ("tradeoff", 2)):  # bars (one point), and two panels
        source = one_load if panels == 1 else results
        fig = Figure()
        assert source.plot(name, ax=fig) is fig
        assert len(fig.axes) == panels and fig.get_suptitle() != "" and fig.legends, name
    sub = Figure().subfigures(1, 2)[1]
    assert results.plot("messages_by_kind", ax=sub) is sub and len(sub.axes) == 2


def test_axes_one_per_panel(plain: tuple[Path, emulator.Results]) -> None:
    fig = Figure()
    axes = fig.subplots(1, 2)  # an array, as from pyplot.subplots
    assert plain[1].plot("tradeoff", ax=axes) is fig
    assert [ax.get_title() for ax in axes] == ["load = 0.5", "load = 0.8"]
    assert axes[-1].get_legend() is not None and fig.get_suptitle() == ""  # the caller's figure keeps its title


BAD_AX: dict[str, tuple[Callable[[], Any], str]] = {
    "a string": (lambda: "left", "expected matplotlib Axes, a sequence of Axes or an empty Figure, got str"),
    "a number": (lambda: 3, "got int"),
    "a figure with axes": (lambda: Figure().add_subplot().figure, "expected an empty Figure"),
    "too many axes": (lambda: list(Figure().subplots(1, 5)), "got 5"),
    "a list of strings": (lambda: ["left", "right"], "got one holding a str"),
}


@pytest.mark.parametrize("case", BAD_AX)
def test_an_ax_that_is_not_axes_is_refused_in_one_line(plain: tuple[Path, emulator.Results], case: str) -> None:
    make, says = BAD_AX[case]
    for name in plain[1].figures():
        with pytest.raises(emulator.ScenarioError, match=r"^ax: expected") as caught:
            plain[1].plot(name, ax=make())
        assert says in str(caught.value) and "\n" not in str(caught.value), (name, str(caught.value))


# -- lbemu table on a summary without a metric ---------------------------------------------
def test_table_without_a_metric_column_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from emulator.cli import main

    (tmp_path / "summary.csv").write_text("policy,load\nJSQ,0.5\nRandom,0.5\n")
    assert main(["table", str(tmp_path)]) == 2  # not a table of policy names alone, as if it were one
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and captured.out == "", captured
    assert lines[0] == ("lbemu: error: summary.csv: expected a metric column to tabulate (mean_response, "
                        "messages_per_job), got none (name a column with --metric)")


@pytest.mark.parametrize(("column", "value", "says"), [
    ("servers", "", "expected a value in column 'servers' on every line, got a blank on line 2"),
    ("servers", math.inf, "expected finite numbers in column 'servers', got inf on line 2"),
])
@pytest.mark.parametrize("command", ["table", "plot", "report"])
def test_lbemu_on_a_damaged_identity_column(plain: tuple[Path, emulator.Results], tmp_path: Path, command: str,
                                            column: str, value: Any, says: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from emulator.cli import main

    every = value != ""  # one blank N among the rows, or N infinite on every row (one N, read for the caption)
    folder = _edited(plain[0], tmp_path / "edited", _set(column, value, every))
    assert main([command, str(folder)]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == f"lbemu: error: summary.csv: {says}" and captured.out == "", captured


@pytest.mark.parametrize("command", ["plot", "report"])
def test_lbemu_figures_refuse_a_negative_interval(plain: tuple[Path, emulator.Results], tmp_path: Path,
                                                  command: str, capsys: pytest.CaptureFixture[str]) -> None:
    from emulator.cli import main

    folder = _edited(plain[0], tmp_path / "edited", _set("mean_response_ci95", -math.inf))
    assert main([command, str(folder)]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == ("lbemu: error: summary.csv: expected finite numbers of at least 0 in column "
                                    "'mean_response_ci95', got -inf on line 2") and captured.out == "", captured
