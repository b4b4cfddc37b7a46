"""The equivalence case set: `simulate` options, by case name, that must give the same rows.

Read by ``benchmarks/equivalence.py`` (before and after a change; SimPy against the
compiled engine) and, by path, by ``tests/test_compiled.py``: plain data and one
function, importing nothing of the package, so that each reads it without importing the other.

Every policy runs with zero latency (the fast path) and with exponential latency
(the event-per-message path), in variants that reach the other branches, plus
policy options (`EXTRA`) that change code paths, lost messages (`FAULTS`), and whole
runs (`RUNS`, from ``equivalence_runs.py``: the warm-up found, batch means, traces).
"""

from __future__ import annotations

import fnmatch
import runpy
from pathlib import Path
from typing import Any

POLICIES: dict[str, dict[str, Any]] = {
    "random": {},
    "round_robin": {},
    "jsq": {},
    "sqd": {"d": 2},
    "jiq": {},
    "jbt": {"d": 2, "period": 5.0},
    "threshold": {"d": 3, "threshold": 2},
    "jsq_push": {},
    "jsq_sparse": {"period": 1.0},
    "lsq": {"d": 2},
    "sqd_memory": {"d": 2, "m": 1},
    "late_binding": {"d": 2},
    "persistent_idle": {},
    "sed": {},
    "lor": {},
    "batch_sqd": {"d": 2},
    "least_work": {"d": 2},
    "redundancy": {"d": 2},
}
LATENCIES: dict[str, Any] = {"zero": None, "exp": {"kind": "exponential", "mean": 0.05},
                             # Every message takes the same time: ties everywhere, decided by event ids.
                             "det": {"kind": "deterministic", "mean": 0.05}}
VARIANTS: dict[str, dict[str, Any]] = {
    "base": {},
    "dispatchers3": {"dispatchers": 3},
    # Random and round robin overload the speed-0.5 server here: allowed, to reach that path.
    "speeds": {"servers": 4, "speeds": [1.0, 2.0, 0.5, 1.5], "load": 0.8, "allow_unstable": True},
    "capacity": {"capacity": 3, "load": 0.95},
    "pool": {"discipline": "pool", "capacity": 4, "servers": 5, "load": 0.9},
    "mmpp2": {"arrivals": {"kind": "mmpp2", "burstiness": 3.0}},
    "batch": {"arrivals": {"kind": "batch_poisson", "mean_batch": 2.0}, "service": {"kind": "erlang", "k": 3}},
    "occupancy": {"occupancy": True},
    "shares": {"dispatchers": 3, "dispatcher_shares": [0.5, 0.3, 0.2]},
    "ps": {"discipline": "ps"},
}
EXTRA: dict[str, dict[str, Any]] = {  # policy options that change code paths
    "jiq_sqd": {"policy": "jiq", "d": 2, "dispatchers": 3},
    "jiq_memory": {"policy": "jiq", "memory": 2},
    # 4d > D: each idle server samples its dispatchers by a partial shuffle (at time 0 too).
    "jiq_sqd_choice": {"policy": "jiq", "d": 3, "dispatchers": 4},
    "jiq_sqd_choice_pool": {"policy": "jiq", "d": 4, "dispatchers": 5, "discipline": "pool", "capacity": 3},
    "jbt_lt": {"policy": "jbt", "d": 3, "period": 3.0, "below": "lt", "rereport": False},
    "sqd_replace": {"policy": "sqd", "d": 3, "replace": True},
    "sqd_d5": {"policy": "sqd", "d": 5},
    "sqd_d8": {"policy": "sqd", "d": 8},  # 4d > N: Uniforms.sample shuffles
    "threshold_d1": {"policy": "threshold", "d": 1},
    "jsq_big": {"policy": "jsq", "servers": 200},
    "jbt_reset": {"policy": "jbt", "d": 2, "period": 2.0, "reset": True},
    "jbt_reset_d3": {"policy": "jbt", "d": 2, "period": 2.0, "reset": True, "dispatchers": 3, "occupancy": True},
    # Integers beyond int64 (the kernel's), which bind no more than any value above the run's jobs.
    "capacity_2_63": {"policy": "sqd", "d": 2, "capacity": 2**63},
    "pool_capacity_2_70": {"policy": "jsq", "discipline": "pool", "capacity": 2**70, "occupancy": True},
    "threshold_2_63": {"policy": "threshold", "d": 3, "threshold": 2**63},
    "jiq_memory_2_63": {"policy": "jiq", "memory": 2**63, "dispatchers": 3},
    "jbt_initial_threshold_2_63": {"policy": "jbt", "d": 2, "period": 5.0, "initial_threshold": 2**63 + 1},
    "capacity_at_jobs": {"policy": "jsq", "capacity": 11000, "load": 0.99},  # the run's 11,000 jobs
    "jsq_speeds_drawn": {"policy": "jsq", "speeds": {"kind": "erlang", "k": 2}, "occupancy": True},
    "jbt_speeds_drawn": {"policy": "jbt", "d": 2, "period": 5.0, "speeds": {"kind": "lognormal", "scv": 0.5},
                         "dispatchers": 2, "dispatcher_shares": [0.7, 0.3]},
    # Random routing on drawn speeds overloads a slow server: refused, in the same words.
    "random_speeds_drawn": {"policy": "random", "speeds": {"kind": "exponential"}},
    "sqd_pool_occupancy": {"policy": "sqd", "d": 2, "discipline": "pool", "servers": 50, "occupancy": True},
    # Slotted time: each arrival dispatched on its own (job), and one decision per slot (batch);
    # Poisson capacity (exponential service) unless constant (deterministic service).
    "jsq_slotted": {"policy": "jsq", "time": "slotted", "slot": {"dispatch": "job"}},
    "jsq_slotted_batch": {"policy": "jsq", "time": "slotted"},
    "jbt_slotted_batch": {"policy": "jbt", "d": 2, "period": 3.0, "time": "slotted", "reports": "crossing"},
    # Tokens and reports held for later slots (pull_delay): per job and per slot, several dispatchers,
    # JIQ-SQ(d) (by a partial shuffle too), JBT-d with reset (a held report can list a server twice) and crossing.
    "jiq_slotted_late": {"policy": "jiq", "time": "slotted", "slot": {"pull_delay": 1}},
    "jbt_slotted_late": {"policy": "jbt", "d": 2, "period": 3.0, "time": "slotted", "slot": {"pull_delay": 2}},
    "jiq_sqd_slotted_late": {"policy": "jiq", "d": 2, "dispatchers": 3, "time": "slotted",
                             "slot": {"pull_delay": 1, "dispatch": "job"}},
    "jiq_sqd_choice_slotted_late": {"policy": "jiq", "d": 3, "dispatchers": 4, "time": "slotted",
                                    "slot": {"pull_delay": 2}},
    "jbt_reset_slotted_late": {"policy": "jbt", "d": 3, "period": 2.0, "reset": True, "dispatchers": 3,
                               "time": "slotted", "slot": {"pull_delay": 1, "dispatch": "job"}},
    "jbt_crossing_slotted_late": {"policy": "jbt", "d": 10, "period": 5.0, "reports": "crossing", "servers": 50,
                                  "load": 0.99, "time": "slotted", "slot": {"pull_delay": 3}},
    "jsq_slotted_late": {"policy": "jsq", "time": "slotted", "slot": {"pull_delay": 1}},  # no pull messages
    "random_slotted": {"policy": "random", "time": "slotted", "slot": {"dispatch": "job"}},
    "random_slotted_batch": {"policy": "random", "time": "slotted", "service": "deterministic"},
    "round_robin_slotted": {"policy": "round_robin", "time": "slotted", "slot": {"dispatch": "job"}},
    "round_robin_slotted_batch": {"policy": "round_robin", "time": "slotted", "dispatchers": 3},
    "jsq_slotted_constant": {"policy": "jsq", "time": "slotted", "service": "deterministic",
                             "slot": {"dispatch": "job"}},
    "jsq_slotted_batch_constant": {"policy": "jsq", "time": "slotted", "service": "deterministic"},
    "sqd_slotted": {"policy": "sqd", "d": 2, "time": "slotted", "slot": {"dispatch": "job"}},
    "sqd_slotted_batch": {"policy": "sqd", "d": 2, "time": "slotted"},
    "sqd_slotted_d8": {"policy": "sqd", "d": 8, "time": "slotted", "slot": {"dispatch": "job"}},  # a partial shuffle
    "jiq_slotted": {"policy": "jiq", "time": "slotted", "slot": {"dispatch": "job"}},
    "jiq_slotted_batch": {"policy": "jiq", "time": "slotted", "service": "deterministic"},
    "jiq_sqd_slotted_batch": {"policy": "jiq", "d": 2, "dispatchers": 3, "time": "slotted"},
    "jbt_slotted": {"policy": "jbt", "d": 2, "period": 3.0, "time": "slotted", "slot": {"dispatch": "job"}},
    "jbt_slotted_batch_constant": {"policy": "jbt", "d": 10, "period": 5.0, "time": "slotted",
                                   "service": "deterministic", "reports": "crossing"},
    "jbt_slotted_reset_d3": {"policy": "jbt", "d": 3, "period": 2.0, "reset": True, "dispatchers": 3,
                             "time": "slotted", "occupancy": True},
    "threshold_slotted": {"policy": "threshold", "d": 3, "threshold": 2, "time": "slotted",
                          "slot": {"dispatch": "job"}},
    "threshold_slotted_batch": {"policy": "threshold", "d": 3, "threshold": 2, "time": "slotted"},
    "jsq_push_slotted": {"policy": "jsq_push", "time": "slotted", "slot": {"dispatch": "job"}},
    "jsq_push_slotted_batch": {"policy": "jsq_push", "time": "slotted", "dispatchers": 3, "capacity": 30},
    "jsq_sparse_slotted": {"policy": "jsq_sparse", "period": 2.0, "time": "slotted", "slot": {"dispatch": "job"}},
    "jsq_sparse_slotted_batch": {"policy": "jsq_sparse", "period": 1.0, "time": "slotted"},
    "jsq_sparse_async_slotted": {"policy": "jsq_sparse", "feedback": "asynchronous", "rate": 0.3,
                                 "time": "slotted", "slot": {"dispatch": "job"}},  # reports within slots
    "lsq_slotted": {"policy": "lsq", "d": 2, "time": "slotted", "slot": {"dispatch": "job"}},
    "lsq_slotted_batch": {"policy": "lsq", "d": 3, "time": "slotted"},
    "sqd_memory_slotted": {"policy": "sqd_memory", "d": 2, "m": 1, "time": "slotted", "slot": {"dispatch": "job"}},
    "sqd_memory_slotted_batch": {"policy": "sqd_memory", "d": 2, "m": 2, "dispatchers": 3, "time": "slotted"},
    "jsq_slotted_later": {"policy": "jsq", "time": "slotted", "slot": {"same_slot": False}},
    "jbt_slotted_later": {"policy": "jbt", "d": 2, "period": 3.0, "time": "slotted", "service": "deterministic",
                          "slot": {"same_slot": False, "dispatch": "job"}},
    "jsq_slotted_mmpp2": {"policy": "jsq", "time": "slotted", "arrivals": {"kind": "mmpp2", "burstiness": 3.0},
                          "slot": {"dispatch": "job"}},
    "jbt_slotted_mmpp2": {"policy": "jbt", "d": 2, "period": 3.0, "time": "slotted",
                          "arrivals": {"kind": "mmpp2", "burstiness": 3.0}},
    "jiq_slotted_batch_poisson": {"policy": "jiq", "time": "slotted", "slot": {"dispatch": "job"},
                                  "arrivals": {"kind": "batch_poisson", "mean_batch": 3.0}},
    "jsq_slotted_batch_poisson": {"policy": "jsq", "time": "slotted",
                                  "arrivals": {"kind": "batch_poisson", "mean_batch": 3.0}},
    "sqd_slotted_even": {"policy": "sqd", "d": 2, "time": "slotted", "arrivals": "deterministic",
                         "service": "deterministic", "slot": {"dispatch": "job"}},
    "jsq_slotted_shares": {"policy": "jsq", "time": "slotted", "dispatchers": 3,
                           "dispatcher_shares": [0.5, 0.3, 0.2], "slot": {"dispatch": "job"}},
    "jbt_slotted_shares": {"policy": "jbt", "d": 2, "period": 3.0, "time": "slotted", "dispatchers": 3,
                           "dispatcher_shares": [0.5, 0.3, 0.2]},
    "sqd_slotted_capacity": {"policy": "sqd", "d": 2, "time": "slotted", "capacity": 3, "load": 0.95,
                             "slot": {"dispatch": "job"}},
    "jsq_slotted_batch_capacity": {"policy": "jsq", "time": "slotted", "capacity": 5, "load": 0.95},
    "jbt_slotted_batch_capacity": {"policy": "jbt", "d": 2, "period": 3.0, "time": "slotted", "capacity": 8,
                                   "load": 0.95},
    "jsq_slotted_occupancy": {"policy": "jsq", "time": "slotted", "occupancy": True, "slot": {"dispatch": "job"}},
    "jiq_slotted_batch_occupancy": {"policy": "jiq", "time": "slotted", "occupancy": True},
    "jbt_slotted_speeds": {"policy": "jbt", "d": 2, "period": 3.0, "time": "slotted", "servers": 4,
                           "speeds": [1.0, 2.0, 1.0, 3.0], "service": "deterministic", "load": 0.8},
    "jbt_slotted_speeds_drawn": {"policy": "jbt", "d": 2, "period": 3.0, "time": "slotted",
                                 "speeds": {"kind": "erlang", "k": 2}, "slot": {"dispatch": "job"}},
    "jsq_slotted_big": {"policy": "jsq", "servers": 200, "time": "slotted"},  # batches of ~180
    "lsq_slotted_big": {"policy": "lsq", "d": 2, "servers": 200, "time": "slotted"},
    "jbt_slotted_big": {"policy": "jbt", "d": 10, "period": 5.0, "servers": 200, "time": "slotted",
                        "slot": {"dispatch": "job"}},
    "jsq_sparse_async": {"policy": "jsq_sparse", "feedback": "asynchronous", "rate": 0.5},
    "jsq_sparse_async_d3": {"policy": "jsq_sparse", "feedback": "asynchronous", "rate": 0.2, "dispatchers": 3},
    "jsq_sparse_never": {"policy": "jsq_sparse", "period": 1e12, "dispatchers": 2},  # round robin
    "jsq_sparse_inf": {"policy": "jsq_sparse", "period": float("inf"), "dispatchers": 3},  # no update at all
    "jsq_sparse_inf_slotted": {"policy": "jsq_sparse", "period": float("inf"), "time": "slotted"},
    "jsq_sparse_async_rare": {"policy": "jsq_sparse", "feedback": "asynchronous", "rate": 5e-324},  # gaps of inf
    "jsq_sparse_fast": {"policy": "jsq_sparse", "period": 0.05},
    "lsq_all": {"policy": "lsq", "d": 20},  # d = N: no draw
    "lsq_d8": {"policy": "lsq", "d": 8},  # 4d > N: Uniforms.sample shuffles
    "sqd_memory_d3_m4": {"policy": "sqd_memory", "d": 3, "m": 4, "dispatchers": 3},
    "sqd_memory_d8_m12": {"policy": "sqd_memory", "d": 8, "m": 12},  # a partial shuffle; memory up to N - d
    "sqd_memory_m0": {"policy": "sqd_memory", "d": 2, "m": 0},
    # m > d: with latency a job's replies come in after other jobs' have grown the memory it read,
    # and its decision replaces the memory with fewer ids. Up to m = N - d, several dispatchers.
    "sqd_memory_d1_m4_n6": {"policy": "sqd_memory", "d": 1, "m": 4, "servers": 6, "load": 0.5},
    "sqd_memory_d1_m5_n6_d2": {"policy": "sqd_memory", "d": 1, "m": 5, "servers": 6, "load": 0.5,
                               "dispatchers": 2},
    "sqd_memory_d2_m17_d3": {"policy": "sqd_memory", "d": 2, "m": 17, "dispatchers": 3},
    "sqd_memory_d2_m18_d4": {"policy": "sqd_memory", "d": 2, "m": 18, "dispatchers": 4, "load": 0.7},
    "sqd_memory_d1_m19": {"policy": "sqd_memory", "d": 1, "m": 19, "load": 0.95},
    "jsq_push_capacity_d3": {"policy": "jsq_push", "capacity": 2, "dispatchers": 3},
    # An index per dispatcher: every server queried by each of 3; 5 dispatchers on pools; one query per
    # job by 5 dispatchers near saturation, so servers outgrow the estimates and the indexes add levels.
    "lsq_all_d3": {"policy": "lsq", "d": 20, "dispatchers": 3},
    "jsq_push_pool_d5": {"policy": "jsq_push", "dispatchers": 5, "discipline": "pool", "capacity": 4,
                         "servers": 5, "load": 0.9},
    "lsq_d1_d5_heavy": {"policy": "lsq", "d": 1, "dispatchers": 5, "load": 0.98},
    # Processor sharing: several dispatchers, capacity, speeds, a high-variance size law, batches (many
    # jobs at once), ties of virtual finishes (constant gaps and sizes), and JIQ-SQ(d)'s draw at a departure.
    "jsq_ps_d3": {"policy": "jsq", "discipline": "ps", "dispatchers": 3},
    "sqd_ps_capacity": {"policy": "sqd", "d": 2, "discipline": "ps", "capacity": 3, "load": 0.95},
    "jiq_ps_speeds": {"policy": "jiq", "discipline": "ps", "servers": 4, "speeds": [1.0, 2.0, 0.5, 1.5],
                      "load": 0.8},
    "random_ps_lognormal": {"policy": "random", "discipline": "ps", "service": {"kind": "lognormal", "scv": 4.0}},
    "jsq_ps_batch": {"policy": "jsq", "discipline": "ps", "arrivals": {"kind": "batch_poisson", "mean_batch": 3.0}},
    "round_robin_ps_constant": {"policy": "round_robin", "discipline": "ps", "arrivals": "deterministic",
                                "service": "deterministic", "servers": 3, "load": 0.95},
    "jbt_ps_occupancy_d2": {"policy": "jbt", "d": 2, "period": 5.0, "discipline": "ps", "occupancy": True,
                            "dispatchers": 2},
    "jiq_sqd_choice_ps": {"policy": "jiq", "d": 3, "dispatchers": 4, "discipline": "ps"},
    # Late binding: d = N (one central queue; a partial shuffle), d = 1 (random routing), 4d = N (distinct draws),
    # a partial shuffle with several dispatchers, and long queues of reservations (their pool grows).
    "late_binding_all": {"policy": "late_binding", "d": 20},
    "late_binding_d1": {"policy": "late_binding", "d": 1},
    "late_binding_d5": {"policy": "late_binding", "d": 5},
    "late_binding_d8_d3": {"policy": "late_binding", "d": 8, "dispatchers": 3},
    "late_binding_heavy": {"policy": "late_binding", "d": 3, "load": 0.99, "servers": 200},
    "persistent_idle_slotted": {"policy": "persistent_idle", "time": "slotted", "slot": {"dispatch": "job"}},
    "persistent_idle_slotted_late": {"policy": "persistent_idle", "time": "slotted", "dispatchers": 3,
                                     "slot": {"pull_delay": 2}},
    "sed_d2": {"policy": "sed", "d": 2, "servers": 4, "speeds": [1.0, 2.0, 0.5, 1.5], "load": 0.8},
    "sed_d8": {"policy": "sed", "d": 8},  # 4d > N: Uniforms.sample shuffles
    "sed_fastest": {"policy": "sed", "ties": "fastest", "servers": 6, "speeds": [1.0, 2.0, 1.0, 2.0, 4.0, 4.0]},
    "sed_length_fastest": {"policy": "sed", "rule": "length", "ties": "fastest", "servers": 6,
                           "speeds": [1.0, 2.0, 1.0, 2.0, 4.0, 4.0]},
    "sed_slotted_batch": {"policy": "sed", "time": "slotted", "speeds": {"kind": "erlang", "k": 2}},
    "lor_d2": {"policy": "lor", "d": 2},
    "lor_d8": {"policy": "lor", "d": 8},  # 4d > N: Uniforms.sample shuffles
    "lor_d2_d3_capacity": {"policy": "lor", "d": 2, "dispatchers": 3, "capacity": 2, "load": 0.95},
    "lor_d5_heavy": {"policy": "lor", "dispatchers": 5, "load": 0.98},  # counts far from the lengths
    "lor_slotted_batch": {"policy": "lor", "time": "slotted", "dispatchers": 3},  # a decision counts its batch
    # LOR in slotted time: blocked jobs of a batch answered at once, completions to each job's own dispatcher
    # (unequal shares), never held by pull_delay (only tokens and reports are), with d and without.
    "lor_slotted_shares_capacity": {"policy": "lor", "time": "slotted", "dispatchers": 3, "capacity": 4,
                                    "dispatcher_shares": [0.6, 0.3, 0.1], "load": 0.95},
    "lor_d2_slotted_shares_capacity": {"policy": "lor", "d": 2, "time": "slotted", "dispatchers": 3, "capacity": 3,
                                       "dispatcher_shares": [0.5, 0.3, 0.2], "load": 0.95,
                                       "slot": {"dispatch": "job"}},
    "lor_d3_slotted_later": {"policy": "lor", "d": 3, "time": "slotted", "dispatchers": 2, "capacity": 6,
                             "service": "deterministic", "slot": {"same_slot": False}},
    "lor_slotted_late": {"policy": "lor", "time": "slotted", "dispatchers": 3, "capacity": 5,
                         "slot": {"pull_delay": 1, "dispatch": "job"}},
    "lor_d2_slotted_batch_late": {"policy": "lor", "d": 2, "time": "slotted", "dispatchers": 2,
                                  "dispatcher_shares": [0.7, 0.3], "capacity": 8,
                                  "slot": {"pull_delay": 2, "same_slot": False}},
    "sqd_batch_fixed": {"policy": "sqd", "d": 2, "arrivals": {"kind": "batch_poisson", "mean_batch": 3,
                                                              "batch": "deterministic"}},
    "jsq_slotted_batch_fixed": {"policy": "jsq", "time": "slotted",
                                "arrivals": {"kind": "batch_poisson", "mean_batch": 3, "batch": "deterministic"}},
    "batch_sqd_water": {"policy": "batch_sqd", "d": 2, "fill": "water", "dispatchers": 3,
                        "arrivals": {"kind": "batch_poisson", "mean_batch": 3.0}},
    "batch_sqd_fixed_d3": {"policy": "batch_sqd", "d": 3, "servers": 10, "load": 0.95,
                           "arrivals": {"kind": "batch_poisson", "mean_batch": 4, "batch": "deterministic"}},
    "batch_sqd_all": {"policy": "batch_sqd", "d": 20, "fill": "water",  # dk >= N: every server asked
                      "arrivals": {"kind": "batch_poisson", "mean_batch": 2.0}},
    "least_work_lwl": {"policy": "least_work", "d": "N"},  # every server, in id order, no draw
    "least_work_d3": {"policy": "least_work", "d": 3},
    "least_work_d8": {"policy": "least_work", "d": 8},  # 4d > N: Uniforms.sample shuffles
    "least_work_lwl_pool_speeds": {"policy": "least_work", "d": "N", "discipline": "pool", "capacity": 3,
                                   "speeds": {"kind": "lognormal", "scv": 0.5}, "load": 1.5},
    "least_work_lwl_deterministic": {"policy": "least_work", "d": "N", "service": "deterministic"},  # ties
    # Redundancy's options: cancel at start, identical copies, d > N / 4 (a partial shuffle; 77,000 extra copies' sizes
    # span two blocks of the copies stream), and lost cancels at zero latency too.
    "redundancy_start": {"policy": "redundancy", "d": 3, "cancel": "start", "speeds": {"kind": "erlang", "k": 2}},
    "redundancy_identical": {"policy": "redundancy", "d": 2, "copies": "identical", "dispatchers": 3,
                             "occupancy": True},
    "redundancy_d8": {"policy": "redundancy", "d": 8, "load": 0.7},
    "redundancy_start_identical_d8": {"policy": "redundancy", "d": 8, "cancel": "start", "copies": "identical"},
    "redundancy_lost_cancels": {"policy": "redundancy", "d": 3, "loss": 0.2, "timeout": 0.08, "dispatchers": 3},
    "redundancy_start_loss": {"policy": "redundancy", "d": 3, "cancel": "start", "loss": 0.2, "timeout": 0.08},
    # Least work's replies carry the work left through lost messages, at zero latency too: every server asked by
    # 3 dispatchers, and pools of drawn speeds.
    "least_work_lwl_loss_d3": {"policy": "least_work", "d": "N", "dispatchers": 3, "loss": 0.2, "timeout": 0.08},
    "least_work_loss_pool_speeds": {"policy": "least_work", "d": 3, "discipline": "pool", "capacity": 3,
                                    "speeds": {"kind": "erlang", "k": 2}, "loss": 0.2, "timeout": 0.08},
    # Batches larger than N (shortest fills in rounds) and than what one step may send by default (the decision
    # sends the whole batch at once, with latency): 4 or 5 servers, 8 or 10 jobs a batch on average.
    "batch_sqd_big_batches": {"policy": "batch_sqd", "d": 2, "servers": 4,
                              "arrivals": {"kind": "batch_poisson", "mean_batch": 10.0}},
    "batch_sqd_water_big_batches_d3": {"policy": "batch_sqd", "d": 1, "fill": "water", "servers": 5, "dispatchers": 3,
                                       "arrivals": {"kind": "batch_poisson", "mean_batch": 8.0}},
    # Each job of a batch reaching a processor-sharing server schedules a completion: far more events at once
    # than the heap's room for one arrival.
    "batch_sqd_ps_huge_batches": {"policy": "batch_sqd", "d": 2, "servers": 4, "discipline": "ps", "load": 0.7,
                                  "arrivals": {"kind": "batch_poisson", "mean_batch": 50.0}},
}

# Lost messages (docs/faults.md): each control message lost with probability 0.2 in the ``loss`` stream,
# and a query's replies waited for until ``timeout``; at zero latency too under the policies that run it
# compiled (`SENDING`: those that do not).
# A timeout of twice the deterministic latency ties with a round trip's replies (event ids decide), a
# timeout of 0 decides on no reply at all, and a loss of 0.9 loses most messages.
LOSS = {"loss": 0.2, "timeout": 0.08}
FAILURES = {"up": {"kind": "exponential", "mean": 20.0}, "down": {"kind": "exponential", "mean": 2.0}}
# The policies whose faults at zero latency run on SimPy (`SENDING`, below).
# The policies that ask their servers and run every fault compiled, at zero latency too.
ASKING = ("sqd", "jsq", "sed", "sqd_memory")
SENDING = set(POLICIES) - {"random", "round_robin", "jiq", *ASKING, "persistent_idle", "lor", "jsq_sparse",
                            "threshold", "jbt", "lsq", "jsq_push", "batch_sqd"}
FAILING = {"load": 0.7, "timeout": 0.08}  # servers up 10/11 of the time: load 0.77 on what is up
FAULTS: dict[str, dict[str, Any]] = {
    **{f"{policy}_loss": {"policy": policy, **params, **LOSS} for policy, params in POLICIES.items()},
    **{f"{policy}_loss_d3": {"policy": policy, **params, **LOSS, "dispatchers": 3}
       for policy, params in POLICIES.items() if policy not in ("random", "round_robin")},
    "jiq_sqd_loss": {"policy": "jiq", "d": 2, "dispatchers": 3, **LOSS},
    "jbt_reset_loss_d3": {"policy": "jbt", "d": 2, "period": 2.0, "reset": True, "dispatchers": 3, **LOSS},
    "sqd_memory_d2_m4_loss_d3": {"policy": "sqd_memory", "d": 2, "m": 4, "dispatchers": 3, **LOSS},
    "jsq_sparse_async_loss": {"policy": "jsq_sparse", "feedback": "asynchronous", "rate": 0.5, **LOSS},
    "lsq_all_loss": {"policy": "lsq", "d": 20, **LOSS},
    "jsq_loss_timeout_0": {"policy": "jsq", "loss": 0.05, "timeout": 0.0},
    "sqd_loss_timeout_tie": {"policy": "sqd", "d": 3, "loss": 0.1, "timeout": 0.1},
    "threshold_loss_most": {"policy": "threshold", "d": 3, "threshold": 2, "loss": 0.9, "timeout": 0.02},
    # A threshold above NO_REPLY, what a missing reply reads: every probe is below it, even unanswered.
    "threshold_2_63_loss": {"policy": "threshold", "d": 3, "threshold": 2**63, **LOSS},
    "jbt_loss_heavy_capacity": {"policy": "jbt", "d": 3, "period": 1.0, "loss": 0.5, "timeout": 0.2,
                                "capacity": 4, "occupancy": True},
    # Failing servers (`system.failures`), with and without latency: first under the policies that send no
    # message, or only their dispatch's queries (`ASKING`); the others follow. Deterministic periods fail every
    # server at once, and with deterministic latency a transfer may reach a server as it fails or recovers.
    **{f"{policy}_fail_{mode}": {"policy": policy, **FAILING, "failures": {**FAILURES, "on_down": mode}}
       for policy in ("random", "round_robin") for mode in ("hold", "lose")},
    **{f"{policy}_fail_{mode}_loss_d3": {"policy": policy, **FAILING, **LOSS, "dispatchers": 3,
                                         "failures": {**FAILURES, "on_down": mode}}
       for policy in ("random", "round_robin") for mode in ("hold", "lose")},
    "random_fail_lose_capacity_occupancy": {"policy": "random", **FAILING, "capacity": 3, "occupancy": True,
                                            "failures": {**FAILURES, "on_down": "lose"}},
    "round_robin_fail_hold_deterministic_shares": {
        "policy": "round_robin", **FAILING, "dispatchers": 3, "dispatcher_shares": [0.5, 0.3, 0.2],
        "occupancy": True, "failures": {"up": {"kind": "deterministic", "mean": 10.0},
                                        "down": {"kind": "deterministic", "mean": 0.5}, "on_down": "hold"}},
    **{f"jiq_fail_{mode}": {"policy": "jiq", **FAILING, "failures": {**FAILURES, "on_down": mode}}
       for mode in ("hold", "lose")},
    "jiq_fail_lose_loss_d3": {"policy": "jiq", **FAILING, **LOSS, "dispatchers": 3,
                              "failures": {**FAILURES, "on_down": "lose"}},
    "jiq_memory_fail_hold_loss": {"policy": "jiq", "memory": 2, **FAILING, **LOSS,
                                  "failures": {**FAILURES, "on_down": "hold"}},
    "random_fail_hold_speeds_erlang": {"policy": "random", **FAILING, "servers": 4, "speeds": [1.0, 2.0, 0.8, 1.5],
                                       "load": 0.5, "service": {"kind": "erlang", "k": 3},
                                       "failures": {**FAILURES, "on_down": "hold"}},
    # Policies that ask: a query lost at a down server leaves its ask to its timeout, at zero latency too.
    **{f"{policy}_fail_hold_d3": {"policy": policy, **POLICIES[policy], **FAILING, "dispatchers": 3,
                                  "failures": {**FAILURES, "on_down": "hold"}} for policy in ASKING},
    **{f"{policy}_fail_lose_loss": {"policy": policy, **POLICIES[policy], **FAILING, **LOSS,
                                    "failures": {**FAILURES, "on_down": "lose"}} for policy in ASKING},
    "sqd_fail_lose_d3": {"policy": "sqd", "d": 3, **FAILING, "dispatchers": 3,
                         "failures": {**FAILURES, "on_down": "lose"}},
    # A batch's ask decided at its timeout, missing replies (`NO_REPLY`) filled with water too, large batches.
    "batch_sqd_water_batches_loss_d3": {"policy": "batch_sqd", "d": 2, "fill": "water", "dispatchers": 3, **LOSS,
                                        "arrivals": {"kind": "batch_poisson", "mean_batch": 3.0}},
    "batch_sqd_big_batches_loss": {"policy": "batch_sqd", "d": 2, "servers": 4, **LOSS,
                                   "arrivals": {"kind": "batch_poisson", "mean_batch": 10.0}},
    # Fewer servers than the 4 integers of a batch's state (`Description.int_width`).
    **{f"batch_sqd_loss_n{n}": {"policy": "batch_sqd", "d": min(n, 2), "servers": n, **LOSS, "seed": 20 + n,
                                "arrivals": {"kind": "batch_poisson", "mean_batch": 3.0}} for n in (1, 2, 3)},
    # Overloaded, queues growing: the occupancy arrays grow often, also before a job its ask's timeout sends.
    "sqd_loss_overloaded_occupancy": {"policy": "sqd", "d": 2, "servers": 10, "load": 1.3, "allow_unstable": True,
                                      "occupancy": True, "loss": 0.3, "timeout": 0.5},
    # Servers that send their dispatchers messages (idle reports, completions): lost at zero latency too, and a
    # recovery runs the departure hook (an empty server reports; LOR answers nothing, and answers each job blocked
    # at the down server before it, in order, to the job's own dispatcher).
    **{f"{policy}_fail_{mode}_d3": {"policy": policy, **POLICIES[policy], **FAILING, "dispatchers": 3,
                                    "failures": {**FAILURES, "on_down": mode}}
       for policy in ("persistent_idle", "lor") for mode in ("hold", "lose")},
    **{f"{policy}_fail_lose_loss": {"policy": policy, **POLICIES[policy], **FAILING, **LOSS,
                                    "failures": {**FAILURES, "on_down": "lose"}}
       for policy in ("persistent_idle", "lor")},
    "lor_d2_fail_lose_capacity_loss_d3": {"policy": "lor", "d": 2, **FAILING, **LOSS, "dispatchers": 3, "capacity": 2,
                                          "failures": {**FAILURES, "on_down": "lose"}},
    "lor_fail_hold_capacity": {"policy": "lor", **FAILING, "capacity": 2, "failures": {**FAILURES, "on_down": "hold"}},
    # Many jobs blocked at a down server (long down periods, capacity 1, high load), from dispatchers of unequal
    # shares: their completions at its recovery, each to its own dispatcher, draw loss and latency in order.
    **{f"lor{d}_fail_{mode}_capacity_1_shares{loss}": {
        "policy": "lor", **({"d": 2} if d else {}), **FAILING, **(LOSS if loss else {}), "load": 0.9, "capacity": 1,
        "dispatchers": 4, "dispatcher_shares": [0.5, 0.3, 0.15, 0.05],
        "failures": {"up": {"kind": "exponential", "mean": 10.0}, "down": {"kind": "exponential", "mean": 4.0},
                     "on_down": mode}} for d, mode, loss in (("", "hold", ""), ("_d2", "hold", "_loss"),
                                                             ("", "lose", "_loss"))},
    # What `random_fail_*` covers in the suite, with LOR's completions: occupancy, speeds, deterministic periods
    # (every server fails and recovers at once: several recoveries answer their blocked jobs at the same time).
    "lor_fail_lose_capacity_occupancy": {"policy": "lor", **FAILING, "capacity": 3, "occupancy": True,
                                         "failures": {**FAILURES, "on_down": "lose"}},
    "lor_fail_hold_capacity_2_speeds_erlang_d3": {
        "policy": "lor", **FAILING, "servers": 4, "speeds": [1.0, 2.0, 0.8, 1.5], "load": 0.8, "capacity": 2,
        "dispatchers": 3, "service": {"kind": "erlang", "k": 3}, "occupancy": True,
        "failures": {"up": {"kind": "deterministic", "mean": 10.0}, "down": {"kind": "deterministic", "mean": 1.5},
                     "on_down": "hold"}},
    # With latency: JBT-d's thresholds lost at a down server and the arrival hooks of its jobs from lists run at
    # its recovery (`recovery`), the threshold model's and LSQ's queries lost there, JSQ-push's length told at
    # recovery. JIQ-SQ(d)'s servers ask the dispatchers: at zero latency with loss their asks' timeouts decide.
    **{f"{policy}_fail_{mode}_d3": {"policy": policy, **POLICIES[policy], **FAILING, "dispatchers": 3,
                                    "failures": {**FAILURES, "on_down": mode}}
       for policy in ("jbt", "threshold", "lsq", "jsq_push") for mode in ("hold", "lose")},
    **{f"{policy}_fail_hold_loss": {"policy": policy, **POLICIES[policy], **FAILING, **LOSS,
                                    "failures": {**FAILURES, "on_down": "hold"}}
       for policy in ("jbt", "threshold", "lsq", "jsq_push")},
    "jbt_reset_fail_lose_loss_d3": {"policy": "jbt", "d": 2, "period": 2.0, "reset": True, "dispatchers": 3,
                                    **FAILING, **LOSS, "failures": {**FAILURES, "on_down": "lose"}},
    "jbt_crossing_fail_hold_capacity": {"policy": "jbt", "d": 3, "period": 1.0, "reports": "crossing",
                                        "capacity": 4, **FAILING, "failures": {**FAILURES, "on_down": "hold"}},
    "jbt_fail_hold_deterministic_d3": {
        "policy": "jbt", "d": 2, "period": 1.0, "dispatchers": 3, **FAILING,
        "failures": {"up": {"kind": "deterministic", "mean": 10.0}, "down": {"kind": "deterministic", "mean": 0.5},
                     "on_down": "hold"}},
    **{f"jiq_sqd_fail_{mode}_d3": {"policy": "jiq", "d": 2, **FAILING, "dispatchers": 3,
                                   "failures": {**FAILURES, "on_down": mode}} for mode in ("hold", "lose")},
    "jiq_sqd_fail_hold_loss_d3": {"policy": "jiq", "d": 2, **FAILING, **LOSS, "dispatchers": 3,
                                  "failures": {**FAILURES, "on_down": "hold"}},
    # JSQ-sparse's down servers skip their updates (`policies.common.server_up`).
    **{f"jsq_sparse_fail_{mode}_d3": {"policy": "jsq_sparse", "period": 1.0, **FAILING, "dispatchers": 3,
                                      "failures": {**FAILURES, "on_down": mode}} for mode in ("hold", "lose")},
    "jsq_sparse_async_fail_hold_loss": {"policy": "jsq_sparse", "feedback": "asynchronous", "rate": 0.5, **FAILING,
                                        **LOSS, "failures": {**FAILURES, "on_down": "hold"}},
    # A batch's query lost at a down server leaves its ask to the timeout; jobs sent to a down server (with latency).
    **{f"batch_sqd_fail_{mode}_batches_d3": {"policy": "batch_sqd", "d": 2, **FAILING, "dispatchers": 3,
                                              "arrivals": {"kind": "batch_poisson", "mean_batch": 3.0},
                                              "failures": {**FAILURES, "on_down": mode}} for mode in ("hold", "lose")},
    # 200 dispatchers' lists for 60 servers run out of room during updates, decided at the timer and at the timeout.
    "jbt_reset_loss_lists_d200": {"policy": "jbt", "d": 2, "period": 0.5, "reset": True, "servers": 60,
                                  "dispatchers": 200, "loss": 0.02, "timeout": 0.5},
    # Long down periods: a server's queue grows while it is down, and JSQ-push tells its length at recovery.
    "jsq_push_fail_hold_long_down_d2": {"policy": "jsq_push", **FAILING, "load": 0.5, "dispatchers": 2,
                                        "failures": {"up": {"kind": "exponential", "mean": 20.0},
                                                     "down": {"kind": "exponential", "mean": 8.0}, "on_down": "hold"}},
    "batch_sqd_water_fail_hold_loss": {"policy": "batch_sqd", "d": 2, "fill": "water", **FAILING, **LOSS,
                                       "arrivals": {"kind": "batch_poisson", "mean_batch": 2.0},
                                       "failures": {**FAILURES, "on_down": "hold"}},
    # Batches far larger than N placed at their ask's timeout (one job a step at zero latency), at full and down
    # servers, counted in the occupancy arrays; a timeout of 0 decides every ask that misses a reply at once.
    "batch_sqd_fail_lose_huge_batches_capacity": {"policy": "batch_sqd", "d": 2, "servers": 4, **FAILING, **LOSS,
                                                  "capacity": 3, "occupancy": True,
                                                  "arrivals": {"kind": "batch_poisson", "mean_batch": 30.0},
                                                  "failures": {**FAILURES, "on_down": "lose"}},
    "batch_sqd_water_fail_hold_big_batches_shares": {
        "policy": "batch_sqd", "d": 1, "fill": "water", "servers": 5, "dispatchers": 3,
        "dispatcher_shares": [0.5, 0.3, 0.2], **FAILING, "loss": 0.3, "timeout": 0.0,
        "arrivals": {"kind": "batch_poisson", "mean_batch": 12.0}, "failures": {**FAILURES, "on_down": "hold"}},
}
# The warm-up found by MSER-5, batch means and finite traces of whole batches: `equivalence_runs.py`, read by path.
RUNS: dict[str, dict[str, Any]] = runpy.run_path(str(Path(__file__).resolve().parent / "equivalence_runs.py"))["RUNS"]


def cases(only: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """Every case's `simulate` options (``policy`` among them), by ``policy/variant/latency`` or
    ``extra/latency``; with ``only``, those whose key matches one of its shell patterns."""
    out: dict[str, dict[str, Any]] = {}
    for latency_name, latency in LATENCIES.items():
        for variant_name, variant in VARIANTS.items():
            for policy, params in POLICIES.items():
                kw = {"policy": policy, "servers": 20, "load": 0.9, "jobs": 4000, "seed": 7,
                      **params, **variant, "latency": latency}
                if variant_name == "base":
                    kw["jobs"] = 20000
                out[f"{policy}/{variant_name}/{latency_name}"] = kw
        for name, extra in {**EXTRA, **RUNS}.items():
            if latency is not None and extra.get("time") == "slotted":  # messages arrive within the slot
                continue
            kw = {"servers": 20, "load": 0.9, "jobs": 10000, "seed": 3, **extra, "latency": latency}
            out[f"{name}/{latency_name}"] = kw
        # Lost messages with latency (the timeout's ties with deterministic latency); at zero latency too
        # under the policies that send no ask, and failing servers.
        for name, fault in FAULTS.items():
            if latency is None and fault["policy"] in SENDING:
                continue
            out[f"{name}/{latency_name}"] = {"servers": 20, "load": 0.9, "jobs": 5000, "seed": 11, **fault,
                                             "latency": latency}
    if only:
        out = {key: kw for key, kw in out.items() if any(fnmatch.fnmatchcase(key, p) for p in only)}
    return out


IGNORED = ("wall_seconds", "engine")  # how long, and which engine: the only columns that may differ
