"""Figures beyond the summary's metrics: the response-time tail, and messages against the JBT-d period.

``response_tail.png``
    From ``response_cdf.csv`` of a results folder (columns ``point``, the swept
    keys, ``policy``, ``response``: the upper edge of a histogram bin, ``cdf``:
    the fraction of measured jobs with a response at most that edge; one row per
    non-empty bin). The tail ``P(response > t) = 1 - cdf`` on a log scale, one
    line per policy, one panel per sweep point (at most `MAX_PANELS`, spread
    over the sweep, first and last included).
``messages_vs_period.png``
    When a JBT-d period is swept (a key such as ``policies.3.period``): messages
    per job against the period T, one line per policy, with the other swept keys
    as panels, as in `analysis.plots`.

Both use the folder's style map (`analysis.style.policy_style`), so a policy
has the same colour and marker as in every other figure.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .style import Style
from .sweep import describe, determines, swept_keys

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

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
    from .plots import _figure, _legend, _pick, _title

    points = list(dict.fromkeys(cdf["point"]))
    shown = _pick(points, MAX_PANELS)
    fig, axes = _figure(len(shown), min(3, len(shown)), width=4.2, height=3.2)
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
    _legend(fig, axes, title="policy")
    note = "" if len(shown) == len(points) else f" ({len(shown)} of {len(points)} sweep points)"
    what = f"Response-time tail P(response > t){note}"
    if summary is not None:
        _title(fig, summary, what)
    else:
        fig.suptitle(what, fontsize="medium")
    return fig


def period_key(summary: pd.DataFrame) -> str | None:
    """The swept JBT-d period key (``policies.<i>.period``) with at least two values, if any."""
    for key in summary.columns:
        if key.startswith("policies.") and key.endswith(".period") and summary[key].nunique() > 1:
            return str(key)
    return None


def period_figure(summary: pd.DataFrame, style: Style) -> Figure:
    """Messages per job against the swept JBT-d period T, with the other swept keys as panels."""
    from .plots import Layout, _metric_figure, layout

    key = period_key(summary)
    assert key is not None
    plan = layout(summary)
    panels = [c for c in ([plan.x] if plan.x not in (None, key) else []) + plan.panels
              if c != key and not determines(summary, key, c)]
    period = Layout(key, True, [str(c) for c in panels], plan.policies, "JBT-d period T")
    return _metric_figure(summary, period, style, "messages_per_job",
                          "Control messages per job against the threshold update period (95% CI)")


def extra_figures(summary: pd.DataFrame, folder: Path, style: Style) -> dict[str, Any]:
    """Name -> figure maker for the figures of this module that apply to a results folder."""
    makers: dict[str, Any] = {}
    cdf = read_response_cdf(folder)
    if cdf is not None:
        makers["response_tail.png"] = lambda: response_tail_figure(cdf, style, summary)
    if period_key(summary) is not None:
        makers["messages_vs_period.png"] = lambda: period_figure(summary, style)
    return makers
