"""Delay against messages per job: where each policy family sits, and the cheapest policy near JSQ.

For each sweep point of a results folder (``scenarios/sparse_feedback.yaml``: N and the load), every
policy's mean wait is set against JSQ's at the same point (found by its registry name, ``jsq``,
whatever its label); a policy is *within 10%* when its mean wait is at most 1.1 times JSQ's, and
the fewest messages per job among those is marked. This is `analysis.frontier` with these
settings (``lbemu frontier DIR --y mean_wait --within 10% --reference jsq --all`` prints the same
table); `figure` draws the trade-off, one colour and marker per policy.

    python -m analysis.sparse_feedback results/sparse_feedback   # the table, and sparse_feedback.png

A folder without a JSQ row at some point, or without a mean wait or messages per job, is refused
in one line (`analysis.command`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from . import canvas, command
from .frontier import frontier as general_frontier
from .frontier import frontier_table
from .labels import key_name
from .render import render
from .style import Style, style_of
from .sweep import shown

if TYPE_CHECKING:
    from matplotlib.figure import Figure

X, Y, REFERENCE, WITHIN = "messages_per_job", "mean_wait", "jsq", 0.10
"""The comparison: mean wait against messages per job, within 10% of JSQ's mean wait."""


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


def figure(table: pd.DataFrame, path: Path, style: Style | None = None) -> Path:
    """Write `draw` of ``table`` (`frontier`) as ``path`` (PNG, with its SVG twin); return ``path``."""
    return canvas.save(draw(table, style), path)


@canvas.styled
def draw(table: pd.DataFrame, style: Style | None = None) -> Figure:
    """Mean wait against messages per job, one panel per sweep point, one colour and marker per policy.

    ``table`` is `frontier`'s. ``style`` is the folder's (`analysis.style.style_of` of its summary:
    JIQ and JBT-d in their own colours, the sparse-feedback variants in shades of theirs with markers
    of their own, as in every other figure); without it, policies are styled by their labels.
    """
    keys = list(table.columns[1:table.columns.get_loc("policy")])  # the swept keys, between point and policy
    points = list(dict.fromkeys(table["point"]))
    policies = list(dict.fromkeys(table["policy"].astype(str)))
    style = style or style_of(pd.DataFrame({"policy": policies}))
    fig, axes = canvas.figure(len(points), ncols=min(2, len(points)), width=4.4, height=3.4)
    for ax, point in zip(axes, points, strict=True):
        group = table[table["point"] == point]
        # The reference is found by its registry name, as `frontier` found it: labels are the user's.
        base = float(group.loc[group["policy_name"] == REFERENCE, Y].iloc[0])
        for policy in policies:
            part = group[group["policy"].astype(str) == policy]
            ax.errorbar(part[X], part[Y], yerr=part[f"{Y}_ci95"], linestyle="none",
                        marker=style.markers[policy], color=style.colors[policy], label=policy, markersize=6,
                        markeredgecolor="black", markeredgewidth=0.4, capsize=2)
        chosen = group[group["chosen"]]
        ax.scatter(chosen[X], chosen[Y], s=220, facecolors="none", edgecolors="black", linewidths=1.2,
                   label="fewest messages within 10%")
        ax.axhline((1 + WITHIN) * base, color="grey", linestyle="--", linewidth=1, label="1.1 × JSQ's mean wait")
        ax.set_xscale("symlog", linthresh=0.1)  # 0 messages (random, round robin) on the axis
        # Left of 0 and right of the largest, room for the whole marker (symlog is linear below 0.1).
        ax.set_xlim(-0.04, 3 * group[X].max())
        ax.set_yscale("log")
        ax.set_xlabel("control messages per job")
        ax.set_title(", ".join(f"{key_name(k)} = {shown(k, group[k].iloc[0])}" for k in keys), fontsize="small")
        ax.set_ylabel("mean wait (mean service times)")
    canvas.legend(fig, axes, loc="outside lower center", ncols=4)
    return fig


def _write(summary: pd.DataFrame, path: Path) -> str:
    table = frontier(summary)
    figure(table, path, style_of(summary))
    return render(frontier_table(summary, X, Y, WITHIN, REFERENCE, everyone=True), "markdown")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m analysis.sparse_feedback DIR [--figure PNG]``: exit status 0, or 2 with one line on bad input."""
    return command.main(argv, "sparse_feedback", __doc__ or "", "sparse_feedback.png", _write)


if __name__ == "__main__":
    raise SystemExit(main())
