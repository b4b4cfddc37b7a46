"""Runs that meet trouble outside the scenario: one line on stderr, the right exit status, nothing lost.

Bad results folders and unwritable outputs are bad input (exit 2); a failure
that is not (a killed worker, a disk that fills up during the run) exits 1.
Either way the finished tasks stay in the store and the same command resumes.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from emulator.cli import main

SCENARIO = ("name: failures\nseed: 3\nreplications: 2\nrun: {jobs: 1000, warmup_jobs: 100}\n"
            "system: {servers: 4}\npolicies: [{name: random}, {name: jsq}]\n")


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    return path


def one_line(code: int, expected: int, stderr: str, named: str) -> None:
    assert code == expected, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lbemu: error: ") and named in lines[0], stderr


def stored(out: Path) -> int:
    db = sqlite3.connect(out / "store.sqlite")
    try:
        return int(db.execute("SELECT COUNT(*) FROM tasks WHERE error IS NULL").fetchone()[0])
    finally:
        db.close()


@pytest.mark.parametrize("name", ["runs.csv", "summary.csv", "scenario.yaml"])
def test_an_output_file_that_cannot_be_written_is_refused_before_the_run(
        spec: Path, tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    (out / name).mkdir(parents=True)  # a folder where the file goes: unwritable even for root
    code = main(["run", str(spec), "--out", str(out), "--workers", "1", "--quiet"])
    captured = capsys.readouterr()
    one_line(code, 2, captured.err, f"cannot write '{out / name}' (Is a directory)")
    assert captured.out == "" and stored(out) == 0  # refused before any task ran


def test_a_write_failing_at_the_end_exits_1_and_keeps_the_results(
        spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    to_csv = pd.DataFrame.to_csv

    def full(self: pd.DataFrame, path: object = None, *args: object, **kwargs: object) -> object:
        if str(path).endswith("summary.csv"):
            raise OSError(28, "No space left on device")
        return to_csv(self, path, *args, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_csv", full)
    code = main(["run", str(spec), "--out", str(out), "--workers", "1", "--quiet"])
    one_line(code, 1, capsys.readouterr().err, f"cannot write '{out / 'summary.csv'}' (No space left on device)")
    assert stored(out) == 4
    runs = pd.read_csv(out / "runs.csv")
    monkeypatch.undo()
    assert main(["run", str(spec), "--out", str(out), "--workers", "1", "--quiet"]) == 0
    # The rerun wrote the files from the store: nothing was recomputed.
    pd.testing.assert_frame_equal(pd.read_csv(out / "runs.csv"), runs)
    assert (out / "summary.csv").is_file()


def test_plot_into_a_folder_it_cannot_write(spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["run", str(spec), "--out", str(out), "--workers", "1", "--quiet"]) == 0
    (out / "response.png").mkdir()
    capsys.readouterr()
    code = main(["plot", str(out)])
    one_line(code, 2, capsys.readouterr().err, f"cannot write '{out / 'response.png'}' (Is a directory)")


@pytest.mark.parametrize(("options", "named"), [
    (["--set", "policies.1.name=sqd", "--set", "policies.1.d=5"], "policies.1.d"),  # checked per point: d > N
    (["--workers", "0"], "--workers"),
])
def test_no_results_folder_before_validation(spec: Path, tmp_path: Path, options: list[str], named: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code = main(["run", str(spec), "--out", str(out), "--quiet", *options])
    one_line(code, 2, capsys.readouterr().err, named)
    assert not out.exists()
