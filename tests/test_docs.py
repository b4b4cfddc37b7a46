"""The documentation runs: README.md and every docs/*.md.

- every ```yaml block that looks like a scenario (a mapping with a scenario key at its top
  level), or a fragment of one, validates;
- every ```python block runs (from the repository root);
- every `lbemu ...` command of a ```bash block parses, and the `lbemu validate` ones run.

A new file in docs/ is picked up without changing this test.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from emulator.cli import _parser, main
from emulator.scenario.sweep import Scenario

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# A fence opens with a language (```yaml) or a MyST directive (```{include} FILE), which is not a block to run.
FENCE = re.compile(r"^```(\{[\w-]+\}|\w*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
SCENARIO_KEYS = set(Scenario.model_fields)


def blocks(language: str) -> list[Any]:
    found = []
    for path in DOCS:
        text = path.read_text()
        for match in FENCE.finditer(text):
            if match.group(1) == language:
                line = text[: match.start()].count("\n") + 1
                found.append(pytest.param(match.group(2), id=f"{path.relative_to(ROOT)}:{line}"))
    return found


def test_docs_exist() -> None:
    names = {path.name for path in DOCS}
    assert {"README.md", "scenarios.md", "results.md", "policies.md"} <= names
    assert blocks("yaml") and blocks("python") and blocks("bash")


@pytest.mark.parametrize("text", blocks("yaml"))
def test_yaml_blocks_are_valid_scenarios(text: str) -> None:
    data = yaml.safe_load(text)
    if not isinstance(data, dict) or not set(data) & SCENARIO_KEYS:
        pytest.skip("not a scenario (no scenario key at its top level)")
    # It looks like one, so every key must be a scenario key (validation names a stray one).
    data.setdefault("policies", [{"name": "random"}])  # a fragment: any policy completes it
    assert Scenario.from_dict(data).points()


@pytest.mark.parametrize("text", blocks("python"))
def test_python_blocks_run(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if "register_policy" in text or text.startswith(("# ring.py", "# ring_compiled.py")):
        pytest.skip("the external policy example: tests/test_external_policy.py runs it, in a process of its own")
    monkeypatch.chdir(ROOT)
    exec(compile(text, "<doc>", "exec"), {"__name__": "__doc__"})


def lbemu_commands() -> list[Any]:
    commands = []
    for param in blocks("bash"):
        (text,) = param.values
        for line in text.splitlines():
            for part in line.split("&&"):
                words = shlex.split(part, comments=True)
                if words[:1] == ["lbemu"]:
                    commands.append(pytest.param(words[1:], id=f"{param.id}:{' '.join(words[:3])}"))
    return commands


@pytest.mark.parametrize("args", lbemu_commands())
def test_bash_lbemu_lines_parse(args: list[str], capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    parsed = _parser().parse_args(args)
    if parsed.command == "validate":
        assert main(args) == 0, capsys.readouterr().err


def test_no_doc_cites_files_outside_the_repository() -> None:
    # Notes that users do not have must not be cited: the docs/ folder says it all.
    outside = [name + ".md" for name in ("CONTRACT", "PAPERS", "DESIGN")]
    tracked = [path for folder in ("emulator", "analysis", "scenarios", "tests", "docs", "benchmarks")
               for path in (ROOT / folder).rglob("*") if path.suffix in (".py", ".md", ".yaml")]
    for path in [ROOT / "README.md", *tracked]:
        if ".venv" in path.parts or not path.is_file():
            continue
        text = path.read_text(errors="replace")
        for name in outside:
            assert name not in text, f"{path.relative_to(ROOT)} cites {name}"



def _scenario_keys(model: Any, prefix: str = "") -> list[str]:
    """The dotted keys of a scenario model, nested sections expanded (policy entries are in policies.md)."""
    from pydantic import BaseModel

    keys = []
    for name, field in model.model_fields.items():
        key = prefix + name
        keys.append(key)
        nested = [arg for arg in (field.annotation, *getattr(field.annotation, "__args__", ()))
                  if isinstance(arg, type) and issubclass(arg, BaseModel)]
        # Policies (policies.md), laws and precision have tables of their own.
        if nested and name not in ("policies", "precision", "latency", "service", "speeds", "up", "down"):
            keys.extend(_scenario_keys(nested[0], key + "."))
    return keys


def test_every_scenario_key_is_in_scenarios_md() -> None:
    text = (ROOT / "docs" / "scenarios.md").read_text()
    # A section counts as documented by its keys (`workload.arrivals.kind` ...).
    missing = [key for key in _scenario_keys(Scenario)
               if not any(f"`{key}{end}" in text for end in ("`", ":", "."))]
    assert not missing, f"docs/scenarios.md does not document {missing}"


def test_every_result_column_is_in_results_md() -> None:
    from emulator.measure.recorder import METRICS

    text = (ROOT / "docs" / "results.md").read_text()
    columns = ["scenario", "point", "policy", "policy_name", "replication", "seed", "servers", "dispatchers",
               "discipline", "load", "arrivals", "service", "d", "engine", "replications", *METRICS]
    missing = [column for column in columns if f"`{column}`" not in text]
    files = ["runs.csv", "summary.csv", "scenario.yaml", "store.sqlite", "occupancy.csv", "total_jobs.csv",
             "response_cdf.csv"]
    missing += [name for name in files if f"`{name}`" not in text]
    assert not missing, f"docs/results.md does not document {missing}"
