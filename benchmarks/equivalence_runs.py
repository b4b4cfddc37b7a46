"""Equivalence cases of whole runs: the warm-up found by MSER-5, batch means, and finite traces of whole batches.

Plain data, read by path by ``equivalence_cases.py`` (its `RUNS`, added to its extras: each case runs at zero,
exponential and deterministic latency in continuous time, at none in slotted time). The traces are in
``traces/`` beside this file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# The warm-up found by MSER-5 and batch means (`Recorder.series`: responses summed by arrival number), in slotted
# time and in continuous time: few jobs (100 is the least auto takes), one to five servers, per job and per slot,
# held tokens and reports, several dispatchers, blocked jobs (in no batch), bursts, a run's queues growing.
RUNS: dict[str, dict[str, Any]] = {
    **{f"jsq_slotted_auto_n1_s{seed}": {"policy": "jsq", "servers": 1, "time": "slotted", "load": 0.9,
                                        "warmup_jobs": "auto", "jobs": 120, "seed": seed} for seed in (1, 2, 3)},
    "sqd_slotted_auto_means_n3": {"policy": "sqd", "d": 2, "servers": 3, "time": "slotted", "warmup_jobs": "auto",
                                  "batch_means": 5, "jobs": 300, "seed": 4, "slot": {"dispatch": "job"}},
    "jiq_slotted_means_late_d3": {"policy": "jiq", "servers": 4, "dispatchers": 3, "time": "slotted",
                                  "warmup_jobs": 33, "batch_means": 7, "jobs": 1403, "seed": 5,
                                  "slot": {"pull_delay": 2}},
    **{f"jbt_slotted_auto_means_late_n5_s{seed}": {
        "policy": "jbt", "d": 2, "period": 3.0, "servers": 5, "dispatchers": 2, "time": "slotted",
        "warmup_jobs": "auto", "batch_means": 4, "jobs": 2001, "seed": seed,
        "slot": {"pull_delay": 1, "dispatch": "job"}} for seed in (6, 7)},
    "lor_slotted_auto_means_late_capacity": {"policy": "lor", "servers": 2, "dispatchers": 3, "capacity": 3,
                                             "load": 0.95, "time": "slotted", "warmup_jobs": "auto",
                                             "batch_means": 3, "jobs": 103, "seed": 8, "slot": {"pull_delay": 1}},
    "random_slotted_auto_constant_occupancy": {"policy": "random", "servers": 5, "service": "deterministic",
                                               "time": "slotted", "warmup_jobs": "auto", "jobs": 100, "seed": 9,
                                               "occupancy": True},
    "jsq_slotted_means_bursts_later": {"policy": "jsq", "servers": 3, "time": "slotted", "batch_means": 9,
                                       "arrivals": {"kind": "batch_poisson", "mean_batch": 3.0}, "jobs": 999,
                                       "seed": 10, "slot": {"same_slot": False}},
    "jsq_slotted_auto_heavy_n2": {"policy": "jsq", "servers": 2, "load": 0.99, "time": "slotted",
                                  "warmup_jobs": "auto", "batch_means": 20, "jobs": 3000, "seed": 11},
    "jsq_auto_means_n2": {"policy": "jsq", "servers": 2, "load": 0.95, "warmup_jobs": "auto", "batch_means": 6,
                          "jobs": 500, "seed": 12},
    "batch_sqd_auto_means_batches": {"policy": "batch_sqd", "d": 2, "servers": 4, "warmup_jobs": "auto",
                                     "batch_means": 5, "jobs": 400, "seed": 13,
                                     "arrivals": {"kind": "batch_poisson", "mean_batch": 3.0}},
}

# Batch sampling on finite traces (`BatchSource`): the trace's last batch goes out whole before the trace's end
# closes the window (every row measured), or the window closes at a job within a batch. `traces/`: 500 rows of
# times and sizes in batches of 1-7 (the last of 4), 300 rows of times (the last batch of 3; sizes from the
# service law), and two batches (3 jobs at time 0, 4 at time 1).
TRACES = Path(__file__).resolve().parent / "traces"
SIZED, TIMES, TWO = ({"kind": "trace", "path": str(TRACES / f"{name}.csv")}
                     for name in ("batches_sized", "batches", "two_batches"))
TRACE_RUNS: dict[str, dict[str, Any]] = {
    **{f"batch_sqd_trace_n{n}_d{d}_{fill}": {"policy": "batch_sqd", "d": d, "fill": fill, "servers": n, "seed": n,
                                             "arrivals": SIZED, "jobs": 500, "warmup_jobs": 0}
       for n, d, fill in ((1, 1, "shortest"), (2, 2, "water"), (3, 3, "shortest"), (4, 2, "water"),
                          (5, 1, "shortest"))},
    "batch_sqd_trace_mid_batch_d3": {"policy": "batch_sqd", "d": 2, "servers": 3, "dispatchers": 3, "seed": 6,
                                     "arrivals": SIZED, "jobs": 498, "warmup_jobs": 0},
    "batch_sqd_trace_mid_shares_capacity": {"policy": "batch_sqd", "d": 1, "fill": "water", "servers": 2,
                                            "capacity": 4, "dispatchers": 2, "dispatcher_shares": [0.7, 0.3],
                                            "occupancy": True, "seed": 7, "arrivals": SIZED, "jobs": 450,
                                            "warmup_jobs": 37},
    **{f"batch_sqd_trace_times_n4_d3_s{seed}": {"policy": "batch_sqd", "d": 2, "servers": 4, "dispatchers": 3,
                                                "seed": seed, "arrivals": TIMES, "jobs": 300, "warmup_jobs": 0,
                                                "service": {"kind": "erlang", "k": 2}} for seed in (8, 9)},
    "batch_sqd_trace_times_mid_water": {"policy": "batch_sqd", "d": 3, "fill": "water", "servers": 5, "seed": 10,
                                        "arrivals": TIMES, "jobs": 280, "warmup_jobs": 19},
    # Seven jobs: every one measured, the window closing within the second batch (at its third job, at its last),
    # at the trace's end after a warm-up, and at the second batch's first job, whose other jobs still go out.
    **{f"batch_sqd_trace_two_n{n}_warmup{warmup}_jobs{jobs}": {
        "policy": "batch_sqd", "d": 2 - n % 2, "servers": n, "seed": 10 + n, "arrivals": TWO, "jobs": jobs,
        "warmup_jobs": warmup} for n, warmup, jobs in ((1, 0, 7), (2, 0, 5), (3, 1, 6), (4, 2, 4), (5, 0, 3))},
    "batch_sqd_trace_loss": {"policy": "batch_sqd", "d": 2, "servers": 3, "seed": 16, "arrivals": SIZED,
                             "jobs": 500, "warmup_jobs": 0, "loss": 0.2, "timeout": 0.08},
    "batch_sqd_trace_two_loss_d2": {"policy": "batch_sqd", "d": 2, "servers": 2, "dispatchers": 2, "seed": 17,
                                    "arrivals": TWO, "jobs": 6, "warmup_jobs": 1, "loss": 0.3, "timeout": 0.0},
}

RUNS.update(TRACE_RUNS)
