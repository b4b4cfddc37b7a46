"""Benchmarks of the zero-latency hot path, as ratios against a minimal heapq simulator.

    python benchmarks/run.py            # the full set (a few minutes on 2 cores)
    python benchmarks/run.py --quick    # fewer jobs and repeats (under a minute), noisier
    python benchmarks/run.py --only compiled   # the compiled engine against SimPy and heapq

Every figure is a ratio measured in the same run, never an absolute time, so that
it means the same on another machine. CPU time is `time.process_time` around one
call of `emulator.simulate` (config validation and model building included) or of
`baseline.simulate`; each is the best of ``--repeat`` calls, emulator and baseline
interleaved so that both see the same machine state. Memory is the peak RSS
(``ru_maxrss``) of a fresh subprocess per run. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import baseline

import emulator

POLICY_PARAMS: dict[str, dict[str, Any]] = {"jsq": {}, "sqd": {"d": 2}, "jiq": {}, "jbt": {"d": 2}}
LABEL = {"jsq": "JSQ", "sqd": "SQ(2)", "jiq": "JIQ", "jbt": "JBT-2"}
# The compiled engine's targets: (policy, N, parameters, label).
COMPILED_CASES = (("jsq", 10, {}, "JSQ"), ("sqd", 100, {"d": 2}, "SQ(2)"), ("jiq", 1000, {}, "JIQ"),
                  ("jbt", 100, {"d": 10}, "JBT-10"))
# With exponential latency of mean 0.01 (every message an event): (policy, N, parameters, label,
# the largest ratio of compiled to SimPy time, the share of the run's jobs).
LATENCY = {"kind": "exponential", "mean": 0.01}
LATENCY_CASES = (("jsq", 100, {}, "JSQ", 1 / 50, 1 / 50), ("sqd", 100, {"d": 2}, "SQ(2)", 1 / 20, 1 / 5),
                 ("jiq", 100, {}, "JIQ", 1 / 20, 1 / 5), ("jbt", 100, {"d": 10}, "JBT-10", 1 / 20, 1 / 5))
# The same with lost messages (docs/faults.md): every reply an event, and each ask's timeout one more.
LOSS = {"loss": 0.05, "timeout": 0.05}
# At zero latency, SQ(2) N = 100 with faults (docs/faults.md): each ask a record, answered after the dispatch hook,
# and decided at its timeout when a reply is missing: lost messages, then failing servers (`hold`).
FAULTS_AT_ZERO_LATENCY = (({"d": 2, **LOSS}, "loss 0.05", "zero_latency_loss"),
                          ({"d": 2, "timeout": 0.05, "failures": {"up": {"kind": "exponential", "mean": 100},
                                                                  "down": {"kind": "exponential", "mean": 5}}},
                           "failing servers", "failing"))
# Slotted time on the compiled engine (N = 50, load 0.99, constant capacity, as jbt_zhou2017.yaml): (policy,
# parameters, label), each with one decision per job and per slot.
SLOTTED_CASES = (("jsq", {}, "JSQ"), ("sqd", {"d": 2}, "SQ(2)"),
                 ("jbt", {"d": 10, "period": 100, "reports": "crossing"}, "JBT-10"))
# The compiled engine against the hand-written C loop (c_limit.c): (policy, N, d, label).
C_CASES = (("jsq", 10, 0, "JSQ"), ("sqd", 100, 2, "SQ(2)"), ("sqd", 1_000, 2, "SQ(2)"), ("sqd", 10_000, 2, "SQ(2)"))
C_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "c_limit.c")
# The SimPy engine's CPU per job on the plain path (zero latency, no faults, default run options), JSQ N=10
# and SQ(2) N=100: at most this many times the minimal heapq simulator's (docs/performance.md).
THROUGHPUT_LIMIT = 2.0


def cpu(call: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    started = time.process_time()
    result = call()
    return time.process_time() - started, result


def emulated(policy: str, n: int, jobs: int, warmup: int, seed: int = 1, engine: str = "simpy",
             params: dict[str, Any] | None = None, occupancy: bool = False,
             latency: dict[str, Any] | None = None) -> Callable[[], dict[str, Any]]:
    params = POLICY_PARAMS[policy] if params is None else params
    return lambda: emulator.simulate(policy, servers=n, load=0.9, jobs=jobs, warmup_jobs=warmup,
                                     seed=seed, engine=engine, occupancy=occupancy, latency=latency, **params)


def baselined(policy: str, n: int, jobs: int, warmup: int, seed: int = 1) -> Callable[[], dict[str, Any]]:
    return lambda: baseline.simulate(policy, servers=n, load=0.9, jobs=jobs, warmup=warmup, seed=seed)


def best_of(calls: dict[str, Callable[[], dict[str, Any]]], repeat: int) -> dict[str, tuple[float, dict[str, Any]]]:
    """Best-of-``repeat`` CPU seconds of each call, and its (last) result.

    The calls take turns (one round through all of them per repeat), so that a
    burst of load from elsewhere on the machine hits all of them alike, and the
    minimum over rounds is the least disturbed figure of each.
    """
    times: dict[str, list[float]] = {name: [] for name in calls}
    results: dict[str, dict[str, Any]] = {}
    for _ in range(repeat):
        for name, call in calls.items():
            t, results[name] = cpu(call)
            times[name].append(t)
    return {name: (min(times[name]), results[name]) for name in calls}


def peak_rss_kib(policy: str, n: int, jobs: int | None, engine: str = "simpy", warmup: int | None = None) -> int:
    """Peak RSS in KiB of a fresh interpreter that runs one simulation of ``jobs`` jobs.

    The interpreter is started by a small launcher interpreter, not by this one: on
    Linux a process's ``ru_maxrss`` starts from the resident size of the process it
    was forked from (the high-water mark of the address space that ``exec`` replaced),
    so a child of this benchmark, grown by the runs above, would report at least
    this benchmark's own size whatever it did.
    """
    code = "import resource, emulator\n"
    if jobs is not None:  # None: the import alone, for reference
        code += (f"emulator.simulate({policy!r}, servers={n}, load=0.9, jobs={jobs}, seed=1, "
                 f"engine={engine!r}, warmup_jobs={warmup!r}, **{POLICY_PARAMS[policy]!r})\n")
    code += "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    launcher = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {code!r}], check=True)"
    out = subprocess.run([sys.executable, "-c", launcher], check=True, capture_output=True, text=True)
    return int(out.stdout.split()[-1])


def warm_up() -> None:
    """Bring both simulators to their steady state before anything is timed.

    First calls pay for lazy imports and the allocator's first arenas. And on
    CPython 3.11 a function's bytecode is specialised ("quickened") only once it
    has been called 8 times: the baseline, one function with one long loop, would
    otherwise run its first calls ~30% slower, while the emulator's small hot
    functions are called per job and specialise at once. Comparing against a
    cold baseline would flatter the emulator.
    """
    for _ in range(3):
        for policy in POLICY_PARAMS:
            emulated(policy, 10, 1_000, 100)()
            baselined(policy, 10, 1_000, 100)()
    emulated("sqd", 100, 30_000, 3_000)()
    baselined("sqd", 100, 30_000, 3_000)()


class Table:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, float, str, bool]] = []

    def add(self, name: str, measured: str, ratio: float, limit: float, detail: str = "") -> None:
        self.rows.append((name, measured, detail, ratio, f"<= {limit:g}", ratio <= limit))
        print(f"  {name}: {measured}  ratio {ratio:.2f} (target <= {limit:g}) "
              f"{'PASS' if ratio <= limit else 'FAIL'}  {detail}", flush=True)

    def show(self) -> bool:
        head = ("target", "measured", "ratio", "limit", "")
        width = [max(len(head[0]), *(len(r[0]) for r in self.rows)),
                 max(len(head[1]), *(len(r[1]) for r in self.rows))]
        print()
        print(f"{head[0]:<{width[0]}}  {head[1]:<{width[1]}}  {'ratio':>6}  {'limit':<7}  result")
        print("-" * (width[0] + width[1] + 32))
        for name, measured, _detail, ratio, limit, ok in self.rows:
            print(f"{name:<{width[0]}}  {measured:<{width[1]}}  {ratio:6.2f}  {limit:<7}  "
                  f"{'PASS' if ok else 'FAIL'}")
        return all(row[5] for row in self.rows)


def main() -> int:
    parser = argparse.ArgumentParser(description="zero-latency hot path against a heapq baseline")
    parser.add_argument("--quick", action="store_true", help="fewer jobs and repeats: a smoke run")
    parser.add_argument("--repeat", type=int, default=None, help="best of this many (default 5; quick 3)")
    parser.add_argument("--only", choices=["throughput", "flat", "jsq", "memory", "occupancy", "compiled"],
                        action="append", help="run only these sections (repeatable)")
    parser.add_argument("--json", metavar="FILE", help="also write the measurements as JSON")
    args = parser.parse_args()
    quick = args.quick
    repeat = args.repeat or (3 if quick else 5)
    sections = set(args.only or ["throughput", "flat", "jsq", "memory", "occupancy", "compiled"])
    table = Table()
    record: dict[str, Any] = {"quick": quick, "repeat": repeat}
    warm_up()

    if "throughput" in sections:
        jobs = 50_000 if quick else 200_000
        print(f"Throughput: load 0.9, {jobs} measured jobs + {jobs // 10} warm-up, best of {repeat}")
        for policy, n in (("jsq", 10), ("sqd", 100)):
            m = best_of({"emulator": emulated(policy, n, jobs, jobs // 10),
                         "baseline": baselined(policy, n, jobs, jobs // 10)}, repeat)
            (emu, emu_row), (base, base_row) = m["emulator"], m["baseline"]
            rate = (jobs + jobs // 10) / emu / 1000
            table.add(f"throughput {LABEL[policy]} N={n}", f"emulator {emu:.2f}s / heapq {base:.2f}s",
                      emu / base, THROUGHPUT_LIMIT,
                      f"({rate:.0f}k jobs/s; mean response emulator {emu_row['mean_response']:.3f}, "
                      f"heapq {base_row['mean_response']:.3f}; messages/job {emu_row['messages_per_job']:g})")
            record[f"throughput_{policy}_{n}"] = {"emulator": emu, "baseline": base}

    if "flat" in sections:
        small, large = 10, (2_000 if quick else 10_000)
        jobs = 50_000 if quick else 200_000
        warmup = 10 * large  # the same number of jobs at both N: enough to fill N=large servers
        print(f"Flat in N: N={small} -> {large}, load 0.9, {warmup} warm-up + {jobs} measured jobs, "
              f"best of {repeat}")
        per_job = 1e6 / (warmup + jobs)
        for policy in ("sqd", "jiq", "jbt"):
            m = best_of({"emulator lo": emulated(policy, small, jobs, warmup),
                         "baseline lo": baselined(policy, small, jobs, warmup),
                         "emulator hi": emulated(policy, large, jobs, warmup),
                         "baseline hi": baselined(policy, large, jobs, warmup)}, repeat)
            emu = (m["emulator lo"][0], m["emulator hi"][0])
            base = (m["baseline lo"][0], m["baseline hi"][0])
            emu_growth, base_growth = emu[1] / emu[0], base[1] / base[0]
            table.add(f"flat in N {LABEL[policy]} {small}->{large}",
                      f"emulator x{emu_growth:.2f} / heapq x{base_growth:.2f}", emu_growth / base_growth, 1.5,
                      f"(us per job: emulator {emu[0] * per_job:.1f} -> {emu[1] * per_job:.1f}, "
                      f"heapq {base[0] * per_job:.1f} -> {base[1] * per_job:.1f})")
            record[f"flat_{policy}"] = {"emulator": emu, "baseline": base, "jobs": warmup + jobs}

    if "jsq" in sections:
        small, large = 10, 1_000
        jobs = 50_000 if quick else 200_000
        warmup = 10 * large
        print(f"JSQ in N: N={small} -> {large}, load 0.9, {warmup} warm-up + {jobs} measured jobs, best of {repeat}")
        m = best_of({"lo": emulated("jsq", small, jobs, warmup), "hi": emulated("jsq", large, jobs, warmup)},
                    repeat)
        (lo, lo_row), (hi, hi_row) = m["lo"], m["hi"]
        messages = hi_row["messages_per_job"]
        ok_messages = messages == 2 * large and lo_row["messages_per_job"] == 2 * small
        table.add(f"JSQ per-job cost N={small}->{large}",
                  f"x{hi / lo:.2f}, {messages:g} msgs/job{'' if ok_messages else ' (NOT 2N)'}",
                  hi / lo if ok_messages else float("inf"), 3.0, f"({lo:.2f}s -> {hi:.2f}s)")
        record["jsq_growth"] = {"emulator": [lo, hi], "messages_per_job": messages}

    if "occupancy" in sections:
        # The cost of streaming the queue-length distribution (run.occupancy): the same runs with
        # and without the observer. Above 1.15 it stays an option, off in `simulate` by default.
        jobs = 50_000 if quick else 200_000
        print(f"Occupancy: load 0.9, {jobs} measured jobs + {jobs // 10} warm-up, with and without "
              f"the observer, best of {repeat}")
        for policy, n in (("jsq", 10), ("sqd", 100)):
            m = best_of({"on": emulated(policy, n, jobs, jobs // 10, occupancy=True),
                         "off": emulated(policy, n, jobs, jobs // 10)}, repeat)
            (on, on_row), (off, off_row) = m["on"], m["off"]
            same = on_row["mean_response"] == off_row["mean_response"]
            table.add(f"occupancy on/off {LABEL[policy]} N={n}", f"{on:.2f}s / {off:.2f}s",
                      on / off if same else float("inf"), 1.3,
                      f"(target for always-on: <= 1.15; results {'identical' if same else 'DIFFER'})")
            record[f"occupancy_{policy}_{n}"] = {"on": on, "off": off}

    if "memory" in sections:
        few, many = (20_000, 200_000) if quick else (100_000, 1_000_000)
        print(f"Memory: peak RSS of SQ(2) N=100 with {few} and {many} jobs, fresh subprocesses")
        rss_import = peak_rss_kib("sqd", 100, None)
        rss_few = peak_rss_kib("sqd", 100, few)
        rss_many = peak_rss_kib("sqd", 100, many)
        table.add(f"memory {many:.0e} / {few:.0e} jobs",
                  f"{rss_many / 1024:.0f} MiB / {rss_few / 1024:.0f} MiB", rss_many / rss_few, 1.5,
                  f"(of which `import emulator` alone: {rss_import / 1024:.0f} MiB)")
        record["memory_kib"] = {"import": rss_import, "few": rss_few, "many": rss_many}

    if "compiled" in sections:
        compiled_section(table, record, quick, repeat)

    ok = table.show()
    if args.json:
        record["rows"] = [{"name": r[0], "measured": r[1], "ratio": r[3], "pass": r[5]} for r in table.rows]
        with open(args.json, "w") as handle:
            json.dump(record, handle, indent=1)
    return 0 if ok else 1


def slotted(policy: str, params: dict[str, Any], dispatch: str, jobs: int, warmup: int,
            engine: str) -> Callable[[], dict[str, Any]]:
    return lambda: emulator.simulate(policy, servers=50, load=0.99, jobs=jobs, warmup_jobs=warmup, seed=1,
                                     engine=engine, time="slotted", slot={"dispatch": dispatch},
                                     service="deterministic", **params)


def slotted_section(table: Table, record: dict[str, Any], jobs: int, warmup: int, repeat: int) -> None:
    """Slotted time, compiled against SimPy: CPU per job, one decision per job and per slot."""
    slotted("jsq", {}, "slot", 1_000, 0, "compiled")()  # this process loads the slot clock once
    print(f"Slotted time, compiled against SimPy: N=50, load 0.99, {jobs} measured jobs + {warmup} warm-up")
    per_job = 1e9 / (jobs + warmup)
    for policy, params, label in SLOTTED_CASES:
        for dispatch in ("job", "slot"):
            m = best_of({"simpy": slotted(policy, params, dispatch, jobs, warmup, "simpy"),
                         "compiled": slotted(policy, params, dispatch, jobs, warmup, "compiled")},
                        max(1, repeat // 2))
            (slow, slow_row), (fast, fast_row) = m["simpy"], m["compiled"]
            same = all(repr(slow_row[k]) == repr(fast_row[k]) for k in slow_row
                       if k not in ("wall_seconds", "engine"))
            table.add(f"compiled vs SimPy, slotted, dispatch {dispatch}, {label} N=50",
                      f"{fast * per_job:.0f} / {slow * per_job:.0f} ns per job",
                      fast / slow if same and fast_row["engine"] == "compiled" else float("inf"), 0.05,
                      f"(x{slow / fast:.1f} faster; rows {'identical' if same else 'DIFFERENT'})")
            record[f"compiled_slotted_{dispatch}_{policy}_50"] = {"simpy": slow, "compiled": fast,
                                                                  "identical": same}


def compiled_section(table: Table, record: dict[str, Any], quick: bool, repeat: int) -> None:
    """The compiled engine against SimPy and heapq; its compilation time; per-job cost and memory in N."""
    from compile_time import measure

    # A policy's first compiled run on an empty cache compiles its own kernel only (`emulator.compiled.build`).
    for policy, time_ in (("sqd", "continuous"), ("jbt", "continuous"), ("sqd", "slotted")):
        found = measure(policy, time_)
        cold, more, warm = found["cold"], found["cold with 10 more registered"], found["cached"]
        print(f"Compilation, {policy} {time_}: first run {cold:.1f} s on an empty cache ({more:.1f} s with ten "
              f"more policies registered), {warm:.2f} s from the cache")
        table.add(f"compiled: first run of {policy}, {time_}, empty cache", f"{cold:.1f} s", cold / 20.0, 1.0,
                  "(once per machine and policy; ratio to 20 s)")
        table.add("compiled: the same, ten more policies registered", f"{more:.1f} s", more / max(cold, 1e-9),
                  1.25, "(ratio to the first: a kernel holds its own policy's hooks only)")
        table.add(f"compiled: first run of {policy}, {time_}, from the cache", f"{warm:.2f} s", warm / 0.5, 1.0,
                  "(ratio to 0.5 s: loading the kernel, and a run of 100 jobs)")
        record[f"compile_seconds_{policy}_{time_}"] = found
    emulated("jsq", 10, 1_000, 100, engine="compiled")()  # this process loads the kernel once

    jobs = 100_000 if quick else 1_000_000
    warmup = jobs // 10
    print(f"Compiled against SimPy: load 0.9, {jobs} measured jobs + {warmup} warm-up, best of {repeat}")
    for policy, n, params, label in COMPILED_CASES:
        m = best_of({"simpy": emulated(policy, n, jobs, warmup, params=params),
                     "compiled": emulated(policy, n, jobs, warmup, engine="compiled", params=params)},
                    max(1, repeat // 2))
        (slow, slow_row), (fast, fast_row) = m["simpy"], m["compiled"]
        same = all(repr(slow_row[k]) == repr(fast_row[k]) for k in slow_row if k not in ("wall_seconds", "engine"))
        per_job = 1e9 / (jobs + warmup)
        table.add(f"compiled vs SimPy {label} N={n}", f"{fast * per_job:.0f} / {slow * per_job:.0f} ns per job",
                  fast / slow if same and fast_row["engine"] == "compiled" else float("inf"), 0.05,
                  f"(x{slow / fast:.1f} faster; rows {'identical' if same else 'DIFFERENT'})")
        record[f"compiled_{policy}_{n}"] = {"simpy": slow, "compiled": fast, "identical": same}
    # The same with the occupancy observer on (run.occupancy: the default in scenarios).
    for policy, n, params, label in COMPILED_CASES:
        m = best_of({"simpy": emulated(policy, n, jobs, warmup, params=params, occupancy=True),
                     "compiled": emulated(policy, n, jobs, warmup, engine="compiled", params=params,
                                          occupancy=True)}, max(1, repeat // 2))
        (slow, slow_row), (fast, fast_row) = m["simpy"], m["compiled"]
        same = all(repr(slow_row[k]) == repr(fast_row[k]) for k in slow_row if k not in ("wall_seconds", "engine"))
        per_job = 1e9 / (jobs + warmup)
        table.add(f"compiled vs SimPy, occupancy on, {label} N={n}",
                  f"{fast * per_job:.0f} / {slow * per_job:.0f} ns per job",
                  fast / slow if same and fast_row["engine"] == "compiled" else float("inf"), 0.05,
                  f"(x{slow / fast:.1f} faster; rows {'identical' if same else 'DIFFERENT'})")
        record[f"compiled_occupancy_{policy}_{n}"] = {"simpy": slow, "compiled": fast, "identical": same}
    # With latency: SimPy schedules an event per message; so does the kernel. Then with lost messages too.
    for faults, title, key in (({}, "latency 0.01", "latency"), (LOSS, "latency 0.01, loss 0.05", "loss")):
        for policy, n, params, label, limit, share in LATENCY_CASES:
            few, before = int(jobs * share), int(warmup * share)
            options = {**params, **faults}
            m = best_of({"simpy": emulated(policy, n, few, before, params=options, latency=LATENCY),
                         "compiled": emulated(policy, n, few, before, engine="compiled", params=options,
                                              latency=LATENCY)}, max(1, repeat // 2))
            (slow, slow_row), (fast, fast_row) = m["simpy"], m["compiled"]
            same = all(repr(slow_row[k]) == repr(fast_row[k]) for k in slow_row
                       if k not in ("wall_seconds", "engine"))
            per_job = 1e9 / (few + before)
            table.add(f"compiled vs SimPy, {title}, {label} N={n}",
                      f"{fast * per_job:.0f} / {slow * per_job:.0f} ns per job",
                      fast / slow if same and fast_row["engine"] == "compiled" else float("inf"), limit,
                      f"(x{slow / fast:.1f} faster; {few} jobs; rows {'identical' if same else 'DIFFERENT'})")
            record[f"compiled_{key}_{policy}_{n}"] = {"simpy": slow, "compiled": fast, "identical": same}
    few, before = jobs // 5, warmup // 5
    for options, title, key in FAULTS_AT_ZERO_LATENCY:
        emulated("sqd", 100, 1_000, 100, engine="compiled", params=options)()  # this process loads the kernel once
        m = best_of({"simpy": emulated("sqd", 100, few, before, params=options),
                     "compiled": emulated("sqd", 100, few, before, engine="compiled", params=options)},
                    max(1, repeat // 2))
        (slow, slow_row), (fast, fast_row) = m["simpy"], m["compiled"]
        same = all(repr(slow_row[k]) == repr(fast_row[k]) for k in slow_row if k not in ("wall_seconds", "engine"))
        per_job = 1e9 / (few + before)
        table.add(f"compiled vs SimPy, zero latency, {title}, SQ(2) N=100",
                  f"{fast * per_job:.0f} / {slow * per_job:.0f} ns per job",
                  fast / slow if same and fast_row["engine"] == "compiled" else float("inf"), 1 / 20,
                  f"(x{slow / fast:.1f} faster; {few} jobs; rows {'identical' if same else 'DIFFERENT'})")
        record[f"compiled_{key}_sqd_100"] = {"simpy": slow, "compiled": fast, "identical": same}
    slotted_section(table, record, jobs, warmup, repeat)
    for policy, n in (("jsq", 10), ("sqd", 100)):
        m = best_of({"compiled": emulated(policy, n, jobs, warmup, engine="compiled"),
                     "baseline": baselined(policy, n, jobs, warmup)}, max(1, repeat // 2))
        fast, base = m["compiled"][0], m["baseline"][0]
        table.add(f"compiled vs heapq {LABEL[policy]} N={n}", f"compiled {fast:.2f}s / heapq {base:.2f}s",
                  fast / base, 1.0, f"(x{base / fast:.1f} faster than the minimal pure-Python simulator)")
        record[f"compiled_vs_heapq_{policy}_{n}"] = {"compiled": fast, "baseline": base}

    c_section(table, record, quick, repeat)

    sizes = (10, 1_000, 10_000) if quick else (10, 1_000, 10_000, 100_000)
    cost = {}
    for n in sizes:
        w = max(warmup, 5 * n)  # enough to fill N servers
        seconds = best_of({"c": emulated("sqd", n, jobs, w, engine="compiled")}, max(1, repeat // 2))["c"][0]
        cost[n] = seconds / (jobs + w) * 1e9
    print("Compiled SQ(2) per-job cost in N: " + ", ".join(f"N={n}: {c:.0f} ns" for n, c in cost.items()))
    log_growth = math.log(10_000) / math.log(10)
    table.add("compiled per-job cost N=10->10,000", f"x{cost[10_000] / cost[10]:.2f}",
              cost[10_000] / cost[10] / log_growth, 1.0, f"(ratio to the heap's log N growth x{log_growth:.0f})")
    if 100_000 in cost:
        table.add("compiled per-job cost N=1,000->100,000", f"x{cost[100_000] / cost[1_000]:.2f}",
                  cost[100_000] / cost[1_000], 3.0, f"({cost[1_000]:.0f} -> {cost[100_000]:.0f} ns per job)")
        small = peak_rss_kib("sqd", 1_000, jobs, "compiled", 500_000)
        large = peak_rss_kib("sqd", 100_000, jobs, "compiled", 500_000)
        per_server = (large - small) * 1024 / 99_000
        table.add("compiled memory per server", f"{per_server:.0f} bytes (N=1,000 -> 100,000)",
                  per_server / 200, 1.0, f"(peak RSS {small / 1024:.0f} -> {large / 1024:.0f} MiB)")
        record["compiled_bytes_per_server"] = per_server
    record["compiled_ns_per_job"] = cost


def c_section(table: Table, record: dict[str, Any], quick: bool, repeat: int) -> None:
    """The compiled engine against `c_limit.c`, a plain C event loop of the same model, CPU per job.

    Built with ``cc -O3 -march=native`` into a temporary folder; skipped, with the
    reason, when there is no C compiler or the build fails. Both run 5.5 x 10^6 jobs
    (a tenth of them warm-up; 5.5 x 10^5 with ``--quick``), taking turns, best of
    ``repeat``: the compiled engine timed by `time.process_time` around
    `emulator.simulate`, the C loop by its own process CPU clock (it prints ns per job).
    """
    import tempfile

    compiler = shutil.which("cc")
    if compiler is None:
        print("Compiled against C: skipped, no C compiler ('cc') on the PATH")
        record["c_limit"] = "skipped: no C compiler"
        return
    total = 550_000 if quick else 5_500_000
    jobs = total * 10 // 11
    warmup = total - jobs
    with tempfile.TemporaryDirectory() as folder:
        program = os.path.join(folder, "c_limit")
        build = subprocess.run([compiler, "-O3", "-march=native", "-o", program, C_SOURCE, "-lm"],
                               capture_output=True, text=True)
        if build.returncode != 0:
            reason = (build.stderr.strip().splitlines() or ["no message"])[0]
            print(f"Compiled against C: skipped, the build failed: {reason}")
            record["c_limit"] = f"skipped: build failed: {reason}"
            return
        print(f"Compiled against C (c_limit.c, cc -O3 -march=native): load 0.9, {total} jobs "
              f"({warmup} warm-up), CPU per job, best of {repeat}")
        for policy, n, d, label in C_CASES:
            params = {"d": d} if policy == "sqd" else {}
            compiled, native = [], []
            for _ in range(repeat):  # taking turns, so that a burst of load elsewhere hits both
                seconds, row = cpu(emulated(policy, n, jobs, warmup, engine="compiled", params=params))
                compiled.append(seconds * 1e9 / total)
                out = subprocess.run([program, policy, str(n), str(d), str(total), "1"], check=True,
                                     capture_output=True, text=True).stdout.split()
                native.append(float(out[4]))
            fast, c = min(compiled), min(native)
            table.add(f"compiled vs C {label} N={n}", f"{fast:.0f} / {c:.0f} ns per job", fast / c, 1.3,
                      f"(mean response compiled {row['mean_response']:.3f}, C {float(out[5]):.3f}; "
                      f"engine {row['engine']})")
            record[f"c_limit_{policy}_{n}"] = {"compiled_ns": fast, "c_ns": c}


if __name__ == "__main__":
    sys.exit(main())
