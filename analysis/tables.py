"""Comparison tables: policies against the swept keys, mean ± CI, best values marked, theory beside.

`comparison_table` is what ``lbemu table`` and ``Results.table()`` print: it
builds the table with `pivot` (`analysis.pivot`: which cells, rows, columns,
marks and theory rows) and writes it with `render` (`analysis.render`: text,
GitHub markdown, CSV, LaTeX or HTML; `frame` and `styler` for pandas). The
public names of both modules are importable from here too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from .pivot import (
    BLOCKING_METRICS,
    BOUND,
    FIFO_METRICS,
    KEY_COLUMNS,
    MEASURED,
    THEORY,
    TITLES,
    Entry,
    Pivot,
    Value,
    default_metrics,
    main_key,
    metric_title,
    pivot,
)
from .render import FORMATS, KEY_NAMES, LATEX_SYMBOLS, frame, key_name, latex_escape, render, styler
from .sweep import swept_keys

__all__ = [
    "BLOCKING_METRICS", "BOUND", "FIFO_METRICS", "FORMATS", "KEY_COLUMNS", "KEY_NAMES", "LATEX_SYMBOLS",
    "MEASURED", "THEORY", "TITLES", "Entry", "Pivot", "Value", "comparison_table", "default_metrics", "frame",
    "key_name", "latex_escape", "main_key", "metric_title", "pivot", "render", "styler", "swept_keys",
]


RENDER_OPTIONS = ("width", "layout", "siunitx")


def comparison_table(summary: pd.DataFrame, metrics: Sequence[str] | None = None, format: str = "text",
                     **options: Any) -> str:
    """A summary as a comparison table (`pivot`, then `render`).

    Parameters
    ----------
    summary : DataFrame
        ``summary.csv`` as a frame.
    metrics : list of str, optional
        Metric columns; by default they follow the system (`default_metrics`).
    format : {"text", "markdown", "latex", "csv", "html"}
    **options
        ``rows``, ``cols``, ``diff``, ``scenario``, ``theory``: see `pivot`;
        ``width``, ``layout``, ``siunitx``: see `render`.

    Returns
    -------
    str
    """
    shown = {key: options.pop(key) for key in RENDER_OPTIONS if key in options}
    return render(pivot(summary, metrics, **options), format, **shown)
