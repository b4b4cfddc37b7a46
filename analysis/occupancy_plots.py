"""Figures of the queue-length distribution: ``occupancy`` and, for server pools, ``halfin_whitt``.

Both take `emulator.Results` or a results folder with ``occupancy.csv``
(`analysis.plots.available` lists them when the results have one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import canvas
from .occupancy import policies_of, scaled_deviations, theory_tail
from .source import Source, source_of
from .style import style_of

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PANELS_MAX = 24  # points drawn; more would make an unreadable figure
FRAME_COLUMNS = ("point", "policy", "i", "fraction", "fraction_ci95")


def _occupancy(source: Source, name: str) -> pd.DataFrame:
    from emulator.errors import ScenarioError

    if source.occupancy is None:
        raise ScenarioError(f"{name}: expected results with occupancy.csv (run.occupancy: true), got none")
    return source.occupancy


def _keys(occupancy: pd.DataFrame) -> list[str]:
    return [c for c in occupancy.columns if c not in FRAME_COLUMNS]


def _title(frame: pd.DataFrame, keys: list[str]) -> str:
    row = frame.iloc[0]
    return canvas.panel_title(keys, [row[key] for key in keys]) or f"point {row['point']}"


def _integer_ticks(ax: Axes) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def has_pools(results: Any) -> bool:
    """Whether ``results`` has server pools with occupancies, hence a `plot_halfin_whitt` figure."""
    source = source_of(results)
    return source.occupancy is not None and not scaled_deviations(source.occupancy, source.summary).empty


@canvas.styled
def plot_occupancy(results: Any, ax: canvas.Target = None) -> Figure:
    """Queue-length tails: the fraction of servers (pools) with at least i jobs against i, log scale.

    One panel per sweep point (at most `PANELS_MAX`), one line per policy with
    its 95% confidence interval as a band (when there are two replications or
    more), and dashed in the same colour the theory curve where there is one
    (`analysis.occupancy.theory_tail`).

    Parameters
    ----------
    results : emulator.Results or path
        A run's results (``Results.occupancy``), or a results folder with ``occupancy.csv``.
    ax : Axes, sequence of Axes, or Figure, optional
        Draw into these axes (a one-panel figure only: a single sweep point); or into one Axes per
        panel, or into an empty Figure or SubFigure (the whole figure): see
        `analysis.canvas.figure`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    source = source_of(results)
    occupancy = _occupancy(source, "occupancy")
    keys = _keys(occupancy)
    info = policies_of(source.scenario) if source.scenario is not None else {}
    policies = list(dict.fromkeys(occupancy["policy"].astype(str)))
    style = style_of(source.summary, policies)
    points = list(dict.fromkeys(occupancy["point"]))[:PANELS_MAX]
    fig, axes = canvas.figure(len(points), ax=ax, name="occupancy")
    theory_drawn = False
    for panel, point in zip(axes, points, strict=True):
        here = occupancy[(occupancy["point"] == point) & (occupancy["i"] >= 1) & (occupancy["fraction"] > 0)]
        for policy in policies:
            rows = here[here["policy"].astype(str) == policy].sort_values("i")
            if rows.empty:
                continue
            colour = style.colors[policy]
            panel.plot(rows["i"], rows["fraction"], color=colour, marker=style.markers[policy], markersize=3,
                       markevery=max(1, len(rows) // 10), linewidth=1.3, label=policy)
            half = rows["fraction_ci95"]
            if half.notna().any():
                # On a log scale a band below 0 would fall off the axis: stop it at 1/10 of the value.
                lower = (rows["fraction"] - half.fillna(0)).clip(lower=0.1 * rows["fraction"])
                panel.fill_between(rows["i"], lower, rows["fraction"] + half.fillna(0), color=colour, alpha=0.2,
                                   linewidth=0)
            curve = theory_tail(info[point, policy]) if (point, policy) in info else None
            if curve is not None:
                values, name = curve
                top = int(rows["i"].max()) + 1
                i = [k for k in range(1, min(len(values), top + 1)) if values[k] > 0]
                # The theory's name says its policy ("SQ(2) mean field", "M/M/1 tail"), the colour too.
                panel.plot(i, [values[k] for k in i], linestyle="--", color=colour, linewidth=1, label=name)
                theory_drawn = True
        panel.set_yscale("log")
        if not here.empty:
            panel.set_ylim(bottom=max(float(here["fraction"].min()) / 10, 1e-9), top=1.5)
        _integer_ticks(panel)
        panel.set_xlabel("i (jobs)")
        panel.set_ylabel("fraction with ≥ i jobs")
        panel.set_title(_title(occupancy[occupancy["point"] == point], keys), fontsize="small")
    canvas.legend(fig, axes, ax=ax)
    ci = canvas.ci_note(source.summary).replace(" (95% CI)", " (95% CI bands)")
    canvas.title(fig, source.summary, "Queue-length tails: simulated" + ci + (", theory dashed" if theory_drawn
                                                                                else ""), source.scenario, ax)
    return fig


@canvas.styled
def plot_halfin_whitt(results: Any, ax: canvas.Target = None) -> Figure:
    """Server pools' occupancies on the diffusion scale: √N (q_i − q_i^fluid) against i.

    One panel per sweep point, one line per policy with its 95% confidence
    interval (`analysis.occupancy.scaled_deviations`), for the i nearest the
    fluid point of JSQ.

    Parameters
    ----------
    results : emulator.Results or path
        A run's results on server pools with occupancies, or such a results folder.
    ax : Axes, sequence of Axes, or Figure, optional
        Draw into these axes (a one-panel figure only: a single sweep point); or into one Axes per
        panel, or into an empty Figure or SubFigure (the whole figure): see
        `analysis.canvas.figure`.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    emulator.ScenarioError
        If the results hold no pools with occupancies.
    """
    from emulator.errors import ScenarioError

    source = source_of(results)
    occupancy = _occupancy(source, "halfin_whitt")
    deviations = scaled_deviations(occupancy, source.summary)
    if deviations.empty:
        raise ScenarioError("halfin_whitt: expected results on server pools (discipline: pool), got none")
    keys = _keys(occupancy)
    style = style_of(source.summary, list(dict.fromkeys(deviations["policy"].astype(str))))
    deviations = deviations[deviations["i"] <= deviations.groupby("point")["i"].transform("min") + 3]
    points = list(dict.fromkeys(deviations["point"]))[:PANELS_MAX]
    fig, axes = canvas.figure(len(points), ax=ax, name="halfin_whitt")
    for panel, point in zip(axes, points, strict=True):
        here = deviations[deviations["point"] == point]
        for policy, rows in here.groupby("policy", sort=False):
            panel.errorbar(rows["i"], rows["deviation"], yerr=rows["deviation_ci95"], color=style.colors[policy],
                           marker=style.markers[policy], markersize=4, capsize=2, label=policy)
        panel.axhline(0.0, color="black", linewidth=0.8)
        _integer_ticks(panel)
        panel.set_xlabel("i (tasks)")
        panel.set_ylabel("√N (q_i − q_i JSQ fluid)")
        panel.set_title(_title(occupancy[occupancy["point"] == point], keys), fontsize="small")
    canvas.legend(fig, axes, title="policy", ax=ax)
    canvas.title(fig, source.summary, "Occupancies on the diffusion scale: deviation from JSQ's fluid point"
                 + canvas.ci_note(source.summary), source.scenario, ax)
    return fig
