"""Distributions per (point, policy) from the per-replication arrays of the task rows.

A task's row (``run_task``, and the store) carries, besides its runs.csv columns,
the arrays of `Recorder.arrays`: ``occupancy`` (s_i by i), ``total_jobs``
(``[first, probabilities]``) and ``response_bins`` (``[[bin, count], ...]`` of the
response-time sketch). This module turns them into three long-format frames:

- occupancy: ``point``, swept keys, ``policy``, ``i``, ``fraction``, ``fraction_ci95``
  (mean and Student-t half-width over replications; a replication that never
  reached length i counts as 0);
- total_jobs: ``point``, swept keys, ``policy``, ``total``, ``probability``,
  ``probability_ci95`` (likewise);
- response_cdf: ``point``, swept keys, ``policy``, ``response`` (a sketch bin's
  upper edge), ``cdf`` (fraction of the measured, served jobs of all replications
  with response <= that edge), one row per non-empty bin.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..measure.recorder import QuantileSketch

ARRAY_KEYS = ("occupancy", "total_jobs", "response_bins", "warmup", "notes")
"""Row entries that are arrays, not runs.csv columns."""


def without_arrays(row: dict[str, Any]) -> dict[str, Any]:
    """The runs.csv columns of a task row."""
    return {key: value for key, value in row.items() if key not in ARRAY_KEYS}


def _groups(rows: list[dict[str, Any]], keys: list[str]) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Rows grouped by (point, policy), in order of first appearance, with their identity columns."""
    groups: dict[tuple[Any, Any], tuple[dict[str, Any], list[dict[str, Any]]]] = {}
    for row in rows:
        key = (row["point"], row["policy"])
        if key not in groups:
            ident = {"point": row["point"], **{k: row.get(k) for k in keys}, "policy": row["policy"]}
            groups[key] = (ident, [])
        groups[key][1].append(row)
    return list(groups.values())


def _padded(arrays: list[np.ndarray]) -> np.ndarray:
    width = max(len(a) for a in arrays)
    return np.array([np.pad(a, (0, width - len(a))) for a in arrays])


def _mean_frame(rows: list[dict[str, Any]], keys: list[str], extract: Any, index: str, value: str) -> Any:
    import pandas as pd

    from .results import mean_ci

    records = []
    for ident, group in _groups(rows, keys):
        arrays = [a for a in (extract(row) for row in group) if a is not None]
        if not arrays or not any(len(a) for a in arrays):
            continue
        first = min(int(start) for start, _ in arrays)
        table = _padded([np.concatenate((np.zeros(int(start) - first), np.asarray(a, dtype=float)))
                         for start, a in arrays])
        for j in range(table.shape[1]):
            mean, half = mean_ci(table[:, j])
            records.append({**ident, index: first + j, value: mean, f"{value}_ci95": half})
    return pd.DataFrame(records, columns=["point", *keys, "policy", index, value, f"{value}_ci95"])


def occupancy_frame(rows: list[dict[str, Any]], keys: list[str]) -> Any:
    """The occupancy frame (module docstring) of task rows; ``keys`` are the swept dotted keys."""
    def extract(row: dict[str, Any]) -> Any:
        return (0, row["occupancy"]) if row.get("occupancy") else None

    return _mean_frame(rows, keys, extract, "i", "fraction")


def total_jobs_frame(rows: list[dict[str, Any]], keys: list[str]) -> Any:
    """The distribution of the total number of jobs (module docstring)."""
    def extract(row: dict[str, Any]) -> Any:
        total = row.get("total_jobs")
        return (total[0], total[1]) if total and total[1] else None

    return _mean_frame(rows, keys, extract, "total", "probability")


def response_cdf_frame(rows: list[dict[str, Any]], keys: list[str]) -> Any:
    """The pooled response-time distribution function (module docstring)."""
    import pandas as pd

    records = []
    for ident, group in _groups(rows, keys):
        counts: dict[int, int] = {}
        for row in group:
            for b, n in row.get("response_bins") or ():
                counts[b] = counts.get(b, 0) + n
        if not counts:
            continue
        bins = sorted(counts)
        cumulative = np.cumsum([counts[b] for b in bins])
        edges = QuantileSketch.LOW * QuantileSketch.RATIO ** (np.asarray(bins, dtype=float) + 1.0)
        for edge, c in zip(edges, cumulative, strict=True):
            records.append({**ident, "response": float(edge), "cdf": float(c / cumulative[-1])})
    return pd.DataFrame(records, columns=["point", *keys, "policy", "response", "cdf"])
