"""Reading a scenario file: strict YAML (`emulator.scenario.yaml_input`), then `Scenario.from_dict`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from .sweep import Scenario
from .yaml_input import load


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a YAML scenario file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"scenario: cannot read '{path}' ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"scenario: expected a UTF-8 text file, '{path}' has byte "
                            f"{exc.object[exc.start]:#04x} at offset {exc.start}") from None
    data = load(text, str(path))
    data = data if data is not None else {}
    _anchor_trace(data, Path(path).parent)
    return Scenario.from_dict(data)


def _anchor_trace(data: Any, folder: Path) -> None:
    """A relative trace path in a scenario file is relative to that file, not to where lbemu runs."""
    try:
        arrivals = data["workload"]["arrivals"]
        relative = arrivals["kind"] == "trace" and not Path(arrivals["path"]).is_absolute()
    except (KeyError, TypeError):
        return
    if relative:
        arrivals["path"] = str(folder / arrivals["path"])
