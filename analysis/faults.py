"""How each policy degrades with lost messages and failing servers: the table and figure of a faults run.

The folder is a run of a scenario that sweeps ``network.loss`` and, optionally,
``system.failures`` (``scenarios/faults.yaml``). `degradation_table` lays out,
per failure setting and policy, the mean response, the messages sent and lost
per job and the jobs lost, one row per loss probability; `plot_degradation`
draws the mean response (with its 95% interval) against the loss, one line per
policy and one panel per failure setting, in the folder's style map.

``python -m analysis.faults DIR [--figure PNG]`` prints the table (Markdown)
and writes the figure (default ``DIR/faults.png``).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from emulator.measure.messages import KINDS

from . import canvas
from .cells import Cell
from .style import style_of
from .sweep import failure_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure

LOSS, FAILURES = "network.loss", "system.failures"


def _settings(summary: pd.DataFrame) -> pd.Series:
    column = summary[FAILURES] if FAILURES in summary else pd.Series([math.nan] * len(summary), summary.index)
    return column.map(failure_label)


def _cell(row: pd.Series, metric: str) -> str:
    return Cell(float(row[metric]), float(row.get(f"{metric}_ci95", math.nan))).text()


def degradation_table(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per (failure setting, policy, loss): response, messages sent and lost per job, jobs lost."""
    frame = summary.assign(failures=_settings(summary))
    lost = frame[[f"lost_per_job_{kind}" for kind in KINDS]].sum(axis=1)
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


def plot_degradation(summary: pd.DataFrame) -> Figure:
    """Mean response against the loss probability: one line per policy, one panel per failure setting."""
    frame = summary.assign(failures=_settings(summary))
    settings = list(dict.fromkeys(frame["failures"]))
    policies = list(dict.fromkeys(frame["policy"]))
    style = style_of(frame)
    fig, axes = canvas.figure(len(settings))
    for ax, setting in zip(axes, settings, strict=True):
        part = frame[frame["failures"] == setting]
        for policy in policies:
            line = part[part["policy"] == policy].sort_values(LOSS)
            ax.errorbar(line[LOSS], line["mean_response"], yerr=line.get("mean_response_ci95"),
                        color=style.colors[policy], marker=style.markers[policy], capsize=2, label=policy)
        ax.set_xscale("symlog", linthresh=0.01)
        ax.set_xlabel("message loss probability p")
        ax.set_ylabel(f"mean response time ({canvas.time_unit(summary)})")
        ax.set_title(setting, fontsize="medium")
        ax.grid(alpha=0.3)
    canvas.legend(fig, axes, title="policy")
    canvas.title(fig, summary, "Mean response as messages get lost and servers fail")
    return fig


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m analysis.faults", description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="results folder of a faults run (summary.csv)")
    parser.add_argument("--figure", type=Path, help="where to write the figure (default DIR/faults.png)")
    args = parser.parse_args(argv)
    summary = pd.read_csv(args.folder / "summary.csv")
    print(markdown(degradation_table(summary)), end="")
    canvas.save(plot_degradation(summary), args.figure or args.folder / "faults.png")


if __name__ == "__main__":
    main()
