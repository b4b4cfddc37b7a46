"""The results folder: runs.csv, summary.csv and the resolved scenario.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def _scenario_text(scenario: Any) -> str:
    from . import __version__

    # The version goes in a comment, so that the file is a scenario lbemu runs as it is.
    return f"# resolved by lbemu {__version__}\n" + yaml.safe_dump(scenario.to_dict(), sort_keys=False)


def write_scenario(out: Path, scenario: Any) -> None:
    """The resolved scenario, with the package version, as ``scenario.yaml``.

    Written before a run starts, so it also checks that the results folder takes
    the files of a run: `ScenarioError` if ``scenario.yaml`` cannot be written, or
    ``runs.csv`` or ``summary.csv`` exist and cannot be written.
    """
    from .errors import ScenarioError

    path = out / "scenario.yaml"
    try:
        out.mkdir(parents=True, exist_ok=True)
        path.write_text(_scenario_text(scenario))
        for path in (out / "runs.csv", out / "summary.csv"):
            if path.exists() or path.is_symlink():
                with open(path, "a"):  # opening to append changes nothing
                    pass
    except OSError as exc:
        raise ScenarioError(f"--out: expected a results folder lbemu can write, cannot write '{path}' "
                            f"({exc.strerror or exc})") from None


def write_results(out: Path, results: Any) -> None:
    """Write the result files of docs/results.md into ``out`` (created if needed).

    ``occupancy.csv``, ``total_jobs.csv`` and ``response_cdf.csv`` (`emulator.profiles`)
    are written when they have rows. `RunError` if one cannot be written (e.g. the disk
    is full): the store keeps the results.
    """
    from .errors import RunError

    path = out / "scenario.yaml"
    try:
        out.mkdir(parents=True, exist_ok=True)
        path.write_text(_scenario_text(results.scenario))
        path = out / "runs.csv"
        results.runs.to_csv(path, index=False)
        path = out / "summary.csv"
        results.summary.to_csv(path, index=False)
        for name in ("occupancy", "total_jobs", "response_cdf"):
            frame = getattr(results, name, None)
            if frame is not None and not frame.empty:
                path = out / f"{name}.csv"
                frame.to_csv(path, index=False)
    except OSError as exc:
        raise RunError(f"cannot write '{path}' ({exc.strerror or exc}); the finished tasks are stored in "
                       f"'{out}': make the file writable and run the same command to write it") from None


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
