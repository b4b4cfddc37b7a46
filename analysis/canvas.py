"""The frame every figure of a results folder is drawn in: panels, legend, title, PNG and SVG files.

`figure` lays out a grid of panels (or takes the caller's ``ax`` for a
one-panel figure), `pick` chooses which of many sweep points get one, `legend`
gathers the panels' entries into one legend beside them, `title` names what is
drawn and the folder's fixed facts (scenario, N, load, slotted time,
replications), `time_unit`, `ci_note` and `panel_title` give every figure the
same words, `styled` the same seaborn style, and `save` writes the PNG and its
SVG twin.

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

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure, SubFigure

Target: TypeAlias = "Axes | Sequence[Axes] | Figure | SubFigure | None"
"""Where a figure is drawn (``ax`` of every figure function): None for a new figure, else as `figure` takes it."""

DPI = 120
"""Resolution of the PNG files (and of the figure while it is laid out)."""


F = TypeVar("F", bound=Callable[..., Any])


def styled(draw: F) -> F:
    """Draw in seaborn's "whitegrid" style at a print-sized scale, whatever the caller's rcParams."""

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

    ``options`` go to ``Figure.legend`` (e.g. ``title="policy"``); nothing is
    drawn when there is no entry. With the caller's Axes as ``ax`` (one or several, not a Figure) the
    legend goes just outside the right edge of the last, so that it never covers data either.
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
        axes[-1].legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False,
                  fontsize="small", **options)
    else:
        fig.legend(handles, labels, loc="outside right center", frameon=False, **options)


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
    """
    return ", ".join(f"{key_name(k)} = {value_label(v)}" for k, v in zip(keys, values, strict=True))


def key_name(key: str) -> str:
    """A swept key's name in titles: `NAMES`, a law's owner for its kind (``service``), else its `short_name`."""
    short = short_name(key)
    if short in ("service.kind", "arrivals.kind", "latency.kind"):
        return short.split(".")[0]
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


def save(fig: Figure, path: Path, dpi: float = DPI) -> Path:
    """Write the figure as ``path`` (PNG) and as SVG beside it; return the PNG's path."""
    fig.savefig(path, dpi=dpi)
    fig.savefig(path.with_suffix(".svg"))
    return path
