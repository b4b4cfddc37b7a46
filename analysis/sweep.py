"""What a results summary sweeps: its swept keys, which key determines which, and how their values read.

A summary (``summary.csv`` as a frame, or any frame of a results folder with
the swept keys as columns) names each swept key by its dotted path
(``workload.load``, ``policies.2.period``); tables and figures both choose
their rows, columns, axes and panels from these keys, and label values the
same way. Nothing here imports pandas, so that importing `analysis.plots`
stays cheap.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def swept_keys(summary: pd.DataFrame) -> list[str]:
    """Columns of swept keys: names with a dot, CI columns aside.

    Parameters
    ----------
    summary : DataFrame
        ``summary.csv`` as a frame.

    Returns
    -------
    list of str
    """
    return [c for c in summary.columns if "." in c and not c.endswith("_ci95")]


def varying(summary: pd.DataFrame, keys: Sequence[str]) -> list[str]:
    """The keys among ``keys`` with more than one value in the summary (a missing value counts as one)."""
    return [k for k in keys if summary[k].nunique(dropna=False) > 1]


def determines(summary: pd.DataFrame, key: str, other: str) -> bool:
    """Whether each value of ``key`` comes with a single value of ``other`` (e.g. keys of one zip group)."""
    return bool(summary.groupby(key, dropna=False)[other].nunique(dropna=False).max() <= 1)


def short_name(key: str) -> str:
    """The last two parts of a dotted key: ``workload.service.kind`` -> ``service.kind``.

    Parameters
    ----------
    key : str
        A column name, dotted or not.

    Returns
    -------
    str
    """
    return ".".join(key.split(".")[-2:])


def value_label(value: Any) -> str:
    """A key's value as it reads in a label: floats in ``%g`` (0.5, 1e+06), anything else as ``str``.

    Examples
    --------
    >>> value_label(0.95), value_label(1000000.0), value_label(10), value_label("pool")
    ('0.95', '1e+06', '10', 'pool')
    """
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def failure_label(value: Any) -> str:
    """A short name for a ``system.failures`` value as summary.csv holds it.

    Examples
    --------
    >>> failure_label(float("nan"))
    'no failures'
    >>> failure_label("{'up': {'kind': 'exponential', 'mean': 200}, 'down': {'kind': 'exponential', "
    ...               "'mean': 5}, 'on_down': 'lose'}")
    'failures (up 200, down 5), lose'
    """
    failures = ast.literal_eval(value) if isinstance(value, str) else value  # summary.csv holds its repr
    if failures is None or (isinstance(failures, float) and math.isnan(failures)):
        return "no failures"
    up, down = failures["up"].get("mean", 1), failures["down"].get("mean", 1)
    return f"failures (up {up:g}, down {down:g}), {failures.get('on_down', 'hold')}"


def law_label(value: Any) -> str:
    """A short name for a law or an arrival process (``workload.service``, ``workload.arrivals``) as summary.csv
    holds it: its kind and the parameters that tell it apart.

    Examples
    --------
    >>> law_label("{'kind': 'hyperexponential', 'mean': 1, 'scv': 4}"), law_label({'kind': 'exponential', 'mean': 2})
    ('hyperexponential scv 4', 'exponential mean 2')
    >>> law_label("{'kind': 'batch_poisson', 'mean_batch': 4, 'batch': 'deterministic'}")
    'Poisson batches of 4'
    """
    law = ast.literal_eval(value) if isinstance(value, str) and value.startswith("{") else value
    if not isinstance(law, dict) or "kind" not in law:
        return value_label(law)
    kind, rest = law["kind"], {k: v for k, v in law.items() if k != "kind" and v is not None}
    if kind == "batch_poisson":
        size = value_label(rest.get("mean_batch", 2.0))
        fixed = rest.get("batch") == "deterministic"
        return f"Poisson batches of {size}" if fixed else f"Poisson batches, mean {size}"
    if rest.get("mean") == 1:
        rest.pop("mean")
    return " ".join([kind, *(f"{k} {value_label(v)}" for k, v in rest.items())])


LABELS: dict[str, Callable[[Any], str]] = {"system.failures": failure_label, "workload.service": law_label,
                                           "workload.arrivals": law_label}
"""Keys whose values are laws or settings too long to read raw, and how each reads instead."""


def shown(key: str, value: Any) -> str:
    """A key's value as a table or figure shows it: `value_label`, or the key's own label in `LABELS`.

    Matching values stays with `value_label`: a short label may leave out what tells two values apart.

    Examples
    --------
    >>> shown("network.loss", 0.05), shown("system.failures", "None")
    ('0.05', 'no failures')
    """
    label = LABELS.get(key)
    return label(value) if label is not None else value_label(value)


def fixed_settings(summary: pd.DataFrame) -> list[str]:
    """``key = value`` for each dotted column with one value in the summary: the settings every row shares.

    The settings that differ from the defaults have a column each (docs/results.md); those that
    vary are a table's rows and columns or a figure's axes and panels, these go in its caption
    or title.

    Examples
    --------
    >>> import pandas as pd
    >>> fixed_settings(pd.DataFrame({"network.latency": ["exponential(0.05)"] * 2, "workload.load": [0.5, 0.9]}))
    ['network.latency = exponential(0.05)']
    """
    keys = [key for key in swept_keys(summary) if not _resolved_copy(summary, key)]
    return [f"{key} = {shown(key, summary[key].iloc[0])}" for key in keys if key not in varying(summary, keys)]


RESOLVED = {"workload.load": "load", "system.servers": "servers", "system.dispatchers": "dispatchers",
            "system.discipline": "discipline"}
"""Swept keys and the resolved column that shows the same value when the sweep gives a plain one."""


def _resolved_copy(summary: pd.DataFrame, key: str) -> bool:
    column = RESOLVED.get(key)
    return column is not None and column in summary.columns and \
        list(map(value_label, summary[key])) == list(map(value_label, summary[column]))


def describe(keys: Sequence[str], values: Sequence[Any]) -> str:
    """``key=value, key=value`` for a combination of swept keys, each key by its `short_name`.

    Examples
    --------
    >>> describe(["workload.load", "system.servers"], [0.9, 100])
    'workload.load=0.9, system.servers=100'
    """
    return ", ".join(f"{short_name(k)}={value_label(v)}" for k, v in zip(keys, values, strict=True))
