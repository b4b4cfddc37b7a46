"""Delay against messages per job: where each policy family sits, and the cheapest policy near JSQ.

For each sweep point of a results folder (``scenarios/sparse_feedback.yaml``: N and the load), every
policy's mean wait is set against JSQ's at the same point (found by its registry name, ``jsq``,
whatever its label); a policy is *within 10%* when its mean wait is at most 1.1 times JSQ's, and
the fewest messages per job among those is marked. This is `analysis.frontier` with these
settings (``lbemu frontier DIR --y mean_wait --within 10% --reference jsq --all`` prints the same
table); `figure` draws the trade-off by policy family.

    python -m analysis.sparse_feedback results/sparse_feedback   # the table, and sparse_feedback.png

A folder without a JSQ row at some point, or without a mean wait or messages per job, is refused
in one line (`analysis.command`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from . import command
from .canvas import save
from .frontier import frontier as general_frontier
from .frontier import frontier_table, point_keys
from .labels import key_name
from .render import render
from .style import PALETTE
from .sweep import shown

X, Y, REFERENCE, WITHIN = "messages_per_job", "mean_wait", "jsq", 0.10
"""The comparison: mean wait against messages per job, within 10% of JSQ's mean wait."""

FAMILIES = {
    "random": "no information", "round_robin": "no information", "jsq": "JSQ (query all)",
    "sqd": "SQ(d)", "sqd_memory": "SQ(d) with memory", "lsq": "LSQ", "jiq": "pull (JIQ, JBT-d)",
    "jbt": "pull (JIQ, JBT-d)", "jsq_push": "push updates", "jsq_sparse": "sparse feedback",
}


def _check(summary: pd.DataFrame) -> None:
    command.expect_columns(summary, "the comparison with JSQ", (X, Y), text=("policy", "policy_name"))


def frontier(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per (sweep point, policy): `analysis.frontier.frontier` of the mean wait against messages
    per job, within 10% of JSQ's mean wait (``ratio``, ``within``, ``chosen``).

    Raises
    ------
    emulator.ScenarioError
        If a point has no JSQ row, or ``summary`` lacks a column it reads, has a row without a
        policy, or an infinite number (`analysis.command.expect_columns`).
    """
    _check(summary)
    return general_frontier(summary, X, Y, WITHIN, REFERENCE)


def figure(summary: pd.DataFrame, path: Path) -> Path:
    """Mean wait against messages per job, one panel per sweep point, one colour per family."""
    from matplotlib.figure import Figure

    table = frontier(summary)
    keys = point_keys(summary)
    points = list(dict.fromkeys(table["point"]))
    columns = min(2, len(points))
    rows = math.ceil(len(points) / columns)
    fig = Figure(figsize=(5.2 * columns, 3.9 * rows + 0.9))
    axes = fig.subplots(rows, columns, squeeze=False).ravel()
    # A family wears the colour of its first policy in `analysis.style.PALETTE`, as in every other figure.
    colours = {family: PALETTE[name][0] for name, family in reversed(FAMILIES.items())}
    for ax, point in zip(axes, points, strict=False):
        group = table[table["point"] == point].assign(family=lambda f: f["policy_name"].map(
            lambda name: FAMILIES.get(name, name)))
        base = float(group.loc[group["policy_name"] == REFERENCE, Y].iloc[0])
        for family, part in group.groupby("family", sort=False):
            ax.errorbar(part[X], part[Y], yerr=part[f"{Y}_ci95"], fmt="o", color=colours.get(family), label=family,
                        markersize=5, capsize=2)
        chosen = group[group["chosen"]]
        ax.scatter(chosen[X], chosen[Y], s=160, facecolors="none", edgecolors="black",
                   label="fewest messages within 10%")
        ax.axhline((1 + WITHIN) * base, color="grey", linestyle="--", linewidth=1, label="1.1 × JSQ's mean wait")
        ax.set_xscale("symlog", linthresh=0.1)  # 0 messages (random, round robin) on the axis
        ax.set_xlim(0, 3 * group[X].max())  # room for JSQ's point at the right
        ax.set_yscale("log")
        ax.set_xlabel("control messages per job")
        ax.set_title(", ".join(f"{key_name(k)} = {shown(k, group[k].iloc[0])}" for k in keys),
                     fontsize="medium")
        ax.set_ylabel("mean wait (mean service times)")
    for ax in axes[len(points):]:
        ax.set_visible(False)
    handles, labels = axes[0].get_legend_handles_labels()
    unique = dict(zip(labels, handles, strict=True))
    fig.legend(unique.values(), unique.keys(), loc="lower center", ncol=4, frameon=False)
    fig.tight_layout(rect=(0, 0.9 / (3.9 * rows + 0.9), 1, 1))
    return save(fig, path)


def _write(summary: pd.DataFrame, path: Path) -> str:
    _check(summary)
    figure(summary, path)
    return render(frontier_table(summary, X, Y, WITHIN, REFERENCE, everyone=True), "markdown")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m analysis.sparse_feedback DIR [--figure PNG]``: exit status 0, or 2 with one line on bad input."""
    return command.main(argv, "sparse_feedback", __doc__ or "", "sparse_feedback.png", _write)


if __name__ == "__main__":
    raise SystemExit(main())
