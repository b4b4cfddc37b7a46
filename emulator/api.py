"""The Python entry points: `simulate` one replication, `run` a whole scenario."""

from __future__ import annotations

import math
import numbers
import sys
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import RunError
from .experiment.runner import Task, execute, make_task, run_task
from .scenario.sweep import Scenario


def _law(value: Any) -> Any:
    return {"kind": value} if isinstance(value, str) else value


def simulate(policy: str, *, servers: int = 10, load: float | str = 0.9, jobs: int = 100_000,
             seed: int = 1, warmup_jobs: int | str | None = None, service: Any = None, arrivals: Any = None,
             latency: Any = None, dispatchers: int = 1, discipline: str = "fifo",
             capacity: int | None = None, speeds: list[float] | dict[str, Any] | None = None,
             dispatcher_shares: list[float] | None = None, allow_unstable: bool = False,
             label: str | None = None, occupancy: bool = False, response_bins: bool = False,
             engine: str = "auto",
             time: str = "continuous",
             slot: dict[str, Any] | None = None, loss: float = 0.0, timeout: float | None = None,
             failures: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
    """Simulate one replication of one policy and return its metrics (a ``runs.csv`` row).

    ``service``, ``arrivals`` and ``latency`` take the scenario's mappings (e.g.
    ``{"kind": "erlang", "mean": 1, "k": 4}``) or just a kind; the policy's own
    parameters (``d``, ``period``, ``threshold``, ``replace``, ...) are keywords.
    ``time="slotted"`` runs in time slots, with ``slot`` its options (``system.time``, ``system.slot``).
    ``loss``, ``timeout`` and ``failures`` are ``network.loss``, ``network.timeout`` and
    ``system.failures`` (docs/faults.md).
    ``speeds`` is a list of N rates or a law mapping (drawn once per replication).
    ``seed`` is the replication seed, as in the ``seed`` column of ``runs.csv``.
    With ``occupancy=True`` the servers' lengths are streamed (about 20% slower):
    the row then also holds ``occupancy`` (s_i, a list indexed by i), ``total_jobs``
    (``[first, probabilities]``) and the metrics ``mean_spread``, ``mean_scaled_total``
    and ``ks_exponential_*`` (NaN without it); see ``docs/occupancy.md``.
    ``warmup_jobs="auto"`` finds the warm-up by MSER-5 (docs/warmup.md); default a tenth of ``jobs``.
    ``engine`` is ``run.engine``: ``simpy``, ``compiled`` or ``auto``. With
    ``response_bins=True`` the row keeps the response-time sketch's non-empty bins
    (``[[bin, count], ...]``), as the result store does.

    Examples
    --------
    >>> row = simulate("sqd", d=2, servers=20, load=0.5, jobs=2_000, seed=1)
    >>> row["policy"], row["messages_per_job"]
    ('SQ(2)', 4.0)
    """
    data = scenario_data(policy, servers=servers, load=load, jobs=jobs, seed=seed, warmup_jobs=warmup_jobs,
                         service=service, arrivals=arrivals, latency=latency, dispatchers=dispatchers,
                         discipline=discipline, capacity=capacity, speeds=speeds,
                         dispatcher_shares=dispatcher_shares, allow_unstable=allow_unstable, label=label,
                         occupancy=occupancy, engine=engine, time=time, slot=slot, loss=loss, timeout=timeout,
                         failures=failures, **params)
    point = Scenario.from_dict(data).points()[0]
    row = run_task(Task(point, point.policies[0], 0, point.scenario.seed))
    if not response_bins:  # the sketch's bins, as stored for response_cdf.csv of `run`
        del row["response_bins"]
    return row


def scenario_data(policy: str, *, servers: int = 10, load: float | str = 0.9, jobs: int = 100_000,
                  seed: int = 1, warmup_jobs: int | str | None = None, service: Any = None, arrivals: Any = None,
                  latency: Any = None, dispatchers: int = 1, discipline: str = "fifo",
                  capacity: int | None = None, speeds: list[float] | dict[str, Any] | None = None,
                  dispatcher_shares: list[float] | None = None, allow_unstable: bool = False,
                  label: str | None = None, occupancy: bool = False, engine: str = "auto",
                  time: str = "continuous", slot: dict[str, Any] | None = None, loss: float = 0.0,
                  timeout: float | None = None, failures: dict[str, Any] | None = None,
                  **params: Any) -> dict[str, Any]:
    """The one-policy, one-replication scenario that `simulate` runs, as plain data (same keywords)."""
    entry = {"name": policy, **params}
    if label is not None:
        entry["label"] = label
    data: dict[str, Any] = {
        "name": "simulate", "seed": seed, "replications": 1, "allow_unstable": allow_unstable,
        "run": {"jobs": jobs, "warmup_jobs": jobs // 10 if warmup_jobs is None else warmup_jobs,
                "occupancy": occupancy, "engine": engine},
        "system": {"servers": servers, "dispatchers": dispatchers, "discipline": discipline,
                   "capacity": capacity, "speeds": speeds, "dispatcher_shares": dispatcher_shares,
                   "time": time, "slot": slot},
        "workload": {"load": load},
        "policies": [entry],
    }
    if service is not None:
        data["workload"]["service"] = _law(service)
    if arrivals is not None:
        data["workload"]["arrivals"] = _law(arrivals)
    network: dict[str, Any] = {}
    if latency is not None:
        network["latency"] = _law(latency)
    if loss:  # left out at 0, so that the default scenario stays as it was
        network["loss"] = loss
    if timeout is not None:
        network["timeout"] = timeout
    if network:
        data["network"] = network
    if failures is not None:
        data["system"]["failures"] = failures
    return data


@dataclass
class Results:
    """What `run` returns: ``runs`` (one row per replication) and ``summary`` (mean and CI).

    ``errors`` lists the tasks that raised, as ``(task description, error)``.
    ``occupancy``, ``total_jobs`` and ``response_cdf`` are the long-format frames of
    `emulator.experiment.profiles` (occupancy.csv, total_jobs.csv, response_cdf.csv);
    ``warmup`` that of `emulator.experiment.warmup.frame` (warmup.csv).
    """

    runs: Any
    summary: Any
    scenario: Scenario
    errors: list[tuple[str, str]] = field(default_factory=list)
    occupancy: Any = None
    total_jobs: Any = None
    response_cdf: Any = None
    warmup: Any = None

    def table(self, **options: Any) -> str:
        """The comparison table (see `analysis.tables.comparison_table`)."""
        from analysis.tables import comparison_table

        return comparison_table(self.summary, **{"scenario": self.scenario, **options})

    def frame(self, marks: bool = False, **options: Any) -> Any:
        """The comparison table as a pandas frame of text cells, with the table's digits.

        Rows are indexed by the row keys, columns by (metric, column header); with
        ``marks`` a best value ends in ``" *"`` as in `table`. ``options`` as for `table`
        (``rows``, ``cols``, ``metrics``, ``diff``, ``theory``).
        """
        from analysis.tables import frame, pivot

        return frame(pivot(self.summary, **{"scenario": self.scenario, **options}), marks)

    def styler(self, **options: Any) -> Any:
        """The comparison table as a pandas ``Styler``: best values bold, theory rows italic, caption above."""
        from analysis.tables import pivot, styler

        return styler(pivot(self.summary, **{"scenario": self.scenario, **options}))

    def _repr_html_(self) -> str:
        """A line on the scenario and the marked table: what a notebook shows for ``results``."""
        import html

        s = self.scenario
        points = s.points()
        policies = sorted({p.label for point in points for p in point.policies}, key=str)
        line = (f"<p><strong>{html.escape(s.name)}</strong>"
                + (f": {html.escape(s.description)}" if s.description else "")
                + f" — {len(points)} point(s) × {len(policies)} policies × {s.replications} replication(s) "
                f"of {s.run.jobs} jobs" + (f"; {len(self.errors)} task(s) failed" if self.errors else "") + "</p>")
        if self.summary is None or len(self.summary) == 0:
            return line + "<p>No finished runs.</p>"
        return line + str(self.styler().to_html())

    def plot(self, name: str | None = None, ax: Any = None, *, metric: str | None = None,
             size: Any = None, title: bool = True) -> Any:
        """The figure ``name`` as a matplotlib ``Figure``, drawn afresh; no file is written.

        ``fig.savefig("tradeoff.pdf")`` writes it in any format matplotlib knows; ``lbemu plot``
        takes the same options.

        Parameters
        ----------
        name : str, optional
            ``"response"``, ``"messages"``, ``"tradeoff"``, ``"messages_by_kind"``, and
            where the results have the data ``"blocking"``, ``"response_tail"``,
            ``"messages_vs_period"``, ``"occupancy"``, ``"halfin_whitt"``, ``"warmup"``
            (`analysis.plots.available` lists them; `analysis.plots.figure_function`
            gives the function behind each). Leave it out with ``metric``.
        ax : Axes, sequence of Axes, or Figure, optional
            Draw into these axes instead of a new figure (one-panel figures only); or into one Axes
            per panel, or into an empty Figure or SubFigure (the whole figure): see
            `analysis.canvas.figure`.
        metric : str, optional
            Instead of a named figure, this metric column against the swept variable
            (``"mean_wait"``, ``"p99_response"``, ...: `analysis.plots.metrics`).
        size : (float, float), optional
            Width and height of the new figure in inches, each from 1 to 50; not with ``ax``.
        title : bool
            False leaves out the figure's title (a paper's caption says it).

        Returns
        -------
        matplotlib.figure.Figure

        Raises
        ------
        emulator.ScenarioError
            If these results have no figure of that name, or ``ax`` is not somewhere
            this figure can be drawn (a number of Axes other than its panels, a Figure
            that holds axes already, anything else than Axes or a Figure), or ``metric``
            or ``size`` is not one it can draw.
        """
        from analysis.plots import draw

        return draw(self, name, ax, metric=metric, size=size, title=title)

    def figures(self) -> list[str]:
        """The names `plot` accepts for these results (`analysis.plots.available`)."""
        from analysis.plots import available

        return available(self)


def run(scenario: Scenario | dict[str, Any] | str | Path, *, workers: int | None = None, executor: Any = None,
        out: str | Path | None = None, progress: bool = False, force: bool = False) -> Results:
    """Run every (sweep point, policy, replication) of a scenario.

    Parameters
    ----------
    scenario : Scenario, dict or path
        A dict is read as `Scenario.from_dict`, a path as a YAML scenario file.
    workers : int, optional
        Local worker processes, >= 1 (default: all cores). Results do not depend on it.
    executor : concurrent.futures.Executor, optional
        Where to run tasks instead, e.g. ``distributed.Client(...).get_executor()``.
    out : path, optional
        Results folder. Each finished task is committed at once to a store there, so
        an interrupted run resumes where it stopped; ``runs.csv``, ``summary.csv``
        and ``scenario.yaml`` are written at the end.
    progress : bool
        Show progress bars (tasks, and jobs of long single runs).
    force : bool
        Discard stored results of a different scenario in ``out`` instead of refusing.

    Examples
    --------
    >>> s = Scenario.from_dict({"replications": 2, "run": {"jobs": 1000, "warmup_jobs": 100},
    ...                         "policies": [{"name": "random"}, {"name": "jsq"}], "compare_to": "Random"})
    >>> results = run(s, workers=1)
    >>> list(results.summary["policy"]), list(results.summary["replications"])
    (['Random', 'JSQ'], [2, 2])
    """
    import pandas as pd

    from .errors import ScenarioError, show
    from .experiment.profiles import occupancy_frame, response_cdf_frame, total_jobs_frame, without_arrays
    from .experiment.results import summarize
    from .experiment.warmup import frame as warmup_frame
    from .experiment.warmup import notes
    from .scenario.reading import load_scenario

    # Everything is checked before the results folder is created.
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, numbers.Integral)
                                or workers < 1):
        raise ScenarioError(f"workers: expected an integer >= 1, got {show(workers)}")
    workers = None if workers is None else int(workers)
    if isinstance(scenario, dict):
        scenario = Scenario.from_dict(scenario)
    elif isinstance(scenario, (str, Path)):
        scenario = load_scenario(scenario)
    elif not isinstance(scenario, Scenario):
        raise ScenarioError(f"scenario: expected a Scenario, a dict or a path, got {type(scenario).__name__}")
    points = scenario.points()
    store = None
    if out is not None:
        from .experiment.output import write_scenario
        from .experiment.store import Store

        identity = _identity(scenario)
        if scenario.workload.arrivals.kind == "trace":  # the results depend on the file's contents too
            import hashlib

            trace = Path(scenario.workload.arrivals.path)  # type: ignore[arg-type]
            identity["trace_sha256"] = hashlib.sha256(trace.read_bytes()).hexdigest()[:16]
        store = Store(Path(out), identity, force=force, canonical=_canonical)
        write_scenario(Path(out), scenario)
    rows: dict[tuple[int, str, int], dict[str, Any]] = store.finished() if store is not None else {}
    for stored in rows.values():  # the name may change between runs in one folder; the results do not
        stored["scenario"] = scenario.name
    errors: list[tuple[str, str]] = []
    wanted = {(point.index, policy.label): scenario.replications
              for point in points for policy in point.policies}
    bars = _Bars(progress, scenario.name)
    kernel_ready = False
    try:
        while True:
            todo = [make_task(scenario, point, policy, rep) for point in points for policy in point.policies
                    for rep in range(wanted[point.index, policy.label])
                    if (point.index, policy.label, rep) not in rows]
            if executor is None and not kernel_ready:  # Dask workers load their own
                kernel_ready = _load_kernel(todo, announce=progress)
            bars.start(len(todo))
            # closing: an interrupt here stops the workers now, not when the generator is collected.
            with closing(execute(todo, workers=workers, executor=executor, progress=bars.jobs(todo))) as outcomes:
                for task, row, error in outcomes:
                    if store is not None:
                        store.put(task.key, row, error)
                    if row is None:
                        errors.append((task.describe(), error or ""))
                    else:
                        rows[task.key] = row
                    bars.advance()
            if scenario.precision is None or errors or not _more_replications(scenario, rows, wanted):
                break
    except RunError as exc:
        if out is None:
            raise
        raise RunError(f"{exc}; the finished tasks are stored in '{out}': run the same command to resume") from None
    finally:
        bars.close()
        if store is not None:
            store.close()
    order = [(point.index, policy.label, rep) for point in points for policy in point.policies
             for rep in range(wanted[point.index, policy.label])]
    done = [rows[key] for key in order if key in rows]
    runs = pd.DataFrame([without_arrays(row) for row in done])
    swept = list(dict.fromkeys(key for point in points for key in point.values))
    for line in notes(done):
        print(f"lbemu: warning: {line}", file=sys.stderr)
    results = Results(runs, summarize(runs, scenario.compare_to, scenario.precision), scenario, errors,
                      occupancy_frame(done, swept), total_jobs_frame(done, swept), response_cdf_frame(done, swept),
                      warmup_frame(done, swept))
    if out is not None:
        from .experiment.output import write_results

        write_results(Path(out), results)
    return results


def _load_kernel(todo: list[Task], announce: bool) -> bool:
    """Load the compiled kernel here, once, if a task will run on it; return whether it did.

    Then the local workers share it (forked ones inherit it, the others load the cache
    this process wrote) instead of each compiling it at the same time on a first use.
    With ``announce``, one line on stderr says so when the kernel has to be compiled
    (not when it loads from the cache), before the progress bars start.
    """
    import sys

    from .experiment.runner import choose_engine

    cases = {(task.point.index, task.policy.label): task for task in todo}.values()
    kernels = [(task.point, task.policy) for task in cases if choose_engine(task.point, task.policy) == "compiled"]
    if not kernels:
        return False
    from . import compiled

    def say() -> None:
        print(f"lbemu: compiling the simulation kernel of each policy on its first use (about "
              f"{compiled.COMPILE_SECONDS} s each; run.engine: simpy runs without)", file=sys.stderr, flush=True)

    return compiled.prepare(kernels, announce=say if announce else None)


def _identity(scenario: Scenario) -> dict[str, Any]:
    """What a results folder's store is keyed by: the scenario, less what changes no row."""
    identity = scenario.to_dict()
    identity["run"].pop("engine")  # both engines give the same rows: a folder resumes on either
    return identity


def _canonical(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored identity as this version would write it.

    Keys added to scenarios since it was stored take their defaults, which by rule
    reproduce the earlier behaviour; so a results folder made by an earlier version
    resumes instead of being refused as a different scenario. Changed values still
    count as changes: a stored identity holds every key, defaults included. The
    exception is ``run.occupancy`` (default on): a store without it was written with
    no occupancy in its rows, so it reads as off, and resumes only with
    ``run.occupancy: false`` rather than mixing rows with and without it.
    """
    from pydantic import ValidationError

    data = {key: value for key, value in stored.items() if key != "trace_sha256"}
    if isinstance(data.get("run"), dict) and "occupancy" not in data["run"]:
        # The one added key whose default is not the earlier behaviour: those rows hold no occupancy.
        data["run"] = {**data["run"], "occupancy": False}
    try:
        canonical = _identity(Scenario.model_validate(data))
    except ValidationError:
        return stored  # a key since removed or renamed: compared as it is (and so refused)
    if "trace_sha256" in stored:
        canonical["trace_sha256"] = stored["trace_sha256"]
    return canonical


def _more_replications(scenario: Scenario, rows: dict[tuple[int, str, int], dict[str, Any]],
                       wanted: dict[tuple[int, str], int]) -> bool:
    """Raise ``wanted`` where the precision target is not met yet; return whether any grew.

    The next count extrapolates the half-width as 1/sqrt(n), so most groups need
    one more round. It depends only on the results, so it is the same however
    the tasks ran.
    """
    from .experiment.results import mean_ci

    target = scenario.precision
    assert target is not None
    grew = False
    for (point, label), n in wanted.items():
        values = [rows[point, label, rep][target.metric] for rep in range(n) if (point, label, rep) in rows]
        if n >= target.max_replications:
            continue
        batch = _batch_halfwidth(rows.get((point, label, 0), {}), target.metric) if len(values) == 1 else None
        if batch is not None:  # one replication with batch means: its interval, extrapolated as 1/sqrt(n)
            goal = target.relative_halfwidth * abs(values[0])
            if batch > goal:
                needed = math.ceil((batch / goal) ** 2) if goal > 0 else target.max_replications
                wanted[point, label] = min(target.max_replications, max(2, needed))
                grew = True
            continue
        if len(values) < 2:  # no half-width yet: not met, so take a second replication
            wanted[point, label] = max(2, n + 1)
            grew = True
            continue
        mean, half = mean_ci(values)
        goal = target.relative_halfwidth * abs(mean)
        if not half > goal:
            continue
        needed = math.ceil(n * (half / goal) ** 2) if goal > 0 else target.max_replications
        wanted[point, label] = min(target.max_replications, max(n + 1, needed))
        grew = True
    return grew


def _batch_halfwidth(row: dict[str, Any], metric: str) -> float | None:
    """The batch-means half-width of ``metric`` in a task's row, if it has one."""
    half = row.get(f"{metric}_batch_ci95")
    return None if half is None or not math.isfinite(half) else float(half)


class _Bars:
    """tqdm bars: tasks (with ETA), and jobs within a task when one long task runs here."""

    def __init__(self, enabled: bool, name: str) -> None:
        self.enabled = enabled
        self.name = name
        self.tasks: Any = None
        self.inner: Any = None

    def start(self, total: int) -> None:
        if not self.enabled or total == 0:
            return
        from tqdm.auto import tqdm  # a widget in notebooks, text in a terminal

        if self.tasks is None:
            self.tasks = tqdm(total=total, desc=self.name, unit="task")
        else:  # a precision round: more tasks
            self.tasks.total += total
            self.tasks.refresh()

    def advance(self) -> None:
        if self.tasks is not None:
            self.tasks.update(1)

    def jobs(self, todo: list[Any]) -> Any:
        if not self.enabled or not todo:
            return None
        from tqdm.auto import tqdm  # a widget in notebooks, text in a terminal

        total = todo[0].point.scenario.run.jobs

        def update(finished: int) -> None:
            if self.inner is None or finished < self.inner.n:
                if self.inner is not None:
                    self.inner.close()
                self.inner = tqdm(total=total, desc="jobs", unit="job", leave=False)
            self.inner.update(finished - self.inner.n)

        return update

    def close(self) -> None:
        for bar in (self.inner, self.tasks):
            if bar is not None:
                bar.close()
