"""Tables that fit: every shipped scenario's LaTeX table on a default article page, text in the
terminal's width, and the same cells as a pandas frame, a Styler and a notebook's HTML."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import emulator
from analysis.cells import Cell
from analysis.latex import BREAK, LINEWIDTH, _key_lines, fits, latex, text_width, width
from analysis.pivot import Value, split
from analysis.render import frame, render, styler
from analysis.tables import comparison_table, pivot
from emulator.cli import main
from emulator.scenario.reading import load_scenario

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))
NO_PDFLATEX = "pdflatex is not installed (Debian: texlive-latex-recommended; .ci/run installs it)"


def short(scenario: emulator.Scenario, jobs: int = 300) -> emulator.Scenario:
    """The same scenario (same sweep, policies, so the same table shape) with short runs:
    two replications (so every cell has an interval), few jobs, no precision target."""
    data = scenario.to_dict()
    data["replications"] = 2
    data.pop("precision", None)
    data["run"].update(jobs=jobs, warmup_jobs=jobs // 4, occupancy=False)
    for group in data.get("zip", ()):  # a zip group may move the run length with N
        for key, value in (("run.jobs", jobs), ("run.warmup_jobs", jobs // 4)):
            if key in group:
                group[key] = [value] * len(group[key])
    return emulator.Scenario.from_dict(data)


def compile_latex(tmp_path: Path, body: str, packages: tuple[str, ...] = ("booktabs",)) -> str:
    """Compile ``body`` in a default article page; return the log."""
    preamble = "".join(f"\\usepackage{{{p}}}\n" for p in packages)
    (tmp_path / "table.tex").write_text(f"\\documentclass{{article}}\n{preamble}\\begin{{document}}\n{body}"
                                        "\\end{document}\n")
    result = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "table.tex"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout[-3000:]
    return (tmp_path / "table.log").read_text(errors="replace")


# Short runs of these take 15-35 s each on a loaded 2-core machine (hundreds of tasks, or N = 10^4):
# they are in the slow tier, the others in the fast one.
LARGE = {"jbt_zhou", "jbt_zhou2017", "power_of_d_pools", "supermarket"}


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.slow) if p.stem in LARGE else p
                                  for p in SCENARIOS], ids=[p.stem for p in SCENARIOS])
def test_the_default_latex_table_of_every_scenario_fits_an_article_page(path: Path, tmp_path: Path) -> None:
    scenario = short(load_scenario(path))
    results = emulator.run(scenario, workers=1)
    assert not results.errors, results.errors
    body = results.table(format="latex")
    assert body.count("\\begin{table}") >= 1 and "\\caption" in body
    # Caption above the tabular (booktabs), math as math.
    for part in body.split("\\begin{table}")[1:]:
        assert part.index("\\caption") < part.index("\\begin{tabular}")
    assert "N = " not in body.replace("$N = ", "")
    if shutil.which("pdflatex") is None:
        pytest.skip(NO_PDFLATEX)
    log = compile_latex(tmp_path, body)
    assert "Overfull \\hbox" not in log, re.findall(r"Overfull \\hbox.*", log)
    # The text table fits a 100-column terminal as well.
    assert max(map(len, results.table(width=100).splitlines())) <= 100


def seven_loads() -> pd.DataFrame:
    """A 7-load sweep of five policies, with the digits of a long run."""
    loads = (0.3, 0.5, 0.7, 0.9, 0.95, 0.99, 0.999)
    rows = []
    for point, load in enumerate(loads):
        for i, policy in enumerate(("Random", "JSQ", "SQ(2)", "JIQ", "JBT-10")):
            rows.append({"scenario": "seven", "point": point, "policy": policy, "servers": 10, "discipline": "fifo",
                         "load": load, "workload.load": load, "replications": 5,
                         "mean_response": 1 / (1 - load) / (i + 1) + 0.001234, "mean_response_ci95": 0.0123 * (i + 1),
                         "messages_per_job": 2.0 * i + 0.0456, "messages_per_job_ci95": 0.00234})
    return pd.DataFrame(rows)


def cells_of(text: str) -> list[str]:
    return re.findall(r"\d+\.\d+ ± \d+\.\d+", text)


def test_a_seven_load_sweep_prints_in_blocks_that_fit_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    summary = seven_loads()
    whole = comparison_table(summary, theory=False, width=0)
    assert max(map(len, whole.splitlines())) > 200  # what it printed before: one block
    monkeypatch.delenv("COLUMNS", raising=False)
    text = comparison_table(summary, theory=False)  # not a terminal here: 100 columns
    assert max(map(len, text.splitlines())) <= 100
    blocks = text.split("\n\n")[:-1]
    assert len(blocks) >= 3 and all(block.splitlines()[0].startswith("policy") for block in blocks)
    assert sorted(cells_of(text)) == sorted(cells_of(whole))  # every cell once, none lost or repeated
    assert text.count(" *") == whole.count(" *")
    # The metrics are not mixed within a block; a metric's loads are split evenly (4 + 3, not 6 + 1).
    heads = [block.splitlines()[0] for block in blocks]
    assert all(("mean response" in h) != ("messages/job" in h) for h in heads)
    assert sorted(h.count("mean response") for h in heads if "mean response" in h) == [3, 4]
    monkeypatch.setenv("COLUMNS", "160")  # a wider terminal takes wider blocks
    assert max(map(len, comparison_table(summary, theory=False).splitlines())) in range(101, 161)
    assert comparison_table(summary, theory=False, width=70).split("\n\n")[-1].count("\n") >= 3  # caption wraps


def test_the_cli_takes_a_width_and_latex_layouts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seven_loads().to_csv(tmp_path / "summary.csv", index=False)
    assert main(["table", str(tmp_path), "--width", "80"]) == 0
    assert max(map(len, capsys.readouterr().out.splitlines())) <= 80
    assert main(["table", str(tmp_path), "--width", "-1"]) == 2
    assert "--width: expected an integer >= 0" in capsys.readouterr().err
    assert main(["table", str(tmp_path), "--format", "latex", "--split"]) == 0
    assert capsys.readouterr().out.count("\\begin{table}") >= 2
    assert main(["table", str(tmp_path), "--format", "latex", "--layout", "resize", "--siunitx"]) == 0
    out = capsys.readouterr().out
    assert "\\resizebox{\\linewidth}{!}" in out and "S[table-format=" in out and "Scaled to the line width" in out


def test_latex_layouts_say_what_they_did(tmp_path: Path) -> None:
    table = pivot(seven_loads(), theory=False)
    assert not fits(table) and width(table) > LINEWIDTH
    auto = latex(table)
    parts = auto.split("\\begin{table}")[1:]
    assert len(parts) >= 4  # 7 loads of two metrics do not fit one metric per table
    assert all("split to fit the line width: one per metric, and its columns in parts" in p for p in parts)
    assert re.search(r"Mean response, part 1 of \d \(table 1 of \d+", auto)
    labels = re.findall(r"\\label\{([^}]*)\}", auto)
    assert len(set(labels)) == len(parts)
    single = latex(table, "single")
    assert single.count("\\begin{table}") == 1 and "split" not in single and "resizebox" not in single
    assert "$N = 10$" in single and "N = 10" not in single.replace("$N = 10$", "")
    # Decimal alignment: each value is four columns, split at the points of mean and half-width.
    assert "r@{}l@{}r@{}l" * 14 in single
    assert "Random & $1$ & $.430$ & ${}\\pm 0$ & $.012$ &" in single  # 1/(1-0.3) + 0.001234 ± 0.0123
    if shutil.which("pdflatex") is None:
        pytest.skip(NO_PDFLATEX)
    for layout in ("auto", "split"):
        log = compile_latex(tmp_path, latex(table, layout))
        assert "Overfull \\hbox" not in log
    log = compile_latex(tmp_path, latex(table, "resize"), ("booktabs", "graphicx"))
    assert "Overfull \\hbox" not in log
    assert "Overfull \\hbox" in compile_latex(tmp_path, single)  # the estimate is right that it does not fit


def test_siunitx_columns_compile(tmp_path: Path) -> None:
    table = pivot(seven_loads(), theory=False)
    body = latex(table, siunitx=True)
    assert "S[table-format=1.3(1.3)]" in body  # the first column: 1.430 ± 0.012 ... 0.287 ± 0.061
    assert "Random & 1.430 \\pm 0.012 &" in body and "\\boldmath 0.287 \\pm 0.061 &" in body
    if shutil.which("pdflatex") is None:
        pytest.skip(NO_PDFLATEX)
    if shutil.which("kpsewhich") is None or not subprocess.run(["kpsewhich", "siunitx.sty"], capture_output=True,
                                                                 text=True).stdout.strip():
        pytest.skip("siunitx is not installed (Debian: texlive-science)")
    log = compile_latex(tmp_path, body, ("booktabs", "siunitx"))
    assert "Overfull \\hbox" not in log and "siunitx error" not in log.lower()


def test_theory_values_keep_their_own_digits() -> None:
    # JIQ's mean-field delay is exactly 1 at every load below 1: it read "1.0000 / 1.00 / 1.0" when it
    # copied the digits of the measured row above it.
    assert [Value(1.0).text(), Value(10.0).text(), Value(2.6128949).text(), Value(0.148282).text()] == \
        ["1", "10", "2.613", "0.1483"]
    scenario = emulator.Scenario.from_dict({
        "name": "jiq", "seed": 4, "replications": 2, "run": {"jobs": 500, "warmup_jobs": 100},
        "system": {"servers": 10}, "policies": [{"name": "jiq"}], "sweep": {"workload.load": [0.5, 0.9, 0.95]}})
    results = emulator.run(scenario, workers=1)
    row = next(line for line in results.table().splitlines() if line.startswith("JIQ: mean field"))
    assert row.split()[-3:] == ["1", "1", "1"]


def test_frame_styler_and_notebook_html_show_the_same_cells() -> None:
    scenario = emulator.Scenario.from_dict({
        "name": "shown", "description": "two policies", "seed": 5, "replications": 3,
        "run": {"jobs": 800, "warmup_jobs": 100}, "system": {"servers": 6},
        "policies": [{"name": "random"}, {"name": "jsq"}], "sweep": {"workload.load": [0.5, 0.8]}})
    results = emulator.run(scenario, workers=1)
    table = pivot(results.summary, scenario=scenario)
    shown = results.frame()
    assert shown.equals(frame(table))
    assert list(shown.index.get_level_values("policy"))[:2] == ["Random", "Random: M/M/1, exact"]
    assert shown.columns.names == ["metric", "load"]
    assert list(shown.columns) == [("mean response", "0.5"), ("mean response", "0.8"),
                                   ("messages/job", "0.5"), ("messages/job", "0.8")]
    text = results.table()
    for r in range(len(table.rows)):  # the digits of the text table
        for c in range(len(table.columns)):
            cell = table.cells.get((r, c))
            assert shown.iat[r, c] == ("" if cell is None else cell.text())
            if cell is not None:
                assert cell.text() in text
    best = [(r, c) for (r, c), cell in table.cells.items() if isinstance(cell, Cell) and cell.best]
    assert best and all(results.frame(marks=True).iat[r, c].endswith(" *") for r, c in best)
    assert shown.iat[1, 0] == "2"  # M/M/1 at load 0.5: 1/(1 - 0.5)
    html = results.styler().to_html()
    assert html.count("font-weight: bold") >= 1 and "font-style: italic" in html
    bold_ids = {cell for rule in re.findall(r"([^{}]*)\{\s*font-weight: bold;\s*\}", html)
                for cell in re.findall(r"row\d+_col\d+", rule)}
    assert bold_ids == {f"row{r}_col{c}" for r, c in best}
    assert styler(table).to_html().count("font-weight: bold") == html.count("font-weight: bold")
    notebook = results._repr_html_()
    assert notebook.startswith("<p><strong>shown</strong>: two policies — 2 point(s) × 2 policies × "
                               "3 replication(s) of 800 jobs</p>")
    assert "<table" in notebook and cell_text(table) <= set(re.sub(r"<[^>]+>", " ", notebook).split(" "))


def cell_text(table: object) -> set[str]:
    """The numbers the table shows (means and half-widths)."""
    out: set[str] = set()
    for cell in table.cells.values():  # type: ignore[attr-defined]
        out.update(part for part in cell.text().split(" ± "))
    return out


def test_render_refuses_a_bad_width_or_layout() -> None:
    table = pivot(seven_loads(), theory=False)
    for options, named in (({"width": -5}, "--width"), ({"width": 2.5}, "--width"),
                           ({"format": "latex", "layout": "tiny"}, "--layout")):
        with pytest.raises(emulator.ScenarioError, match=named):
            render(table, **options)  # type: ignore[arg-type]


def test_a_swept_failure_law_reads_short_and_a_long_row_key_wraps() -> None:
    import doctest

    import analysis.latex
    import analysis.sweep

    assert all(doctest.testmod(module).failed == 0 for module in (analysis.sweep, analysis.latex))
    law = {"up": {"kind": "exponential", "mean": 200}, "down": {"kind": "exponential", "mean": 5}}
    settings = ["None", repr({**law, "on_down": "hold"}), repr({**law, "on_down": "lose"})]  # as summary.csv
    rows = [{"scenario": "laws", "point": 2 * s + i, "policy": policy, "servers": 20, "discipline": "fifo",
             "load": 0.9, "network.loss": loss, "system.failures": setting, "replications": 2,
             "mean_response": 2.0 + loss + s, "mean_response_ci95": 0.1, "messages_per_job": 3.0,
             "messages_per_job_ci95": 0.01}
            for s, setting in enumerate(settings) for i, loss in enumerate((0.0, 0.05)) for policy in ("JSQ", "JIQ")]
    table = pivot(pd.DataFrame(rows), theory=False)
    assert table.row_keys == ["system.failures", "policy"] and len(table.rows) == 6  # hold and lose stay apart
    text = comparison_table(pd.DataFrame(rows), theory=False)
    body = latex(table)
    for shown in (text, body):
        assert "'kind'" not in shown and "no failures" in shown and "loss" in shown
    assert "failures (up 200, down 5), hold" in text
    # The long setting wraps at its commas into lines of at most BREAK; each metric's table then fits.
    assert "failures (up 200, \\\\ \\quad down 5), hold" in body
    lines = [line for r in range(len(table.rows)) for line in _key_lines(table, r)[0]]
    assert max(map(text_width, lines)) <= BREAK < text_width("failures (up 200, down 5), lose")
    parts = split(table, fits)
    assert len(parts) == body.count("\\begin{table}") == 2 and all(map(fits, parts))  # one per metric
