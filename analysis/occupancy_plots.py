"""Figures of the queue-length distribution: ``occupancy.png`` and, for server pools, ``halfin_whitt.png``.

`plot_folder` in `analysis.plots` calls `plot_occupancy` when the folder holds
``occupancy.csv``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from . import canvas
from .occupancy import policies_of, scaled_deviations, theory_tail
from .style import policy_style

DPI = 110
PANELS_MAX = 24  # points drawn; more would make an unreadable figure


def _describe(frame: pd.DataFrame, keys: list[str]) -> str:
    row = frame.iloc[0]
    return ", ".join(f"{key.split('.')[-1]}={row[key]}" for key in keys) or f"point {row['point']}"


def plot_occupancy(folder: str | Path, summary: pd.DataFrame, out: str | Path | None = None) -> list[Path]:
    """Write ``occupancy.png`` (and ``halfin_whitt.png`` for pools) into ``out`` (default ``folder``).

    Reads ``occupancy.csv`` and ``scenario.yaml`` of the results folder ``folder``;
    returns the paths written.

    ``occupancy.png``: one panel per sweep point; the fraction of servers (pools)
    with at least i jobs against i on a log scale, one line per policy with its
    95% CI, and dashed in the same colour the theory curve where there is one
    (`analysis.occupancy.theory_tail`). ``halfin_whitt.png``: √N (q_i - q_i^fluid)
    per point and policy (`analysis.occupancy.scaled_deviations`).
    """
    import seaborn as sns

    folder = Path(folder)
    out = Path(out) if out is not None else folder
    occupancy = pd.read_csv(folder / "occupancy.csv")
    if occupancy.empty:
        return []
    keys = [c for c in occupancy.columns if c not in ("point", "policy", "i", "fraction", "fraction_ci95")]
    info = policies_of(folder)
    policies = list(dict.fromkeys(occupancy["policy"]))
    # The folder's style (from summary.csv's policies), so a policy looks the same in every figure.
    style = policy_style(list(dict.fromkeys([*summary["policy"], *policies])))
    colours, markers = style.colors, style.markers
    points = list(dict.fromkeys(occupancy["point"]))[:PANELS_MAX]
    paths = []
    with sns.axes_style("whitegrid"), sns.plotting_context("notebook", font_scale=0.9):
        fig, axes = canvas.figure(len(points), dpi=DPI)
        for ax, point in zip(axes, points, strict=True):
            here = occupancy[(occupancy["point"] == point) & (occupancy["i"] >= 1) & (occupancy["fraction"] > 0)]
            for policy in policies:
                rows = here[here["policy"] == policy]
                if rows.empty:
                    continue
                # On a log scale a lower bar below 0 would fall off the axis: stop it at 1/10 of the value.
                lower = rows["fraction_ci95"].clip(upper=0.9 * rows["fraction"])
                ax.errorbar(rows["i"], rows["fraction"], yerr=[lower, rows["fraction_ci95"]],
                            color=colours[policy], marker=markers[policy], markersize=3, capsize=2, label=policy)
                curve = theory_tail(info[point, policy]) if (point, policy) in info else None
                if curve is not None:
                    values, name = curve
                    top = int(rows["i"].max()) + 1
                    i = [k for k in range(1, min(len(values), top + 1)) if values[k] > 0]
                    ax.plot(i, [values[k] for k in i], linestyle="--", color=colours[policy], linewidth=1,
                            label=f"{policy}: {name}")
            ax.set_yscale("log")
            if not here.empty:
                ax.set_ylim(bottom=max(float(here["fraction"].min()) / 10, 1e-9))
            ax.set_xlabel("i")
            ax.set_ylabel("fraction with ≥ i jobs")
            ax.set_title(_describe(occupancy[occupancy["point"] == point], keys), fontsize=9)
            ax.legend(fontsize=7)
        fig.suptitle("Queue-length tails: simulated (95% CI), theory dashed")
        paths.append(canvas.save(fig, out / "occupancy.png", DPI))
        deviations = scaled_deviations(occupancy, summary)
        if not deviations.empty:
            paths.append(_halfin_whitt(deviations, keys, colours, markers, out))
    return paths


def _halfin_whitt(deviations: pd.DataFrame, keys: list[str], colours: dict[str, object], markers: dict[str, str],
                  folder: Path) -> Path:
    deviations = deviations[deviations["i"] <= deviations.groupby("point")["i"].transform("min") + 3]
    points = list(dict.fromkeys(deviations["point"]))[:PANELS_MAX]
    fig, axes = canvas.figure(len(points), dpi=DPI)
    for ax, point in zip(axes, points, strict=True):
        here = deviations[deviations["point"] == point]
        for policy, rows in here.groupby("policy", sort=False):
            ax.errorbar(rows["i"], rows["deviation"], yerr=rows["deviation_ci95"], color=colours.get(policy),
                        marker=markers.get(policy, "o"), markersize=3, capsize=2, label=policy)
        ax.axhline(0.0, color="black", linewidth=0.8)
        ax.set_xlabel("i")
        ax.set_ylabel("√N (q_i − q_i JSQ fluid)")
        ax.set_title(_describe(here, keys), fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle("Occupancies on the diffusion scale: deviation from JSQ's fluid point (95% CI)")
    return canvas.save(fig, folder / "halfin_whitt.png", DPI)
