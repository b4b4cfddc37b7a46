"""Tidy result frames: runs (one row per replication) and summary (mean and 95% CI)."""

from __future__ import annotations

import math
from typing import Any

from .config import Point, ResolvedPolicy
from .messages import KINDS

METRICS: tuple[str, ...] = (
    "jobs", "mean_response", "mean_wait", "p50_response", "p90_response", "p99_response",
    "prob_wait", "mean_queue_length", "messages_per_job",
    *(f"messages_per_job_{kind}" for kind in KINDS),
    "messages_per_server_time", "blocked_fraction", "sim_time", "wall_seconds",
)


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
    for key, value in point.values.items():
        row[key] = value if isinstance(value, (int, float, str, bool)) else str(value)
    return row


def summarize(runs: Any) -> Any:
    """Average every metric over replications, with ``<metric>_ci95`` (Student t) per (point, policy)."""
    import numpy as np
    import pandas as pd
    from scipy import stats

    if runs.empty:
        return runs
    metrics = [m for m in METRICS if m in runs.columns]
    keys = [c for c in runs.columns if c not in metrics and c not in ("replication", "seed")]
    rows = []
    for _, group in runs.groupby(["point", "policy"], sort=False):
        row = {key: group[key].iloc[0] for key in keys}
        n = len(group)
        t = stats.t.ppf(0.975, n - 1) if n > 1 else math.nan
        for metric in metrics:
            values = group[metric].to_numpy(dtype=float)
            row[metric] = float(np.mean(values))
            row[f"{metric}_ci95"] = float(t * np.std(values, ddof=1) / math.sqrt(n)) if n > 1 else math.nan
        row["replications"] = n
        rows.append(row)
    return pd.DataFrame(rows)
