"""The warm-up found by MSER-5 (``run.warmup_jobs: auto``) and intervals from batch means (``run.batch_means``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import emulator
from emulator.errors import ScenarioError
from emulator.experiment.results import mean_ci
from emulator.measure.mser import WIDTH, statistic, suggested_jobs, truncate
from emulator.measure.recorder import METRICS

ROOT = Path(__file__).resolve().parents[1]


def _scenario(run: dict[str, Any], **top: Any) -> emulator.Scenario:
    data: dict[str, Any] = {"seed": 5, "replications": 1, "system": {"servers": 4}, "workload": {"load": 0.9},
                            "policies": [{"name": "jsq"}], **top}
    data["run"] = {"engine": "simpy", **run}
    return emulator.Scenario.from_dict(data)


def _mm1k_response(load: float, capacity: int) -> float:
    """The mean response of the jobs an M/M/1/K queue admits: an arrival that finds k < K jobs stays k + 1 services."""
    p = load ** np.arange(capacity + 1)
    return float((p[:capacity] * np.arange(1, capacity + 1)).sum() / p[:capacity].sum())


# -- MSER-5 itself -------------------------------------------------------------------------------
def test_mser_statistic_is_the_squared_standard_error_of_the_kept_batch_means() -> None:
    means = np.random.default_rng(1).normal(3.0, 2.0, 60)
    direct = [np.sum((means[d:] - means[d:].mean()) ** 2) / (len(means) - d) ** 2 for d in range(len(means))]
    assert np.allclose(statistic(means), direct, rtol=1e-12, atol=1e-15)


def test_mser_cuts_a_transient_that_stands_above_the_noise() -> None:
    rng = np.random.default_rng(2)
    means = np.concatenate([np.full(100, -6.0), rng.normal(0.0, 1.0, 900)])  # 100 batches far below, then noise
    found = truncate(means * WIDTH, np.full(1000, WIDTH))
    assert (found.batch, found.jobs, found.too_short) == (100, 100 * WIDTH, False)


def test_mser_says_a_run_is_too_short_when_its_minimum_lies_in_the_last_half() -> None:
    means = np.linspace(0.0, 10.0, 400) + np.random.default_rng(3).normal(0.0, 0.1, 400)  # still climbing
    found = truncate(means * WIDTH, np.full(400, WIDTH))
    assert found.too_short and found.found > 200 * WIDTH
    assert found.batch <= 200  # what is measured still keeps half of the run
    assert suggested_jobs(found.found) >= 4 * found.found


def test_batches_without_a_served_job_are_left_out() -> None:
    sums, counts = np.array([5.0, 0.0, 50.0, 50.0] + [5.0] * 30), np.array([5, 0, 5, 5] + [5] * 30)
    found = truncate(sums, counts)
    assert found.starts[:3].tolist() == [0, 10, 15]  # batch 1 (jobs 5-9, all blocked) has no mean
    assert found.statistic.size == 33


# -- the rows of warmup_jobs: auto ------------------------------------------------------------------
def test_auto_rows_are_those_of_a_fixed_warmup_at_the_truncation_point() -> None:
    auto = emulator.run(_scenario({"jobs": 3000, "warmup_jobs": "auto"}, replications=2), workers=1).runs
    for _, row in auto.iterrows():
        dropped = int(row["warmup_jobs"])
        fixed = emulator.run(_scenario({"jobs": 3000 - dropped, "warmup_jobs": dropped}, replications=2),
                             workers=1).runs
        same = fixed[fixed["replication"] == row["replication"]].iloc[0]
        assert dropped > 0 and row["jobs"] == 3000 - dropped
        for column in METRICS:
            if column != "wall_seconds":
                assert row[column] == same[column] or (np.isnan(row[column]) and np.isnan(same[column])), column


def test_auto_lands_within_its_interval_of_the_exact_mean_where_a_short_fixed_warmup_does_not() -> None:
    """Random routing to 50 M/M/1/20 queues at load 1.2, started empty: each fills over about 6,000 jobs.

    The exact mean response comes from the M/M/1/K formula (Poisson splitting makes each
    queue one). MSER-5's 95% interval over 10 replications covers it; dropping 1,000 jobs,
    a sixth of the filling, leaves the interval below it (measured: 15.51 +- 0.16 and
    15.32 +- 0.14 against 15.536).
    """
    exact = _mm1k_response(1.2, 20)

    def interval(warmup: Any) -> tuple[float, float]:
        scenario = _scenario({"jobs": 60_000, "warmup_jobs": warmup, "engine": "compiled", "occupancy": False},
                             replications=10, seed=11, system={"servers": 50, "capacity": 20},
                             workload={"load": 1.2}, policies=[{"name": "random"}])
        return mean_ci(emulator.run(scenario, workers=1).runs["mean_response"])

    mean, half = interval("auto")
    assert abs(mean - exact) <= half
    mean, half = interval(1000)
    assert mean + half < exact


def test_a_run_too_short_for_its_warmup_says_so_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    # An overloaded queue never settles: its responses grow to the end, however long the run.
    scenario = _scenario({"jobs": 2000, "warmup_jobs": "auto"}, system={"servers": 1}, workload={"load": 1.3},
                         allow_unstable=True)
    emulator.run(scenario, workers=1)
    lines = [line for line in capsys.readouterr().err.splitlines() if line]
    assert len(lines) == 1 and lines[0].startswith("lbemu: warning: run.jobs: the warm-up MSER-5 finds ends near job")
    assert "try run.jobs:" in lines[0]


# -- batch means ----------------------------------------------------------------------------------
def test_batch_means_intervals_cover_the_mm1_mean_at_about_their_rate() -> None:
    """200 replications of M/M/1 at load 0.5 (mean response 1 / (1 - 0.5) = 2), 20 batches of 1,000 jobs each.

    Measured: 188 of 200 intervals (94%) cover it. Three or more of 200 misses would be
    expected about 99.9% of the time at the nominal 95%, and 24 misses or fewer about 99.9%.
    """
    scenario = _scenario({"jobs": 20_000, "warmup_jobs": 1000, "batch_means": 20, "engine": "compiled",
                          "occupancy": False}, replications=200, seed=7, system={"servers": 1},
                         workload={"load": 0.5}, policies=[{"name": "random"}])
    runs = emulator.run(scenario, workers=1).runs  # one process: the kernel loads once
    covered = int(((runs["mean_response"] - 2.0).abs() <= runs["mean_response_batch_ci95"]).sum())
    assert 176 <= covered <= 197


def test_one_replication_takes_its_interval_from_its_batches_and_more_from_the_replications() -> None:
    one = emulator.run(_scenario({"jobs": 4000, "warmup_jobs": 400, "batch_means": 10}), workers=1)
    assert one.summary["mean_response_ci95"].iloc[0] == one.runs["mean_response_batch_ci95"].iloc[0] > 0
    assert "mean_response_batch_ci95" not in one.summary
    two = emulator.run(_scenario({"jobs": 4000, "warmup_jobs": 400, "batch_means": 10}, replications=2), workers=1)
    assert two.summary["mean_response_ci95"].iloc[0] == mean_ci(two.runs["mean_response"])[1]


@pytest.mark.parametrize(("target", "replications"), [(0.5, 1), (0.01, 2)])
def test_precision_reads_the_batch_interval_of_one_replication(target: float, replications: int) -> None:
    scenario = _scenario({"jobs": 4000, "warmup_jobs": 400, "batch_means": 10},
                         precision={"relative_halfwidth": target, "max_replications": 2})
    results = emulator.run(scenario, workers=1)
    assert results.summary["replications"].iloc[0] == replications


# -- both engines ---------------------------------------------------------------------------------
@pytest.mark.parametrize("system", [{}, {"capacity": 3, "discipline": "pool"}, {"dispatchers": 2}, {"time": "slotted"},
                                    {"time": "slotted", "capacity": 3, "dispatchers": 2, "slot": {"dispatch": "job"}}])
def test_engines_give_identical_rows_with_auto_and_batch_means(system: dict[str, Any]) -> None:
    """Both runs of the warm-up found and the batch means' sums, in continuous and slotted time (blocked jobs
    in no batch): the compiled engine runs them, with SimPy's rows and warm-up figure data."""
    pytest.importorskip("numba")

    def run(engine: str) -> Any:
        scenario = _scenario({"jobs": 3000, "warmup_jobs": "auto", "batch_means": 10, "engine": engine},
                             replications=2, system={"servers": 6, **system}, workload={"load": 0.95},
                             policies=[{"name": "jsq"}, {"name": "jiq"}])
        return emulator.run(scenario, workers=1)

    simpy, compiled = run("simpy"), run("compiled")
    assert set(compiled.runs["engine"]) == {"compiled"}
    columns = [c for c in simpy.runs.columns if c not in ("wall_seconds", "engine")]
    assert simpy.runs[columns].equals(compiled.runs[columns])
    assert simpy.warmup.equals(compiled.warmup)


# -- the figure -----------------------------------------------------------------------------------
def test_warmup_figure_from_results_and_from_a_folder(tmp_path: Path) -> None:
    scenario = _scenario({"jobs": 2000, "warmup_jobs": "auto"}, replications=2,
                         policies=[{"name": "jsq"}, {"name": "random"}])
    results = emulator.run(scenario, workers=1, out=tmp_path)
    assert "warmup" in results.figures()
    figure = results.plot("warmup")
    assert len([ax for ax in figure.get_axes() if ax.get_visible()]) == 4  # two panels per policy
    done = subprocess.run([sys.executable, "-m", "emulator", "plot", str(tmp_path), "--figure", "warmup"],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["warmup.png"]


def test_warmup_figure_without_auto_is_refused_in_one_line() -> None:
    results = emulator.run(_scenario({"jobs": 500, "warmup_jobs": 50}), workers=1)
    with pytest.raises(ScenarioError, match=r"^name: expected a figure these results have data for .*got 'warmup'$"):
        results.plot("warmup")


# -- scenario validation --------------------------------------------------------------------------
@pytest.mark.parametrize(("run", "message"), [
    ({"warmup_jobs": "automatic"}, "run.warmup_jobs: expected an integer >= 0 or 'auto', got 'automatic'"),
    ({"warmup_jobs": -1}, "run.warmup_jobs: expected an integer >= 0 or 'auto', got -1"),
    ({"warmup_jobs": True}, "run.warmup_jobs: expected an integer >= 0 or 'auto', got True"),
    ({"warmup_jobs": 2.5}, "run.warmup_jobs: expected an integer >= 0 or 'auto', got 2.5"),
    ({"warmup_jobs": "auto", "jobs": 99}, "run.jobs: expected at least 100 with warmup_jobs: auto (MSER-5 "
                                          "needs 20 batches of 5), got 99"),
    ({"batch_means": 1}, "run.batch_means: expected a number >= 2, got 1"),
    ({"batch_means": "10"}, "run.batch_means: expected a valid integer, got '10'"),
    ({"jobs": 1000, "batch_means": 51}, "run.batch_means: expected at most run.jobs / 20 = 50"),
])
def test_bad_warmup_and_batch_values_are_refused_in_one_line(run: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError) as error:
        _scenario(run)
    text = str(error.value)
    assert text.startswith(message) and "\n" not in text


def test_auto_and_batch_means_are_accepted_and_sweepable() -> None:
    scenario = _scenario({"jobs": 1000, "warmup_jobs": "auto", "batch_means": 10},
                         sweep={"run.warmup_jobs": ["auto", 100]})
    assert [point.scenario.run.warmup_jobs for point in scenario.points()] == ["auto", 100]
