"""How each policy degrades with lost messages and failing servers: the table and figure of a faults run.

The folder is a run of a scenario that sweeps ``network.loss`` and, optionally,
``system.failures`` (``scenarios/faults.yaml``). `degradation_table` is the comparison table
(`analysis.pivot`) with, per failure setting and policy, one row per loss probability and the
mean response, the p99 response, the messages sent and lost per job and the jobs lost
(``lbemu table DIR --rows system.failures --rows policy --rows network.loss --metric ...``
gives the same, less the lost messages, which it sums over kinds); `plot_degradation`
draws the mean response (with its 95% interval) against the loss, one line per
policy and one panel per failure setting, in the folder's style map.

``python -m analysis.faults DIR [--figure PNG]`` prints the table (Markdown)
and writes the figure (default ``DIR/faults.png``); a folder whose scenario
does not sweep ``network.loss`` is refused in one line (`analysis.command`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from emulator.errors import ScenarioError
from emulator.measure.messages import KINDS

from . import canvas, command
from .pivot import Pivot, pivot
from .render import render
from .style import style_of
from .sweep import failure_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure

LOSS, FAILURES = "network.loss", "system.failures"
LOST = [f"lost_per_job_{kind}" for kind in KINDS]
METRICS = ("mean_response", "p99_response", "messages_per_job", "lost_per_job", "lost_fraction")
"""The table's columns: ``lost_per_job`` is the sum of the ``lost_per_job_<kind>`` columns."""
NUMBERS = (LOSS, "mean_response", "p99_response", "messages_per_job", "lost_fraction", *LOST)
"""The columns of summary.csv the table and figure read, besides ``policy``."""


def _check(summary: pd.DataFrame) -> None:
    """`ScenarioError` unless ``summary`` is of a run that sweeps the loss, with the columns read."""
    if LOSS not in summary.columns:
        raise ScenarioError(f"{LOSS}: expected a results folder whose scenario sweeps it "
                            f"(as scenarios/faults.yaml does), got a summary without it")
    command.expect_columns(summary, "the faults table", NUMBERS, text=("policy",), keys=(LOSS,))


def _settings(summary: pd.DataFrame) -> pd.Series:
    column = summary[FAILURES] if FAILURES in summary else pd.Series([math.nan] * len(summary), summary.index)
    return column.map(failure_label)


def degradation_table(summary: pd.DataFrame) -> Pivot:
    """The comparison table of a faults run: per (failure setting, policy, loss), response, messages, losses.

    Returns
    -------
    Pivot
        Written by `analysis.render.render` (``python -m analysis.faults`` writes it as Markdown).

    Raises
    ------
    emulator.ScenarioError
        If ``summary`` has no swept ``network.loss``, no rows, lacks a column it reads,
        has a row without a policy or a loss, or an infinite number (`analysis.command.expect_columns`).
    """
    _check(summary)
    frame = summary.assign(lost_per_job=summary[LOST].sum(axis=1, min_count=1))
    rows = [key for key in (FAILURES, "policy", LOSS) if key in frame.columns]
    return pivot(frame, list(METRICS), rows=rows, cols=[], theory=False)


@canvas.styled
def plot_degradation(summary: pd.DataFrame) -> Figure:
    """Mean response against the loss probability: one line per policy, one panel per failure setting.

    Raises
    ------
    emulator.ScenarioError
        As `degradation_table`.
    """
    _check(summary)
    frame = summary.assign(failures=_settings(summary))
    settings = list(dict.fromkeys(frame["failures"]))
    policies = list(dict.fromkeys(frame["policy"]))
    style = style_of(frame)
    fig, axes = canvas.figure(len(settings), ncols=min(2, len(settings)))  # two a row: readable on a page
    for ax, setting in zip(axes, settings, strict=True):
        part = frame[frame["failures"] == setting]
        for policy in policies:
            line = part[part["policy"] == policy].sort_values(LOSS)
            ax.errorbar(line[LOSS], line["mean_response"], yerr=line.get("mean_response_ci95"),
                        color=style.colors[policy], marker=style.markers[policy], capsize=2, label=policy)
        ax.set_xscale("symlog", linthresh=0.01)
        ax.set_xlabel("message loss probability p")
        ax.set_ylabel(f"mean response time ({canvas.time_unit(summary)})")
        ax.set_title(setting, fontsize="small")
    canvas.legend(fig, axes, title="policy")
    canvas.title(fig, summary, "Mean response as messages get lost and servers fail")
    return fig


def _write(summary: pd.DataFrame, figure: Path) -> str:
    table = render(degradation_table(summary), "markdown")
    canvas.save(plot_degradation(summary), figure)
    return table


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m analysis.faults DIR [--figure PNG]``: exit status 0, or 2 with one line on bad input."""
    return command.main(argv, "faults", __doc__ or "", "faults.png", _write)


if __name__ == "__main__":
    raise SystemExit(main())
