"""The results folder: runs.csv, summary.csv and the resolved scenario.yaml."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import yaml


def _scenario_text(scenario: Any) -> str:
    from ..version import __version__

    # The version goes in a comment, so that the file is a scenario lbemu runs as it is.
    return f"# resolved by lbemu {__version__}\n" + yaml.safe_dump(scenario.to_dict(), sort_keys=False)


def write_scenario(out: Path, scenario: Any) -> None:
    """The resolved scenario, with the package version, as ``scenario.yaml``.

    Written before a run starts, so it also checks that the results folder takes
    the files of a run: `ScenarioError` if ``scenario.yaml`` cannot be written, or
    ``runs.csv`` or ``summary.csv`` exist and cannot be written.
    """
    from ..errors import ScenarioError

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

    ``occupancy.csv``, ``total_jobs.csv``, ``response_cdf.csv`` (`emulator.experiment.profiles`)
    and ``warmup.csv`` (`emulator.experiment.warmup`) are written when they have rows.
    `RunError` if one cannot be written (e.g. the disk is full): the store keeps the results.
    """
    from ..errors import RunError

    path = out / "scenario.yaml"
    try:
        out.mkdir(parents=True, exist_ok=True)
        path.write_text(_scenario_text(results.scenario))
        path = out / "runs.csv"
        without_copies(results.runs).to_csv(path, index=False)
        path = out / "summary.csv"
        without_copies(results.summary).to_csv(path, index=False)
        for name in ("occupancy", "total_jobs", "response_cdf", "warmup"):
            frame = getattr(results, name, None)
            if frame is not None and not frame.empty:
                path = out / f"{name}.csv"
                frame.to_csv(path, index=False)
    except OSError as exc:
        raise RunError(f"cannot write '{path}' ({exc.strerror or exc}); the finished tasks are stored in "
                       f"'{out}': make the file writable and run the same command to write it") from None


def without_copies(frame: Any) -> Any:
    """``frame`` without ``load`` where a swept ``workload.load`` holds the same numbers: one column per setting.

    `with_load` puts it back when a folder is read, so that code reads the resolved load alike.
    """
    if "load" in frame.columns and "workload.load" in frame.columns \
            and frame["workload.load"].astype(object).equals(frame["load"].astype(object)):
        return frame.drop(columns=["load"])
    return frame


def with_load(frame: Any) -> Any:
    """``frame`` with the resolved ``load`` column that `without_copies` left out of the file."""
    if "load" in frame.columns or "workload.load" not in frame.columns:
        return frame
    return frame.assign(load=frame["workload.load"])


NUMBERS = ("point", "servers", "dispatchers", "load", "d", "replications")
"""Columns of summary.csv besides the metrics that hold numbers, which captions and titles read."""
KEYS = ("policy", "point", "servers", "dispatchers", "replications")
"""Columns of summary.csv that lbemu writes on every row (``d`` is blank for a policy without one)."""


def read_summary(folder: str | Path) -> Any:
    """The summary of a results folder, checked; `ScenarioError` (one line) if it is not one.

    ``lbemu table``, ``plot`` and ``report`` all read a folder here, so they refuse the
    same folders alike: no ``summary.csv``, one that does not parse, one without a
    ``policy`` column or without rows, one cut short (a row with fewer fields than
    the header, or no final newline: a partial table would look complete), text or an
    infinite number in a column of `NUMBERS`, and a blank in a column of `KEYS`. A
    metric holding text is refused where it is used.
    """
    import pandas as pd

    from ..errors import ScenarioError

    path = Path(folder) / "summary.csv"
    if not path.is_file():
        raise ScenarioError(f"DIR: expected a results folder with summary.csv, got '{folder}'")
    try:
        text = path.read_text(encoding="utf-8")
        _check_complete(text, Path(folder))
        # copy(): one block per dtype, not one per column (adding a column to a frame of
        # more than 100 blocks warns, and summary.csv has more than 100 columns).
        summary = with_load(pd.read_csv(io.StringIO(text)).copy())
    except (pd.errors.ParserError, pd.errors.EmptyDataError, csv.Error, UnicodeDecodeError, OSError) as exc:
        raise ScenarioError(f"DIR: expected a readable summary.csv in '{folder}' ({exc})") from None
    if "policy" not in summary.columns:
        raise ScenarioError(f"DIR: expected lbemu's summary.csv in '{folder}', it has no 'policy' column")
    if summary.empty:
        raise ScenarioError(f"summary.csv: expected a row per sweep point and policy, '{path}' has only its header")
    expect_numbers(summary, NUMBERS)  # metrics are checked where they are used: the others still work
    expect_values(summary, KEYS)
    expect_finite(summary, NUMBERS)
    return summary


def _check_complete(text: str, folder: Path) -> None:
    """`ScenarioError` if ``text``, a summary.csv, was cut short: lbemu writes whole rows and a final newline."""
    from ..errors import ScenarioError

    rows = list(csv.reader(io.StringIO(text), strict=True))
    if not rows:
        return  # no header: pandas says so
    width = len(rows[0])
    short = next((i for i, row in enumerate(rows) if len(row) != width), None)
    if short is None and text.endswith("\n"):
        return
    where = (f"line {short + 1} has {len(rows[short])} of the header's {width} fields" if short is not None
             else "its last line has no newline")
    again = (f"; 'lbemu run {folder / 'scenario.yaml'} --out {folder}' writes it again from the store"
             if (folder / "store.sqlite").is_file() and (folder / "scenario.yaml").is_file() else "")
    raise ScenarioError(f"summary.csv: expected complete rows, {where} (the file is cut short){again}")


def expect_numbers(summary: Any, columns: Any) -> None:
    """`ScenarioError` naming the first of ``columns`` in ``summary`` that holds something other than numbers.

    Columns missing from the summary are skipped; NaN counts as a number (a
    metric without a value, e.g. a CI from one replication).
    """
    import pandas as pd

    from ..errors import ScenarioError, show

    for column in columns:
        if column not in summary.columns:
            continue
        values = summary[column]
        if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            continue
        bad = values[pd.to_numeric(values, errors="coerce").isna() & values.notna()]
        example = bad.iloc[0] if len(bad) else values.iloc[0]
        raise ScenarioError(f"summary.csv: expected numbers in column '{column}', got {show(example)}")


def _line(mask: Any) -> int:
    """The line of summary.csv holding the first row where ``mask`` is true (the header is line 1)."""
    return int(mask.to_numpy().argmax()) + 2


def expect_values(summary: Any, columns: Any, purpose: str = "") -> None:
    """`ScenarioError` naming the first of ``columns`` in ``summary`` with a blank (a missing value).

    Columns missing from the summary are skipped. ``purpose`` (`` for the faults
    table``) ends the expectation in the message.
    """
    from ..errors import ScenarioError

    for column in columns:
        if column in summary.columns and summary[column].isna().any():
            raise ScenarioError(f"summary.csv: expected a value in column '{column}' on every line{purpose}, "
                                f"got a blank on line {_line(summary[column].isna())}")


def expect_finite(summary: Any, columns: Any, purpose: str = "") -> None:
    """`ScenarioError` naming the first of ``columns`` in ``summary`` with an infinite number, or a negative interval.

    The columns hold numbers (`expect_numbers`); missing ones are skipped and NaN
    passes. lbemu writes no infinite number and a figure cannot place one; an
    interval (``<metric>_ci95``) is a half-width, at least 0. ``purpose`` as in
    `expect_values`.
    """
    import math

    from ..errors import ScenarioError

    for column in columns:
        if column not in summary.columns:
            continue
        least = 0.0 if column.endswith("_ci95") else -math.inf
        values = summary[column].astype(float)  # numbers already, perhaps read as text
        bad = values.isin([math.inf, -math.inf]) | (values < least)
        if bad.any():
            expected = "finite numbers" if least == -math.inf else f"finite numbers of at least {least:g}"
            raise ScenarioError(f"summary.csv: expected {expected} in column '{column}'{purpose}, "
                                f"got {float(values[bad].iloc[0]):g} on line {_line(bad)}")
