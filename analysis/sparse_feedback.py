"""Delay against messages per job: where each policy family sits, and the cheapest policy near JSQ.

For each (N, load) of a results folder (``scenarios/sparse_feedback.yaml``), every
policy's mean wait is set against JSQ's at the same point; a policy is *within 10%*
when its mean wait is at most 1.1 times JSQ's. `frontier` gives that table, with
the cheapest such policy per point marked; `figure` draws the trade-off.

    python -m analysis.sparse_feedback results/sparse_feedback   # the table, and sparse_feedback.png

A folder swept over other keys than N and load (a policy twice at one point),
without a JSQ row at some point, or without a mean wait or messages per job
for some policy, is refused in one line (`analysis.command`). With one
replication there is no interval: the verdict then says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from emulator.errors import ScenarioError

from . import canvas, command
from .style import Style, style_of

if TYPE_CHECKING:
    from matplotlib.figure import Figure

NUMBERS = ("servers", "load", "mean_wait", "mean_wait_ci95", "messages_per_job", "messages_per_job_ci95")
"""The columns of summary.csv the comparison reads, besides ``policy`` and ``policy_name``."""
WITHIN = 1.10
"""A policy is within 10% of JSQ when its mean wait is at most this times JSQ's."""

FAMILIES = {
    "random": "no information", "round_robin": "no information", "jsq": "JSQ (query all)",
    "sqd": "SQ(d)", "sqd_memory": "SQ(d) with memory", "lsq": "LSQ", "jiq": "pull (JIQ, JBT-d)",
    "jbt": "pull (JIQ, JBT-d)", "jsq_push": "push updates", "jsq_sparse": "sparse feedback",
}


def frontier(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per (N, load, policy): mean wait and its CI, messages per job, the ratio to JSQ's wait.

    ``within`` says whether the mean wait is at most `WITHIN` times JSQ's (point
    estimates); ``clear`` whether the CIs of both leave no doubt of it (the
    policy's upper end below 1.1 times JSQ's lower end, or its lower end above 1.1
    times JSQ's upper end). ``cheapest`` marks, per point, the fewest messages per
    job among the policies within.

    Raises
    ------
    emulator.ScenarioError
        If a point has no JSQ row, a policy has no mean wait or messages per job
        (NaN), or ``summary`` lacks a column it reads, has a row without a policy
        or a point, or an infinite number (`analysis.command.expect_columns`).
    """
    command.expect_columns(summary, "the comparison with JSQ", NUMBERS, text=("policy", "policy_name"),
                           keys=("servers", "load"))
    rows = []
    for (servers, load), group in summary.groupby(["servers", "load"], sort=True):
        _check_point(group, f"N={servers:g}, load={load:g}")
        jsq = group[group["policy_name"] == "jsq"]
        base, base_ci = float(jsq["mean_wait"].iloc[0]), float(jsq["mean_wait_ci95"].iloc[0])
        for _, row in group.iterrows():
            wait, ci = float(row["mean_wait"]), float(row["mean_wait_ci95"])
            within = wait <= WITHIN * base
            if row["policy_name"] == "jsq":
                clear = True  # the reference itself
            elif within:
                clear = wait + ci <= WITHIN * (base - base_ci)
            else:
                clear = wait - ci > WITHIN * (base + base_ci)
            rows.append({"servers": servers, "load": load, "policy": row["policy"],
                         "family": FAMILIES.get(row["policy_name"], row["policy_name"]),
                         "mean_wait": wait, "mean_wait_ci95": ci, "ratio": wait / base,
                         "messages_per_job": float(row["messages_per_job"]),
                         "messages_per_job_ci95": float(row["messages_per_job_ci95"]),
                         "within": within, "clear": bool(clear)})
    table = pd.DataFrame(rows)
    table["cheapest"] = False
    for _, group in table[table["within"]].groupby(["servers", "load"]):
        table.loc[group["messages_per_job"].idxmin(), "cheapest"] = True
    return table


def _check_point(group: pd.DataFrame, point: str) -> None:
    """`ScenarioError` unless the rows of one (N, load) hold JSQ, each policy once, with a mean wait and messages."""
    if not (group["policy_name"] == "jsq").any():
        raise ScenarioError(f"policies: expected jsq among the policies at every (N, load), the comparison is "
                            f"against it, got none at {point}")
    counts = group["policy"].value_counts(sort=False)
    if counts.max() > 1:  # another key swept besides N and load: the points would mix
        raise ScenarioError(f"summary.csv: expected one row per policy at each (N, load), a sweep over N and load "
                            f"only, got {counts.max()} for {counts.idxmax()} at {point}")
    for column in ("mean_wait", "messages_per_job"):
        blank = group[group[column].isna()]
        if not blank.empty:
            raise ScenarioError(f"summary.csv: expected a number in '{column}' for every policy, got none "
                                f"for {blank['policy'].iloc[0]} at {point}")


def _number(value: float, ci: float) -> str:
    if ci > 0 and math.isfinite(ci):
        places = max(0, 1 - math.floor(math.log10(ci)))
        return f"{value:.{places}f} ± {ci:.{places}f}"
    return f"{value:.4g}"


def markdown(table: pd.DataFrame) -> str:
    """The frontier as markdown: per point, the policies by messages per job, the cheapest in bold."""
    lines = ["| N | load | policy | messages/job | mean wait | wait / JSQ's | within 10% |",
             "|---|---|---|---|---|---|---|"]
    for (servers, load), group in table.groupby(["servers", "load"], sort=True):
        for _, row in group.sort_values("messages_per_job").iterrows():
            # One replication has no interval (NaN): nothing to overlap, only no way to tell.
            unclear = " (CIs overlap 1.1)" if math.isfinite(row["mean_wait_ci95"]) else " (no CI: one replication)"
            verdict = ("yes" if row["within"] else "no") + ("" if row["clear"] else unclear)
            policy = f"**{row['policy']}**" if row["cheapest"] else row["policy"]
            lines.append(f"| {servers} | {load:g} | {policy} | "
                         f"{_number(row['messages_per_job'], row['messages_per_job_ci95'])} | "
                         f"{_number(row['mean_wait'], row['mean_wait_ci95'])} | {row['ratio']:.3g} | {verdict} |")
    return "\n".join(lines)


def figure(table: pd.DataFrame, path: Path, style: Style | None = None) -> Path:
    """Write `draw` of ``table`` as ``path`` (PNG, with its SVG twin); return ``path``."""
    return canvas.save(draw(table, style), path)


@canvas.styled
def draw(table: pd.DataFrame, style: Style | None = None) -> Figure:
    """Mean wait against messages per job, one panel per (N, load), one colour and marker per policy.

    ``style`` is the folder's (`analysis.style.style_of` of its summary: JIQ and JBT-d in their own
    colours, the sparse-feedback variants in shades of theirs with markers of their own, as in
    every other figure); without it, policies are styled by their labels.
    """
    points = sorted(set(zip(table["servers"], table["load"], strict=True)))
    policies = list(dict.fromkeys(table["policy"].astype(str)))
    style = style or style_of(pd.DataFrame({"policy": policies}))
    fig, axes = canvas.figure(len(points), ncols=min(2, len(points)), width=4.4, height=3.4)
    for ax, (servers, load) in zip(axes, points, strict=True):
        group = table[(table["servers"] == servers) & (table["load"] == load)]
        # The reference is found by its family, as `frontier` found it by name: labels are the user's.
        base = float(group.loc[group["family"] == FAMILIES["jsq"], "mean_wait"].iloc[0])
        for policy in policies:
            part = group[group["policy"].astype(str) == policy]
            ax.errorbar(part["messages_per_job"], part["mean_wait"], yerr=part["mean_wait_ci95"], linestyle="none",
                        marker=style.markers[policy], color=style.colors[policy], label=policy, markersize=6,
                        markeredgecolor="black", markeredgewidth=0.4, capsize=2)
        cheapest = group[group["cheapest"]]
        ax.scatter(cheapest["messages_per_job"], cheapest["mean_wait"], s=220, facecolors="none",
                   edgecolors="black", linewidths=1.2, label="fewest messages within 10%")
        ax.axhline(WITHIN * base, color="grey", linestyle="--", linewidth=1, label="1.1 × JSQ's mean wait")
        ax.set_xscale("symlog", linthresh=0.1)  # 0 messages (random, round robin) on the axis
        # Left of 0 and right of the largest, room for the whole marker (symlog is linear below 0.1).
        ax.set_xlim(-0.04, 3 * group["messages_per_job"].max())
        ax.set_yscale("log")
        ax.set_xlabel("control messages per job")
        ax.set_title(f"N = {servers}, load {load:g}", fontsize="small")
        ax.set_ylabel("mean wait (mean service times)")
    canvas.legend(fig, axes, loc="outside lower center", ncols=4)
    return fig


def _write(summary: pd.DataFrame, path: Path) -> str:
    table = frontier(summary)
    figure(table, path, style_of(summary))
    return markdown(table)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m analysis.sparse_feedback DIR [--figure PNG]``: exit status 0, or 2 with one line on bad input."""
    return command.main(argv, "sparse_feedback", __doc__ or "", "sparse_feedback.png", _write)


if __name__ == "__main__":
    raise SystemExit(main())
