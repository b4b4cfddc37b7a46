"""``warmup.png``: the warm-up MSER-5 found, from ``warmup.csv`` (``run.warmup_jobs: auto``).

Two panels per policy, at one sweep point (the one whose replications dropped the
most jobs on average, where the warm-up matters most): above, the running mean
response against the jobs that arrived, one line per replication; below, the MSER
statistic Z of a truncation at each job (log scale). A dotted vertical line marks
each replication's truncation point, in its line's colour. The running mean levels
off after the warm-up; Z falls while dropping jobs removes the start's bias and rises
once it only removes data (`emulator.measure.mser`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import canvas
from .source import source_of
from .sweep import swept_keys

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

MAX_POLICIES = 6


def chosen_point(warmup: pd.DataFrame) -> Any:
    """The sweep point whose replications dropped the most jobs on average."""
    per_run = warmup.drop_duplicates(["point", "policy", "replication"])
    return per_run.groupby("point", sort=False)["truncation"].mean().idxmax()


@canvas.styled
def plot_warmup(results: Any, ax: canvas.Target = None) -> Figure:
    """The running mean response and the MSER statistic against jobs, per policy, truncation marked.

    Parameters
    ----------
    results : emulator.Results or path
        A run's results (``Results.warmup``), or a results folder with ``warmup.csv``.
    ax : sequence of Axes, or Figure, optional
        Draw into one Axes per panel (two per policy: running means, then MSER), or into an
        empty Figure or SubFigure (the whole figure): see `analysis.canvas.figure`.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    emulator.ScenarioError
        If there is no warm-up data (the scenario did not use ``run.warmup_jobs: auto``).
    """
    from matplotlib import colormaps

    from emulator.errors import ScenarioError

    source = source_of(results)
    warmup = source.warmup
    if warmup is None:
        raise ScenarioError("warmup: expected results of run.warmup_jobs: auto (warmup.csv), got none")
    point = chosen_point(warmup)
    frame = warmup[warmup["point"] == point]
    policies = list(dict.fromkeys(frame["policy"].astype(str)))
    shown = policies[:MAX_POLICIES]
    fig, axes = canvas.figure(2 * len(shown), len(shown), width=3.8, height=2.8, ax=ax, name="warmup")
    unit = canvas.time_unit(source.summary, source.scenario)
    colours = colormaps["tab10"]
    for column, policy in enumerate(shown):
        top, bottom = axes[column], axes[len(shown) + column]
        rows = frame[frame["policy"].astype(str) == policy]
        for i, (_, run) in enumerate(rows.groupby("replication", sort=True)):
            colour = colours(i % 10)
            cut = int(run["truncation"].iloc[0])
            top.plot(run["jobs"], run["running_mean"], color=colour, linewidth=1.0)
            bottom.plot(run["start"], run["mser"], color=colour, linewidth=1.0)
            for panel in (top, bottom):
                panel.axvline(cut, color=colour, linestyle=":", linewidth=1.0)
        top.set_title(policy, fontsize="small")
        top.set_ylabel(f"running mean ({unit})")
        bottom.set_yscale("log")
        bottom.set_xlabel("jobs (in arrival order)")
        bottom.set_ylabel("MSER statistic Z")
    keys = swept_keys(frame)
    where = canvas.panel_title(keys, [frame.iloc[0][k] for k in keys]) if keys else ""
    more = "" if len(shown) == len(policies) else f", {len(shown)} of {len(policies)} policies"
    canvas.title(fig, source.summary, f"Warm-up found by MSER-5 (dotted: truncation point; one line per "
                 f"replication{more}){': ' + where if where else ''}", source.scenario, ax)
    return fig
