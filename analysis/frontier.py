"""The trade-off of a results folder: per sweep point, the policies that no other beats on both metrics.

A policy is on the Pareto front of ``y`` against ``x`` (by default mean response time against
messages per job, both lower is better) at a sweep point when no other policy there has both a
``y`` and an ``x`` at most its own, one of them lower. With a margin (``within=0.1``: 10%), the
*chosen* policy is the one with the fewest ``x`` among those whose ``y`` is at most 1 + margin
times the reference: the lowest ``y`` at the point, or that of the policy named ``reference``
(its registry name, ``policy_name``: a label is the user's choice). Both compare point estimates;
the intervals are shown beside them.

`frontier` gives the verdicts as a frame; `frontier_table` lays them out as a `Pivot` that
`analysis.render` writes like any comparison table (``lbemu frontier DIR``, ``Results.frontier()``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from emulator.errors import ScenarioError, show

from .cells import Cell
from .pivot import Entry, Pivot, check_metrics, metric_title, setting_parts
from .sweep import determines, swept_keys, value_label, varying

X, Y = "messages_per_job", "mean_response"
"""The default axes: control messages per job, mean response time."""


def margin(text: str | float) -> float:
    """A margin as ``--within`` takes it: ``10%`` or ``0.1``, at least 0.

    Examples
    --------
    >>> margin("10%"), margin("0.05"), margin(0.2)
    (0.1, 0.05, 0.2)
    """
    try:
        value = float(text[:-1]) / 100 if isinstance(text, str) and text.endswith("%") else float(text)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise ScenarioError(f"--within: expected a margin such as 10% or 0.1 (at least 0), got {show(text)}")
    return value


def point_keys(summary: pd.DataFrame) -> list[str]:
    """The swept keys that tell the sweep points apart, less those another of them determines (a zip group)."""
    keys = varying(summary, swept_keys(summary))
    return [k for i, k in enumerate(keys) if not any(determines(summary, other, k) for other in keys[:i])]


def frontier(summary: pd.DataFrame, x: str = X, y: str = Y, within: float | None = None,
             reference: str | None = None) -> pd.DataFrame:
    """Per sweep point and policy: the two metrics, whether the policy is on the front, and the margin's verdict.

    Parameters
    ----------
    summary : DataFrame
        ``summary.csv`` as a frame.
    x, y : str
        Metric columns, both lower is better (default messages per job and mean response).
    within : float, optional
        A margin on ``y`` (0.1: 10%): adds ``ratio`` (``y`` over the reference's), ``within``
        (ratio at most 1 + margin) and ``chosen`` (the fewest ``x`` among those within, ties to
        the lower ``y``), one per point.
    reference : str, optional
        The registry name of the policy whose ``y`` is the reference (``"jsq"``); default the lowest
        ``y`` at each point.

    Returns
    -------
    DataFrame
        ``point``, the swept keys that vary (`point_keys`), ``policy``, ``policy_name``, ``x``,
        ``x_ci95``, ``y``, ``y_ci95`` (named by the metrics), ``front``; with ``within`` also
        ``ratio``, ``within`` and ``chosen``. In the summary's order.

    Raises
    ------
    emulator.ScenarioError
        A metric that is not one of the summary (the valid ones listed), a point without the
        reference policy or without a value of ``y`` for it, or ``reference`` without ``within``.
    """
    check_metrics(summary, [x], "--x")
    check_metrics(summary, [y], "--y")
    if reference is not None and within is None:
        raise ScenarioError(f"reference: expected with a margin (within), got {show(reference)} alone")
    keys = point_keys(summary)
    names = summary["policy_name"] if "policy_name" in summary else summary["policy"]
    # A summary built by hand may have no point column: its swept keys tell the points apart.
    points = summary["point"] if "point" in summary else \
        summary.groupby(keys, sort=False).ngroup() if keys else pd.Series(0, index=summary.index)
    frame = summary[[*keys, "policy"]].assign(policy_name=names.astype(str))
    frame.insert(0, "point", points)
    for metric in (x, y):
        frame[metric] = summary[metric].astype(float)
        frame[f"{metric}_ci95"] = summary[f"{metric}_ci95"].astype(float) if f"{metric}_ci95" in summary \
            else math.nan
    frame["front"] = False
    for _, group in frame.groupby("point", sort=False):
        frame.loc[group.index, "front"] = _front(group[x].to_numpy(), group[y].to_numpy())
        if within is not None:
            base = _reference(group, y, reference, keys)
            ratio = group[y] / base
            frame.loc[group.index, "ratio"] = ratio
            inside = group[ratio <= 1 + within]
            frame.loc[group.index, "within"] = ratio <= 1 + within
            frame.loc[group.index, "chosen"] = False
            if not inside.empty:
                frame.loc[inside.sort_values([x, y], kind="stable").index[0], "chosen"] = True
    if within is not None:
        frame["within"] = frame["within"].astype(bool)
        frame["chosen"] = frame["chosen"].astype(bool)
    return frame.reset_index(drop=True)


def _front(xs: Any, ys: Any) -> list[bool]:
    """Whether each (x, y) is dominated by none of the others (NaN: off the front)."""
    out = []
    for x, y in zip(xs, ys, strict=True):
        if not (math.isfinite(x) and math.isfinite(y)):
            out.append(False)
            continue
        beaten = any(ox <= x and oy <= y and (ox < x or oy < y) for ox, oy in zip(xs, ys, strict=True))
        out.append(not beaten)
    return out


def _reference(group: pd.DataFrame, y: str, reference: str | None, keys: Sequence[str]) -> float:
    """The ``y`` that the margin applies to at one point: the reference policy's, or the lowest."""
    where = ", ".join(f"{k}={value_label(group[k].iloc[0])}" for k in keys) or "the sweep point"
    if reference is None:
        base = group[y].min()
    else:
        rows = group[group["policy_name"] == reference]
        if rows.empty:
            raise ScenarioError(f"policies: expected {reference} among the policies at every sweep point, the "
                                f"margin is against it, got none at {where}")
        base = rows[y].iloc[0]
    if not (math.isfinite(base) and base > 0):
        raise ScenarioError(f"summary.csv: expected a positive {y} to compare with at {where}, got {float(base):g}")
    return float(base)


def frontier_table(summary: pd.DataFrame, x: str = X, y: str = Y, within: float | None = None,
                   reference: str | None = None, everyone: bool = False) -> Pivot:
    """The frontier as a table (a `Pivot`, written by `analysis.render.render`): per point, ``x`` and ``y``.

    Rows are the policies on the front at each sweep point, by increasing ``x`` (with ``everyone``,
    every policy); with ``within`` a column gives ``y`` over the reference and the chosen policy's
    values are marked. Parameters as for `frontier`.
    """
    frame = frontier(summary, x, y, within, reference)
    keys = point_keys(summary)
    shown = frame if everyone else frame[frame["front"]]
    name = str(summary["scenario"].iloc[0]) if "scenario" in summary else "results"
    table = Pivot([*keys, "policy"], [], [x, y], name=name)
    table.titles = {x: metric_title(x, summary), y: metric_title(y, summary)}
    if within is not None:
        base = f"{reference}'s" if reference else "the lowest"
        table.metrics.append("ratio")
        table.titles["ratio"] = f"{table.titles[y]} / {base}"
    table.columns = [(metric, ()) for metric in table.metrics]
    for _, group in shown.groupby("point", sort=False):
        for _, row in group.sort_values([x, y], kind="stable").iterrows():
            r = len(table.rows)
            table.rows.append((*(row[k] for k in keys), Entry(str(row["policy"]))))
            chosen = bool(row.get("chosen", False))
            table.cells[r, 0] = Cell(row[x], row[f"{x}_ci95"], chosen)
            table.cells[r, 1] = Cell(row[y], row[f"{y}_ci95"], chosen)
            if within is not None:
                table.cells[r, 2] = Cell(row["ratio"])
    table.caption = _caption(summary, table, keys, within, reference, everyone)
    return table


def _caption(summary: pd.DataFrame, table: Pivot, keys: Sequence[str], within: float | None,
             reference: str | None, everyone: bool) -> str:
    x, y = (table.titles[m] for m in table.metrics[:2])
    which = "Every policy at each sweep point" if everyone else \
        f"The policies on the Pareto front of {y} against {x} at each sweep point (no other policy has both lower)"
    text = (f"{table.name}: " + ", ".join(setting_parts(summary, {*keys, "policy"}))
            + f". {which}, by {x}. "
            "Mean ± half-width of the 95% confidence interval (Student t over replications).")
    if within is not None:
        base = f"{reference}'s" if reference else "the lowest"
        text += (f" Marked: the fewest {x} among the policies whose {y} is within {within:.0%} of {base} "
                 "(point estimates).")
    return text
