"""``response_tail.png``: the response-time tail of a results folder, from its ``response_cdf.csv``.

``response_cdf.csv`` has the columns ``point``, the swept keys, ``policy``,
``response`` (the upper edge of a histogram bin) and ``cdf`` (the fraction of
measured jobs with a response at most that edge), one row per non-empty bin.
The figure draws the tail ``P(response > t) = 1 - cdf`` on a log scale, one
line per policy, one panel per sweep point (at most `MAX_PANELS`, spread over
the sweep, first and last included), with the colour and marker each policy
has in every figure (`analysis.style.policy_style`). `plot_response_tail` draws
it from `emulator.Results` or a folder with the file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import canvas
from .source import source_of
from .style import style_of
from .sweep import swept_keys

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MAX_PANELS = 9


@canvas.styled
def plot_response_tail(results: Any, ax: canvas.Target = None) -> Figure:
    """The response-time tail P(response > t) per policy on a log scale, one panel per sweep point.

    Parameters
    ----------
    results : emulator.Results or path
        A run's results (``Results.response_cdf``), or a results folder with
        ``response_cdf.csv``.
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
        If there is no response-time histogram.
    """
    from emulator.errors import ScenarioError

    source = source_of(results)
    cdf = source.response_cdf
    if cdf is None:
        raise ScenarioError("response_tail: expected results with response_cdf.csv, got none")
    summary = source.summary
    style = style_of(summary, list(dict.fromkeys(cdf["policy"].astype(str))))
    unit = canvas.time_unit(summary, source.scenario)
    points = list(dict.fromkeys(cdf["point"]))
    shown = canvas.pick(points, MAX_PANELS)
    fig, axes = canvas.figure(len(shown), min(3, len(shown)), width=4.2, height=3.2, ax=ax, name="response_tail")
    for panel, point in zip(axes, shown, strict=True):
        frame = cdf[cdf["point"] == point]
        for policy in dict.fromkeys(frame["policy"].astype(str)):
            rows = frame[frame["policy"].astype(str) == policy].sort_values("response")
            tail = 1.0 - rows["cdf"].to_numpy(dtype=float)
            keep = tail > 0
            if not keep.any():
                continue
            panel.plot(rows["response"].to_numpy(dtype=float)[keep], tail[keep], label=policy,
                       color=style.colors.get(policy, "grey"), marker=style.markers.get(policy, "o"),
                       markevery=max(1, int(keep.sum()) // 8), markersize=4, linewidth=1.3)
        panel.set_yscale("log")
        panel.set_xlabel(f"response time t ({unit})")
        panel.set_ylabel("P(response > t)")
        keys = swept_keys(frame)
        panel.set_title(canvas.panel_title(keys, [frame.iloc[0][k] for k in keys]), fontsize="small")
    canvas.legend(fig, axes, title="policy", ax=ax)
    note = "" if len(shown) == len(points) else f" ({len(shown)} of {len(points)} sweep points)"
    canvas.title(fig, summary, f"Response-time tail P(response > t){note}", source.scenario, ax)
    return fig
