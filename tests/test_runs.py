"""Sweeps, paired comparisons, precision targets, parallel and Dask runs, the resumable store."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from scipy import stats

import emulator
from emulator import Scenario, ScenarioError

SMALL = {
    "name": "small",
    "seed": 11,
    "replications": 3,
    "run": {"jobs": 3000, "warmup_jobs": 300},
    "system": {"servers": 8},
    "policies": [{"name": "random"}, {"name": "sqd", "d": 2}, {"name": "jsq"}],
    "sweep": {"workload.load": [0.5, 0.8]},
}


def _runs(folder: Path) -> pd.DataFrame:
    return pd.read_csv(folder / "runs.csv").drop(columns="wall_seconds")


def test_zip_moves_keys_together_and_expressions_resolve() -> None:
    scenario = Scenario.from_dict({
        "policies": [{"name": "sqd", "d": 2}, {"name": "sqd", "d": "ceil(sqrt(N) * log(N))", "label": "JSQ(d(N))"}],
        "zip": [{"system.servers": [100, 1000], "policies.0.d": [3, 4]}],
        "sweep": {"workload.load": ["1 - N**-0.5"]},
    })
    points = scenario.points()
    assert [(p.servers, p.policies[0].d, p.policies[1].d) for p in points] == [
        (100, 3, 47), (1000, 4, 219)]  # ceil(10 * 4.605) = 47, ceil(31.62 * 6.908) = 219
    assert [p.load for p in points] == pytest.approx([0.9, 1 - 1000**-0.5])


def test_swept_keys_become_columns() -> None:
    results = emulator.run(Scenario.from_dict({**SMALL, "replications": 2}), workers=1)
    assert "workload.load" in results.runs.columns and "workload.load" in results.summary.columns
    assert sorted(results.summary["workload.load"].unique()) == [0.5, 0.8]
    assert len(results.runs) == 2 * 3 * 2


def test_workers_give_identical_runs(tmp_path: Path) -> None:
    scenario = Scenario.from_dict(SMALL)
    emulator.run(scenario, workers=1, out=tmp_path / "one")
    emulator.run(scenario, workers=2, out=tmp_path / "two")
    pd.testing.assert_frame_equal(_runs(tmp_path / "one"), _runs(tmp_path / "two"))


def test_dask_local_cluster_gives_identical_runs(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    scenario = Scenario.from_dict({**SMALL, "replications": 2})
    emulator.run(scenario, workers=1, out=tmp_path / "local")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        emulator.run(scenario, executor=client.get_executor(), out=tmp_path / "dask")
    pd.testing.assert_frame_equal(_runs(tmp_path / "local"), _runs(tmp_path / "dask"))


def test_paired_differences_are_tighter_than_unpaired() -> None:
    scenario = Scenario.from_dict({**SMALL, "replications": 6, "compare_to": "Random",
                                   "sweep": {"workload.load": [0.8]}})
    results = emulator.run(scenario, workers=1)
    summary, runs = results.summary.set_index("policy"), results.runs
    base = summary.loc["Random"]
    assert base["mean_response_diff"] == 0.0 and base["mean_response_diff_ci95"] == 0.0  # itself
    random = runs[runs.policy == "Random"].set_index("replication")
    for label in ("SQ(2)", "JSQ"):
        row = summary.loc[label]
        # The paired interval recomputed from runs.csv: replication r against replication r.
        other = runs[runs.policy == label].set_index("replication")
        for metric in ("mean_response", "p99_response", "messages_per_job"):
            diffs = (other[metric] - random[metric]).to_numpy()
            assert len(diffs) == 6
            half = stats.t.ppf(0.975, 5) * diffs.std(ddof=1) / 6**0.5
            assert row[f"{metric}_diff"] == pytest.approx(diffs.mean(), rel=1e-9, abs=1e-12)
            assert row[f"{metric}_diff_ci95"] == pytest.approx(half, rel=1e-9, abs=1e-12)
        # Same jobs for both policies: the noise cancels in the pairs, so the paired CI is
        # narrower than the independent-samples bound sqrt(ci_a^2 + ci_b^2).
        unpaired = (row["mean_response_ci95"] ** 2 + base["mean_response_ci95"] ** 2) ** 0.5
        assert row["mean_response_diff_ci95"] < unpaired
        assert row["messages_per_job_diff"] == pytest.approx(row["messages_per_job"])


def test_precision_target_adds_replications_until_met() -> None:
    scenario = Scenario.from_dict({
        **SMALL, "replications": 2, "sweep": {}, "policies": [{"name": "sqd", "d": 2}],
        "precision": {"metric": "mean_response", "relative_halfwidth": 0.03, "max_replications": 12}})
    results = emulator.run(scenario, workers=1)
    row = results.summary.iloc[0]
    values = results.runs["mean_response"].to_numpy()

    def relative_half(x):  # type: ignore[no-untyped-def]
        return stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / len(x) ** 0.5 / abs(x.mean())

    # Recomputed from runs.csv: it stopped adding replications once the target was met, or at 12.
    r = int(row["replications"])
    assert r == len(values) and r > 2
    met = relative_half(values) <= 0.03
    assert bool(row["precision_met"]) == met
    assert met or r == 12
    assert relative_half(values[:2]) > 0.03  # the first round alone did not meet it


def test_precision_target_from_one_replication_adds_replications() -> None:
    # One value has no confidence interval: the target is not met yet, so a second
    # replication (and more, as the half-width asks) must follow.
    scenario = Scenario.from_dict({
        **SMALL, "replications": 1, "sweep": {}, "policies": [{"name": "random"}],
        "run": {"jobs": 1000, "warmup_jobs": 100},
        "precision": {"metric": "mean_response", "relative_halfwidth": 0.001, "max_replications": 3}})
    row = emulator.run(scenario, workers=1).summary.iloc[0]
    assert row["replications"] == 3 and not row["precision_met"]


def test_changed_scenario_is_refused_unless_forced(tmp_path: Path) -> None:
    scenario = Scenario.from_dict({**SMALL, "replications": 1, "sweep": {}})
    emulator.run(scenario, workers=1, out=tmp_path)
    changed = scenario.with_overrides({"run.jobs": 2000})
    with pytest.raises(ScenarioError, match=r"run\.jobs: 3000 -> 2000.*--force"):
        emulator.run(changed, workers=1, out=tmp_path)
    assert len(emulator.run(changed, workers=1, out=tmp_path, force=True).runs) == 3
    # More replications of the same scenario reuse the stored ones.
    more = emulator.run(changed.with_overrides(replications=2), workers=1, out=tmp_path)
    assert len(more.runs) == 6


def test_failing_task_is_recorded_and_others_finish(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from emulator.policies.jsq import JSQPolicy

    def broken(self, dispatcher, job):  # type: ignore[no-untyped-def]
        raise RuntimeError("broken on purpose")

    monkeypatch.setattr(JSQPolicy, "dispatch", broken)
    scenario = Scenario.from_dict({**SMALL, "replications": 1, "sweep": {}})
    results = emulator.run(scenario, workers=1, out=tmp_path)
    assert list(results.runs["policy"]) == ["Random", "SQ(2)"]
    assert len(results.errors) == 1 and "JSQ" in results.errors[0][0]
    assert "RuntimeError: broken on purpose" in results.errors[0][1]
    stored = sqlite3.connect(tmp_path / "store.sqlite").execute(
        "SELECT policy, error FROM tasks WHERE error IS NOT NULL").fetchall()
    assert stored[0][0] == "JSQ"
    monkeypatch.undo()  # fixed: the rerun computes only the failed task
    again = emulator.run(scenario, workers=1, out=tmp_path)
    assert list(again.runs["policy"]) == ["Random", "SQ(2)", "JSQ"] and not again.errors
    assert list(again.runs["wall_seconds"][:2]) == list(results.runs["wall_seconds"])


def test_kill_9_then_resume_gives_the_uninterrupted_files(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: resume\nseed: 5\nreplications: 6\nrun: {jobs: 4000, warmup_jobs: 400}\n"
        "system: {servers: 10}\npolicies: [{name: jsq}, {name: sqd, d: 2}, {name: jiq}]\n"
        "sweep: {workload.load: [0.6, 0.9]}\n")
    command = [sys.executable, "-m", "emulator", "run", str(spec), "--workers", "1", "--quiet"]
    full, killed = tmp_path / "full", tmp_path / "killed"
    subprocess.run([*command, "--out", str(full)], check=True, capture_output=True)

    process = subprocess.Popen([*command, "--out", str(killed)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    store = killed / "store.sqlite"
    deadline = time.monotonic() + 60
    done = 0
    while time.monotonic() < deadline and done < 8:
        time.sleep(0.05)
        if store.exists():
            try:
                done = sqlite3.connect(store).execute("SELECT COUNT(*) FROM tasks").fetchone()[0]
            except sqlite3.OperationalError:
                pass
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    before = sqlite3.connect(store).execute("SELECT point, policy, replication, row FROM tasks").fetchall()
    assert 8 <= len(before) < 36, "the kill should land in the middle of the sweep"

    subprocess.run([*command, "--out", str(killed)], check=True, capture_output=True)
    pd.testing.assert_frame_equal(_runs(full), _runs(killed))
    summary_full = pd.read_csv(full / "summary.csv").drop(columns=["wall_seconds", "wall_seconds_ci95"])
    summary_killed = pd.read_csv(killed / "summary.csv").drop(columns=["wall_seconds", "wall_seconds_ci95"])
    pd.testing.assert_frame_equal(summary_full, summary_killed)
    # Tasks finished before the kill were not recomputed: their stored rows are untouched.
    after = dict(((p, label, r), row) for p, label, r, row in sqlite3.connect(store).execute(
        "SELECT point, policy, replication, row FROM tasks"))
    assert all(after[p, label, r] == row for p, label, r, row in before)


def test_run_level_keys_cannot_be_swept() -> None:
    # Seeds and replications belong to the whole run: a sweep over them would change nothing.
    for key in ("seed", "replications", "compare_to"):
        with pytest.raises(ScenarioError, match=rf"sweep: '{key}': expected a key of a sweep point"):
            Scenario.from_dict({**SMALL, "sweep": {key: [1, 2]}})


def test_unusable_results_folder_is_bad_input(tmp_path: Path) -> None:
    scenario = Scenario.from_dict({**SMALL, "replications": 1, "sweep": {}})
    (tmp_path / "file").write_text("")
    with pytest.raises(ScenarioError, match="--out: expected a results folder"):
        emulator.run(scenario, workers=1, out=tmp_path / "file")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "store.sqlite").write_text("not a database")
    with pytest.raises(ScenarioError, match="--out: expected a results folder"):
        emulator.run(scenario, workers=1, out=tmp_path / "broken")


TINY = {**SMALL, "replications": 2, "sweep": {}, "run": {"jobs": 1000, "warmup_jobs": 100},
        "policies": [{"name": "random"}, {"name": "jsq"}]}


def _damage_rows(store: Path) -> None:
    """Zero the last bytes of the tasks table's page, where SQLite keeps the first stored row's text."""
    db = sqlite3.connect(store)
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'tasks'").fetchone()[0]
    db.close()
    with open(store, "r+b") as file:
        file.seek(root * page_size - 20)
        file.write(bytes(20))


def _truncate(store: Path) -> None:
    os.truncate(store, store.stat().st_size // 2)


def _foreign(store: Path) -> None:
    store.unlink()
    db = sqlite3.connect(store)
    db.execute("CREATE TABLE contacts (name TEXT)")
    db.commit()
    db.close()


@pytest.mark.parametrize(("damage", "says"), [(_damage_rows, "is damaged"), (_truncate, "is damaged"),
                                              (_foreign, "is not an lbemu result store")])
def test_damaged_or_foreign_store_is_refused_and_force_starts_afresh(tmp_path: Path, damage, says) -> None:  # type: ignore[no-untyped-def]
    scenario = Scenario.from_dict(TINY)
    emulator.run(scenario, workers=1, out=tmp_path)
    expected = _runs(tmp_path)
    (tmp_path / "notes.txt").write_text("mine")
    damage(tmp_path / "store.sqlite")
    with pytest.raises(ScenarioError, match=f"store.sqlite' {says} .*--force to start afresh") as refused:
        emulator.run(scenario, workers=1, out=tmp_path)
    assert "\n" not in str(refused.value)
    emulator.run(scenario, workers=1, out=tmp_path, force=True)
    pd.testing.assert_frame_equal(_runs(tmp_path), expected)
    assert (tmp_path / "notes.txt").read_text() == "mine"  # nothing else in the folder is touched
    assert len(emulator.run(scenario, workers=1, out=tmp_path).runs) == 4  # a sound store again


def test_two_runs_creating_one_store_at_once_cannot_both_claim_it(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from emulator.experiment import store

    class SlowReads:
        """A connection that pauses after reading the stored scenario: the widest race window."""

        def __init__(self, db: sqlite3.Connection) -> None:
            self.db = db

        def execute(self, sql: str, *args: Any) -> Any:
            cursor = self.db.execute(sql, *args)
            if sql.startswith("SELECT value FROM meta"):
                time.sleep(0.3)
            return cursor

        def __getattr__(self, name: str) -> Any:
            return getattr(self.db, name)

    connect = sqlite3.connect
    monkeypatch.setattr(store.sqlite3, "connect", lambda *a, **k: SlowReads(connect(*a, **k)))
    claimed, refused = [], []

    def create(name: str) -> None:
        try:
            store.Store(tmp_path, {"name": "x", "seed": name}).close()
            claimed.append(name)
        except ScenarioError as exc:
            refused.append(str(exc))

    threads = [threading.Thread(target=create, args=(seed,)) for seed in ("1", "2")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(claimed) == 1 and len(refused) == 1 and "different scenario (seed:" in refused[0]


def _edit_stored_scenario(folder: Path, edit: Any) -> None:
    import json

    db = sqlite3.connect(folder / "store.sqlite")
    stored = json.loads(db.execute("SELECT value FROM meta WHERE key = 'scenario'").fetchone()[0])
    edit(stored)
    db.execute("UPDATE meta SET value = ? WHERE key = 'scenario'", (json.dumps(stored, sort_keys=True),))
    db.commit()
    db.close()


def test_a_folder_from_an_earlier_version_resumes(tmp_path: Path) -> None:
    """Keys added to scenarios since a store was written take their defaults; changed values still count."""
    scenario = Scenario.from_dict({**SMALL, "replications": 1, "sweep": {}})
    first = emulator.run(scenario, workers=1, out=tmp_path)

    def earlier(stored: dict[str, Any]) -> None:  # as written before this key existed
        del stored["system"]["time"]

    _edit_stored_scenario(tmp_path, earlier)
    again = emulator.run(scenario, workers=1, out=tmp_path)
    # Nothing was recomputed: even the computer times are the stored ones.
    assert again.runs["wall_seconds"].tolist() == first.runs["wall_seconds"].tolist()

    # A store from before run.occupancy holds rows without it: their occupancy was off, not the
    # default on, so more replications with it on would leave the summary's mean_spread NaN and
    # occupancy.csv averaged over the new replications alone.
    def before_occupancy(stored: dict[str, Any]) -> None:
        del stored["run"]["occupancy"]

    _edit_stored_scenario(tmp_path, before_occupancy)
    with pytest.raises(ScenarioError, match=r"run\.occupancy: False -> True"):
        emulator.run(scenario.with_overrides(replications=2), workers=1, out=tmp_path)
    off = scenario.with_overrides({"run.occupancy": False})
    assert emulator.run(off, workers=1, out=tmp_path).runs["wall_seconds"].tolist() == \
        first.runs["wall_seconds"].tolist()

    def other_value(stored: dict[str, Any]) -> None:
        stored["run"]["occupancy"] = False

    _edit_stored_scenario(tmp_path, other_value)
    with pytest.raises(ScenarioError, match=r"run\.occupancy: False -> True"):
        emulator.run(scenario, workers=1, out=tmp_path)


def test_renamed_scenario_reuses_results_under_its_new_name(tmp_path: Path) -> None:
    scenario = Scenario.from_dict({**SMALL, "replications": 1, "sweep": {}})
    emulator.run(scenario, workers=1, out=tmp_path)
    renamed = emulator.run(scenario.with_overrides(name="renamed", replications=2), workers=1, out=tmp_path)
    assert set(renamed.runs["scenario"]) == {"renamed"} and set(renamed.summary["scenario"]) == {"renamed"}


def test_trace_sets_rate_and_load_and_refuses_non_finite_values(tmp_path: Path) -> None:
    trace = tmp_path / "trace.csv"
    trace.write_text("time,size\n" + "".join(f"{0.5 * (i + 1)},0.4\n" for i in range(200)))
    spec = tmp_path / "s.yaml"
    spec.write_text("policies: [{name: random}]\nrun: {jobs: 150, warmup_jobs: 10}\nsystem: {servers: 1}\n"
                    "workload: {arrivals: {kind: trace, path: trace.csv}}\n")
    # The path is relative to the scenario file; 200 arrivals in 100 time units of size 0.4 on one server.
    point = emulator.load_scenario(spec).points()[0]
    assert point.rate == pytest.approx(2.0) and point.load == pytest.approx(0.8)
    trace.write_text("time,size\n0.5,nan\n" + "".join(f"{0.5 * (i + 2)},0.4\n" for i in range(199)))
    with pytest.raises(ScenarioError, match=r"workload\.arrivals\.path: .*finite"):
        emulator.load_scenario(spec)


def test_changed_trace_file_is_a_changed_scenario(tmp_path: Path) -> None:
    trace = tmp_path / "trace.csv"
    trace.write_text("time\n" + "".join(f"{0.5 * (i + 1)}\n" for i in range(100)))
    scenario = Scenario.from_dict({"replications": 1, "run": {"jobs": 50, "warmup_jobs": 5},
                                   "system": {"servers": 2}, "policies": [{"name": "random"}],
                                   "workload": {"arrivals": {"kind": "trace", "path": str(trace)}}})
    emulator.run(scenario, workers=1, out=tmp_path / "out")
    trace.write_text("time\n" + "".join(f"{0.4 * (i + 1)}\n" for i in range(100)))
    with pytest.raises(ScenarioError, match="trace_sha256"):
        emulator.run(scenario, workers=1, out=tmp_path / "out")
