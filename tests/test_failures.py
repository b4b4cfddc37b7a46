"""Runs that meet trouble outside the scenario: one line on stderr, the right exit status, nothing lost.

Bad results folders and unwritable outputs are bad input (exit 2); a failure
that is not (a killed worker, a disk that fills up during the run) exits 1.
Either way the finished tasks stay in the store and the same command resumes.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
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


def test_a_store_that_fails_during_the_run_is_one_line(
        spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from emulator.experiment.store import Store

    finished = Store.finished

    def then_lost(self: Store) -> dict:  # type: ignore[type-arg]
        rows = finished(self)
        self.db.close()  # as if the file went away: the first put fails
        return rows

    monkeypatch.setattr(Store, "finished", then_lost)
    out = tmp_path / "out"
    code = main(["run", str(spec), "--out", str(out), "--workers", "1", "--quiet"])
    one_line(code, 1, capsys.readouterr().err, f"cannot store a finished task in '{out / 'store.sqlite'}'")


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


# -- worker processes -----------------------------------------------------------------------
# Real processes, signals and a results folder, as a user meets them. Point 0 has short tasks,
# point 1 long ones, so that the first stored task marks a moment when the pool is busy. The tests
# wait for states (tasks stored, workers started), never for a time: their timeouts only guard
# against a hang, and are far longer than anything needs on a loaded machine.
PYTHON = [sys.executable, "-m", "emulator"]
HANG = 300  # seconds: a hang guard, not a deadline
ENDLESS = 10**9  # jobs: a task no test could wait for (hours), so that only a stop ends it


def workers_scenario(folder: Path, long_jobs: int, replications: int) -> Path:
    path = folder / "w.yaml"
    # SimPy: the long tasks must still be running when a test interrupts them (compiled, 5M jobs take a second).
    path.write_text(f"name: workers\nseed: 5\nreplications: {replications}\n"
                    "run: {jobs: 1000, warmup_jobs: 100, engine: simpy}\nsystem: {servers: 4}\n"
                    "policies: [{name: jsq}]\n"
                    f"sweep: {{run.jobs: [1000, {long_jobs}]}}\n")
    return path


def start(spec: Path, out: Path, workers: int) -> subprocess.Popen[str]:
    # Ctrl-C as a terminal delivers it: a suite started in the background (`pytest &`) ignores SIGINT, and its
    # children would inherit that and never see the Ctrl-C the tests send.
    return subprocess.Popen([*PYTHON, "run", str(spec), "--out", str(out), "--workers", str(workers), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=_ctrl_c_as_in_a_terminal)


def _ctrl_c_as_in_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for_stored(out: Path, process: subprocess.Popen[str], at_least: int = 1) -> None:
    deadline = time.monotonic() + HANG
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if stored(out) >= at_least:
                return
        except sqlite3.Error:  # not created yet
            pass
        time.sleep(0.05)
    raise AssertionError(f"no task was stored (exit status {process.poll()})")


def wait_for_workers(process: subprocess.Popen[str], count: int) -> list[int]:
    """The parent's ``count`` worker processes, once each has started (ignores Ctrl-C: its initializer ran)."""
    deadline = time.monotonic() + HANG
    while time.monotonic() < deadline and process.poll() is None:
        workers = [pid for pid in children(process.pid) if ignores_ctrl_c(pid)]  # not a helper process
        if len(workers) == count:
            return workers
        time.sleep(0.05)
    raise AssertionError(f"the workers did not start (exit status {process.poll()})")


def ignores_ctrl_c(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    ignored = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigIgn:")), 16)
    return bool(ignored >> (signal.SIGINT - 1) & 1)


def children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def rows_of(out: Path) -> dict[tuple[int, str, int], str]:
    db = sqlite3.connect(out / "store.sqlite")
    try:
        return {(p, label, r): row for p, label, r, row in db.execute(
            "SELECT point, policy, replication, row FROM tasks WHERE error IS NULL")}
    finally:
        db.close()


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds worker processes in /proc")


@needs_proc
@pytest.mark.slow
def test_a_killed_worker_is_one_line_and_a_rerun_resumes(tmp_path: Path) -> None:
    spec, out = workers_scenario(tmp_path, long_jobs=40_000, replications=3), tmp_path / "out"
    process = start(spec, out, workers=2)
    wait_for_stored(out, process)
    os.kill(children(process.pid)[0], signal.SIGKILL)  # as the out-of-memory killer would
    _, stderr = process.communicate(timeout=HANG)
    one_line(process.returncode, 1, stderr, "a worker process died")
    assert "did not finish; the finished tasks are stored in" in stderr
    before = rows_of(out)
    assert 1 <= len(before) < 6
    again = subprocess.run([*PYTHON, "run", str(spec), "--out", str(out), "--workers", "2", "--quiet"],
                           capture_output=True, text=True, timeout=HANG)
    assert again.returncode == 0, again.stderr
    after = rows_of(out)
    assert len(after) == 6 and all(after[key] == row for key, row in before.items())  # resumed, not redone
    assert len(pd.read_csv(out / "runs.csv")) == 6


@needs_proc
@pytest.mark.slow
def test_ctrl_c_with_workers_is_one_line_and_keeps_the_finished_tasks(tmp_path: Path) -> None:
    # 2 short and 2 endless tasks on 4 workers: after the short ones, two workers are idle and two
    # run for hours, so the run ends only if Ctrl-C stops them. Ctrl-C reaches the whole process
    # group, as in a terminal.
    spec, out = workers_scenario(tmp_path, long_jobs=ENDLESS, replications=2), tmp_path / "out"
    process = start(spec, out, workers=4)
    workers = wait_for_workers(process, 4)
    wait_for_stored(out, process, at_least=2)
    finished = rows_of(out)
    os.killpg(process.pid, signal.SIGINT)
    try:
        _, stderr = process.communicate(timeout=HANG)  # the endless tasks are stopped, not awaited
    finally:
        kill_all([process.pid, *workers])
    assert process.returncode == 130
    assert stderr.strip().splitlines() == [
        f"lbemu: interrupted; finished tasks are stored in {out}: run the same command to resume"], stderr
    assert rows_of(out) == finished
    assert not [pid for pid in workers if alive(pid)]


@needs_proc
@pytest.mark.slow
def test_workers_end_when_their_parent_is_killed(tmp_path: Path) -> None:
    spec, out = workers_scenario(tmp_path, long_jobs=ENDLESS, replications=1), tmp_path / "out"
    process = start(spec, out, workers=2)
    workers = wait_for_workers(process, 2)
    wait_for_stored(out, process)
    os.kill(process.pid, signal.SIGKILL)  # only the parent
    process.wait()
    deadline = time.monotonic() + HANG  # the watchdog looks every second
    while time.monotonic() < deadline and any(alive(pid) for pid in workers):
        time.sleep(0.1)
    left = [pid for pid in workers if alive(pid)]
    kill_all(left)  # do not leave them behind if the test fails
    assert not left


def kill_all(pids: list[int]) -> None:
    """End what a failed test would leave behind (each by its own id)."""
    for pid in pids:
        if alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
