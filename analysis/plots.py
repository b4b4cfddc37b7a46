"""Figures of a results summary's metrics: delay, messages, their trade-off, messages by kind.

Each figure has a public function that takes `emulator.Results` or a results
folder's path and returns a matplotlib ``Figure`` without writing a file; a
figure with one panel draws into a given ``ax`` instead, in the manner of
seaborn's axes-level functions, and any figure into one given Axes per panel or
into an empty ``Figure`` or ``SubFigure`` (`analysis.canvas.figure`). ``Results.plot(name)`` (`draw`) and ``lbemu
plot DIR`` (`plot_folder`) call the same functions, listed by name in `FIGURES`:

`plot_response` (``response``)
    Mean response time against the swept variable, one line per policy, with
    the 95% confidence interval (``mean_response_ci95``) as error bars.
`plot_messages` (``messages``)
    Control messages per job against the same variable. Any axis whose positive
    values span more than a factor of 10 (`WIDE`) is drawn on a log scale, or
    symlog when some values are 0 (random and round robin send nothing); an
    interval reaching 0 on a log axis is cut at the axis' bottom.
`plot_tradeoff` (``tradeoff``)
    Mean response against messages per job: one marker per policy and sweep
    point, one panel per value of the swept variable (up to `TRADEOFF_PANELS`
    values; beyond, one panel with the values written at the ends of each
    policy's line).
`plot_messages_by_kind` (``messages_by_kind``)
    Each policy's messages per job split by kind (query, reply, idle, report,
    threshold) as shares of its bar, its total written on top, at up to four
    values of the swept variable (first and last included): JSQ's 2N and
    JIQ's fraction of one message read alike.
`plot_blocking` (``blocking``)
    The blocked fraction against the swept variable, like ``response``; only
    when some job was blocked (a ``capacity``).
`plot_messages_vs_period` (``messages_vs_period``)
    Only when a JBT-d period is swept (a key such as ``policies.3.period``):
    messages per job against the period T, one line per policy, with the other
    swept keys as panels.
`plot_metric` (``metric=``)
    Any metric column with an interval (`metrics`: ``mean_wait``, ``p99_response``, ...)
    against the swept variable, as ``response`` draws the mean.

``lbemu plot`` and `draw` (``Results.plot``) take the same options: a format, a size in
inches, no title, a metric.

The response-time tail is `analysis.response_tail.plot_response_tail`, and the
queue-length tails `analysis.occupancy_plots`.

The x variable is chosen from the swept keys (columns whose name contains a dot):
a swept load, else the numeric swept key with the most values; a key such as
``workload.load`` or ``system.servers`` is plotted through its resolved column
(``load``, ``servers``), so loads given as expressions in N still plot as
numbers. Any other swept key that varies at a fixed x gives one panel per value,
titled as in ``load = 0.9, N = 100`` (`analysis.canvas.panel_title`).
With a single point, or a non-numeric x, the line plots become bar charts.
Time axes carry their unit: mean service times, or slots in slotted time.

Every figure is drawn in the frame of `analysis.canvas` with one colour and
marker per policy name across all folders (`analysis.style.policy_style`);
seaborn supplies the style and is imported only when plotting, which keeps
``import analysis.plots`` cheap.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import canvas
from .source import Source, source_of, with_files
from .style import KIND_COLORS, Style, style_of
from .sweep import determines, short_name, swept_keys, value_label, varying

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

KIND_PREFIX = "messages_per_job_"
RESOLVED = {"load": "load", "servers": "servers"}
"""Last part of a swept key -> the resolved numeric column that shows it."""

AXIS_LABELS = {"load": "load (arrival rate / service capacity)", "servers": "servers N",
               "mean_response": "mean response time ({unit})", "messages_per_job": "messages per job",
               "blocked_fraction": "fraction of jobs blocked", "mean_wait": "mean wait ({unit})",
               "p50_response": "median response time ({unit})", "p90_response": "p90 response time ({unit})",
               "p99_response": "p99 response time ({unit})"}
TRADEOFF_PANELS = 4
"""Up to this many values of the x variable, the trade-off has one panel per value."""
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
    label = AXIS_LABELS.get(x, canvas.key_name(x))
    if x.endswith(".period"):
        label = "JBT-d period T"
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
        Titles read ``key = value, key = value`` (`analysis.canvas.panel_title`), in order of first
        appearance (the sweep order); a single untitled panel if there are no panel columns.
    """
    if not plan.panels:
        return [("", summary)]
    groups = []
    for values, frame in summary.groupby(plan.panels, sort=False, dropna=False):
        values = values if isinstance(values, tuple) else (values,)
        groups.append((canvas.panel_title(plan.panels, values), frame))
    return groups


# -- axes ----------------------------------------------------------------------------
def _scale(ax: Axes, values: Sequence[float], axis: str) -> bool:
    """Log scale when the positive values span more than `WIDE`; symlog if zeros too. True if log."""
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    positive = [v for v in finite if v > 0]
    if len(positive) < 2 or max(positive) / min(positive) <= WIDE or any(v < 0 for v in finite):
        return False
    from matplotlib.ticker import FuncFormatter

    setter = ax.set_xscale if axis == "x" else ax.set_yscale
    log = len(positive) == len(finite)
    if log:
        setter("log")
    else:
        setter("symlog", linthresh=10 ** math.floor(math.log10(min(positive))), linscale=0.5)
    plain = FuncFormatter(lambda value, _: f"{value:g}")  # 0.1, 2, 300 rather than 3×10^2
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_formatter(plain)
    few = log and max(positive) / min(positive) < 100
    # Less than two decades: label the minor ticks at 2, 3 and 5 times a power of ten too.
    target.set_minor_formatter(FuncFormatter(lambda value, _: f"{value:g}" if few and _mantissa(value) in (2, 3, 5)
                                             else ""))
    return log


def _log_limits(ax: Axes, frame: pd.DataFrame, metric: str, axis: str) -> None:
    """On a log axis, limits from the values, and from the interval ends not far below them.

    An interval whose lower end is at or near 0 (few replications, a wide
    interval) is cut at the bottom of the axis, at half the smallest value,
    instead of stretching the axis down towards 0.
    """
    import numpy as np

    values = frame[metric].to_numpy(dtype=float)
    half = frame[f"{metric}_ci95"].fillna(0.0).to_numpy(dtype=float) if f"{metric}_ci95" in frame else 0 * values
    positive = values[np.isfinite(values) & (values > 0)]
    high = (values + half)[np.isfinite(values + half)]
    if not len(positive) or not len(high):
        return
    ends = (values - half)[np.isfinite(values - half) & (values - half > 0)]
    lo = max(float(ends.min()) if len(ends) else 0.0, float(positive.min()) / 2) / 1.1
    (ax.set_xlim if axis == "x" else ax.set_ylim)(lo, float(high.max()) * 1.15)


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


def _label(metric: str, unit: str) -> str:
    return AXIS_LABELS.get(metric, metric.replace("_", " ")).format(unit=unit)


# -- preparing a summary -------------------------------------------------------------
@dataclass(frozen=True)
class _Plot:
    """A checked source with its layout, style map and time unit."""

    source: Source
    plan: Layout
    style: Style
    unit: str

    @property
    def summary(self) -> pd.DataFrame:
        return self.source.summary


def _prepare(results: Any) -> _Plot:
    """Check the summary of ``results`` (Results, Source or folder) and lay it out."""
    from emulator.errors import ScenarioError
    from emulator.experiment.output import expect_finite, expect_numbers

    source = source_of(results)
    summary = source.summary
    needed = ("policy", "mean_response", "messages_per_job")
    missing = [c for c in needed if c not in summary.columns]
    if summary.empty or missing:
        what = "rows" if summary.empty else f"column '{missing[0]}'"
        raise ScenarioError(f"DIR: expected summary.csv with {what}, got none")
    drawn = ["mean_response", "messages_per_job", "blocked_fraction", *(KIND_PREFIX + k for k in message_kinds(
        summary, nonzero=False))]
    columns = [column for metric in drawn for column in (metric, f"{metric}_ci95")]
    expect_numbers(summary, columns)
    expect_finite(summary, columns)  # matplotlib places no inf and draws no negative error bar
    summary = summary.reset_index(drop=True)
    source = Source(summary, source.scenario, source.occupancy, source.response_cdf)
    plan = layout(summary)
    unit = canvas.time_unit(summary, source.scenario)
    if plan.x_label == "JBT-d period T":  # a time: in its unit
        plan = replace(plan, x_label=f"JBT-d period T ({unit})")
    return _Plot(source, plan, style_of(summary), unit)


# -- the figures --------------------------------------------------------------------
def hidden_under(values: Sequence[tuple[Any, float]], drawn: Sequence[Sequence[tuple[Any, float]]]) -> int:
    """How many of the series ``drawn`` before, as (x, y) pairs, the series ``values`` would cover.

    A series covers another when it has the same x values and y values within 1% (random
    routing and round robin both at 0 messages per job): drawn alike, only the last would show.

    Examples
    --------
    >>> hidden_under([(1, 0.0), (2, 0.0)], [[(1, 0.0), (2, 0.0)], [(1, 3.0), (2, 4.0)]])
    1
    """
    import numpy as np

    count = 0
    for other in drawn:
        if [x for x, _ in other] == [x for x, _ in values] and np.allclose(
                [y for _, y in values], [y for _, y in other], rtol=0.01, atol=0.0, equal_nan=True):
            count += 1
    return count


def _lines(ax: Axes, frame: pd.DataFrame, plan: Layout, style: Style, metric: str) -> None:
    assert plan.x is not None
    drawn: list[list[tuple[Any, float]]] = []
    for policy in plan.policies:
        rows = frame[frame["policy"].astype(str) == policy].sort_values(plan.x)
        if rows.empty:
            continue
        values = list(zip(rows[plan.x], rows[metric].astype(float), strict=True))
        under = hidden_under(values, drawn)
        drawn.append(values)
        # A series over others with the same values is dashed, with smaller markers, so that
        # those under it show through its gaps and around its markers.
        ax.errorbar(rows[plan.x], rows[metric], yerr=_ci(rows, metric), label=policy,
                    color=style.colors[policy], marker=style.markers[policy], markersize=max(5 - 1.5 * under, 2.5),
                    linestyle=(0, (3, 2 + 2 * under)) if under else "-", capsize=3, linewidth=1.4, elinewidth=1)
    _scale(ax, frame[plan.x].tolist(), "x")
    if _scale(ax, frame[metric].tolist(), "y"):
        _log_limits(ax, frame, metric, "y")
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
    if _scale(ax, frame[metric].tolist(), "y"):
        _log_limits(ax, frame, metric, "y")


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


def _metric_figure(p: _Plot, plan: Layout, metric: str, what: str, name: str, ax: canvas.Target) -> Figure:
    summary = p.summary
    groups = panel_groups(summary, plan)
    fig, axes = canvas.figure(len(groups), _columns(summary, plan, len(groups)), ax=ax, name=name)
    draw = _lines if plan.numeric else _bars
    for panel, (title, frame) in zip(axes, groups, strict=True):
        draw(panel, frame, plan, p.style, metric)
        panel.set_title(title, fontsize="small")
        panel.set_ylabel(_label(metric, p.unit))
    canvas.legend(fig, axes, title="policy", ax=ax)
    canvas.title(fig, summary, what + canvas.ci_note(summary), p.source.scenario, ax)
    return fig


@canvas.styled
def plot_response(results: Any, ax: canvas.Target = None) -> Figure:
    """Mean response time against the swept variable, one line per policy.

    Parameters
    ----------
    results : emulator.Results or path
        A run's results, or a results folder.
    ax : Axes, sequence of Axes, or Figure, optional
        Draw into these axes (a one-panel figure only) instead of a new figure; or into one Axes per
        panel, or into an empty Figure or SubFigure (the whole figure): see
        `analysis.canvas.figure`.

    Returns
    -------
    matplotlib.figure.Figure
        The new figure, or the figure of ``ax``. Nothing is written to disk.

    Raises
    ------
    emulator.ScenarioError
        If the summary lacks a needed column, or ``ax`` is given for a figure
        with several panels.

    See Also
    --------
    plot_messages, plot_tradeoff

    Examples
    --------
    >>> import emulator
    >>> results = emulator.run({"run": {"jobs": 500, "warmup_jobs": 50}, "replications": 2,
    ...     "policies": [{"name": "jsq"}, {"name": "jiq"}], "sweep": {"workload.load": [0.5, 0.8]}}, workers=1)
    >>> fig = plot_response(results)
    >>> fig.axes[0].get_ylabel()
    'mean response time (mean service times)'
    """
    p = _prepare(results)
    return _metric_figure(p, p.plan, "mean_response", "Mean response time", "response", ax)


@canvas.styled
def plot_messages(results: Any, ax: canvas.Target = None) -> Figure:
    """Control messages per job against the swept variable, one line per policy.

    Parameters
    ----------
    results : emulator.Results or path
        A run's results, or a results folder.
    ax : Axes, sequence of Axes, or Figure, optional
        Draw into these axes (a one-panel figure only); or into one Axes per panel, or into an empty
        Figure or SubFigure (the whole figure): see `analysis.canvas.figure`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    p = _prepare(results)
    return _metric_figure(p, p.plan, "messages_per_job", "Control messages per job", "messages", ax)


@canvas.styled
def plot_blocking(results: Any, ax: canvas.Target = None) -> Figure:
    """The fraction of jobs blocked against the swept variable (servers or pools with a capacity).

    Parameters
    ----------
    results : emulator.Results or path
        A run's results, or a results folder.
    ax : Axes, sequence of Axes, or Figure, optional
        Draw into these axes (a one-panel figure only); or into one Axes per panel, or into an empty
        Figure or SubFigure (the whole figure): see `analysis.canvas.figure`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    p = _prepare(results)
    return _metric_figure(p, p.plan, "blocked_fraction", "Fraction of jobs blocked", "blocking", ax)


def metrics(summary: pd.DataFrame) -> list[str]:
    """The columns `plot_metric` draws: those with a 95% interval beside them (``<metric>_ci95``)."""
    return [c for c in summary.columns if not c.endswith("_ci95") and f"{c}_ci95" in summary.columns]


@canvas.styled
def plot_metric(results: Any, metric: str, ax: canvas.Target = None) -> Figure:
    """Any metric column of the summary against the swept variable, as `plot_response` draws the mean.

    Parameters
    ----------
    results : emulator.Results or path
        A run's results, or a results folder.
    metric : str
        One of `metrics`: ``mean_wait``, ``p99_response``, ``mean_queue``, ... (docs/results.md).
    ax : Axes, sequence of Axes, or Figure, optional
        As for `plot_response`.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    emulator.ScenarioError
        If ``metric`` is not one of `metrics`, or its column holds text or an infinite number.
    """
    from emulator.errors import ScenarioError
    from emulator.experiment.output import expect_finite, expect_numbers

    p = _prepare(results)
    names = metrics(p.summary)
    if metric not in names:
        raise ScenarioError(f"metric: expected a metric column of summary.csv ({', '.join(names)}), "
                            f"got {canvas.shown(metric)}")
    expect_numbers(p.summary, [metric, f"{metric}_ci95"])
    expect_finite(p.summary, [metric, f"{metric}_ci95"])
    words = _label(metric, p.unit).split(" (")[0]  # the axis says the unit; the title names the metric
    return _metric_figure(p, p.plan, metric, words[0].upper() + words[1:], metric, ax)


def period_key(summary: pd.DataFrame) -> str | None:
    """The swept JBT-d period key (``policies.<i>.period``) with at least two values, if any."""
    for key in summary.columns:
        if key.startswith("policies.") and key.endswith(".period") and summary[key].nunique() > 1:
            return str(key)
    return None


@canvas.styled
def plot_messages_vs_period(results: Any, ax: canvas.Target = None) -> Figure:
    """Messages per job against the swept JBT-d period T, with the other swept keys as panels.

    Parameters
    ----------
    results : emulator.Results or path
        A run's results, or a results folder, with a swept ``policies.<i>.period``.
    ax : Axes, sequence of Axes, or Figure, optional
        Draw into these axes (a one-panel figure only); or into one Axes per panel, or into an empty
        Figure or SubFigure (the whole figure): see `analysis.canvas.figure`.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    emulator.ScenarioError
        If no period is swept.
    """
    from emulator.errors import ScenarioError

    p = _prepare(results)
    summary, plan = p.summary, p.plan
    key = period_key(summary)
    if key is None:
        raise ScenarioError("messages_vs_period: expected a swept JBT-d period (policies.<i>.period), got none")
    panels = [c for c in ([plan.x] if plan.x not in (None, key) else []) + plan.panels
              if c != key and not determines(summary, key, c)]
    period = Layout(key, True, [str(c) for c in panels], plan.policies, f"JBT-d period T ({p.unit})")
    return _metric_figure(p, period, "messages_per_job", "Control messages per job against the update period T",
                          "messages_vs_period", ax)


def _tradeoff_panels(p: _Plot) -> list[tuple[str, pd.DataFrame, Any]]:
    """(title, frame, x value or None) per trade-off panel: one per x value when there are few."""
    groups = panel_groups(p.summary, p.plan)
    x = p.plan.x
    if x is None or p.summary[x].nunique() > TRADEOFF_PANELS:
        return [(title, frame, None) for title, frame in groups]
    values = sorted(p.summary[x].unique(), key=_sort_key)
    return [(", ".join(t for t in (title, canvas.panel_title([x], [v])) if t), frame[frame[x] == v], v)
            for title, frame in groups for v in values if (frame[x] == v).any()]


@canvas.styled
def plot_tradeoff(results: Any, ax: canvas.Target = None) -> Figure:
    """Mean response time against control messages per job: what each policy pays for its delay.

    One marker per policy, in one panel per value of the swept variable when it
    has at most `TRADEOFF_PANELS` values (each titled ``load = 0.9``); with more,
    one panel in which each policy's points are joined in sweep order and its
    first and last points are labelled with their value. Markers are
    half-transparent with a dark edge, so a point under another still shows.

    Parameters
    ----------
    results : emulator.Results or path
        A run's results, or a results folder.
    ax : Axes, sequence of Axes, or Figure, optional
        Draw into these axes (a one-panel figure only: a single sweep point, or one panel with
        many); or into one Axes per panel, or into an empty Figure or SubFigure (the whole figure):
        see `analysis.canvas.figure`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    p = _prepare(results)
    plan, style = p.plan, p.style
    panels = _tradeoff_panels(p)
    ncols = min(len(panels), TRADEOFF_PANELS) if panels[0][2] is not None else _columns(p.summary, plan, len(panels))
    fig, axes = canvas.figure(len(panels), ncols, width=3.8, height=3.4, ax=ax, name="tradeoff")
    for panel, (title, frame, value) in zip(axes, panels, strict=True):
        for policy in plan.policies:
            rows = frame[frame["policy"].astype(str) == policy]
            if rows.empty:
                continue
            colour = style.colors[policy]
            if value is None and plan.numeric and len(rows) > 1:
                rows = rows.sort_values(plan.x)
                panel.plot(rows["messages_per_job"], rows["mean_response"], color=colour, linewidth=0.8, alpha=0.6)
                for end, align in ((rows.iloc[0], "right"), (rows.iloc[-1], "left")):
                    panel.annotate(value_label(end[plan.x]), (end["messages_per_job"], end["mean_response"]),
                                   xytext=(-6 if align == "right" else 6, 4), textcoords="offset points",
                                   ha=align, fontsize="x-small", color=colour)
            panel.errorbar(rows["messages_per_job"], rows["mean_response"],
                           xerr=_ci(rows, "messages_per_job"), yerr=_ci(rows, "mean_response"),
                           fmt="none", ecolor=colour, elinewidth=0.8, alpha=0.8)
            panel.plot(rows["messages_per_job"], rows["mean_response"], linestyle="none", label=policy,
                       marker=style.markers[policy], markersize=8, color=colour, alpha=0.75,
                       markeredgecolor="black", markeredgewidth=0.6)
        _scale(panel, frame["messages_per_job"].tolist(), "x")
        if _scale(panel, frame["mean_response"].tolist(), "y"):
            _log_limits(panel, frame, "mean_response", "y")
        panel.set_title(title, fontsize="small")
        panel.set_xlabel("messages per job")
        panel.set_ylabel(_label("mean_response", p.unit))
    canvas.legend(fig, axes, title="policy", ax=ax)
    what = "Delay against control messages per job" + canvas.ci_note(p.summary)
    if panels[0][2] is None and plan.numeric and plan.x is not None:
        what += f"; lines join the sweep over {short_name(plan.x)}"
    canvas.title(fig, p.summary, what, p.source.scenario, ax)
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
    # messages_per_job_diff (with compare_to) is the paired difference of the total, not a kind.
    kinds = [c[len(KIND_PREFIX):] for c in summary.columns
             if c.startswith(KIND_PREFIX) and not c.endswith(("_ci95", "_diff"))]
    if nonzero:
        kinds = [k for k in kinds if summary[KIND_PREFIX + k].fillna(0).abs().sum() > 0]
    return kinds


@canvas.styled
def plot_messages_by_kind(results: Any, ax: canvas.Target = None) -> Figure:
    """Each policy's control messages per job split by kind, as shares of its bar, the total on top.

    Every bar has height 1 and is split into the kinds' fractions of its
    messages, so JSQ's N queries and N replies read as halves whatever N, next
    to JIQ's idle tokens; the total per job is written above each bar (0 for a
    policy that sends nothing, which has no bar). One panel per sweep point, at
    up to four values of the swept variable (first and last included).

    Parameters
    ----------
    results : emulator.Results or path
        A run's results, or a results folder.
    ax : Axes, sequence of Axes, or Figure, optional
        Draw into these axes (a one-panel figure only: a single sweep point); or into one Axes per
        panel, or into an empty Figure or SubFigure (the whole figure): see
        `analysis.canvas.figure`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    p = _prepare(results)
    summary, plan = p.summary, p.plan
    groups = panel_groups(summary, plan)
    xs = [None] if plan.x is None else sorted(summary[plan.x].unique(), key=_sort_key)
    ncols = 4 if len(groups) <= 6 else 2 if len(groups) <= 12 else 1
    chosen = canvas.pick(xs, ncols)
    panels = [(title, frame, x) for title, frame in groups for x in chosen]
    fig, axes = canvas.figure(len(panels), ncols=len(chosen), width=max(3.2, 0.5 * len(plan.policies) + 1.0),
                              ax=ax, name="messages_by_kind")
    kinds = message_kinds(summary) or message_kinds(summary, nonzero=False)[:1]
    fallback = iter(["#949494", "#ca9161", "#fbafe4", "#3c3c3c"] * len(kinds))
    colors = {kind: KIND_COLORS.get(kind) or next(fallback) for kind in kinds}
    for panel, (title, frame, x) in zip(axes, panels, strict=True):
        rows_x = frame if x is None else frame[frame[plan.x] == x]
        present = [q for q in plan.policies if (rows_x["policy"].astype(str) == q).any()]
        parts = {kind: [float(rows_x.loc[rows_x["policy"].astype(str) == q, KIND_PREFIX + kind].fillna(0).iloc[0])
                        for q in present] for kind in kinds}
        totals = [float(rows_x.loc[rows_x["policy"].astype(str) == q, "messages_per_job"].iloc[0]) for q in present]
        bottom = [0.0] * len(present)
        for kind in kinds:
            shares = [part / total if total > 0 else 0.0 for part, total in zip(parts[kind], totals, strict=True)]
            panel.bar(range(len(present)), shares, bottom=bottom, color=colors[kind], label=kind,
                      edgecolor="white", linewidth=0.6)
            bottom = [b + s for b, s in zip(bottom, shares, strict=True)]
        for i, total in enumerate(totals):
            panel.text(i, max(bottom[i], 0.0) + 0.02, f"{total:.3g}" if total < 1000 else f"{total:.0f}",
                       ha="center", va="bottom", fontsize="x-small")
        panel.set_ylim(0, 1.12)
        panel.set_yticks([0, 0.25, 0.5, 0.75, 1.0], ["0", "¼", "½", "¾", "1"])
        panel.set_xticks(range(len(present)), present, rotation=40, ha="right", fontsize="small")
        label = "" if x is None or plan.x is None else canvas.panel_title([plan.x], [x])
        panel.set_title(", ".join(t for t in (title, label) if t), fontsize="small")
        panel.set_ylabel("share of the messages")
        panel.grid(axis="x", visible=False)
    canvas.legend(fig, axes, title="kind", ax=ax)
    canvas.title(fig, summary, "Control messages by kind: shares of each policy's messages, total per job on top",
                 p.source.scenario, ax)
    return fig


def _sort_key(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, (int, float)) else (1, str(value))


# -- every figure, by name ------------------------------------------------------------------
FIGURES = ("response", "messages", "tradeoff", "messages_by_kind", "blocking", "response_tail",
           "messages_vs_period", "occupancy", "halfin_whitt", "warmup")
"""Every figure lbemu draws, by name, in the order ``lbemu plot`` writes them (see `figure_function`)."""


def figure_function(name: str) -> Callable[..., Figure]:
    """The public function that draws the figure ``name`` of `FIGURES` (``plot_<name>``).

    Examples
    --------
    >>> figure_function("tradeoff").__name__, figure_function("occupancy").__module__
    ('plot_tradeoff', 'analysis.occupancy_plots')
    """
    from . import occupancy_plots, response_tail, warmup_plots  # here, not above: they import pandas

    module = {"response_tail": response_tail, "occupancy": occupancy_plots,
              "halfin_whitt": occupancy_plots, "warmup": warmup_plots}.get(name)
    function: Callable[..., Figure] = getattr(module, f"plot_{name}") if module else globals()[f"plot_{name}"]
    return function


def available(results: Any) -> list[str]:
    """The names of `FIGURES` that ``results`` (Results or a results folder) has the data for.

    Parameters
    ----------
    results : emulator.Results or path

    Returns
    -------
    list of str
        ``response``, ``messages``, ``tradeoff`` and ``messages_by_kind`` always;
        ``blocking`` when some job was blocked, ``response_tail`` with a
        response-time histogram, ``messages_vs_period`` when a JBT-d period is
        swept, ``occupancy`` with queue lengths, ``halfin_whitt`` for pools and
        ``warmup`` with ``run.warmup_jobs: auto``.
    """
    source = source_of(results)
    summary = source.summary
    names = ["response", "messages", "tradeoff", "messages_by_kind"]
    if "blocked_fraction" in summary and summary["blocked_fraction"].fillna(0).gt(0).any():
        names.append("blocking")
    if source.response_cdf is not None:
        names.append("response_tail")
    if period_key(summary) is not None:
        names.append("messages_vs_period")
    if source.occupancy is not None:
        from .occupancy_plots import has_pools

        names.append("occupancy")
        if has_pools(source):
            names.append("halfin_whitt")
    if source.warmup is not None:
        names.append("warmup")
    return names


def draw(results: Any, name: str | None = None, ax: canvas.Target = None, *, metric: str | None = None,
         size: Sequence[float] | None = None, title: bool = True) -> Figure:
    """The figure ``name`` (or of ``metric``) of ``results`` as a matplotlib ``Figure``, without writing a file.

    ``Results.plot`` calls this; ``lbemu plot`` takes the same options.

    Parameters
    ----------
    results : emulator.Results or path
    name : str, optional
        One of `available` for these results; leave it out with ``metric``.
    ax : Axes, sequence of Axes, or Figure, optional
        Draw into these axes (one-panel figures only); or into one Axes per panel, or into an empty
        Figure or SubFigure (the whole figure): see `analysis.canvas.figure`.
    metric : str, optional
        Instead of a named figure, this metric column against the swept variable (`plot_metric`).
    size : (float, float), optional
        Width and height of the new figure in inches (`analysis.canvas.SIZE_RANGE`); not with ``ax``.
    title : bool
        False leaves out the figure's title (a paper's caption says it).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    emulator.ScenarioError
        If ``name`` is not a figure of these results, ``metric`` not a metric column, both or
        neither are given, ``size`` is out of range, or given with ``ax``.
    """
    from emulator.errors import ScenarioError, suggestion

    source = source_of(results)
    if (name is None) == (metric is None):
        raise ScenarioError(f"name: expected a figure name or a metric, one of the two, got "
                            f"{'both' if metric is not None else 'neither'}")
    if size is not None and ax is not None:
        raise ScenarioError("size: expected no size with ax (the figure is then the caller's), got "
                            f"{canvas.shown(size)}")
    target = canvas.sized(size) if ax is None else ax
    if metric is not None:
        fig = plot_metric(source, metric, ax=target)
    else:
        names = available(source)
        if name not in names:
            kind = "a figure these results have data for" if name in FIGURES else "a figure name"
            raise ScenarioError(f"name: expected {kind} ({', '.join(names)}), got '{name}'"
                                f"{suggestion(str(name), names)}")
        fig = figure_function(str(name))(source, ax=target)
    if size is not None:
        canvas.check_room(fig, metric or str(name))
    # The caller's axes carry no title of lbemu's: there is none to leave out, and theirs stays.
    return canvas.untitled(fig) if not title and ax is None else fig


# -- entry point ---------------------------------------------------------------------------
def plot_folder(summary: pd.DataFrame, out: Path, source: Path | None = None, dpi: float = canvas.DPI, *,
                fmt: str | None = None, size: Sequence[float] | None = None, title: bool = True,
                metric: str | None = None, names: Sequence[str] | None = None) -> list[Path]:
    """Write the figures of a results summary as PNG and SVG files (or files of one format) into a folder.

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
    dpi : float
        Resolution of the PNG files.
    fmt : {"png", "pdf", "svg"}, optional
        Write each figure in this format only; default a PNG with an SVG twin.
    size : (float, float), optional
        Width and height of every figure in inches (`analysis.canvas.SIZE_RANGE`); default each
        figure's own, from its panels.
    title : bool
        False leaves out the figures' titles.
    metric : str, optional
        Write only this metric column's figure (`plot_metric`), as ``<metric>.<format>``.
    names : sequence of str, optional
        The figures to write (``lbemu plot --figure``), each one of `available`; default all of them.

    Returns
    -------
    list of Path
        ``<name>.png`` inside ``out`` for each name of ``names`` or `available`, in that order. Each PNG has
        an SVG twin beside it; with ``fmt``, ``<name>.<fmt>`` alone.

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
    from emulator.errors import ScenarioError

    if fmt is not None and fmt not in canvas.FORMATS:
        raise ScenarioError(f"format: expected one of {', '.join(canvas.FORMATS)}, got {canvas.shown(fmt)}")
    data = with_files(summary, source if source is not None else out)
    _prepare(data)  # a bad summary is refused before the folder is touched
    have = available(data)
    for name in names or ():
        if name not in have:
            kind = "a figure these results have data for" if name in FIGURES else "a figure name"
            raise ScenarioError(f"--figure: expected {kind} ({', '.join(have)}), got '{name}'")
    if metric is not None:
        drawn = [(metric, draw(data, metric=metric, size=size, title=title))]
    else:
        drawn = [(name, draw(data, name, size=size, title=title)) for name in (have if names is None else names)]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return [canvas.save(fig, out / f"{name}.png", dpi, fmt) for name, fig in drawn]
