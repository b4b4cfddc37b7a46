"""The ``lbemu`` command line, run as users run it: a subprocess, exit status, stdout, stderr, files.

The quickstart scenario is run once per session, from its real file (about 10 s
with 2 workers); the other commands work on its results folder.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from scipy import stats

import emulator
from emulator.cli import main
from emulator.measure.messages import KINDS

pytestmark = pytest.mark.xdist_group("test_cli")  # one process runs its module fixtures, once

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "scenarios" / "quickstart.yaml"
PYTHON = [sys.executable, "-m", "emulator"]

IDENTITY = ["scenario", "point", "policy", "policy_name", "servers", "dispatchers", "discipline", "load",
            "arrivals", "service", "d"]
METRICS = ["jobs", "mean_response", "mean_wait", "p50_response", "p90_response", "p99_response", "prob_wait",
           "mean_queue_length", "messages_per_job", *(f"messages_per_job_{kind}" for kind in KINDS),
           "messages_per_server_time", "blocked_fraction", "sim_time", "wall_seconds"]


def lbemu(*args: str, command: list[str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*(command or PYTHON), *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def labels() -> list[str]:
    return [policy.label for policy in emulator.load_scenario(QUICKSTART).points()[0].policies]


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path_factory.mktemp("quickstart")
    result = lbemu("run", QUICKSTART, "--out", out, "--workers", "2", timeout=300)
    return result, out


def test_run_quickstart(quickstart: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    result, out = quickstart
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    scenario = emulator.load_scenario(QUICKSTART)
    for label in labels():
        assert label in result.stdout
    for name in ("runs.csv", "summary.csv", "scenario.yaml"):
        assert (out / name).is_file()
    assert str(out) in result.stdout  # says where it wrote

    runs = pd.read_csv(out / "runs.csv")
    points = len(scenario.sweep["workload.load"])
    assert len(runs) == points * len(scenario.policies) * scenario.replications
    for column in [*IDENTITY, "replication", "seed", "workload.load", *METRICS]:
        # The swept workload.load holds the resolved loads: one column, not two.
        assert column in runs.columns or column == "load", column
    assert "load" not in runs.columns
    runs = emulator.load_results(out).runs  # reading the folder puts it back
    assert set(runs.policy) == set(labels())
    assert set(runs.policy_name) == {policy.name for policy in scenario.policies}
    assert (runs.jobs == scenario.run.jobs).all()
    assert sorted(set(runs.load)) == sorted(scenario.sweep["workload.load"])
    # d is resolved where the policy has one, empty where it has none.
    assert runs.loc[runs.policy == "SQ(2)", "d"].eq(2).all()
    assert runs.loc[runs.policy == "JBT-10", "d"].eq(10).all()
    assert runs.loc[runs.policy == "JSQ", "d"].isna().all()
    # The message accounting of docs/policies.md, on the real scenario.
    assert runs.loc[runs.policy == "JSQ", "messages_per_job"].eq(20).all()
    assert runs.loc[runs.policy == "SQ(2)", "messages_per_job"].eq(4).all()
    assert runs.loc[runs.policy.isin(["Random", "RR"]), "messages_per_job"].eq(0).all()
    assert (runs.loc[runs.policy == "JIQ", "messages_per_job"] <= 1 + 10 / scenario.run.jobs).all()
    # Common random numbers: one seed per replication, shared by every point and policy.
    assert runs.groupby("replication").seed.nunique().eq(1).all()

    summary = pd.read_csv(out / "summary.csv")
    assert len(summary) == points * len(scenario.policies)
    for column in [*IDENTITY, "workload.load", *METRICS, "replications"]:
        assert column in summary.columns or column == "load", column
    assert "load" not in summary.columns
    for metric in METRICS:
        assert f"{metric}_ci95" in summary.columns
    assert summary.replications.eq(scenario.replications).all()
    assert "seed" not in summary.columns and "replication" not in summary.columns
    # Every mean and half-width, recomputed from runs.csv (Student t over the replications).
    for _, row in summary.iterrows():
        group = runs[(runs.policy == row.policy) & (runs.point == row.point)]
        assert len(group) == scenario.replications
        t = stats.t.ppf(0.975, len(group) - 1)
        for metric in METRICS:
            values = group[metric].to_numpy(dtype=float)
            assert row[metric] == pytest.approx(values.mean(), rel=1e-9, abs=1e-12), metric
            half = t * values.std(ddof=1) / len(values) ** 0.5
            assert row[f"{metric}_ci95"] == pytest.approx(half, rel=1e-9, abs=1e-12), metric

    # The resolved scenario names the version in its first line and runs again as it is.
    text = (out / "scenario.yaml").read_text()
    assert text.splitlines()[0] == f"# resolved by lbemu {emulator.__version__}"
    assert emulator.load_scenario(out / "scenario.yaml") == scenario


def test_table_on_the_results_folder(quickstart: tuple[subprocess.CompletedProcess[str], Path],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    _, out = quickstart
    text = lbemu("table", out)
    assert text.returncode == 0, text.stderr
    assert all(label in text.stdout for label in labels())
    # The formats, in-process (the subprocess above covers the entry point).
    assert main(["table", str(out), "--format", "markdown", "--metric", "mean_wait", "--metric", "prob_wait"]) == 0
    markdown = capsys.readouterr().out
    assert "|" in markdown and "mean wait" in markdown and "P(wait)" in markdown
    assert main(["table", str(out), "--format", "latex"]) == 0
    assert "\\begin{tabular}" in capsys.readouterr().out
    assert main(["table", str(out), "--format", "csv"]) == 0
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert set(labels()) <= set(frame.policy)


def test_the_installed_script() -> None:
    # The console script is where the package's own venv puts it, next to the interpreter.
    script = shutil.which("lbemu") or shutil.which("lbemu", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("the lbemu console script is not installed")
    policies = lbemu("policies", command=[script])
    assert policies.returncode == 0 and all(name in policies.stdout for name in emulator.REGISTRY)


def test_run_options_override_the_file(tmp_path: Path) -> None:
    # A short run of the real quickstart with overrides from the command line.
    result = lbemu("run", QUICKSTART, "--out", tmp_path, "--jobs", "300", "--replications", "1", "--quiet",
                   "--workers", "1", "--seed", "5", "--set", "system.servers=12", "--set", "run.warmup_jobs=30")
    assert result.returncode == 0, result.stderr
    runs = pd.read_csv(tmp_path / "runs.csv")
    assert len(runs) == 3 * 7 and runs.servers.eq(12).all() and runs.jobs.eq(300).all()
    assert runs.replication.eq(0).all()
    resolved = yaml.safe_load((tmp_path / "scenario.yaml").read_text())
    assert resolved["seed"] == 5 and resolved["system"]["servers"] == 12
    assert all(label in result.stdout for label in labels())


def test_validate_and_policies_and_schema() -> None:
    result = lbemu("validate", QUICKSTART)
    assert result.returncode == 0, result.stderr
    # The product the line spells out: 3 loads x the quickstart's policies x its 5 replications.
    count = len(labels())
    assert f"3 point(s) x {count} policies x 5 replication(s) = {3 * count * 5} task(s)" in result.stdout
    assert all(label in result.stdout for label in labels())
    assert result.stdout.count("point ") >= 3
    policies = lbemu("policies")
    assert policies.returncode == 0
    for name, cls in emulator.REGISTRY.items():
        assert name in policies.stdout and cls.messages in policies.stdout
    schema = lbemu("schema")
    assert schema.returncode == 0
    assert "policies" in json.loads(schema.stdout)["properties"]


def test_schema_declares_its_draft_and_holds_the_scenarios() -> None:
    import jsonschema  # in the test extras

    schema = json.loads(lbemu("schema").stdout)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    validator = jsonschema.Draft202012Validator
    validator.check_schema(schema)  # a valid schema of the draft it names
    for path in sorted((ROOT / "scenarios").glob("*.yaml")):
        validator(schema).validate(yaml.safe_load(path.read_text()))
    # ...and one that an editor should flag is flagged.
    assert list(validator(schema).iter_errors({"policies": [{"name": "jsq"}], "system": {"servers": "ten"}}))


def test_bare_lbemu_prints_the_usage() -> None:
    result = lbemu()
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("usage: lbemu") and "Traceback" not in result.stderr
    for command, text in (("run", "run a scenario"), ("validate", "check a scenario"), ("table", "comparison"),
                          ("plot", "figures"), ("report", "HTML"), ("schema", "JSON Schema")):
        assert command in result.stderr and text in result.stderr


BAD = [
    (["run", "scenarios/no_such_file.yaml"], "scenario: cannot read"),
    (["validate", "scenarios/no_such_file.yaml"], "no_such_file.yaml"),
    (["validate", QUICKSTART, "--set", "system.servers=5"], "policies.5.d"),  # JBT-10 needs 10 servers
    (["validate", QUICKSTART, "--set", "workload.service.k=3"], "workload.service.k"),
    (["validate", QUICKSTART, "--set", "bogus=1"], "bogus: unknown key"),
    (["validate", QUICKSTART, "--set", "nokey"], "--set"),
    (["run", QUICKSTART, "--set", "workload.load=-1", "--quiet"], "workload.load"),
    (["run", QUICKSTART, "--set", "policies.3.d='__import__(\"os\")'", "--quiet"], "policies.3.d"),
    (["run", QUICKSTART, "--workers", "0"], "--workers"),
    (["run", QUICKSTART, "--workers", "many"], "--workers"),
    (["run", QUICKSTART, "--jobs", "0"], "run.jobs"),
    (["run", QUICKSTART, "--bogus"], "--bogus"),
    (["run"], "scenario"),
    (["frobnicate"], "frobnicate"),
    (["run", QUICKSTART, "--dask", "not an address", "--quiet"], "--dask"),
    (["table", "no_such_results_folder"], "no_such_results_folder"),
    (["table", ROOT / "tests" / "data" / "empty_results"], "summary.csv"),
    (["plot", "no_such_results_folder"], "no_such_results_folder"),
]


def one_line_error(code: int, stderr: str, named: str) -> None:
    assert code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("lbemu: error: ") and named in lines[0], lines[0]
    assert "Traceback" not in stderr


@pytest.mark.parametrize("args, named", BAD, ids=[" ".join(map(str, a)).replace(str(ROOT), "") for a, _ in BAD])
def test_bad_input_exits_2_with_one_line(args: list[str], named: str, capsys: pytest.CaptureFixture[str]) -> None:
    # In-process: an exception other than the handled one would fail the test here.
    code = main([str(arg) for arg in args])
    captured = capsys.readouterr()
    one_line_error(code, captured.err, named)
    assert captured.out == ""


@pytest.mark.parametrize("index", [0, 6, 9, 13])
def test_bad_input_from_the_shell(index: int) -> None:
    args, named = BAD[index]
    result = lbemu(*args)
    one_line_error(result.returncode, result.stderr, named)


def test_bad_scenario_files_exit_2(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\npolicies: [\n")
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("policies: [{name: jsq}]\nsystem: {servers: 4, speed: [1, 1, 1, 1]}\n")
    named_broken = "not valid YAML at line 3, column 1: expected the node content, but found '<stream end>'"
    for path, named in ((broken, named_broken), (unknown, "system.speed: unknown key")):
        result = lbemu("run", path, "--out", tmp_path / "out", "--quiet")
        one_line_error(result.returncode, result.stderr, named)
    assert not (tmp_path / "out").exists()  # refused before anything ran


def test_bad_table_metric_and_format(quickstart: tuple[subprocess.CompletedProcess[str], Path],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    _, out = quickstart
    for args, named in ((["--metric", "bogus"], "bogus"), (["--format", "xml"], "xml")):
        code = main(["table", str(out), *args])  # in-process: the shell's exit 2 is test_bad_input_from_the_shell's
        captured = capsys.readouterr()
        one_line_error(code, captured.err, named)
        assert captured.out == ""


def test_readme_table_is_the_generated_one(quickstart: tuple[subprocess.CompletedProcess[str], Path],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    _, out = quickstart
    assert main(["table", str(out), "--format", "markdown"]) == 0  # in-process: the same command's output
    table = capsys.readouterr().out
    readme = (ROOT / "README.md").read_text()
    assert table.rstrip("\n") in readme, (
        "README's quickstart table is stale: paste the output of "
        "'lbemu run scenarios/quickstart.yaml --out results/quickstart && "
        "lbemu table results/quickstart --format markdown'")


@pytest.fixture(scope="module")
def small_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results folder of two policies at two loads, 2 replications of 300 jobs."""
    out = tmp_path_factory.mktemp("small")
    scenario = emulator.Scenario.from_dict({
        "name": "small", "replications": 2, "run": {"jobs": 300, "warmup_jobs": 30}, "system": {"servers": 4},
        "policies": [{"name": "random"}, {"name": "jsq"}], "sweep": {"workload.load": [0.5, 0.8]}})
    emulator.run(scenario, workers=1, out=out)
    return out


def damaged(text: str, how: str) -> str:
    """summary.csv's text damaged as ``how`` says."""
    lines = text.splitlines(keepends=True)
    if how == "header only":
        return lines[0]
    if how == "cut mid-row":
        return text[: len(text) - len(lines[-1]) // 2]
    if how == "cut at a field":
        return text[: text.rindex(",", 0, len(text) - len(lines[-1]) // 2)] + "\n"
    header = lines[0].rstrip("\n").split(",")
    fields = lines[1].rstrip("\n").split(",")
    fields[header.index(how.split()[-1])] = "fast"  # how == "text in <column>"
    return "".join([lines[0], ",".join(fields) + "\n", *lines[2:]])


@pytest.mark.parametrize("command", ["table", "plot", "report"])
@pytest.mark.parametrize("how, says", [("header only", "only its header"), ("cut mid-row", "cut short"),
                                       ("cut at a field", "cut short"), ("text in mean_response", "'mean_response'"),
                                       ("text in replications", "'replications'")])
def test_a_damaged_summary_is_refused_alike(small_folder: Path, tmp_path: Path, command: str, how: str, says: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    # table, plot and report read a folder through one function: the same folder, the same one line.
    folder = tmp_path / "results"
    shutil.copytree(small_folder, folder)
    (folder / "summary.csv").write_text(damaged((small_folder / "summary.csv").read_text(), how))
    before = sorted(path.name for path in folder.iterdir())
    code = main([command, str(folder)])
    captured = capsys.readouterr()
    one_line_error(code, captured.err, says)
    assert "summary.csv" in captured.err and captured.out == ""
    assert sorted(path.name for path in folder.iterdir()) == before  # nothing drawn before the refusal


def test_a_cut_summary_names_the_command_that_writes_it_again(small_folder: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "results"
    shutil.copytree(small_folder, folder)
    whole = (folder / "summary.csv").read_text()
    (folder / "summary.csv").write_text(damaged(whole, "cut mid-row"))
    assert main(["table", str(folder)]) == 2
    err = capsys.readouterr().err
    command = err.split("'lbemu ", 1)[1].split("'", 1)[0].split()
    assert command == ["run", str(folder / "scenario.yaml"), "--out", str(folder)], err
    assert main([*command, "--quiet", "--workers", "1"]) == 0  # every task is in the store: nothing reruns
    assert (folder / "summary.csv").read_text() == whole
    assert main(["table", str(folder)]) == 0


def test_huge_pool_capacities_run_and_tabulate_quickly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Their theory (Erlang B, the JSQ(d) mean field) cost steps in proportion to the capacity.
    (tmp_path / "s.yaml").write_text(
        "name: huge\nreplications: 1\nrun: {jobs: 2000, warmup_jobs: 200}\nworkload: {load: 5}\n"
        "system: {servers: 10, discipline: pool, capacity: 1000000000}\n"
        "policies: [{name: random}, {name: sqd, d: 2}, {name: jsq}]\n")
    out = tmp_path / "out"
    started = time.perf_counter()
    assert main(["run", str(tmp_path / "s.yaml"), "--out", str(out), "--quiet", "--workers", "1"]) == 0
    for command in (["table", str(out)], ["plot", str(out)], ["report", str(out)]):
        assert main(command) == 0, command
    assert "Random: Erlang B, exact" in capsys.readouterr().out
    assert time.perf_counter() - started < 60
