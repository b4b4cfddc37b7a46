"""Tables, plots and theory overlays from lbemu's tidy result frames.

The figure functions are exported here (``analysis.plot_tradeoff`` and so on,
one per name of `analysis.plots.FIGURES`); each takes `emulator.Results` or a
results folder and returns a matplotlib ``Figure``. They are loaded on first
use, so that ``import analysis`` stays cheap.
"""

from typing import Any

__all__ = ["plot_response", "plot_messages", "plot_tradeoff", "plot_messages_by_kind", "plot_blocking",
           "plot_response_tail", "plot_messages_vs_period", "plot_occupancy", "plot_halfin_whitt"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from .plots import figure_function

        return figure_function(name.removeprefix("plot_"))
    raise AttributeError(f"module 'analysis' has no attribute '{name}'")
