"""A policy written outside lbemu, as docs/policies.md shows it: registered, checked, run from YAML.

The example's source is read from docs/policies.md itself (the blocks that start
``# ring.py`` and ``# ring_compiled.py``, its compiled form) into a folder outside
the package, so the docs cannot go stale. Each
case runs in a process of its own: registering a policy changes the registry of
the process that does it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "policies.md"
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
SCENARIO = {"name": "ring", "seed": 5, "replications": 2, "run": {"jobs": 3000, "warmup_jobs": 300},
            "system": {"servers": 12}, "policies": [{"name": "ring", "spacing": 5}, {"name": "sqd", "d": 2}]}


def _example(folder: Path) -> tuple[Path, str]:
    """The docs' ``ring.py`` written into ``folder``, and the docs' block that uses it."""
    blocks = FENCE.findall(DOC.read_text())
    (module,) = [block for block in blocks if block.startswith("# ring.py")]
    (compiled,) = [block for block in blocks if block.startswith("# ring_compiled.py")]
    (usage,) = [block for block in blocks if "register_policy" in block]
    assert len(module.splitlines()) <= 60 and len(compiled.splitlines()) <= 40, "the example should stay short"
    path = folder / "ring.py"
    path.write_text(module)
    (folder / "ring_compiled.py").write_text(compiled)
    return path, usage


def _python(folder: Path, code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", code], cwd=folder, env=env, capture_output=True, text=True)


def test_the_docs_example_registers_passes_the_contract_and_runs_from_yaml(tmp_path: Path) -> None:
    _, usage = _example(tmp_path)
    done = _python(tmp_path, usage)  # register, check_policy, run: as the docs show it
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Ring(5)" in done.stdout and "SQ(2)" in done.stdout
    (tmp_path / "ring.yaml").write_text(yaml.safe_dump(SCENARIO))
    script = """
import json, emulator
from ring import RingPolicy
emulator.register_policy(RingPolicy)
results = emulator.run(emulator.load_scenario("ring.yaml"), workers=1)
summary = results.summary.set_index("policy")
print(json.dumps({p: [summary.loc[p, "messages_per_job"], summary.loc[p, "mean_response"]] for p in summary.index}))
"""
    done = _python(tmp_path, script)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    assert rows["Ring(5)"][0] == 4.0 and rows["SQ(2)"][0] == 4.0  # two round trips per job each
    # Two choices, of neighbours or not, beat none: below random routing's M/M/1 response at load 0.9.
    assert rows["Ring(5)"][1] < 10.0 and rows["SQ(2)"][1] < 10.0


def test_an_installed_package_adds_it_through_the_entry_point(tmp_path: Path) -> None:
    """A distribution on the path declaring ``lbemu.policies`` makes `lbemu` itself know the policy."""
    _example(tmp_path)
    info = tmp_path / "ring_policy-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ring-policy\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[lbemu.policies]\nring = ring:RingPolicy\n")
    (tmp_path / "ring.yaml").write_text(yaml.safe_dump(SCENARIO))
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    policies = subprocess.run([sys.executable, "-m", "emulator", "policies"], cwd=tmp_path, env=env,
                              capture_output=True, text=True)
    assert policies.returncode == 0, policies.stderr[-2000:]
    assert re.search(r"^ring \(label e\.g\. Ring\(1\)\): 4 per job", policies.stdout, re.MULTILINE)
    run = subprocess.run([sys.executable, "-m", "emulator", "run", "ring.yaml", "--out", "out", "--quiet",
                          "--workers", "1"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Ring(5)" in (tmp_path / "out" / "summary.csv").read_text()


def test_a_broken_plugin_is_one_warning_and_the_rest_runs(tmp_path: Path) -> None:
    info = tmp_path / "broken-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[lbemu.policies]\nbroken = no_such_module:Nothing\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "emulator", "policies"], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0 and "jsq" in done.stdout
    warnings = [line for line in done.stderr.splitlines() if line]
    assert len(warnings) == 1 and "policy plugin 'broken'" in warnings[0], done.stderr


def test_registering_refuses_what_is_not_a_policy() -> None:
    script = """
import emulator
from emulator.policies.base import Policy
class NoConfig(Policy):
    name = "noconfig"
    messages = "0"
    def dispatch(self, dispatcher, job): pass
for cls in (NoConfig, emulator.REGISTRY["jsq"].Config, type("jsq", (emulator.REGISTRY["random"],), {})):
    try:
        emulator.register_policy(cls)
    except ValueError as exc:
        print(str(exc).split(":")[0])
"""
    done = _python(ROOT, script)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["register_policy"] * 3


def test_its_compiled_form_runs_from_outside_the_package_with_simpys_rows(tmp_path: Path) -> None:
    """The docs' compiled form, built into a kernel of its own: rows identical to SimPy's, with and without
    latency and with several dispatchers."""
    _example(tmp_path)
    script = """
import json, emulator
from ring import RingPolicy
emulator.register_policy(RingPolicy)
base = {"name": "ring", "seed": 3, "replications": 2, "run": {"jobs": 4000, "warmup_jobs": 400},
        "system": {"servers": 12, "dispatchers": 2}, "policies": [{"name": "ring", "spacing": 5}],
        "sweep": {"network.latency": [{"kind": "deterministic", "mean": 0}, {"kind": "exponential", "mean": 0.2}]}}
rows = {}
for engine in ("simpy", "compiled"):
    runs = emulator.run({**base, "run": {**base["run"], "engine": engine}}, workers=1).runs
    rows[engine] = runs.drop(columns=["wall_seconds"]).astype(str).to_dict("records")
print(json.dumps(rows))
"""
    done = _python(tmp_path, script)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    assert {row.pop("engine") for row in rows["compiled"]} == {"compiled"}
    assert {row.pop("engine") for row in rows["simpy"]} == {"simpy"}
    assert rows["compiled"] == rows["simpy"] and len(rows["simpy"]) == 4
    # Two round trips per job: exactly without latency; with it a few asks straddle the window's edges.
    per_job = sorted(float(row["messages_per_job"]) for row in rows["simpy"])
    assert per_job[0] == 4.0 and all(abs(value - 4.0) < 0.01 for value in per_job)
