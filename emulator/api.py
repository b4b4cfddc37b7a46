"""The Python entry points: `simulate` one replication, `run` a whole scenario."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import Scenario
from .runner import Task, execute, run_task, tasks


def _law(value: Any) -> Any:
    return {"kind": value} if isinstance(value, str) else value


def simulate(policy: str, *, servers: int = 10, load: float | str = 0.9, jobs: int = 100_000,
             seed: int = 1, warmup_jobs: int | None = None, service: Any = None, arrivals: Any = None,
             latency: Any = None, dispatchers: int = 1, discipline: str = "fifo",
             capacity: int | None = None, speeds: list[float] | None = None,
             allow_unstable: bool = False, label: str | None = None, **params: Any) -> dict[str, Any]:
    """Simulate one replication of one policy and return its metrics (a ``runs.csv`` row).

    ``service``, ``arrivals`` and ``latency`` take the scenario's mappings (e.g.
    ``{"kind": "erlang", "mean": 1, "k": 4}``) or just a kind; the policy's own
    parameters (``d``, ``period``, ``threshold``, ``replace``, ...) are keywords.
    ``seed`` is the replication seed, as in the ``seed`` column of ``runs.csv``.

    Examples
    --------
    >>> row = simulate("sqd", d=2, servers=20, load=0.5, jobs=2_000, seed=1)
    >>> row["policy"], row["messages_per_job"]
    ('SQ(2)', 4.0)
    """
    entry = {"name": policy, **params}
    if label is not None:
        entry["label"] = label
    data: dict[str, Any] = {
        "name": "simulate", "seed": seed, "replications": 1, "allow_unstable": allow_unstable,
        "run": {"jobs": jobs, "warmup_jobs": jobs // 10 if warmup_jobs is None else warmup_jobs},
        "system": {"servers": servers, "dispatchers": dispatchers, "discipline": discipline,
                   "capacity": capacity, "speeds": speeds},
        "workload": {"load": load},
        "policies": [entry],
    }
    if service is not None:
        data["workload"]["service"] = _law(service)
    if arrivals is not None:
        data["workload"]["arrivals"] = _law(arrivals)
    if latency is not None:
        data["network"] = {"latency": _law(latency)}
    point = Scenario.from_dict(data).points()[0]
    return run_task(Task(point, point.policies[0], 0, seed))


@dataclass
class Results:
    """What `run` returns: ``runs`` (one row per replication) and ``summary`` (mean and CI)."""

    runs: Any
    summary: Any
    scenario: Scenario

    def table(self, **options: Any) -> str:
        """The comparison table (see `analysis.tables.comparison_table`)."""
        from analysis.tables import comparison_table

        return comparison_table(self.summary, **options)


def run(scenario: Scenario | str | Path, *, workers: int | None = None, executor: Any = None,
        out: str | Path | None = None, progress: bool = False) -> Results:
    """Run every (sweep point, policy, replication) of a scenario.

    Parameters
    ----------
    scenario : Scenario or path
    workers : int, optional
        Local worker processes (default: all cores). Results do not depend on it.
    executor : concurrent.futures.Executor, optional
        Where to run tasks instead, e.g. ``distributed.Client(...).get_executor()``.
    out : path, optional
        Write ``runs.csv``, ``summary.csv`` and ``scenario.yaml`` there.
    progress : bool
        Show a progress bar over tasks.
    """
    import pandas as pd

    from .config import load_scenario
    from .results import summarize

    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    todo = tasks(scenario)
    order = {task.key: i for i, task in enumerate(todo)}
    rows: list[tuple[int, dict[str, Any]]] = []
    finished = execute(todo, workers=workers, executor=executor)
    if progress:
        from tqdm import tqdm

        finished = tqdm(finished, total=len(todo), desc=scenario.name, unit="task")
    for task, row in finished:
        rows.append((order[task.key], row))
    runs = pd.DataFrame([row for _, row in sorted(rows, key=lambda item: item[0])])
    results = Results(runs, summarize(runs), scenario)
    if out is not None:
        from .output import write_results

        write_results(Path(out), results)
    return results
