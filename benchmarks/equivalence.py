"""Same seed, same results: a behaviour fingerprint of `emulator.simulate` for every policy.

Run it before and after a performance change and compare:

    python benchmarks/equivalence.py --save /tmp/before.json   # on the old code
    python benchmarks/equivalence.py --check /tmp/before.json  # on the new code

To fingerprint an older copy of the package without checking it out, put its
parent folder first on the path: ``PYTHONPATH=/tmp/old python benchmarks/equivalence.py --save ...``
(PYTHONPATH wins over the editable install).

Every policy runs with zero latency (the fast path) and with exponential latency
(the event-per-message path), plus variants that reach the other branches:
several dispatchers (with unequal shares), heterogeneous speeds (listed and drawn),
capacities, server pools, bursty arrivals, occupancy statistics, JBT-d with reset.
Results must match exactly (floats compared by repr, the sketch's ``response_bins``
included), except ``wall_seconds`` and ``engine``.

The compiled engine must give the SimPy engine's rows on every zero-latency case:

    python benchmarks/equivalence.py --engines   # each zero-latency case on both engines

``--only PATTERN ...`` restricts either to the cases whose key (``policy/variant/latency``
or ``extra/latency``) matches one of the shell patterns, e.g. ``--only 'lsq*' 'jsq_sparse*'``.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
from typing import Any

import emulator

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
}
LATENCIES: dict[str, Any] = {"zero": None, "exp": {"kind": "exponential", "mean": 0.05}}
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
}
EXTRA: dict[str, dict[str, Any]] = {  # policy options that change code paths
    "jiq_sqd": {"policy": "jiq", "d": 2, "dispatchers": 3},
    "jiq_memory": {"policy": "jiq", "memory": 2},
    "jbt_lt": {"policy": "jbt", "d": 3, "period": 3.0, "below": "lt", "rereport": False},
    "sqd_replace": {"policy": "sqd", "d": 3, "replace": True},
    "sqd_d5": {"policy": "sqd", "d": 5},
    "sqd_d8": {"policy": "sqd", "d": 8},  # 4d > N: Uniforms.sample falls back to rng.choice
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
    # Slotted time (SimPy only): each arrival dispatched on its own, and one decision per slot.
    "jsq_slotted": {"policy": "jsq", "time": "slotted", "slot": {"dispatch": "job"}},
    "jsq_slotted_batch": {"policy": "jsq", "time": "slotted"},
    "jbt_slotted_batch": {"policy": "jbt", "d": 2, "period": 3.0, "time": "slotted", "reports": "crossing"},
    "jiq_slotted_late": {"policy": "jiq", "time": "slotted", "slot": {"pull_delay": 1}},
    "jsq_sparse_async": {"policy": "jsq_sparse", "feedback": "asynchronous", "rate": 0.5},
    "jsq_sparse_async_d3": {"policy": "jsq_sparse", "feedback": "asynchronous", "rate": 0.2, "dispatchers": 3},
    "jsq_sparse_never": {"policy": "jsq_sparse", "period": 1e12, "dispatchers": 2},  # round robin
    "jsq_sparse_fast": {"policy": "jsq_sparse", "period": 0.05},
    "lsq_all": {"policy": "lsq", "d": 20},  # d = N: no draw
    "lsq_d8": {"policy": "lsq", "d": 8},  # 4d > N: Uniforms.sample falls back to rng.choice
    "sqd_memory_d3_m4": {"policy": "sqd_memory", "d": 3, "m": 4, "dispatchers": 3},
    "sqd_memory_d8_m12": {"policy": "sqd_memory", "d": 8, "m": 12},  # rng.choice; memory up to N - d
    "sqd_memory_m0": {"policy": "sqd_memory", "d": 2, "m": 0},
    "jsq_push_capacity_d3": {"policy": "jsq_push", "capacity": 2, "dispatchers": 3},
}


def cases(only: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """Every case by key, or those whose key matches one of the shell patterns ``only``."""
    out: dict[str, dict[str, Any]] = {}
    for latency_name, latency in LATENCIES.items():
        for variant_name, variant in VARIANTS.items():
            for policy, params in POLICIES.items():
                kw = {"policy": policy, "servers": 20, "load": 0.9, "jobs": 4000, "seed": 7,
                      **params, **variant, "latency": latency}
                if variant_name == "base":
                    kw["jobs"] = 20000
                out[f"{policy}/{variant_name}/{latency_name}"] = kw
        for name, extra in EXTRA.items():
            kw = {"servers": 20, "load": 0.9, "jobs": 10000, "seed": 3, **extra, "latency": latency}
            out[f"{name}/{latency_name}"] = kw
    if only:
        out = {key: kw for key, kw in out.items() if any(fnmatch.fnmatchcase(key, p) for p in only)}
    return out


IGNORED = ("wall_seconds", "engine")  # how long, and which engine: the only columns that may differ


def simulate(policy: str, **options: Any) -> dict[str, Any]:
    """`emulator.simulate`'s row, with the sketch's ``response_bins`` (in the store, left out by default)."""
    return emulator.simulate(policy, response_bins=True, **options)


def fingerprint(engine: str = "simpy", zero_latency_only: bool = False,
                only: list[str] | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, kw in cases(only).items():
        kw = dict(kw)
        if zero_latency_only and kw["latency"] is not None:
            continue
        policy = kw.pop("policy")
        try:
            row = simulate(policy, engine=engine, **kw)
        except Exception as exc:  # a case that fails must fail the same way
            result[key] = {"error": f"{type(exc).__name__}: {exc}"}
            continue
        result[key] = {k: repr(v) for k, v in row.items() if k not in IGNORED}
        result[key]["_engine"] = row["engine"]
    return result


def compare_engines(only: list[str] | None = None) -> int:
    """Every zero-latency case on the SimPy and the compiled engine: identical rows, or a report."""
    simpy_rows = fingerprint("simpy", zero_latency_only=True, only=only)
    compiled_rows = fingerprint("compiled", zero_latency_only=True, only=only)
    bad = fallback = 0
    for key in simpy_rows:
        old, new = simpy_rows[key], compiled_rows[key]
        if "error" in old or "error" in new:  # refused (drawn speeds that overload): the same words
            if old != new:
                bad += 1
                print(f"DIFFERENT {key}: {old} vs {new}")
            else:
                print(f"REFUSED ALIKE {key}: {old['error']}")
            continue
        if new.get("_engine") != "compiled":
            fallback += 1
            print(f"SIMPY ONLY {key}")
            continue
        old, new = ({k: v for k, v in row.items() if k != "_engine"} for row in (old, new))
        if old != new:
            bad += 1
            diff = {k: (old.get(k), new.get(k)) for k in set(old) | set(new) if old.get(k) != new.get(k)}
            print(f"DIFFERENT {key}: {diff}")
    ran = len(simpy_rows) - fallback
    print(f"{ran - bad}/{ran} compiled cases identical to SimPy ({fallback} not supported: run on SimPy)")
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--save", metavar="FILE")
    group.add_argument("--check", metavar="FILE")
    group.add_argument("--engines", action="store_true", help="compiled against SimPy, zero latency")
    parser.add_argument("--only", nargs="+", metavar="PATTERN", help="only the cases whose key matches")
    args = parser.parse_args()
    print(f"emulator from {emulator.__file__}")
    if args.engines:
        return compare_engines(args.only)
    now = fingerprint(only=args.only)
    if args.save:
        with open(args.save, "w") as handle:
            json.dump(now, handle, indent=1, sort_keys=True)
        errors = sum("error" in v for v in now.values())
        print(f"saved {len(now)} cases ({errors} raised) to {args.save}")
        return 0
    with open(args.check) as handle:
        before = json.load(handle)
    bad = 0
    added: set[str] = set()
    if args.only:  # the saved cases that the patterns select
        before = {key: row for key, row in before.items() if any(fnmatch.fnmatchcase(key, p) for p in args.only)}
    for key in sorted(set(before) | set(now)):
        old, new = before.get(key) or {}, now.get(key) or {}
        # A column the saved fingerprint lacks is new (listed below), not a difference.
        added |= set(new) - set(old) if "error" not in old else set()
        if "error" not in old and "error" not in new and old and new:
            new = {k: v for k, v in new.items() if k in old}
        if old != new:
            bad += 1
            diff = {k: (old.get(k), new.get(k)) for k in set(old) | set(new) if old.get(k) != new.get(k)}
            print(f"DIFFERENT {key}: {diff}")
    if added:
        print(f"new columns, not compared: {', '.join(sorted(added))}")
    print(f"{len(now) - bad}/{len(now)} cases identical")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
