"""What a run says while it works: stored tasks, the files it wrote, a slow compilation."""

from __future__ import annotations

from pathlib import Path

import pytest

import emulator
from emulator.api import _Clock
from emulator.cli import main

SCENARIO = {
    "name": "words", "seed": 2, "replications": 1, "run": {"jobs": 200, "warmup_jobs": 20, "engine": "simpy"},
    "system": {"servers": 3}, "policies": [{"name": "random"}, {"name": "jsq"}],
    "sweep": {"workload.load": [0.5, 0.7]},
}


def test_a_rerun_with_every_task_stored_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    emulator.run(SCENARIO, workers=1, out=tmp_path)
    capsys.readouterr()
    emulator.run(SCENARIO, workers=1, out=tmp_path, progress=True)
    assert "lbemu: words: all 4 task(s) were stored by an earlier run: nothing to run" in capsys.readouterr().err


def test_a_resumed_run_counts_its_stored_tasks_as_done(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    emulator.run(SCENARIO, workers=1, out=tmp_path)
    capsys.readouterr()
    emulator.run({**SCENARIO, "replications": 2}, workers=1, out=tmp_path, progress=True)
    err = capsys.readouterr().err
    assert "words (4 stored):" in err and "8/8" in err and "0/8" not in err, err


def test_the_wrote_line_names_the_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    path = tmp_path / "words.yaml"
    path.write_text(yaml.safe_dump(SCENARIO))
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--quiet", "--workers", "1"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith(f"wrote {tmp_path / 'out'}/runs.csv") and "store.sqlite" in last, last


def test_a_slow_step_says_how_long_it_took(capsys: pytest.CaptureFixture[str]) -> None:
    clock = _Clock("lbemu: compiling the simulation kernel (...)")
    clock.stop()  # never started (the kernel loaded from the cache): nothing said
    assert capsys.readouterr().err == ""
    clock.start()
    clock.stop()
    assert capsys.readouterr().err.splitlines() == ["lbemu: compiling the simulation kernel (...)",
                                                    "lbemu: compiled in 0 s"]
