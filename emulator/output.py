"""The results folder: runs.csv, summary.csv and the resolved scenario.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def write_scenario(out: Path, scenario: Any) -> None:
    """The resolved scenario, with the package version, as ``scenario.yaml``."""
    from . import __version__

    out.mkdir(parents=True, exist_ok=True)
    # The version goes in a comment, so that the file is a scenario lbemu runs as it is.
    header = f"# resolved by lbemu {__version__}\n"
    (out / "scenario.yaml").write_text(header + yaml.safe_dump(scenario.to_dict(), sort_keys=False))


def write_results(out: Path, results: Any) -> None:
    """Write the three files of `CONTRACT.md` into ``out`` (created if needed), and the distributions.

    ``occupancy.csv``, ``total_jobs.csv`` and ``response_cdf.csv`` (`emulator.profiles`)
    are written when they have rows.
    """
    write_scenario(out, results.scenario)
    results.runs.to_csv(out / "runs.csv", index=False)
    results.summary.to_csv(out / "summary.csv", index=False)
    for name in ("occupancy", "total_jobs", "response_cdf"):
        frame = getattr(results, name, None)
        if frame is not None and not frame.empty:
            frame.to_csv(out / f"{name}.csv", index=False)


def read_summary(folder: str | Path) -> Any:
    """The summary of a results folder; `ScenarioError` if it is not one."""
    import pandas as pd

    from .errors import ScenarioError

    path = Path(folder) / "summary.csv"
    if not path.is_file():
        raise ScenarioError(f"DIR: expected a results folder with summary.csv, got '{folder}'")
    try:
        summary = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError) as exc:
        raise ScenarioError(f"DIR: expected a readable summary.csv in '{folder}' ({exc})") from None
    if "policy" not in summary.columns:
        raise ScenarioError(f"DIR: expected lbemu's summary.csv in '{folder}', it has no 'policy' column")
    return summary
