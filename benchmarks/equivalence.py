"""Same seed, same results: a behaviour fingerprint of `emulator.simulate` for every policy.

Run it before and after a performance change and compare:

    python benchmarks/equivalence.py --save /tmp/before.json   # on the old code
    python benchmarks/equivalence.py --check /tmp/before.json  # on the new code

To fingerprint an older copy of the package without checking it out, put its
parent folder first on the path: ``PYTHONPATH=/tmp/old python benchmarks/equivalence.py --save ...``
(PYTHONPATH wins over the editable install).

The cases are in ``equivalence_cases.py`` beside this file (``tests/test_compiled.py``
reads them too). Every policy runs with zero latency (the fast path) and with exponential and
deterministic latency (every message an event; deterministic latency ties events everywhere, so
that event ids decide), plus variants that reach the other branches:
several dispatchers (with unequal shares), heterogeneous speeds (listed and drawn),
capacities, server pools, bursty arrivals, occupancy statistics, JBT-d with reset.
Results must match exactly (floats compared by repr, the sketch's ``response_bins``
included), except ``wall_seconds`` and ``engine``.

The compiled engine must give the SimPy engine's rows on every case it runs (those it
does not, it hands to SimPy, and this says so):

    python benchmarks/equivalence.py --engines   # each case on both engines

``--only PATTERN ...`` restricts either to the cases whose key (``policy/variant/latency``
or ``extra/latency``) matches one of the shell patterns, e.g. ``--only 'lsq*' 'jsq_sparse*'``.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
from typing import Any

from equivalence_cases import IGNORED, cases

import emulator


def simulate(policy: str, **options: Any) -> dict[str, Any]:
    """`emulator.simulate`'s row, with the sketch's ``response_bins`` (in the store, left out by default)."""
    return emulator.simulate(policy, response_bins=True, **options)


def fingerprint(engine: str = "simpy", only: list[str] | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, kw in cases(only).items():
        kw = dict(kw)
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
    """Every case on the SimPy and the compiled engine: identical rows, or a report."""
    simpy_rows = fingerprint("simpy", only=only)
    compiled_rows = fingerprint("compiled", only=only)
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
    group.add_argument("--engines", action="store_true", help="compiled against SimPy, every case")
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
