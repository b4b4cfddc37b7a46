"""Occupancy analysis: theory curves for occupancy.csv, √N-scaled deviations, pooled KS distances.

Inputs are the files of a results folder (``occupancy.csv``, ``total_jobs.csv``,
``summary.csv``, ``scenario.yaml``); see ``docs/occupancy.md`` for their columns.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import theory


def policies_of(folder: Any) -> dict[tuple[int, str], dict[str, Any]]:
    """(point, policy label) -> what the theory needs, from the folder's ``scenario.yaml`` (or a `Scenario`).

    Each value holds ``name``, ``params`` (resolved), ``load``, ``servers``,
    ``discipline``, ``capacity`` and ``exponential`` (Poisson arrivals, exp(1)
    service, unit speeds, zero latency, continuous time: the setting of the mean-field results).
    Empty if there is no readable scenario.yaml.
    """
    from emulator.errors import ScenarioError
    from emulator.scenario.reading import load_scenario

    try:
        points = (folder if hasattr(folder, "points") else load_scenario(Path(folder) / "scenario.yaml")).points()
    except (ScenarioError, OSError):
        return {}
    out = {}
    for point in points:
        s = point.scenario
        exponential = (s.workload.arrivals.kind == "poisson" and s.workload.service.kind == "exponential"
                       and s.workload.service.mean == 1 and s.system.speeds is None
                       and s.network.latency.mean == 0 and s.system.time == "continuous")
        for policy in point.policies:
            out[point.index, policy.label] = {
                "name": policy.name, "params": policy.params, "load": point.load, "servers": point.servers,
                "discipline": s.system.discipline, "capacity": s.system.capacity, "exponential": exponential}
    return out


def theory_tail(info: dict[str, Any]) -> tuple[np.ndarray, str] | None:
    """The theory curve of s_i (or q_i for pools) for one policy at one point, and its name; None if none.

    FIFO servers: SQ(d) mean field (`theory.sqd_tail`), the threshold model
    (`theory.threshold_fixed_point`), random routing's M/M/1 tail ``load^i``; JSQ has no
    closed form at finite N. Pools: JSQ fluid limit (`theory.jsq_pool_fluid`),
    JSQ(d) ODE (`theory.jsqd_pool_tail`), random routing as JSQ(1). None too where the
    curve would need more levels or work than its budget (a load near 1, a large
    threshold, a stiff pool ODE: see docs/theory.md).
    """
    try:
        return _theory_tail(info)
    except (ValueError, RuntimeError):  # the computation's budget, with the reason in its message
        return None


def _theory_tail(info: dict[str, Any]) -> tuple[np.ndarray, str] | None:
    if not info.get("exponential"):
        return None
    name, params, lam, capacity = info["name"], info["params"], info["load"], info["capacity"]
    if info["discipline"] == "pool":
        if name == "jsq":
            return theory.jsq_pool_fluid(lam, capacity), "JSQ fluid limit"
        if name in ("sqd", "random"):
            d = params.get("d", 1) if name == "sqd" else 1
            return theory.jsqd_pool_tail(lam, d, capacity), f"JSQ({d}) mean field"
        return None
    if capacity is not None or not lam < 1:
        return None
    if name == "sqd":
        return theory.sqd_tail(lam, params["d"], tol=1e-9), f"SQ({params['d']}) mean field"
    if name == "random":
        return theory.sqd_tail(lam, 1, tol=1e-9), "M/M/1 tail"
    if name == "threshold":
        return theory.threshold_fixed_point(lam, params["d"], params["threshold"], tol=1e-9), "threshold model"
    return None


def scaled_deviations(occupancy: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """√N (q_i - q_i^fluid) for the pool points of a results folder.

    ``q_i^fluid`` is JSQ's fluid point at the point's own arrival rate per pool
    λ = ``load`` (`theory.jsq_pool_fluid`): 1 for i <= ⌊λ⌋, λ - ⌊λ⌋ at ⌊λ⌋ + 1, 0
    above. In the Halfin-Whitt regime (λ = 1 - β/√N) this gives, for i = 1,
    β - (N - Q_1)/√N, and for i >= 2, Q_i/√N, where Q_i counts the pools with at
    least i tasks: the diffusion-scaled occupancies of Mukherjee et al. up to the
    shift β. Returns the occupancy rows of pool points with i >= 1 and the columns
    ``servers``, ``load``, ``fluid``, ``deviation`` and ``deviation_ci95``.
    """
    keys = summary[["point", "policy", "servers", "load", "discipline"]].drop_duplicates(["point", "policy"])
    frame = occupancy.merge(keys, on=["point", "policy"], how="inner")
    frame = frame[(frame["discipline"] == "pool") & (frame["i"] >= 1)].copy()
    frame["fluid"] = [float(theory.jsq_pool_fluid(lam, levels=int(i))[int(i)])
                      for lam, i in zip(frame["load"], frame["i"], strict=True)]
    root = np.sqrt(frame["servers"].astype(float))
    frame["deviation"] = root * (frame["fraction"] - frame["fluid"])
    frame["deviation_ci95"] = root * frame["fraction_ci95"]
    return frame.drop(columns=["discipline"]).reset_index(drop=True)


def pooled_ks(total_jobs: pd.DataFrame, summary: pd.DataFrame, theory_mean: float | None = None) -> pd.DataFrame:
    """KS distances of ε × total jobs to the exponential, from the distribution pooled over replications.

    ``total_jobs.csv`` holds the mean over replications of P(total = n); its KS
    distance (`emulator.measure.occupancy.ks_exponential`) to the exponential of mean
    ``theory_mean`` (default 1, the limit for Poisson arrivals and exponential
    service; `emulator.measure.occupancy.theory_mean` gives it for other scenarios) and to the
    exponential of its own mean is free of the upward bias that each
    replication's noise gives the mean of per-replication distances
    (``ks_exponential_*`` in summary.csv). One row per (point, policy) with
    ε = 1 - load > 0: ``point``, ``policy``, ``servers``, ``load``,
    ``mean_scaled_total``, ``ks_theory``, ``ks_fitted``.
    """
    from emulator.measure.occupancy import THEORY_MEAN, ks_exponential

    keys = summary[["point", "policy", "servers", "load"]].drop_duplicates(["point", "policy"])
    rows = []
    for (point, policy), group in total_jobs.groupby(["point", "policy"], sort=False):
        meta = keys[(keys["point"] == point) & (keys["policy"] == policy)]
        if meta.empty:
            continue
        eps = 1.0 - float(meta["load"].iloc[0])
        if not eps > 0:
            continue
        p = np.zeros(int(group["total"].max()) + 1)
        p[group["total"].to_numpy(dtype=int)] = group["probability"].to_numpy()
        p /= p.sum()
        mean = eps * float(np.arange(len(p)) @ p)
        rows.append({"point": point, "policy": policy, "servers": int(meta["servers"].iloc[0]),
                     "load": 1.0 - eps, "mean_scaled_total": mean,
                     "ks_theory": ks_exponential(p, eps, THEORY_MEAN if theory_mean is None else theory_mean),
                     "ks_fitted": ks_exponential(p, eps, mean) if mean > 0 else math.nan})
    return pd.DataFrame(rows, columns=["point", "policy", "servers", "load", "mean_scaled_total",
                                       "ks_theory", "ks_fitted"])
