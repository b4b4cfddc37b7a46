"""Figures of a results summary's metrics: delay, messages, their trade-off, messages by kind.

`plot_folder` is what ``lbemu plot DIR`` calls. Give it ``summary.csv`` as a
frame and a folder, and it writes these PNG files there (each with an SVG twin):

``response.png``
    Mean response time against the swept variable, one line per policy, with the
    95% confidence interval (``mean_response_ci95``) as error bars.
``messages.png``
    Control messages per job against the same variable. Any axis whose positive
    values span more than a factor of 10 (`WIDE`) is drawn on a log scale, or
    symlog when some values are 0 (random and round robin send nothing).
``tradeoff.png``
    Mean response against messages per job: one marker style per policy, one
    marker per sweep point, larger markers for larger values of the swept
    variable.
``messages_by_kind.png``
    Messages per job split by kind (query, reply, idle, report, threshold),
    stacked, one bar per policy, at up to four values of the swept
    variable (first and last included). When one bar dwarfs the others (JSQ's
    2N), the axis stops at 2.5 times the next one and the cut bar is labelled
    with its total and an arrow.
``blocking.png``
    Only when some job was blocked (a ``capacity``): the blocked fraction against
    the swept variable, like ``response.png``.
``messages_vs_period.png``
    Only when a JBT-d period is swept (a key such as ``policies.3.period``):
    messages per job against the period T, one line per policy, with the other
    swept keys as panels.

It then adds the figures of the folder's other files, when the folder has them:
the response-time tail of `analysis.response_tail` and the queue-length tails of
`analysis.occupancy_plots`.

The x variable is chosen from the swept keys (columns whose name contains a dot):
a swept load, else the numeric swept key with the most values; a key such as
``workload.load`` or ``system.servers`` is plotted through its resolved column
(``load``, ``servers``), so loads given as expressions in N still plot as
numbers. Any other swept key that varies at a fixed x gives one panel per value.
With a single point, or a non-numeric x, the line plots become bar charts.

Every figure is drawn in the frame of `analysis.canvas` with the folder's
style map (`analysis.style.policy_style`); seaborn supplies the style and palette
and is imported only when plotting, which keeps ``import analysis.plots`` cheap.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import canvas
from .response_tail import read_response_cdf, response_tail_figure
from .style import Style, policy_style
from .sweep import describe, determines, short_name, swept_keys, value_label, varying

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

KIND_PREFIX = "messages_per_job_"
RESOLVED = {"load": "load", "servers": "servers"}
"""Last part of a swept key -> the resolved numeric column that shows it."""

AXIS_LABELS = {"load": "load (arrival rate / service capacity)", "servers": "servers N",
               "mean_response": "mean response time", "messages_per_job": "messages per job",
               "blocked_fraction": "fraction of jobs blocked"}
WIDE = 10.0
"""A positive range wider than this factor is drawn on a log scale."""


@dataclass(frozen=True)
class Layout:
    """How a summary maps onto figures.

    Attributes
    ----------
    x : str or None
        Column on the x axis; None when nothing varies (a single point).
    numeric : bool
        True when ``x`` is numeric with at least two values: lines, else bars.
    panels : list of str
        Columns whose value combinations give one panel each.
    policies : list of str
        Policy labels in order of first appearance.
    x_label : str
        Axis label of the x variable.
    """

    x: str | None
    numeric: bool
    panels: list[str] = field(default_factory=list)
    policies: list[str] = field(default_factory=list)
    x_label: str = ""


def _is_numeric(values: pd.Series) -> bool:
    import pandas as pd

    return bool(pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values))


def layout(summary: pd.DataFrame) -> Layout:
    """Choose the x variable and the panels of a summary.

    Parameters
    ----------
    summary : DataFrame
        ``summary.csv`` as a frame (columns in docs/results.md).

    Returns
    -------
    Layout
        The x column (a swept load first, else the numeric swept key with the
        most values, else ``load`` or ``servers`` if they vary), whether it is
        numeric, and the other swept keys that vary at a fixed x.
    """
    columns: list[str] = []
    for key in swept_keys(summary):
        # A swept number shows through its resolved column; swept expressions stay categories.
        resolved = RESOLVED.get(key.rsplit(".", 1)[-1], key)
        column = resolved if resolved in summary.columns and _is_numeric(summary[key]) else key
        if column not in columns:
            columns.append(column)
    changing = varying(summary, columns)
    if not changing:
        changing = [c for c in ("load", "servers") if c in summary and summary[c].nunique() > 1]
    policies = list(dict.fromkeys(summary["policy"].astype(str)))
    if not changing:
        return Layout(None, False, [], policies, "")
    numeric = [c for c in changing if _is_numeric(summary[c])]
    if "load" in numeric:
        x = "load"
    elif numeric:
        x = max(numeric, key=lambda c: summary[c].nunique())
    else:
        x = max(changing, key=lambda c: summary[c].nunique())
    panels: list[str] = []
    for c in changing:
        # A key that a zip group ties to x, or to a panel key already chosen, adds no panel.
        if c != x and not any(determines(summary, key, c) for key in (x, *panels)):
            panels.append(c)
    label = AXIS_LABELS.get(x, short_name(x))
    if x == "load" and "discipline" in summary and (summary["discipline"] == "pool").all():
        label = "load λ (arrival rate per pool)"
    return Layout(x, x in numeric, panels, policies, label)


def panel_groups(summary: pd.DataFrame, plan: Layout) -> list[tuple[str, pd.DataFrame]]:
    """Split a summary into panels, one per combination of the panel columns.

    Parameters
    ----------
    summary : DataFrame
    plan : Layout

    Returns
    -------
    list of (title, DataFrame)
        Titles read ``key=value, key=value``, in order of first appearance (the
        sweep order); a single untitled panel if there are no panel columns.
    """
    if not plan.panels:
        return [("", summary)]
    groups = []
    for values, frame in summary.groupby(plan.panels, sort=False, dropna=False):
        values = values if isinstance(values, tuple) else (values,)
        groups.append((describe(plan.panels, values), frame))
    return groups


# -- axes ----------------------------------------------------------------------------
def _scale(ax: Axes, values: Sequence[float], axis: str) -> None:
    """Log scale when the positive values span more than `WIDE`; symlog if zeros too."""
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    positive = [v for v in finite if v > 0]
    if len(positive) < 2 or max(positive) / min(positive) <= WIDE or any(v < 0 for v in finite):
        return
    from matplotlib.ticker import FuncFormatter

    setter = ax.set_xscale if axis == "x" else ax.set_yscale
    if len(positive) == len(finite):
        setter("log")
    else:
        setter("symlog", linthresh=10 ** math.floor(math.log10(min(positive))), linscale=0.5)
    plain = FuncFormatter(lambda value, _: f"{value:g}")  # 0.1, 2, 300 rather than 3×10^2
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_formatter(plain)
    few = len(positive) == len(finite) and max(positive) / min(positive) < 100
    # Less than two decades: label the minor ticks at 2, 3 and 5 times a power of ten too.
    target.set_minor_formatter(FuncFormatter(lambda value, _: f"{value:g}" if few and _mantissa(value) in (2, 3, 5)
                                             else ""))


def _mantissa(value: float) -> int | None:
    """The leading digit of a positive round number (300 -> 3), None if not round."""
    if value <= 0:
        return None
    scaled = value / 10 ** math.floor(math.log10(value) + 1e-9)
    return round(scaled) if abs(scaled - round(scaled)) < 1e-6 else None


def _ci(frame: pd.DataFrame, metric: str) -> Any:
    """Error bars (lower, upper) from ``<metric>_ci95``, clipped at zero: metrics are >= 0."""
    import numpy as np

    column = f"{metric}_ci95"
    if column not in frame:
        return None
    half = frame[column].fillna(0.0).to_numpy(dtype=float)
    values = frame[metric].to_numpy(dtype=float)
    return np.vstack([np.minimum(half, np.maximum(values, 0.0)), half])


# -- the figures --------------------------------------------------------------------
def _lines(ax: Axes, frame: pd.DataFrame, plan: Layout, style: Style, metric: str) -> None:
    assert plan.x is not None
    for policy in plan.policies:
        rows = frame[frame["policy"].astype(str) == policy].sort_values(plan.x)
        if rows.empty:
            continue
        ax.errorbar(rows[plan.x], rows[metric], yerr=_ci(rows, metric), label=policy,
                    color=style.colors[policy], marker=style.markers[policy], markersize=5,
                    capsize=3, linewidth=1.4, elinewidth=1)
    _scale(ax, frame[plan.x].tolist(), "x")
    _scale(ax, frame[metric].tolist(), "y")
    ax.set_xlabel(plan.x_label)


def _bars(ax: Axes, frame: pd.DataFrame, plan: Layout, style: Style, metric: str) -> None:
    categories = [None] if plan.x is None else list(dict.fromkeys(frame[plan.x]))
    present = [p for p in plan.policies if (frame["policy"].astype(str) == p).any()]
    width = 0.8 / max(len(present), 1)
    for j, policy in enumerate(present):
        rows = frame[frame["policy"].astype(str) == policy]
        xs, ys, errs = [], [], []
        for i, category in enumerate(categories):
            match = rows if category is None else rows[rows[plan.x] == category]
            if match.empty:
                continue
            xs.append(i - 0.4 + width * (j + 0.5))
            ys.append(float(match[metric].iloc[0]))
            ci = _ci(match, metric)
            errs.append((0.0, 0.0) if ci is None else (float(ci[0, 0]), float(ci[1, 0])))
        yerr = [[e[0] for e in errs], [e[1] for e in errs]] if errs else None
        ax.bar(xs, ys, width=width * 0.9, yerr=yerr, capsize=3, label=policy,
               color=style.colors[policy], edgecolor="white")
    if len(categories) == 1:
        ax.set_xticks([-0.4 + width * (j + 0.5) for j in range(len(present))], present,
                      rotation=30, ha="right")
        if plan.x is not None:
            ax.set_xlabel(f"{plan.x_label} = {value_label(categories[0])}")
    else:
        ax.set_xticks(range(len(categories)), [value_label(c) for c in categories])
        ax.set_xlabel(plan.x_label)
    _scale(ax, frame[metric].tolist(), "y")


def _columns(summary: pd.DataFrame, plan: Layout, panels: int) -> int:
    """Panels per row: one row per value of the first panel key when the rest fit in 4 columns."""
    if len(plan.panels) >= 2:
        rest = math.prod(summary[key].nunique(dropna=False) for key in plan.panels[1:])
        if rest <= 4:
            return rest
        last = summary[plan.panels[-1]].nunique(dropna=False)
        if last <= 4:
            return last
    return min(3, panels)


def _metric_figure(summary: pd.DataFrame, plan: Layout, style: Style, metric: str, what: str) -> Figure:
    groups = panel_groups(summary, plan)
    fig, axes = canvas.figure(len(groups), _columns(summary, plan, len(groups)))
    draw = _lines if plan.numeric else _bars
    for ax, (title, frame) in zip(axes, groups, strict=True):
        draw(ax, frame, plan, style, metric)
        ax.set_title(title, fontsize="small")
        ax.set_ylabel(AXIS_LABELS.get(metric, metric))
    canvas.legend(fig, axes, title="policy")
    canvas.title(fig, summary, what)
    return fig


def period_key(summary: pd.DataFrame) -> str | None:
    """The swept JBT-d period key (``policies.<i>.period``) with at least two values, if any."""
    for key in summary.columns:
        if key.startswith("policies.") and key.endswith(".period") and summary[key].nunique() > 1:
            return str(key)
    return None


def _period_figure(summary: pd.DataFrame, plan: Layout, style: Style) -> Figure:
    """Messages per job against the swept JBT-d period T, with the other swept keys as panels."""
    key = period_key(summary)
    assert key is not None
    panels = [c for c in ([plan.x] if plan.x not in (None, key) else []) + plan.panels
              if c != key and not determines(summary, key, c)]
    period = Layout(key, True, [str(c) for c in panels], plan.policies, "JBT-d period T")
    return _metric_figure(summary, period, style, "messages_per_job",
                          "Control messages per job against the threshold update period (95% CI)")


def _sizer(summary: pd.DataFrame, plan: Layout) -> Callable[[Any], float] | None:
    """Marker size for a value of the x variable (log-spaced if its range is wide); None if no x."""
    if not plan.numeric or plan.x is None:
        return None
    lo, hi = float(summary[plan.x].min()), float(summary[plan.x].max())
    scale: Callable[[float], float] = math.log if lo > 0 and hi / lo > WIDE else float

    def size(value: Any) -> float:
        return 5.0 + 8.0 * (scale(float(value)) - scale(lo)) / (scale(hi) - scale(lo))

    return size


def _tradeoff_figure(summary: pd.DataFrame, plan: Layout, style: Style) -> Figure:
    from matplotlib.lines import Line2D

    groups = panel_groups(summary, plan)
    fig, axes = canvas.figure(len(groups), _columns(summary, plan, len(groups)))
    sizes = _sizer(summary, plan)
    for ax, (title, frame) in zip(axes, groups, strict=True):
        for policy in plan.policies:
            rows = frame[frame["policy"].astype(str) == policy]
            if rows.empty:
                continue
            if plan.numeric:
                rows = rows.sort_values(plan.x)
                ax.plot(rows["messages_per_job"], rows["mean_response"], color=style.colors[policy],
                        linewidth=0.8, alpha=0.5)
            ax.errorbar(rows["messages_per_job"], rows["mean_response"],
                        xerr=_ci(rows, "messages_per_job"), yerr=_ci(rows, "mean_response"),
                        fmt="none", ecolor=style.colors[policy], elinewidth=0.8, alpha=0.7)
            for i, (_, row) in enumerate(rows.iterrows()):
                ax.plot([row["messages_per_job"]], [row["mean_response"]], linestyle="none",
                        marker=style.markers[policy], color=style.colors[policy],
                        markeredgecolor="black", markeredgewidth=0.4,
                        markersize=7 if sizes is None else sizes(row[plan.x]),
                        label=policy if i == 0 else None)
        _scale(ax, frame["messages_per_job"].tolist(), "x")
        _scale(ax, frame["mean_response"].tolist(), "y")
        ax.set_title(title, fontsize="small")
        ax.set_xlabel("messages per job")
        ax.set_ylabel("mean response time")
    extra: list[tuple[Any, str]] = []
    if sizes is not None and plan.x is not None:
        values = sorted(summary[plan.x].unique())
        shown = dict.fromkeys([values[0], values[len(values) // 2], values[-1]])
        extra.append((Line2D([], [], linestyle="none"), f"\nmarker size: {short_name(plan.x)}"))
        extra += [(Line2D([], [], linestyle="none", marker="o", color="grey", markersize=sizes(v)),
                   value_label(v)) for v in shown]
    canvas.legend(fig, axes, extra, title="policy")
    canvas.title(fig, summary, "Delay against control messages per job")
    return fig


def message_kinds(summary: pd.DataFrame, nonzero: bool = True) -> list[str]:
    """Message kinds with a ``messages_per_job_<kind>`` column, in column order.

    Parameters
    ----------
    summary : DataFrame
    nonzero : bool
        Keep only kinds that are non-zero somewhere.

    Returns
    -------
    list of str
    """
    kinds = [c[len(KIND_PREFIX):] for c in summary.columns
             if c.startswith(KIND_PREFIX) and not c.endswith("_ci95")]
    if nonzero:
        kinds = [k for k in kinds if summary[KIND_PREFIX + k].fillna(0).abs().sum() > 0]
    return kinds


def _kinds_figure(summary: pd.DataFrame, plan: Layout) -> Figure:
    import seaborn as sns

    groups = panel_groups(summary, plan)
    rows = len(groups)
    xs = [None] if plan.x is None else sorted(summary[plan.x].unique(), key=_sort_key)
    ncols = 4 if rows <= 6 else 2 if rows <= 12 else 1
    chosen = canvas.pick(xs, ncols)
    panels = [(title, frame, x) for title, frame in groups for x in chosen]
    fig, axes = canvas.figure(len(panels), ncols=len(chosen), width=max(3.2, 0.55 * len(plan.policies) + 1.0))
    kinds = message_kinds(summary) or message_kinds(summary, nonzero=False)[:1]
    colors = dict(zip(kinds, sns.color_palette("Set2", len(kinds)), strict=True))
    for ax, (title, frame, x) in zip(axes, panels, strict=True):
        rows_x = frame if x is None else frame[frame[plan.x] == x]
        present = [p for p in plan.policies if (rows_x["policy"].astype(str) == p).any()]
        bottom = [0.0] * len(present)
        for kind in kinds:
            heights = [float(rows_x.loc[rows_x["policy"].astype(str) == p, KIND_PREFIX + kind].iloc[0])
                       for p in present]
            ax.bar(range(len(present)), heights, bottom=bottom, color=colors[kind], label=kind,
                   edgecolor="white", linewidth=0.5)
            bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
        top = _bar_top(bottom)
        for i, total in enumerate(bottom):
            clipped = total > top
            ax.text(i, min(total, top) + 0.01 * top, f"{total:.3g}" + (" ↑" if clipped else ""),
                    ha="center", va="bottom", fontsize="x-small", fontweight="bold" if clipped else None,
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 1} if clipped else None)
        ax.set_ylim(0, top * 1.12)
        ax.set_xticks(range(len(present)), present, rotation=40, ha="right", fontsize="small")
        label = "" if x is None else f"{plan.x_label.split(' (')[0]}={value_label(x)}"
        ax.set_title("\n".join(t for t in (title, label) if t), fontsize="small")
        ax.set_ylabel("messages per job")
    canvas.legend(fig, axes, title="kind")
    canvas.title(fig, summary, "Control messages per job by kind")
    return fig


def _bar_top(totals: Sequence[float]) -> float:
    """Top of the y axis: the largest total, or 2.5 times the next one if the largest dwarfs it.

    A bar cut this way carries its total and an arrow, so JSQ's 2N messages do
    not flatten the bars of the cheap policies.
    """
    ranked = sorted((t for t in totals if t > 0), reverse=True)
    if not ranked:
        return 1.0
    if len(ranked) >= 2 and ranked[0] > 4 * ranked[1]:
        return 2.5 * ranked[1]
    return ranked[0]


def _sort_key(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, (int, float)) else (1, str(value))


# -- entry point ---------------------------------------------------------------------------
def plot_folder(summary: pd.DataFrame, out: Path, source: Path | None = None) -> list[Path]:
    """Write the figures of a results summary as PNG and SVG files into a folder.

    Parameters
    ----------
    summary : DataFrame
        ``summary.csv`` as a frame (columns in docs/results.md): one row per
        (sweep point, policy) with ``<metric>`` and ``<metric>_ci95`` columns.
    out : Path
        Folder to write into (created if needed).
    source : Path, optional
        The results folder, for files beyond the summary (``response_cdf.csv``,
        ``occupancy.csv``, ``scenario.yaml``); default ``out``. Nothing is written there.

    Returns
    -------
    list of Path
        ``response.png``, ``messages.png``, ``tradeoff.png`` and
        ``messages_by_kind.png`` inside ``out``, then ``blocking.png`` if any
        job was blocked (servers or pools with a capacity), then
        ``response_tail.png`` when ``source`` holds ``response_cdf.csv``
        (`analysis.response_tail`), ``messages_vs_period.png`` when a JBT-d period
        is swept, and, when ``source`` holds ``occupancy.csv``, the figures of
        `analysis.occupancy_plots`. Each PNG has an SVG twin beside it.

    Raises
    ------
    emulator.ScenarioError
        If the summary is empty, lacks a needed column or holds text in a column
        it draws (``lbemu plot`` then exits with status 2).

    Examples
    --------
    >>> import emulator, tempfile
    >>> from pathlib import Path
    >>> s = emulator.Scenario.from_dict({"run": {"jobs": 500, "warmup_jobs": 50}, "replications": 2,
    ...     "policies": [{"name": "jsq"}, {"name": "jiq"}], "sweep": {"workload.load": [0.5, 0.8]}})
    >>> paths = plot_folder(emulator.run(s, workers=1).summary, Path(tempfile.mkdtemp()))
    >>> [p.name for p in paths]
    ['response.png', 'messages.png', 'tradeoff.png', 'messages_by_kind.png']
    """
    import seaborn as sns

    from emulator.errors import ScenarioError
    from emulator.experiment.output import expect_numbers

    needed = ("policy", "mean_response", "messages_per_job")
    missing = [c for c in needed if c not in summary.columns]
    if summary.empty or missing:
        what = "rows" if summary.empty else f"column '{missing[0]}'"
        raise ScenarioError(f"DIR: expected summary.csv with {what}, got none")
    drawn = ["mean_response", "messages_per_job", "blocked_fraction", *(KIND_PREFIX + k for k in message_kinds(
        summary, nonzero=False))]
    expect_numbers(summary, [column for metric in drawn for column in (metric, f"{metric}_ci95")])
    summary = summary.reset_index(drop=True)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    plan = layout(summary)
    style = policy_style(plan.policies)
    figures = {
        "response.png": lambda: _metric_figure(summary, plan, style, "mean_response",
                                               "Mean response time (95% CI)"),
        "messages.png": lambda: _metric_figure(summary, plan, style, "messages_per_job",
                                               "Control messages per job (95% CI)"),
        "tradeoff.png": lambda: _tradeoff_figure(summary, plan, style),
        "messages_by_kind.png": lambda: _kinds_figure(summary, plan),
    }
    if "blocked_fraction" in summary and summary["blocked_fraction"].fillna(0).gt(0).any():
        figures["blocking.png"] = lambda: _metric_figure(summary, plan, style, "blocked_fraction",
                                                         "Fraction of jobs blocked (95% CI)")
    source = Path(source) if source is not None else out
    cdf = read_response_cdf(source)
    if cdf is not None:
        figures["response_tail.png"] = lambda: response_tail_figure(cdf, style, summary)
    if period_key(summary) is not None:
        figures["messages_vs_period.png"] = lambda: _period_figure(summary, plan, style)
    paths = []
    with sns.axes_style("whitegrid"), sns.plotting_context("notebook", font_scale=0.9):
        for name, make in figures.items():
            paths.append(canvas.save(make(), out / name))
    if (source / "occupancy.csv").is_file():  # the queue-length tails, and pools on the diffusion scale
        from .occupancy_plots import plot_occupancy

        paths += plot_occupancy(source, summary, out)
    return paths


