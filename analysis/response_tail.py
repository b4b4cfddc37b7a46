"""``response_tail.png``: the response-time tail of a results folder, from its ``response_cdf.csv``.

``response_cdf.csv`` has the columns ``point``, the swept keys, ``policy``,
``response`` (the upper edge of a histogram bin) and ``cdf`` (the fraction of
measured jobs with a response at most that edge), one row per non-empty bin.
The figure draws the tail ``P(response > t) = 1 - cdf`` on a log scale, one
line per policy, one panel per sweep point (at most `MAX_PANELS`, spread over
the sweep, first and last included), in the folder's style map
(`analysis.style.policy_style`), so that a policy has the same colour and
marker as in every other figure. `analysis.plots.plot_folder` draws it when the
folder has the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from . import canvas
from .sweep import describe, swept_keys

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from .style import Style

MAX_PANELS = 9
CDF_COLUMNS = ("point", "policy", "response", "cdf")


def read_response_cdf(folder: Path) -> pd.DataFrame | None:
    """``response_cdf.csv`` of a results folder, or None if there is none (or it is not one)."""
    import pandas as pd

    path = Path(folder) / "response_cdf.csv"
    if not path.is_file():
        return None
    try:
        frame = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError):
        return None
    if not set(CDF_COLUMNS) <= set(frame.columns) or frame.empty:
        return None
    return frame


def response_tail_figure(cdf: pd.DataFrame, style: Style, summary: pd.DataFrame | None = None) -> Figure:
    """The response-time tail per policy, one panel per sweep point.

    Parameters
    ----------
    cdf : DataFrame
        ``response_cdf.csv`` as a frame (see the module docstring).
    style : Style
        The folder's style map; policies missing from it are drawn in grey.
    summary : DataFrame, optional
        The folder's summary, for the figure title (scenario, N, ...).

    Returns
    -------
    matplotlib.figure.Figure
    """
    points = list(dict.fromkeys(cdf["point"]))
    shown = canvas.pick(points, MAX_PANELS)
    fig, axes = canvas.figure(len(shown), min(3, len(shown)), width=4.2, height=3.2)
    for ax, point in zip(axes, shown, strict=True):
        frame = cdf[cdf["point"] == point]
        for policy in dict.fromkeys(frame["policy"].astype(str)):
            rows = frame[frame["policy"].astype(str) == policy].sort_values("response")
            tail = 1.0 - rows["cdf"].to_numpy(dtype=float)
            keep = tail > 0
            if not keep.any():
                continue
            ax.plot(rows["response"].to_numpy(dtype=float)[keep], tail[keep], label=policy,
                    color=style.colors.get(policy, "grey"), marker=style.markers.get(policy, "o"),
                    markevery=max(1, int(keep.sum()) // 8), markersize=4, linewidth=1.3)
        ax.set_yscale("log")
        ax.set_xlabel("response time t")
        ax.set_ylabel("P(response > t)")
        keys = swept_keys(frame)
        ax.set_title(describe(keys, [frame.iloc[0][k] for k in keys]), fontsize="small")
    canvas.legend(fig, axes, title="policy")
    note = "" if len(shown) == len(points) else f" ({len(shown)} of {len(points)} sweep points)"
    what = f"Response-time tail P(response > t){note}"
    if summary is not None:
        canvas.title(fig, summary, what)
    else:
        fig.suptitle(what, fontsize="medium")
    return fig
