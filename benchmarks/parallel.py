"""Speed-up of local worker processes on a 40-task sweep (target: 2 workers >= 1.7x faster than 1).

    python benchmarks/parallel.py [--jobs 20000]

Wall-clock times of the same sweep with --workers 1 and --workers 2, measured in
the same run; the runs.csv of both are checked to be identical (wall time aside).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import pandas as pd

import emulator


def sweep(jobs: int) -> emulator.Scenario:
    # 4 loads x 2 policies x 5 replications = 40 tasks of similar size.
    return emulator.Scenario.from_dict({
        "name": "parallel-benchmark", "seed": 3, "replications": 5,
        "run": {"jobs": jobs, "warmup_jobs": jobs // 10},
        "system": {"servers": 50},
        "policies": [{"name": "sqd", "d": 2}, {"name": "jiq"}],
        "sweep": {"workload.load": [0.6, 0.7, 0.8, 0.9]},
    })


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20_000)
    args = parser.parse_args()
    scenario = sweep(args.jobs)
    walls = {}
    # Warm up this process first (imports, first calls), so the serial run, which runs
    # here, is not charged for them.
    emulator.run(sweep(1000).with_overrides(replications=1), workers=1)
    with tempfile.TemporaryDirectory() as tmp:
        for workers in (1, 2):
            out = Path(tmp) / str(workers)
            started = time.perf_counter()
            emulator.run(scenario, workers=workers, out=out)
            walls[workers] = time.perf_counter() - started
        one, two = (pd.read_csv(Path(tmp) / w / "runs.csv").drop(columns="wall_seconds") for w in "12")
        identical = one.equals(two)
    speedup = walls[1] / walls[2]
    print(f"40 tasks of {args.jobs} jobs: 1 worker {walls[1]:.1f} s, 2 workers {walls[2]:.1f} s, "
          f"speed-up {speedup:.2f}x (target >= 1.7): {'PASS' if speedup >= 1.7 else 'FAIL'}; "
          f"runs.csv identical: {identical}")


if __name__ == "__main__":
    main()
