"""The sparse-feedback analysis: which policies are within 10% of JSQ's mean wait, and the cheapest of them."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from analysis.sparse_feedback import _write, figure, frontier


def _summary() -> pd.DataFrame:
    rows = []
    # (policy label, name, mean wait, its CI, messages per job), at two points
    for point, servers in enumerate((100, 1000)):
        for label, name, wait, ci, messages in [
                ("JSQ", "jsq", 1.0, 0.01, 2.0 * servers), ("JSQ-push", "jsq_push", 1.0, 0.01, 2.0),
                ("JIQ", "jiq", 1.05, 0.01, 0.9), ("SQ(2)", "sqd", 1.5, 0.01, 4.0),
                ("Random", "random", 1.12, 0.2, 0.0)]:
            rows.append({"scenario": "sparse", "point": point, "servers": servers, "system.servers": servers,
                         "load": 0.9, "policy": label, "policy_name": name, "mean_wait": wait,
                         "mean_wait_ci95": ci, "messages_per_job": messages, "messages_per_job_ci95": 0.0})
    return pd.DataFrame(rows)


def test_the_cheapest_policy_within_ten_percent_is_marked_per_point(tmp_path: Path) -> None:
    table = frontier(_summary())
    assert len(table) == 10
    assert list(table[table["chosen"]]["policy"]) == ["JIQ", "JIQ"]  # 1.05 <= 1.1; Random's 1.12 is not
    by_policy = table[table["system.servers"] == 100].set_index("policy")
    assert list(by_policy["within"]) == [True, True, True, False, False]
    text = _write(_summary(), tmp_path / "f.png")
    rows = [[cell.strip() for cell in line.split("|")[1:-1]] for line in text.splitlines()[2:] if line.startswith("|")]
    assert rows[0][:2] == ["100", "Random"] and rows[1] == ["", "JIQ", "**0.9**", "**1.050 ± 0.010**", "1.05"]
    assert figure(table, tmp_path / "g.png").exists()


def test_importing_it_leaves_the_matplotlib_backend_alone() -> None:
    import subprocess

    # pyplot chooses and fixes a backend when imported: a library module must leave that to its user.
    code = ("import sys, analysis.sparse_feedback; "
            "sys.exit(0 if 'matplotlib.pyplot' not in sys.modules else 1)")
    assert subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).parents[1]).returncode == 0
