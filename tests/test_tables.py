"""Comparison tables: layout, digits from the CI, best-value marks, theory rows, formats, errors."""

from __future__ import annotations

import io
import math
import shutil
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

import emulator
from analysis import theory
from analysis.cells import Cell, decimals, mark_best
from analysis.references import bound, references
from analysis.tables import comparison_table, pivot, render
from emulator.cli import main
from emulator.errors import ScenarioError

# Known values and CIs: (policy, load) -> (mean_response, ci95, messages_per_job, ci95).
KNOWN = {
    ("A", 0.5): (1.0, 0.1, 0.0, 0.0),      # best delay
    ("B", 0.5): (1.15, 0.1, 0.0, 0.0),     # |1.15 - 1.0| = 0.15 <= 0.1 + 0.1: overlaps, marked
    ("C", 0.5): (1.3, 0.1, 4.0, 0.0),      # 0.3 > 0.2: not marked
    ("D", 0.5): (1.25, 0.2, 0.5, 0.1),     # 0.25 <= 0.3: marked
    ("A", 0.9): (3.0, 0.5, 0.0, 0.0),      # 1.0 > 0.6: not marked
    ("B", 0.9): (2.0, 0.1, 0.0, 0.0),      # best delay
    ("C", 0.9): (2.0, math.nan, 4.0, 0.0),  # equal to the best, no CI: marked
    ("D", 0.9): (2.5, 0.3, 0.02, 0.01),    # 0.5 > 0.4: not marked; messages 0.02 +- 0.01 vs 0: not marked
}
MARKED = {("mean_response", 0.5): {"A", "B", "D"}, ("mean_response", 0.9): {"B", "C"},
          ("messages_per_job", 0.5): {"A", "B"}, ("messages_per_job", 0.9): {"A", "B"}}


def known_summary() -> pd.DataFrame:
    rows = []
    for point, load in enumerate((0.5, 0.9)):
        for policy in "ABCD":
            mean, half, messages, mhalf = KNOWN[policy, load]
            rows.append({"scenario": "known", "point": point, "policy": policy, "policy_name": "jsq",
                         "servers": 10, "discipline": "fifo", "load": load, "workload.load": load,
                         "mean_response": mean, "mean_response_ci95": half, "messages_per_job": messages,
                         "messages_per_job_ci95": mhalf, "blocked_fraction": 0.0, "replications": 5})
    return pd.DataFrame(rows)


def marked(table: pd.DataFrame | None = None) -> dict[tuple[str, float], set[str]]:
    summary = known_summary() if table is None else table
    result = pivot(summary, theory=False)
    found: dict[tuple[str, float], set[str]] = {}
    for (r, c), cell in result.cells.items():
        metric, (load,) = result.columns[c]
        if isinstance(cell, Cell) and cell.best:
            found.setdefault((metric, load), set()).add(str(result.rows[r][0]))
    return found


def test_the_marked_cells_are_the_best_and_those_whose_ci_overlaps_it() -> None:
    assert marked() == MARKED


def test_marks_in_every_format() -> None:
    table = pivot(known_summary(), theory=False)
    markdown = render(table, "markdown")
    assert markdown.count("**") == 2 * sum(len(v) for v in MARKED.values())
    line = next(line for line in markdown.splitlines() if line.startswith("| C "))
    assert "**2**" in line and "1.30 ± 0.10 " in line  # C: tie at 0.9, not marked at 0.5
    text = render(table, "text")
    assert text.split("\n\n")[0].count(" *") == sum(len(v) for v in MARKED.values())
    latex = render(table, "latex")
    assert latex.count("\\boldmath") == sum(len(v) for v in MARKED.values())
    frame = pd.read_csv(io.StringIO(render(table, "csv")))
    best = frame.set_index("policy")["mean response load=0.5 best"]
    assert {p for p, flag in best.items() if flag} == MARKED["mean_response", 0.5]
    assert frame.set_index("policy").loc["D", "mean response load=0.5"] == 1.25


def test_higher_is_never_better_and_neutral_metrics_mark_nothing() -> None:
    summary = known_summary()
    summary["sim_time"], summary["sim_time_ci95"] = 100.0, 1.0
    table = pivot(summary, ["sim_time"], theory=False)
    assert not any(cell.best for cell in table.cells.values() if isinstance(cell, Cell))


@pytest.mark.parametrize(("mean", "half", "text"), [
    (2.6141, 0.01234, "2.614 ± 0.012"), (1234.5, 123.0, "1230 ± 120"), (0.5, 0.0995, "0.50 ± 0.10"),
    (10.04, 1.04, "10.0 ± 1.0"), (3.0, 0.0, "3"), (0.7, math.nan, "0.7"), (-0.00004, 0.002, "0.0000 ± 0.0020"),
])
def test_digits_follow_the_ci(mean: float, half: float, text: str) -> None:
    assert Cell(mean, half).text() == text


def test_decimals_keep_two_significant_digits() -> None:
    # 0.0995 -> 0.10, 0.996 -> 1.0, 9.96 -> 10: the carry moves the place.
    assert [decimals(h) for h in (0.01234, 0.0995, 0.996, 9.96, 12.3)] == [3, 2, 1, 0, 0]
    assert [c.best for c in mark_best([Cell(1.0, 0.1), Cell(2.0, 0.1)], 0)] == [False, False]


def test_layout_defaults_and_choices() -> None:
    summary = known_summary()
    table = pivot(summary, theory=False)
    assert table.row_keys == ["policy"] and table.col_keys == ["workload.load"]
    assert [m for m, _ in table.columns] == ["mean_response"] * 2 + ["messages_per_job"] * 2  # side by side
    flipped = pivot(summary, rows=["workload.load"], cols=["policy"], theory=False)
    assert flipped.row_keys == ["workload.load"] and flipped.col_keys == ["policy"]
    assert marked() == MARKED  # the marks do not depend on the layout:
    found = {(m, row[0], str(combo[0])) for (r, c), cell in flipped.cells.items() if isinstance(cell, Cell)
             and cell.best for m, combo in [flipped.columns[c]] for row in [flipped.rows[r]]}
    assert found == {(m, load, p) for (m, load), ps in MARKED.items() for p in ps}
    # Another swept key that varies goes to the rows, outside the policies.
    two = pd.concat([summary.assign(**{"system.servers": 10}), summary.assign(**{"system.servers": 20})])
    two["point"] = range(len(two))
    assert pivot(two, theory=False).row_keys == ["system.servers", "policy"]
    pools = summary.assign(discipline="pool", mean_queue_length=1.0, mean_queue_length_ci95=0.1)
    assert pivot(pools, theory=False).metrics == ["blocked_fraction", "mean_queue_length", "messages_per_job"]


def test_bad_keys_metrics_and_cells_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary = known_summary()
    for options, named in (({"metrics": ["policy"]}, "--metric: expected a numeric column"),
                           ({"metrics": ["bogus"]}, "bogus"), ({"rows": ["bogus"]}, "--rows"),
                           ({"rows": ["policy"], "cols": ["policy"]}, "policy"), ({"diff": True}, "--diff")):
        with pytest.raises(ScenarioError, match=named):
            pivot(summary, **options)  # type: ignore[arg-type]
    broken = summary.astype({"mean_response": object})
    broken.loc[3, "mean_response"] = "fast"
    broken.to_csv(tmp_path / "summary.csv", index=False)
    for argv in (["table", str(tmp_path)], ["table", str(tmp_path), "--metric", "policy"],
                 ["table", str(tmp_path), "--rows", "nope"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err, err
    assert main(["table", str(tmp_path), "--metric", "messages_per_job"]) == 0  # the other columns still work


def point(**changes: object) -> emulator.scenario.sweep.Point:
    data: dict[str, object] = {"system": {"servers": 10}, "workload": {"load": 0.9},
                               "policies": [{"name": "random"}, {"name": "sqd", "d": 2}, {"name": "jiq", "memory": 1},
                                            {"name": "threshold", "d": 2, "threshold": 2}, {"name": "jsq"}]}
    for key, value in changes.items():
        section, _, field = key.partition("__")
        data.setdefault(section, {})[field] = value  # type: ignore[index]
    return emulator.Scenario.from_dict(data).points()[0]


def refs(p: emulator.scenario.sweep.Point) -> dict[str, dict[str, float]]:
    return {policy.label: {m: r.value for m, r in references(p, policy).items()} for policy in p.policies}


def test_theory_where_its_assumptions_hold() -> None:
    found = refs(point())
    assert found["Random"]["mean_response"] == pytest.approx(10.0)
    assert found["SQ(2)"]["mean_response"] == pytest.approx(theory.sqd_response(0.9, 2))
    assert found["JIQ(A=1)"]["mean_response"] == pytest.approx(0.1 ** -0.5)
    assert found["JIQ(A=1)"]["messages_per_job"] == pytest.approx(0.1 ** 0.5)
    assert found["Thr(2,2)"]["mean_response"] == pytest.approx(3.4931, abs=1e-4)  # the threshold scenario's table
    assert found["SQ(2)"]["mean_queue_length"] == pytest.approx(0.9 * theory.sqd_response(0.9, 2))  # Little
    assert found["JSQ"] == {}
    label, values = bound(point()) or ("", {})
    assert "Erlang C" in label and values["mean_response"] == pytest.approx(theory.mmn_response(10, 0.9))
    # Service law: M/D/1 for random routing; no mean field and no Erlang C bound.
    deterministic = point(workload__service={"kind": "deterministic", "mean": 2.0})
    assert refs(deterministic) == {"Random": {"mean_response": pytest.approx(2 * 5.5),
                                              "mean_queue_length": pytest.approx(0.9 * 5.5)},
                                   "SQ(2)": {}, "JIQ(A=1)": {}, "Thr(2,2)": {}, "JSQ": {}}
    assert bound(deterministic) is None
    # Latency, several dispatchers, bursty arrivals, unequal speeds each take theory away.
    latency = point(network__latency={"kind": "exponential", "mean": 0.1})
    assert all(v == {} for v in refs(latency).values()) and bound(latency) == bound(point())  # a bound still
    assert refs(point(system__dispatchers=2))["JIQ(A=1)"] == {} and refs(point(system__dispatchers=2))["SQ(2)"]
    assert all(v == {} for v in refs(point(workload__arrivals={"kind": "mmpp2"})).values())
    assert all(v == {} for v in refs(point(system__speeds=[1.0] * 9 + [2.0])).values())
    # Pools with a capacity: Erlang B (exact) for random routing, the JSQ fluid limit, the N*B bound.
    pools = point(system__discipline="pool", system__capacity=3, workload__load=2.5)
    found = refs(pools)
    assert found["Random"]["blocked_fraction"] == pytest.approx(theory.erlang_b(3, 2.5))
    assert found["JSQ"]["blocked_fraction"] == 0.0 and found["JSQ"]["mean_queue_length"] == pytest.approx(2.5)
    assert found["SQ(2)"]["blocked_fraction"] == pytest.approx(0.14828, abs=1e-5)  # pools_mukherjee's header
    assert bound(pools) == ("Erlang B of N·B slots, lower bound", {"blocked_fraction": theory.erlang_b(30, 25.0)})


def recursion(servers: int, offered: float) -> float:
    """Erlang B by the full recursion, every step: the reference the early stop must match."""
    b = 1.0
    for k in range(1, servers + 1):
        b = offered * b / (k + offered * b)
    return b


@pytest.mark.parametrize("servers, offered", [(0, 2.0), (1, 0.5), (3, 2.5), (10, 9.0), (30, 25.0), (5, 50.0),
                                              (200, 2.5), (2000, 50.0), (5000, 1000.0), (4, 0.0)])
def test_erlang_b_is_the_full_recursion(servers: int, offered: float) -> None:
    assert theory.erlang_b(servers, offered) == recursion(servers, offered)


def test_theory_for_a_huge_capacity_costs_what_a_small_one_does() -> None:
    # 10^9 steps of the recursion (or an ODE with 10^9 levels) took minutes: now what 10^3 take.
    started = time.perf_counter()
    assert theory.erlang_b(10**12, 50.0) == 0.0 and theory.erlang_b(10**10, 1e5) == 0.0
    assert theory.pool_blocking(5.0, 10**9, d=2) == 0.0 == theory.pool_blocking(5.0, 40, d=2)
    pools = point(system__discipline="pool", system__capacity=10**9, workload__load=5.0)
    found = refs(pools)
    assert found["Random"]["blocked_fraction"] == 0.0 and found["SQ(2)"]["blocked_fraction"] == 0.0
    assert bound(pools) == ("Erlang B of N·B slots, lower bound", {"blocked_fraction": 0.0})
    capped, free = theory.jsqd_pool_tail(5.0, 2, capacity=10**9), theory.jsqd_pool_tail(5.0, 2)
    assert len(capped) == len(free) and abs(capped - free).max() < 1e-12  # the occupancy figure's curve
    assert time.perf_counter() - started < 5


def test_theory_rows_sit_under_their_policy() -> None:
    scenario = emulator.Scenario.from_dict({"name": "tiny", "system": {"servers": 10},
                                            "policies": [{"name": "random"}, {"name": "jsq"}],
                                            "sweep": {"workload.load": [0.5, 0.9]}})
    summary = known_summary()
    summary = summary[summary.policy.isin(["A", "B"])].replace({"policy": {"A": "Random", "B": "JSQ"}})
    table = pivot(summary, scenario=scenario)
    names = [str(row[0]) for row in table.rows]
    assert names == ["Random", "Random: M/M/1, exact", "JSQ", "M/M/N (Erlang C), lower bound"]
    text = render(table, "text")
    # M/M/1: 1/(1-λ) = 2 and 10 exactly, with the theory's own digits, not the measured value's
    # beside it (1.00 ± 0.10 and 3.00 ± 0.50).
    assert text.splitlines()[4].split()[-2:] == ["2", "10"]
    assert "theory" not in "".join(str(v) for v in pivot(summary, scenario=scenario, theory=False).rows)
    across = pivot(summary, scenario=scenario, rows=["workload.load"], cols=["policy"])
    assert [str(combo[0]) for metric, combo in across.columns if metric == "mean_response"] == names


def test_latex_compiles(tmp_path: Path) -> None:
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed (Debian: texlive-latex-recommended; .ci/run installs it)")
    summary = known_summary().replace({"policy": {"D": "JSQ(√N log N) & 50%_x"}})
    body = comparison_table(summary, format="latex")
    document = ("\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n" + body
                + "\\end{document}\n")
    (tmp_path / "table.tex").write_text(document)
    result = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "table.tex"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-2000:]
    pdf = (tmp_path / "table.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and len(pdf) > 1000
    assert "Output written on table.pdf (1 page" in result.stdout
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", "-layout", "table.pdf", "-"], cwd=tmp_path, capture_output=True,
                              text=True, timeout=60).stdout
        assert text.count("\f") == 1  # one page
        assert "1.15 ± 0.10" in text and "JSQ(" in text and "5 replications" in text and "Table 1" in text


def test_latex_rows_may_start_with_a_bracket(tmp_path: Path) -> None:
    # A swept list (dispatcher_shares) as the outer row key starts a row with "[": after \\, \midrule
    # or \addlinespace, LaTeX reads that as their optional argument and stops ("Illegal unit").
    first, second = known_summary(), known_summary()
    first["system.dispatcher_shares"], second["system.dispatcher_shares"] = "[0.5, 0.5]", "[0.8, 0.2]"
    second["point"] += 2
    body = comparison_table(pd.concat([first, second], ignore_index=True), format="latex")
    assert "{[}0.5, 0.5{]} & A" in body and not any(line.startswith("[") for line in body.splitlines())
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed (Debian: texlive-latex-recommended; .ci/run installs it)")
    (tmp_path / "table.tex").write_text("\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
                                        + body + "\\end{document}\n")
    result = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "table.tex"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-2000:]


def test_cli_table_on_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = emulator.Scenario.from_dict({
        "name": "pair", "seed": 3, "replications": 2, "run": {"jobs": 600, "warmup_jobs": 100},
        "system": {"servers": 6}, "policies": [{"name": "random"}, {"name": "sqd", "d": 2}],
        "compare_to": "Random"})
    results = emulator.run(scenario, workers=1, out=tmp_path)
    assert "Random: M/M/1, exact" in results.table()  # what lbemu run prints: the pivot with theory
    assert main(["table", str(tmp_path), "--diff", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "Δ mean response vs Random" in out and "M/M/1" not in out
    for fmt in ("text", "markdown", "csv", "latex", "html"):
        assert main(["table", str(tmp_path), "--format", fmt, "--cols", "policy"]) == 0
        assert "SQ(2)" in capsys.readouterr().out


def test_no_continuous_theory_in_slotted_time(tmp_path: Path) -> None:
    # Slotted queues are neither M/M/1 queues nor mean-field limits: only the slotted queue of
    # random routing is exact there. Its arrivals per server are Poisson(λ) when each job is
    # dispatched on its own, and a Poisson(λN) batch with probability 1/N when a slot's arrivals
    # are routed together (the default); when service starts in the next slot, every job stays
    # one slot longer. With Poisson capacity the reference is the chain, where it is small.
    one_per_slot = {"kind": "deterministic", "mean": 1}
    constant = refs(point(system__time="slotted", workload__service=one_per_slot))
    assert constant.pop("Random") == {"mean_response": pytest.approx(1 + 0.9 * 10 / 0.2),
                                      "mean_queue_length": pytest.approx(0.9 * 46)}
    assert all(v == {} for v in constant.values())
    one_by_one = {"dispatch": "job"}
    alone = refs(point(system__time="slotted", system__slot=one_by_one, workload__service=one_per_slot))
    assert alone["Random"]["mean_response"] == pytest.approx(theory.slotted_md1_response(0.9)) == 5.5
    later = refs(point(system__time="slotted", system__slot={**one_by_one, "same_slot": False},
                       workload__service=one_per_slot))
    assert later["Random"]["mean_response"] == pytest.approx(6.5)
    poisson_alone = refs(point(system__time="slotted", system__slot=one_by_one))
    assert poisson_alone.pop("Random")["mean_response"] == pytest.approx(
        theory.slotted_queue(0.9, capacity="poisson")["mean_response"])
    assert all(v == {} for v in poisson_alone.values())
    poisson_capacity = point(system__time="slotted")  # batches of 9 per slot: a chain too large here
    too_large = refs(poisson_capacity)
    omitted = too_large.pop("Random")  # left out, the reason in the caption (tests/test_theory_budget.py)
    assert set(omitted) == {"mean_response", "mean_queue_length"} and all(map(math.isnan, omitted.values()))
    assert all(v == {} for v in too_large.values()) and bound(poisson_capacity) is None
    # Nor a mean-field tail beside the measured occupancy.
    from analysis.occupancy import policies_of, theory_tail
    from emulator.experiment.output import write_scenario

    write_scenario(tmp_path, poisson_capacity.scenario)
    assert [theory_tail(info) for info in policies_of(tmp_path).values()] == [None] * 5


def test_a_swept_discipline_marks_queue_lengths_of_servers_only() -> None:
    """The queue length of FIFO servers is better lower; a pool's occupancy has no better side."""
    rows = [{"scenario": "t", "point": int(pool), "policy": policy, "policy_name": "random", "servers": 10,
             "dispatchers": 1, "discipline": disc, "load": 0.5, "system.discipline": disc,
             "mean_queue_length": mean, "mean_queue_length_ci95": 0.01, "replications": 3}
            for pool, disc in enumerate(("fifo", "pool")) for policy, mean in (("A", 1.0), ("B", 2.0))]
    summary = pd.DataFrame(rows)
    text = comparison_table(summary, metrics=["mean_queue_length"], theory=False)
    assert text.count("*") == 2  # A's FIFO cell, and the legend
    assert "*" not in comparison_table(summary[summary["discipline"] == "pool"],
                                       metrics=["mean_queue_length"], theory=False)
