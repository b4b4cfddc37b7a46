"""Run replications: one, or many in parallel, locally or on a Dask cluster."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from .config import Point, ResolvedPolicy, Scenario
from .streams import replication_seed


@dataclass(frozen=True)
class Task:
    """One (sweep point, policy, replication): a pure function of its fields."""

    point: Point
    policy: ResolvedPolicy
    replication: int
    seed: int

    @property
    def key(self) -> tuple[int, str, int]:
        return (self.point.index, self.policy.label, self.replication)


def tasks(scenario: Scenario, replications: Iterable[int] | None = None) -> list[Task]:
    """Every task of a scenario, in a fixed order."""
    reps = list(range(scenario.replications)) if replications is None else list(replications)
    return [Task(point, policy, rep, replication_seed(scenario.seed, rep))
            for point in scenario.points() for policy in point.policies for rep in reps]


def run_task(task: Task) -> dict[str, Any]:
    """Simulate one task; return its row of ``runs.csv``."""
    from .model import build_model
    from .results import identity

    started = time.perf_counter()
    metrics = build_model(task.point, task.policy, task.seed).run()
    row = identity(task.point, task.policy)
    row.update(replication=task.replication, seed=task.seed)
    row.update(metrics)
    row["wall_seconds"] = time.perf_counter() - started
    return row


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def execute(todo: list[Task], workers: int | None = None, executor: Executor | None = None,
            on_done: Callable[[Task, dict[str, Any]], None] | None = None) -> Iterator[tuple[Task, dict[str, Any]]]:
    """Run tasks and yield ``(task, row)`` as they finish (in completion order).

    With ``executor`` (e.g. a Dask client's ``get_executor()``) tasks go there;
    else ``workers`` local processes (default: all cores), or this process for 1.
    Each row depends only on its task, so the results are the same whatever runs them.
    """
    workers = default_workers() if workers is None else workers
    if executor is None and (workers <= 1 or len(todo) <= 1):
        for task in todo:
            yield task, run_task(task)
        return
    own = executor is None
    pool = executor or ProcessPoolExecutor(max_workers=min(workers, len(todo)))
    try:
        futures = {pool.submit(run_task, task): task for task in todo}
        from concurrent.futures import as_completed

        for future in as_completed(futures):
            yield futures[future], future.result()
    finally:
        if own:
            pool.shutdown(cancel_futures=True)
