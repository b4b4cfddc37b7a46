"""The frame every figure of a results folder is drawn in: panels, legend, title, PNG and SVG files.

`figure` lays out a grid of panels, `pick` chooses which of many sweep
points get one, `legend` gathers the panels' entries into one legend beside
them, `title` names what is drawn and the folder's fixed facts (scenario, N,
load, replications), and `save` writes the PNG and its SVG twin.

Only matplotlib's object interface is used (no ``pyplot``), so the global
backend is left alone and figures render with Agg; matplotlib is imported only
when a figure is made, which keeps ``import analysis.plots`` cheap.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .sweep import value_label

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DPI = 120
"""Resolution of the PNG files (and of the figure while it is laid out)."""


def figure(panels: int, ncols: int | None = None, width: float = 4.6, height: float = 3.6,
           dpi: float = DPI) -> tuple[Figure, list[Axes]]:
    """A figure with ``panels`` panels in rows of ``ncols`` (default up to 3), and those panels' axes.

    Each panel is ``width`` by ``height`` inches, with room for the legend and
    the title; the unused places of the last row are hidden.
    """
    from matplotlib.figure import Figure

    ncols = ncols or min(3, panels)
    nrows = math.ceil(panels / ncols)
    fig = Figure(figsize=(width * ncols + 1.6, height * nrows + 0.8), dpi=dpi, layout="constrained")
    grid = fig.subplots(nrows, ncols, squeeze=False)
    axes = [ax for row in grid for ax in row]
    for ax in axes[panels:]:
        ax.set_visible(False)
    return fig, axes[:panels]


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


def legend(fig: Figure, axes: Sequence[Axes], extra: Sequence[tuple[Any, str]] = (), **options: Any) -> None:
    """One legend to the right of the panels: every label of ``axes`` once, then the ``extra`` entries.

    ``options`` go to ``Figure.legend`` (e.g. ``title="policy"``); nothing is
    drawn when there is no entry.
    """
    seen: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    handles, labels = list(seen.values()), list(seen)
    handles += [handle for handle, _ in extra]
    labels += [label for _, label in extra]
    if handles:
        fig.legend(handles, labels, loc="outside right center", frameon=False, **options)


def title(fig: Figure, summary: pd.DataFrame, what: str) -> None:
    """The figure's title: ``what``, and below it what the summary holds fixed (scenario, N, load, laws)."""
    parts = []
    if "scenario" in summary:
        parts.append(str(summary["scenario"].iloc[0]))
    for column, name in (("servers", "N"), ("load", "load")):
        if column in summary and summary[column].nunique() == 1:
            parts.append(f"{name}={value_label(summary[column].iloc[0])}")
    for column in ("arrivals", "service", "discipline"):
        if column in summary and summary[column].nunique() == 1:
            parts.append(str(summary[column].iloc[0]))
    if "replications" in summary:
        reps = summary["replications"].max()
        parts.append(f"{int(reps)} replication{'s' if reps != 1 else ''}")
    fig.suptitle(f"{what}\n" + ", ".join(parts), fontsize="medium")


def save(fig: Figure, path: Path, dpi: float = DPI) -> Path:
    """Write the figure as ``path`` (PNG) and as SVG beside it; return the PNG's path."""
    fig.savefig(path, dpi=dpi)
    fig.savefig(path.with_suffix(".svg"))
    return path
