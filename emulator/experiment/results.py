"""Tidy result frames: runs (one row per replication) and summary (mean and 95% CI)."""

from __future__ import annotations

import functools
import math
from typing import Any

from ..measure.recorder import METRICS
from ..scenario.schema import ResolvedPolicy
from ..scenario.sweep import Point


def identity(point: Point, policy: ResolvedPolicy) -> dict[str, Any]:
    """Identity and parameter columns of a (point, policy)."""
    scenario = point.scenario
    system, workload = scenario.system, scenario.workload
    arrivals = workload.arrivals
    row: dict[str, Any] = {
        "scenario": scenario.name,
        "point": point.index,
        "policy": policy.label,
        "policy_name": policy.name,
        "servers": system.servers,
        "dispatchers": system.dispatchers,
        "discipline": system.discipline,
        "load": point.load,
        "arrivals": arrivals.kind,
        "service": workload.service.describe(),
        "d": policy.d if policy.d is not None else math.nan,
    }
    row.update(settings(point))
    for key, value in point.values.items():
        row[key] = value if isinstance(value, (int, float, str, bool)) else str(value)
    return row


SECTIONS = ("system", "workload", "network")
"""The parts of a scenario whose settings shape a row (``run`` has its own columns: ``jobs``, ``engine``)."""
SHOWN = ("system.servers", "system.dispatchers", "system.discipline", "workload.load", "workload.service")
"""Settings that the resolved columns show (``servers``, ``dispatchers``, ``discipline``, ``load``, ``service``)."""


def settings(point: Point) -> dict[str, Any]:
    """The settings of ``point`` that differ from the defaults, by dotted key, as text or numbers.

    A law reads as ``exponential(0.05)``; other mappings and lists as Python writes them. The
    settings in `SHOWN` have their own columns; so have the arrival kind (``arrivals``) and
    arrivals without parameters.

    Examples
    --------
    >>> from emulator import Scenario
    >>> s = Scenario.from_dict({"policies": [{"name": "jsq"}], "system": {"capacity": 5},
    ...                         "network": {"latency": {"kind": "exponential", "mean": 0.05}}})
    >>> settings(s.points()[0])
    {'system.capacity': 5, 'network.latency': 'exponential(0.05)'}
    """
    defaults = _defaults()
    found: dict[str, Any] = {}
    for section in SECTIONS:
        config, default = getattr(point.scenario, section), getattr(defaults, section)
        for name in type(config).model_fields:
            key, value = f"{section}.{name}", getattr(config, name)
            if key in SHOWN or value == getattr(default, name):
                continue
            if key == "workload.arrivals" and not value.gap_options():
                continue  # the kind alone: the ``arrivals`` column
            found[key] = setting_text(value)
    return found


def setting_text(value: Any) -> Any:
    """A setting as its column holds it: numbers, text and booleans as they are, a law by `describe`."""
    if value is None or isinstance(value, (int, float, str, bool)):
        return value
    if hasattr(value, "describe"):
        return value.describe()
    if hasattr(value, "model_dump"):
        return str(value.model_dump(mode="json", exclude_none=True))
    return str(list(value)) if isinstance(value, tuple) else str(value)


@functools.cache
def _defaults() -> Any:
    from ..scenario.sweep import Scenario

    return Scenario.model_validate({"policies": [{"name": "random"}]})


DIFF_METRICS = ("mean_response", "p99_response", "messages_per_job")
"""Metrics that get paired differences against the ``compare_to`` policy."""


BATCH_COLUMNS = ("mean_response_batch_ci95", "mean_response_batch_lag1")
"""The runs.csv columns of ``run.batch_means`` (`emulator.experiment.batchmeans`)."""


def mean_ci(values: Any) -> tuple[float, float]:
    """Mean and 95% Student-t half-width (NaN for fewer than two values)."""
    import numpy as np
    from scipy import stats

    values = np.asarray(values, dtype=float)
    n = len(values)
    if n < 2:
        return float(np.mean(values)) if n else math.nan, math.nan
    half = stats.t.ppf(0.975, n - 1) * np.std(values, ddof=1) / math.sqrt(n)
    return float(np.mean(values)), float(half)


def summarize(runs: Any, compare_to: str | None = None, precision: Any = None) -> Any:
    """One row per (point, policy): every metric's mean over replications and ``<metric>_ci95``.

    With ``compare_to`` (a policy label), adds ``<metric>_diff`` and
    ``<metric>_diff_ci95`` for `DIFF_METRICS`: the mean and CI of the per-replication
    difference against that policy at the same point. Replication r of every
    policy sees the same jobs, so the pairs share their noise and the paired CI
    is much tighter than the difference of two independent CIs. With
    ``precision`` (a `PrecisionConfig`), adds ``precision_met``. With one replication
    and ``run.batch_means``, ``mean_response_ci95`` is that of its batch means.
    """
    import pandas as pd

    if runs.empty:
        return runs
    metrics = [m for m in METRICS if m in runs.columns]
    keys = [c for c in runs.columns if c not in metrics and c not in ("replication", "seed", *BATCH_COLUMNS)]
    rows = []
    for (point, _), group in runs.groupby(["point", "policy"], sort=False):
        row = {key: group[key].iloc[0] for key in keys}
        if "engine" in row:  # a folder resumed on the other engine mixes them (with the same rows)
            row["engine"] = "+".join(sorted(str(engine) for engine in group["engine"].dropna().unique()))
        for metric in metrics:
            row[metric], row[f"{metric}_ci95"] = mean_ci(group[metric])
        row["replications"] = len(group)
        if len(group) == 1 and BATCH_COLUMNS[0] in group:  # one replication: its batch means give the CI
            row["mean_response_ci95"] = group[BATCH_COLUMNS[0]].iloc[0]
        if compare_to is not None:
            base = runs[(runs["point"] == point) & (runs["policy"] == compare_to)]
            paired = group.merge(base, on="replication", suffixes=("", "_base"))
            for metric in DIFF_METRICS:
                row[f"{metric}_diff"], row[f"{metric}_diff_ci95"] = mean_ci(
                    paired[metric] - paired[f"{metric}_base"])
        if precision is not None:
            mean, half = row[precision.metric], row[f"{precision.metric}_ci95"]
            row["precision_met"] = bool(half <= precision.relative_halfwidth * abs(mean))
        rows.append(row)
    return pd.DataFrame(rows)
