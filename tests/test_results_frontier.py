"""The delay/messages frontier: which policies no other beats on both, and the cheapest within a margin."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import emulator
from analysis.frontier import frontier, frontier_table, margin
from analysis.render import render
from emulator.cli import main

# (label, registry name, messages per job, mean response), at two loads. At 0.5 B beats C on both
# (1 < 2 messages, 1.5 < 2 delay), and A, B and D each win on one side: the front is A, B, D. At 0.9
# B beats both C (1 < 2, 2.0 < 2.5) and D (1 < 4, 2.0 < 2.2): the front is A, B.
POINTS = {
    0.5: [("A", "random", 0.0, 3.0), ("B", "jiq", 1.0, 1.5), ("C", "sqd", 2.0, 2.0), ("D", "jsq", 4.0, 1.0)],
    0.9: [("A", "random", 0.0, 9.0), ("B", "jiq", 1.0, 2.0), ("C", "sqd", 2.0, 2.5), ("D", "jsq", 4.0, 2.2)],
}


def _summary() -> pd.DataFrame:
    rows = []
    for point, (load, policies) in enumerate(POINTS.items()):
        for label, name, messages, delay in policies:
            rows.append({"scenario": "front", "point": point, "policy": label, "policy_name": name, "servers": 10,
                         "workload.load": load, "load": load, "messages_per_job": messages,
                         "messages_per_job_ci95": 0.0, "mean_response": delay, "mean_response_ci95": 0.01,
                         "replications": 3})
    return pd.DataFrame(rows)


def _front(frame: pd.DataFrame, load: float, column: str = "front") -> list[str]:
    return list(frame[(frame["workload.load"] == load) & frame[column]]["policy"])


def test_the_front_holds_the_policies_no_other_beats_on_both() -> None:
    frame = frontier(_summary())
    assert _front(frame, 0.5) == ["A", "B", "D"]
    assert _front(frame, 0.9) == ["A", "B"]


def test_the_margin_picks_the_fewest_messages_within_it_of_the_best_delay() -> None:
    assert _front(frontier(_summary(), within=0.1), 0.5, "chosen") == ["D"]  # only D is within 1.1 x 1.0
    assert _front(frontier(_summary(), within=0.6), 0.5, "chosen") == ["B"]  # 1.5 <= 1.6, with 1 message
    assert _front(frontier(_summary(), within=0.0), 0.9, "chosen") == ["B"]  # B has the best delay itself


def test_a_reference_is_found_by_its_name_whatever_its_label() -> None:
    summary = _summary()
    summary.loc[summary["policy_name"] == "jsq", "policy"] = "JSQ (all N)"
    frame = frontier(summary, within=0.1, reference="jsq")
    at = frame[frame["workload.load"] == 0.9].set_index("policy")
    assert at.loc["JSQ (all N)", "ratio"] == 1.0 and at.loc["B", "ratio"] == pytest.approx(2.0 / 2.2)
    assert _front(frame, 0.9, "chosen") == ["B"]  # 2.0 <= 1.1 x 2.2, one message


def test_a_reference_missing_at_a_point_is_refused_in_one_line() -> None:
    summary = _summary()
    summary = summary[~((summary["policy_name"] == "jsq") & (summary["workload.load"] == 0.9))]
    with pytest.raises(emulator.ScenarioError) as info:
        frontier(summary, within=0.1, reference="jsq")
    assert str(info.value) == ("policies: expected jsq among the policies at every sweep point, the margin is "
                               "against it, got none at workload.load=0.9")


@pytest.mark.parametrize(("text", "value"), [("10%", 0.1), ("0.25", 0.25), ("0", 0.0)])
def test_a_margin_reads_as_a_percentage_or_a_fraction(text: str, value: float) -> None:
    assert margin(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["ten", "-5%", "inf", "%"])
def test_a_bad_margin_is_refused(text: str) -> None:
    with pytest.raises(emulator.ScenarioError, match=r"^--within: expected a margin such as 10% or 0\.1"):
        margin(text)


def test_the_table_lists_the_front_by_messages_and_marks_the_choice() -> None:
    text = render(frontier_table(_summary(), within=0.6), "markdown")
    lines = [line.split("|")[1:3] for line in text.splitlines() if line.startswith("| 0") or line.startswith("|  ")]
    assert [(k.strip(), p.strip()) for k, p in lines] == [("0.5", "A"), ("", "B"), ("", "D"), ("0.9", "A"), ("", "B")]
    assert "**1.500 ± 0.010**" in text and "within 60% of the lowest" in text


def test_the_frontier_from_the_shell_and_from_python(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = {"name": "shell", "seed": 4, "replications": 2, "run": {"jobs": 300, "warmup_jobs": 30,
                "engine": "simpy"}, "system": {"servers": 4},
                "policies": [{"name": "random"}, {"name": "jsq"}, {"name": "sqd", "d": 2}]}
    results = emulator.run(scenario, workers=1, out=tmp_path)
    assert main(["frontier", str(tmp_path), "--within", "10%", "--reference", "jsq"]) == 0
    printed = capsys.readouterr().out
    assert printed.rstrip("\n") == results.frontier(within="10%", reference="jsq")
    assert "within 10% of jsq's" in printed
    assert main(["frontier", str(tmp_path), "--y", "p99_respons"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("lbemu: error: --y: expected a metric column, got 'p99_respons' (did you mean "
                          "'p99_response'?)")
    assert len(err.splitlines()) == 1
