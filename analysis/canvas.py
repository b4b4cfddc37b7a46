"""The frame every figure of a results folder is drawn in: panels, legend, title, PNG and SVG files.

`figure` lays out a grid of panels (or takes the caller's ``ax`` for a
one-panel figure), `pick` chooses which of many sweep points get one, `legend`
gathers the panels' entries into one legend beside them, `title` names what is
drawn and the folder's fixed facts (scenario, N, load, slotted time,
replications), `time_unit`, `ci_note` and `panel_title` give every figure the
same words, `styled` the same seaborn style (on the caller's axes too), `sized` a figure
of a chosen size, `untitled` drops the title, and `save` writes the PNG and its
SVG twin, or one file of a chosen format.

Only matplotlib's object interface is used (no ``pyplot``), so the global
backend is left alone and figures render with Agg; matplotlib is imported only
when a figure is made, which keeps ``import analysis.plots`` cheap.
"""

from __future__ import annotations

import functools
import math
import re
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, cast

from .sweep import fixed_settings, short_name, value_label
from .sweep import shown as setting_shown

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure, SubFigure

Target: TypeAlias = "Axes | Sequence[Axes] | Figure | SubFigure | None"
"""Where a figure is drawn (``ax`` of every figure function): None for a new figure, else as `figure` takes it."""

DPI = 120
"""Resolution of the PNG files (and of the figure while it is laid out)."""

FORMATS = ("png", "pdf", "svg")
"""File formats `save` writes (``lbemu plot --format``)."""

SIZE_RANGE = (1.0, 50.0)
"""Smallest and largest width or height of a figure, in inches (``--size``): below 1 inch the panels
have no room left beside their labels, above 50 a PNG at `DPI` has more than 6000 pixels a side."""


F = TypeVar("F", bound=Callable[..., Any])


def styled(draw: F) -> F:
    """Draw in seaborn's "whitegrid" style at a print-sized scale, whatever the caller's rcParams.

    Every figure of lbemu, those of the documentation included, is drawn in this style; `figure`
    gives the caller's own axes the same look.
    """

    @functools.wraps(draw)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        import seaborn as sns

        with sns.axes_style("whitegrid"), sns.plotting_context("notebook", font_scale=0.9):
            return draw(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def figure(panels: int, ncols: int | None = None, width: float = 4.6, height: float = 3.6,
           dpi: float = DPI, ax: Target = None, name: str = "figure") -> tuple[Figure, list[Axes]]:
    """A figure with ``panels`` panels in rows of ``ncols`` (default up to 3), and those panels' axes.

    Each panel is ``width`` by ``height`` inches, with room for the legend and
    the title; the unused places of the last row are hidden. ``ax`` says where
    to draw instead of a new figure:

    - an ``Axes``: the caller's axes, for a one-panel figure (their figure is returned);
    - a sequence or array of ``Axes`` (e.g. from ``Figure.subplots``): one per panel, in order;
    - a ``Figure`` or ``SubFigure`` without axes: the panels, legend and title are
      drawn into it, as into a new figure, at the size the caller gave it.

    `emulator.ScenarioError` (one line naming ``ax``) for anything else, a number
    of axes that is not the figure ``name``'s number of panels, or a figure that
    already holds axes (new panels would cover them).
    """
    from matplotlib.figure import Figure, SubFigure

    if ax is not None and not isinstance(ax, (Figure, SubFigure)):
        axes = _given_axes(ax, panels, name)
        for panel in axes:
            _adopt_style(panel)
        return axes[0].figure, axes  # type: ignore[return-value]  # a SubFigure's axes draw as a Figure's
    ncols = ncols or min(3, panels)
    nrows = math.ceil(panels / ncols)
    if ax is None:
        fig = Figure(figsize=(width * ncols + 1.6, height * nrows + 0.8), dpi=dpi, layout="constrained")
    else:
        fig = cast("Figure", _empty(ax, name))  # a SubFigure draws as a Figure does
    grid = fig.subplots(nrows, ncols, squeeze=False)
    axes = [panel for row in grid for panel in row]
    for panel in axes[panels:]:
        panel.set_visible(False)
    return fig, axes[:panels]


def _adopt_style(ax: Axes) -> None:
    """Give the caller's axes the look of the current style (`styled`'s): they were made before it applied.

    Background, frame, grid and font sizes are read from the rcParams in force when the axes
    are made; the caller made these under their own.
    """
    from matplotlib import rcParams

    ax.set_facecolor(rcParams["axes.facecolor"])
    ax.set_axisbelow(rcParams["axes.axisbelow"])
    for spine in ax.spines.values():
        spine.set_edgecolor(rcParams["axes.edgecolor"])
        spine.set_linewidth(rcParams["axes.linewidth"])
    ax.grid(rcParams["axes.grid"], color=rcParams["grid.color"], linestyle=rcParams["grid.linestyle"],
            linewidth=rcParams["grid.linewidth"])
    ax.tick_params(which="both", labelsize=rcParams["xtick.labelsize"], colors=rcParams["xtick.color"],
                   length=rcParams["xtick.major.size"] if rcParams["xtick.bottom"] else 0)
    for label in (ax.xaxis.label, ax.yaxis.label):
        label.set_fontsize(rcParams["axes.labelsize"])
        label.set_color(rcParams["axes.labelcolor"])


def sized(size: Sequence[float] | None, key: str = "size", given: str | None = None) -> Figure | None:
    """An empty figure ``size`` = (width, height) inches wide and high, to draw into; None for None.

    `emulator.ScenarioError` (one line naming ``key``, and showing ``given``, the text the user
    wrote, if any) unless both are numbers within `SIZE_RANGE`.
    """
    if size is None:
        return None
    from matplotlib.figure import Figure

    low, high = SIZE_RANGE
    try:
        width, height = (float(side) for side in size)
    except (TypeError, ValueError):
        width = height = math.nan
    if not (low <= width <= high and low <= height <= high):
        from emulator.errors import ScenarioError

        raise ScenarioError(f"{key}: expected width,height in inches, each from {low:g} to {high:g}, "
                            f"got {shown(size if given is None else given)}")
    return Figure(figsize=(width, height), dpi=DPI, layout="constrained")


def check_room(fig: Figure, name: str) -> None:
    """`emulator.ScenarioError` if ``fig``, of a size the user chose, is too small for its panels.

    Matplotlib would only warn and draw the panels squashed to nothing: the layout is run
    here, once, and its complaint turned into a one-line refusal.
    """
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.draw_without_rendering()
    if any("constrained_layout not applied" in str(warning.message) for warning in caught):
        from emulator.errors import ScenarioError

        width, height = fig.get_size_inches()
        panels = sum(ax.get_visible() for ax in fig.get_axes())
        raise ScenarioError(f"size: expected room for the {panels} panel{'s' if panels != 1 else ''} of "
                            f"'{name}' and their labels, got {shown(f'{width:g},{height:g}')} inches")


def shown(value: Any) -> str:
    """A value as an error message shows it: a sequence as ``a,b``, text as is, cut at 40 characters."""
    text = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    return repr(text if len(text) <= 40 else text[:40] + "...")


def untitled(fig: Figure) -> Figure:
    """``fig`` without its title (``--no-title``): a paper's caption says what the figure shows."""
    fig.suptitle("")
    return fig


def _callers_axes(ax: Target) -> bool:
    """True when ``ax`` is the caller's axes (one or several): the figure, its title and room are theirs."""
    from matplotlib.figure import Figure, SubFigure

    return ax is not None and not isinstance(ax, (Figure, SubFigure))


def _given_axes(ax: Any, panels: int, name: str) -> list[Axes]:
    """``ax`` (one ``Axes`` or a sequence of them) as a list of one ``Axes`` per panel, checked."""
    import numpy as np
    from matplotlib.axes import Axes

    from emulator.errors import ScenarioError

    if isinstance(ax, Axes):
        axes = [ax]
    elif isinstance(ax, (list, tuple, np.ndarray)):
        axes = list(np.asarray(ax, dtype=object).ravel())
    else:
        raise ScenarioError(f"ax: expected matplotlib Axes, a sequence of Axes or an empty Figure, "
                            f"got {type(ax).__name__}")
    strangers = [type(a).__name__ for a in axes if not isinstance(a, Axes)]
    if strangers:
        raise ScenarioError(f"ax: expected a sequence of matplotlib Axes, got one holding a {strangers[0]}")
    if isinstance(ax, Axes) and panels != 1:
        raise ScenarioError(f"ax: expected a one-panel figure, '{name}' has {panels} panels here (pass {panels} "
                            f"Axes or an empty Figure, or leave ax out to get a figure of its own)")
    if len(axes) != panels:
        raise ScenarioError(f"ax: expected {panels} Axes, one per panel of '{name}' here, got {len(axes)}")
    return axes


def _empty(fig: Figure | SubFigure, name: str) -> Figure | SubFigure:
    """The caller's figure to draw ``name`` into; `emulator.ScenarioError` if it already holds axes."""
    held = fig.get_axes()
    if held:
        from emulator.errors import ScenarioError

        raise ScenarioError(f"ax: expected an empty Figure to draw '{name}' into, got one that holds "
                            f"{len(held)} Axes (pass one of them, or a new Figure)")
    return fig


def pick(values: Sequence[Any], count: int) -> list[Any]:
    """``count`` values spread evenly over ``values``, first and last included.

    Examples
    --------
    >>> pick([1, 2, 3, 4, 5, 6, 7], 3), pick([1, 2], 3), pick([1, 2, 3], 1)
    ([1, 4, 7], [1, 2], [3])
    """
    if len(values) <= count:
        return list(values)
    if count == 1:
        return [values[-1]]
    return list(dict.fromkeys(values[round(i * (len(values) - 1) / (count - 1))] for i in range(count)))


def legend(fig: Figure, axes: Sequence[Axes], extra: Sequence[tuple[Any, str]] = (), ax: Target = None,
           **options: Any) -> None:
    """One legend to the right of the panels: every label of ``axes`` once, then the ``extra`` entries.

    ``options`` go to ``Figure.legend`` (e.g. ``title="policy"``, or ``loc="outside lower center"``
    for a long legend under the panels); nothing is
    drawn when there is no entry. With the caller's Axes as ``ax`` (one or several, not a Figure) the
    legend goes just outside the right edge of the last, so that it never covers data either, unless
    another panel of the caller's figure already shows the same entries: two figures of one run
    drawn side by side share one legend.
    """
    seen: dict[str, Any] = {}
    for panel in axes:
        for handle, label in zip(*panel.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    handles, labels = list(seen.values()), list(seen)
    handles += [handle for handle, _ in extra]
    labels += [label for _, label in extra]
    if not handles:
        return
    if _callers_axes(ax):
        if any(_entries(other) == labels for other in axes[-1].figure.get_axes()):
            return
        axes[-1].legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False,
                  fontsize="small", **options)
    else:
        fig.legend(handles, labels, **{"loc": "outside right center", "frameon": False, **options})


def _entries(ax: Axes) -> list[str]:
    """The labels of the legend ``ax`` shows, [] without one."""
    shown = ax.get_legend()
    return [text.get_text() for text in shown.get_texts()] if shown is not None else []


def time_unit(summary: pd.DataFrame, scenario: Any = None) -> str:
    """The unit of time axes: "slots" in slotted time, else "mean service times" (or "time units").

    The unit is the mean service time when every point's service law has mean 1
    (the ``service`` column reads ``kind(1...)``), as in every shipped scenario.
    """
    if scenario is not None and getattr(scenario.system, "time", "continuous") == "slotted":
        return "slots"
    if "service" in summary:
        means = {m.group(1) if (m := re.match(r"\w+\(([^,)]+)", str(s))) else None for s in summary["service"]}
        if means == {"1"}:
            return "mean service times"
    return "time units"


def ci_note(summary: pd.DataFrame) -> str:
    """" (95% CI)" when some point has two replications or more (there is an interval to draw), else ""."""
    if "replications" in summary and summary["replications"].max() >= 2:
        return " (95% CI)"
    return ""


NAMES = {"load": "load", "servers": "N", "period": "T", "capacity": "B", "dispatchers": "D"}
"""Last part of a swept key -> its name in panel titles."""


def panel_title(keys: Sequence[str], values: Sequence[Any]) -> str:
    """``load = 0.9, N = 100``: a panel's swept values in the words every figure uses.

    Examples
    --------
    >>> panel_title(["workload.load", "policies.2.period", "workload.service.kind"], [0.9, 50, "erlang"])
    'load = 0.9, T = 50, service = erlang'
    >>> panel_title(["workload.service"], ["{'kind': 'hyperexponential', 'mean': 1, 'scv': 4}"])
    'service = hyperexponential scv 4'
    """
    return ", ".join(f"{key_name(k)} = {setting_shown(k, v)}" for k, v in zip(keys, values, strict=True))


def key_name(key: str) -> str:
    """A swept key's name in titles: `NAMES`, a law's owner for its kind (``service``), else its `short_name`."""
    short = short_name(key)
    if short in ("service.kind", "arrivals.kind", "latency.kind"):
        return short.split(".")[0]
    if key in ("workload.service", "workload.arrivals", "network.latency"):  # a whole law: its owner
        return key.split(".")[1]
    return NAMES.get(key.rsplit(".", 1)[-1], short)


def title(fig: Figure, summary: pd.DataFrame, what: str, scenario: Any = None, ax: Target = None) -> None:
    """The figure's title: ``what``, and below it what the summary holds fixed (scenario, N, load, laws).

    Lines are wrapped to the figure's width, so that a narrow figure does not
    clip its title. With the caller's Axes as ``ax`` (one or several, not a Figure) nothing is
    drawn: the figure is the caller's.
    """
    if _callers_axes(ax):
        return
    parts = []
    if "scenario" in summary:
        parts.append(str(summary["scenario"].iloc[0]))
    for column, name in (("servers", "N"), ("load", "load")):
        if column in summary and summary[column].nunique() == 1:
            parts.append(f"{name}={value_label(summary[column].iloc[0])}")
    for column in ("arrivals", "service", "discipline"):
        if column in summary and summary[column].nunique() == 1:
            parts.append(str(summary[column].iloc[0]))
    if "dispatchers" in summary and summary["dispatchers"].nunique() == 1 and summary["dispatchers"].iloc[0] != 1:
        parts.append(f"D={value_label(summary['dispatchers'].iloc[0])}")
    parts.extend(fixed_settings(summary))  # every other setting away from its default
    if time_unit(summary, scenario) == "slots":  # FIFO queues served in slots: "slotted" says which model
        parts = [p for p in parts if p != "fifo"] + ["slotted"]
    if "replications" in summary:
        reps = summary["replications"].max()
        parts.append(f"{int(reps)} replication{'s' if reps != 1 else ''}")
    width = max(40, int(fig.bbox.width / fig.dpi * 12.5))  # characters of a medium font per line
    lines = [*textwrap.wrap(what, width), *textwrap.wrap(", ".join(parts), width)]
    fig.suptitle("\n".join(lines), fontsize="medium")


def save(fig: Figure, path: Path, dpi: float = DPI, fmt: str | None = None) -> Path:
    """Write the figure and return the path written.

    Without ``fmt``, as ``path`` (PNG) and as SVG beside it (the PNG's path is returned); with
    one of `FORMATS`, as ``path`` with that suffix only (vector PDF and SVG keep text as text).
    """
    if fmt is None:
        fig.savefig(path, dpi=dpi)
        fig.savefig(path.with_suffix(".svg"))
        return path
    target = path.with_suffix(f".{fmt}")
    fig.savefig(target, dpi=dpi, format=fmt)
    return target
