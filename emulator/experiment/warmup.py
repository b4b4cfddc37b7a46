"""``run.warmup_jobs: auto``: each replication's warm-up found by MSER-5 from its own output.

A replication runs twice with the same seed, so along the same sample path: first
with every job measured and the responses summed in batches of 5 in arrival order,
from which MSER-5 (`emulator.measure.mser`) finds the truncation point d; then with
``warmup_jobs: d`` and ``jobs: run.jobs - d``. The window of the second run opens
at job d and closes where the first run's did, so every statistic of the row (means,
quantiles, messages per job, queue lengths, occupancy) is that of the jobs after
the truncation point, exactly as a fixed warm-up of d would give.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..measure.mser import WIDTH, Truncation, suggested_jobs, truncate
from ..measure.series import Series
from ..scenario.sweep import Point

POINTS = 200
"""Points kept of the running mean and the MSER statistic for the warm-up figure."""


def at(point: Point, warmup: int, jobs: int) -> Point:
    """``point`` with a fixed warm-up of ``warmup`` jobs and ``jobs`` measured jobs."""
    run = point.scenario.run.model_copy(update={"warmup_jobs": warmup, "jobs": jobs})
    return dataclasses.replace(point, scenario=point.scenario.model_copy(update={"run": run}))


def first_pass(point: Point) -> tuple[Point, Series]:
    """The point of the first run (every job measured) and the series it fills."""
    jobs = point.scenario.run.jobs
    return at(point, 0, jobs), Series.blocks(jobs, WIDTH)


def second_pass(point: Point, series: Series) -> tuple[Point, Truncation]:
    """The point measured after the truncation point MSER-5 finds in the first run's ``series``."""
    found = truncate(series.sums, series.counts)
    return at(point, found.jobs, point.scenario.run.jobs - found.jobs), found


def figure_data(series: Series, found: Truncation) -> dict[str, Any]:
    """What the warm-up figure draws of one replication (JSON-ready), thinned to about `POINTS` points.

    ``jobs``: arrival numbers; ``running_mean``: the mean response of the jobs that arrived
    before; ``mser``: Z of a truncation there; ``truncation``: the jobs dropped.
    """
    kept = series.counts > 0
    ends = found.starts + WIDTH  # the arrivals each batch mean has seen by its end
    running = np.cumsum(series.sums[kept]) / np.cumsum(series.counts[kept])
    step = max(1, len(running) // POINTS)
    take = np.arange(0, len(running), step)
    return {"jobs": ends[take].tolist(), "running_mean": running[take].tolist(),
            "start": found.starts[take].tolist(), "mser": found.statistic[take].tolist(),
            "truncation": found.jobs}


def note(found: Truncation, jobs: int) -> str | None:
    """The line that says a run is too short for MSER-5, or None."""
    if not found.too_short:
        return None
    return (f"run.jobs: the warm-up MSER-5 finds ends near job {found.found:,} of {jobs:,}, in the last half "
            f"of the run: too short to tell the warm-up from the steady state (measured after job "
            f"{found.jobs:,}); try run.jobs: {suggested_jobs(found.found)} or more")


def notes(rows: list[dict[str, Any]]) -> list[str]:
    """The tasks' notes (a too-short run, too-short batches), one line per (point, policy) and kind.

    Each line is that of the first replication that has it, with the count of those that do.
    """
    first: dict[tuple[Any, Any, str], tuple[str, int]] = {}
    for row in rows:
        for line in row.get("notes", ()):
            key = (row["point"], row["policy"], line.split(":", 1)[0])
            text, count = first.get(key, (line, 0))
            first[key] = (text, count + 1)
    return [f"{text} (point {point}, {policy}: {count} replication(s))"
            for (point, policy, _), (text, count) in first.items()]


FRAME_COLUMNS = ("replication", "jobs", "running_mean", "start", "mser", "truncation")
"""The columns of warmup.csv after ``point``, the swept keys and ``policy``."""


def frame(rows: list[dict[str, Any]], keys: list[str]) -> Any:
    """warmup.csv: per replication with ``warmup_jobs: auto``, its `figure_data` in long format.

    One row per kept point: ``point``, the swept ``keys``, ``policy``, ``replication``,
    ``jobs`` and ``running_mean`` (the running mean after that many arrivals), ``start``
    and ``mser`` (Z of a truncation at that job), ``truncation`` (the jobs dropped).
    """
    import pandas as pd

    records = []
    for row in rows:
        data = row.get("warmup")
        if not data:
            continue
        ident = {"point": row["point"], **{key: row.get(key) for key in keys}, "policy": row["policy"],
                 "replication": row["replication"]}
        for jobs, mean, start, z in zip(data["jobs"], data["running_mean"], data["start"], data["mser"],
                                        strict=True):
            records.append({**ident, "jobs": jobs, "running_mean": mean, "start": start, "mser": z,
                            "truncation": data["truncation"]})
    return pd.DataFrame(records, columns=["point", *keys, "policy", *FRAME_COLUMNS])
