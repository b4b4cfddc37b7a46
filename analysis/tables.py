"""Comparison tables: one row per (sweep point, policy), mean ± 95% CI half-width."""

from __future__ import annotations

import math

import pandas as pd

from emulator.messages import KINDS

DEFAULT_METRICS = ("mean_response", "p99_response", "messages_per_job")
IDENTITY = ("scenario", "point", "policy", "policy_name", "servers", "dispatchers", "discipline",
            "load", "arrivals", "service", "d", "replications")


def _cell(mean: float, half: float | None, digits: int) -> str:
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "-"
    text = f"{mean:.{digits}f}"
    if half is not None and not math.isnan(half) and half > 0:
        text += f" ± {half:.{digits}f}"
    return text


def _header(metric: str) -> str:
    """Short column headers: ``query/job`` for ``messages_per_job_query``."""
    kind = metric.removeprefix("messages_per_job_")
    return f"{kind}/job" if kind in KINDS else metric


def comparison_table(summary: pd.DataFrame, metrics: tuple[str, ...] | list[str] | None = None,
                     format: str = "text", digits: int = 3) -> str:
    """Format a summary as a comparison table.

    Parameters
    ----------
    summary : DataFrame
        ``summary.csv`` as a frame.
    metrics : list of str, optional
        Metric columns to show; default mean response, p99 response, messages per
        job, the paired differences if the run had ``compare_to``, and the per-kind
        message columns that are non-zero anywhere.
    format : {"text", "markdown", "latex", "csv"}
    """
    if metrics is None:
        kinds = [f"messages_per_job_{kind}" for kind in KINDS
                 if f"messages_per_job_{kind}" in summary and summary[f"messages_per_job_{kind}"].abs().sum() > 0]
        paired = [m for m in ("mean_response_diff", "messages_per_job_diff") if m in summary]
        metrics = [*DEFAULT_METRICS, *paired, *kinds]
    missing = [m for m in metrics if m not in summary.columns]
    if missing:
        from emulator.errors import ScenarioError

        raise ScenarioError(f"--metric: expected a column of summary.csv, got '{missing[0]}'")
    swept = [c for c in summary.columns if "." in c and not c.endswith("_ci95")]
    shown = {key.rsplit(".", 1)[-1] for key in swept}  # workload.load already shows load
    varying = [c for c in ("servers", "load") if c in summary and summary[c].nunique() > 1 and c not in shown]
    keys = [*swept, *varying] or (["load"] if "load" in summary else [])
    table = summary[[*keys, "policy"]].copy()
    for metric in metrics:
        half = summary.get(f"{metric}_ci95")
        table[_header(metric)] = [
            _cell(m, None if half is None else h, digits)
            for m, h in zip(summary[metric], half if half is not None else [None] * len(summary), strict=True)]
    if format == "csv":
        return table.to_csv(index=False)
    if format == "markdown":
        return table.to_markdown(index=False)
    if format == "latex":
        # Escape underscores and the like in headers and cells; ± needs math mode.
        return table.to_latex(index=False, escape=True, float_format="%g").replace("±", r"$\pm$")
    return table.to_string(index=False)
