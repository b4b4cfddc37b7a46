"""How each policy degrades with lost messages and failing servers: the table and figure of a faults run.

The folder is a run of a scenario that sweeps ``network.loss`` and, optionally,
``system.failures`` (``scenarios/faults.yaml``). `degradation_table` lays out,
per failure setting and policy, the mean response, the messages sent and lost
per job and the jobs lost, one row per loss probability; `plot_degradation`
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
from .cells import Cell
from .style import style_of
from .sweep import failure_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure

LOSS, FAILURES = "network.loss", "system.failures"
LOST = [f"lost_per_job_{kind}" for kind in KINDS]
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


def _cell(row: pd.Series, metric: str) -> str:
    return Cell(float(row[metric]), float(row.get(f"{metric}_ci95", math.nan))).text()


def degradation_table(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per (failure setting, policy, loss): response, messages sent and lost per job, jobs lost.

    Raises
    ------
    emulator.ScenarioError
        If ``summary`` has no swept ``network.loss``, no rows, lacks a column it reads,
        has a row without a policy or a loss, or an infinite number (`analysis.command.expect_columns`).
    """
    _check(summary)
    frame = summary.assign(failures=_settings(summary))
    lost = frame[LOST].sum(axis=1)
    rows = []
    for (setting, policy), group in frame.groupby(["failures", "policy"], sort=False):
        for index, row in group.sort_values(LOSS).iterrows():
            rows.append({"failures": setting, "policy": policy, "loss": f"{row[LOSS]:g}",
                         "mean response": _cell(row, "mean_response"),
                         "p99 response": _cell(row, "p99_response"),
                         "messages sent / job": _cell(row, "messages_per_job"),
                         "lost / job": f"{lost[index]:.3g}",
                         "jobs lost": _cell(row, "lost_fraction")})
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame) -> str:
    """The table as Markdown, one block per failure setting."""
    blocks = []
    for setting, group in table.groupby("failures", sort=False):
        columns = [c for c in group.columns if c != "failures"]
        lines = [f"**{setting}**", "", "| " + " | ".join(columns) + " |",
                 "|" + "|".join("---" for _ in columns) + "|"]
        lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in group[columns].itertuples(index=False)]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


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
    table = markdown(degradation_table(summary))
    canvas.save(plot_degradation(summary), figure)
    return table


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m analysis.faults DIR [--figure PNG]``: exit status 0, or 2 with one line on bad input."""
    return command.main(argv, "faults", __doc__ or "", "faults.png", _write)


if __name__ == "__main__":
    raise SystemExit(main())
