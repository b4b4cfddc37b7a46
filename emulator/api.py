"""The Python entry points: `simulate` one replication, `run` a whole scenario."""

from __future__ import annotations

import math
import numbers
import sys
import threading
import time
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import RunError, ScenarioError, show, suggestion
from .experiment.runner import Task, execute, make_task, run_task
from .scenario.sweep import Scenario


def _law(value: Any) -> Any:
    return {"kind": value} if isinstance(value, str) else value


def simulate(policy: str, *, servers: int = 10, load: float | str = 0.9, jobs: int = 100_000,
             seed: int = 1, warmup_jobs: int | str | None = None, batch_means: int | None = None,
             service: Any = None, arrivals: Any = None,
             latency: Any = None, dispatchers: int = 1, discipline: str = "fifo",
             capacity: int | None = None, speeds: list[float] | dict[str, Any] | None = None,
             dispatcher_shares: list[float] | None = None, allow_unstable: bool = False,
             label: str | None = None, occupancy: bool = False, response_bins: bool = False,
             engine: str = "auto",
             time: str = "continuous",
             slot: dict[str, Any] | None = None, loss: float = 0.0, timeout: float | None = None,
             failures: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
    """Simulate one replication of one policy and return its row of ``runs.csv``.

    Each keyword is a scenario key (docs/scenarios.md) of a one-policy, one-replication
    scenario; the policy's own parameters (``d``, ``period``, ``threshold``, ``replace``, ...)
    are keywords too.

    Parameters
    ----------
    policy : str
        A policy name of `emulator.REGISTRY` (``"jsq"``, ``"sqd"``, ...).
    servers : int
        ``system.servers``, N.
    load : float or str
        ``workload.load``: arrival rate / total service capacity, or an expression in N.
    jobs : int
        ``run.jobs``: measured jobs.
    seed : int
        The replication seed, as in the ``seed`` column of ``runs.csv``.
    warmup_jobs : int or "auto", optional
        ``run.warmup_jobs`` (default ``jobs // 10``); ``"auto"`` finds it by MSER-5 (docs/warmup.md).
    batch_means : int, optional
        ``run.batch_means``: the row's ``mean_response_batch_ci95`` from that many batch means
        (docs/warmup.md).
    service, arrivals, latency : str or dict, optional
        ``workload.service``, ``workload.arrivals``, ``network.latency``: a mapping such as
        ``{"kind": "erlang", "mean": 1, "k": 4}``, or just a kind.
    dispatchers : int
        ``system.dispatchers``.
    discipline : {"fifo", "pool", "ps"}
        ``system.discipline``.
    capacity : int, optional
        ``system.capacity``: most jobs at a server; more are blocked.
    speeds : list of float or dict, optional
        ``system.speeds``: N rates, or a law they are drawn from once per replication.
    dispatcher_shares : list of float, optional
        ``system.dispatcher_shares``.
    allow_unstable : bool
        Allow a load >= 1 on single servers (FIFO or PS) without a capacity.
    label : str, optional
        The policy's label in the row (default from its parameters, e.g. ``SQ(2)``).
    occupancy : bool
        Stream the servers' lengths (about 20% slower): the row then also holds ``occupancy``
        (s_i, a list indexed by i), ``total_jobs`` (``[first, probabilities]``) and the metrics
        ``mean_spread``, ``mean_scaled_total`` and ``ks_exponential_*`` (NaN without it); see
        docs/occupancy.md.
    response_bins : bool
        Keep the response-time sketch's non-empty bins (``[[bin, count], ...]``), as the store does.
    engine : {"auto", "simpy", "compiled"}
        ``run.engine``.
    time : {"continuous", "slotted"}
        ``system.time``; ``slot`` its options (``system.slot``).
    slot : dict, optional
    loss, timeout, failures
        ``network.loss``, ``network.timeout`` and ``system.failures`` (docs/faults.md).
    **params
        The policy's parameters.

    Returns
    -------
    dict
        The ``runs.csv`` row: identity and setting columns, then every metric (docs/results.md).

    Raises
    ------
    emulator.ScenarioError
        Bad input, in one line naming the key.
    emulator.RunError
        A replication that could not finish.

    Examples
    --------
    >>> row = simulate("sqd", d=2, servers=20, load=0.5, jobs=2_000, seed=1)
    >>> row["policy"], row["messages_per_job"]
    ('SQ(2)', 4.0)
    """
    data = scenario_data(policy, servers=servers, load=load, jobs=jobs, seed=seed, warmup_jobs=warmup_jobs,
                         batch_means=batch_means,
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
                  seed: int = 1, warmup_jobs: int | str | None = None, batch_means: int | None = None,
                  service: Any = None, arrivals: Any = None,
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
    if batch_means is not None:  # left out by default, so that the default scenario stays as it was
        data["run"]["batch_means"] = batch_means
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


@dataclass(repr=False)
class Results:
    """The results of a scenario: what `run` returns, and what `Results.load` reads from a results folder.

    Attributes
    ----------
    runs : pandas.DataFrame
        One row per (sweep point, policy, replication): ``runs.csv``, columns in docs/results.md
        (identity and setting columns, then the metrics).
    summary : pandas.DataFrame
        One row per (sweep point, policy): ``summary.csv``, each metric's mean over the
        replications and ``<metric>_ci95``, the half-width of its 95% confidence interval.
    scenario : Scenario
        The scenario as it ran (every default filled in, ``--set`` applied).
    errors : list of (str, str)
        The tasks that raised, as (task, one-line error); empty when every task finished.
    occupancy, total_jobs, response_cdf : pandas.DataFrame or None
        ``occupancy.csv``, ``total_jobs.csv`` and ``response_cdf.csv``
        (`emulator.experiment.profiles`), where the run has them.
    warmup : pandas.DataFrame or None
        ``warmup.csv`` (`emulator.experiment.warmup.frame`), with ``run.warmup_jobs: auto``.
    """

    runs: Any
    summary: Any
    scenario: Scenario
    errors: list[tuple[str, str]] = field(default_factory=list)
    occupancy: Any = None
    total_jobs: Any = None
    response_cdf: Any = None
    warmup: Any = None

    def __repr__(self) -> str:
        """One line: the scenario, its size, the policies, and the failed tasks if any."""
        rows = 0 if self.summary is None else len(self.summary)
        policies = [] if rows == 0 else list(dict.fromkeys(self.summary["policy"].astype(str)))
        points = 0 if rows == 0 else self.summary["point"].nunique()
        failed = f", {len(self.errors)} failed task(s)" if self.errors else ""
        return (f"<Results {self.scenario.name if self.scenario is not None else '?'}: {points} point(s) x "
                f"{len(policies)} policies ({', '.join(policies)}), {0 if self.runs is None else len(self.runs)} "
                f"run(s){failed}>")

    @classmethod
    def load(cls, folder: str | Path) -> Results:
        """The results of a results folder written by ``lbemu run`` or ``run(..., out=folder)``.

        Parameters
        ----------
        folder : str or Path
            A results folder: ``summary.csv`` is required; ``runs.csv``, ``scenario.yaml``,
            ``occupancy.csv``, ``total_jobs.csv``, ``response_cdf.csv`` and ``warmup.csv`` are read where present.

        Returns
        -------
        Results
            ``errors`` is empty: a folder does not keep them (the store does, and a rerun retries them).

        Raises
        ------
        emulator.ScenarioError
            If ``folder`` is not a results folder, or one of its files does not read (one line naming it).
        """
        import pandas as pd

        from .experiment.output import read_summary, with_load
        from .scenario.reading import load_scenario

        folder = Path(folder)
        summary = read_summary(folder)
        frames: dict[str, Any] = {}
        for name in ("runs", "occupancy", "total_jobs", "response_cdf", "warmup"):
            path = folder / f"{name}.csv"
            try:
                frames[name] = pd.read_csv(path).copy() if path.is_file() else None  # (copy: consolidated)
            except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError) as exc:
                raise ScenarioError(f"{name}.csv: expected a readable CSV file in '{folder}' ({exc})") from None
        scenario = load_scenario(folder / "scenario.yaml") if (folder / "scenario.yaml").is_file() else None
        runs = None if frames["runs"] is None else with_load(frames["runs"])
        return cls(runs, summary, scenario, [], frames["occupancy"], frames["total_jobs"],  # type: ignore[arg-type]
                   frames["response_cdf"], frames["warmup"])

    def table(self, metric: str | Sequence[str] | None = None, *, rows: Sequence[str] | None = None,
              cols: Sequence[str] | None = None, diff: bool = False, theory: bool = True, format: str = "text",
              width: int | None = None, layout: str = "auto", siunitx: bool = False, **unknown: Any) -> str:
        """The comparison table, as ``lbemu table`` prints it (`analysis.tables.comparison_table`).

        Parameters
        ----------
        metric : str or list of str, optional
            Metric column(s), as ``--metric`` (default: mean response and messages per job for
            FIFO servers; blocking, occupancy and messages with pools or a capacity).
        rows, cols : list of str, optional
            ``policy`` or swept keys down the rows and across (``--rows``, ``--cols``).
        diff : bool
            Paired differences against the scenario's ``compare_to`` instead of the values.
        theory : bool
            Theory rows where a reference applies (``--no-theory`` is False).
        format : {"text", "markdown", "latex", "csv", "html"}
        width : int, optional
            Text: the widest line (default the terminal's; 0: no limit).
        layout : {"auto", "split", "single", "resize"}
            LaTeX: one table if it fits, or one per metric (see ``lbemu table --help``).
        siunitx : bool
            LaTeX: siunitx ``S`` columns.

        Returns
        -------
        str
            The table and its caption: the scenario's name, the settings every row shares,
            replications, what the cells and marks mean.

        Raises
        ------
        emulator.ScenarioError
            An unknown option, metric or key, in one line naming the valid ones.
        """
        from analysis.tables import comparison_table

        _known(unknown, self.table, "table")
        return comparison_table(self.summary, metrics=_metrics(metric), format=format, rows=rows, cols=cols,
                                diff=diff, scenario=self.scenario, theory=theory, width=width, layout=layout,
                                siunitx=siunitx)

    def frontier(self, x: str = "messages_per_job", y: str = "mean_response", *, within: float | str | None = None,
                 reference: str | None = None, everyone: bool = False, format: str = "text",
                 **unknown: Any) -> str:
        """Per sweep point, the policies on the Pareto front of ``y`` against ``x``, as ``lbemu frontier`` prints it.

        Parameters
        ----------
        x, y : str
            Metric columns, both lower is better (default messages per job and mean response).
        within : float or str, optional
            A margin on ``y`` (``0.1`` or ``"10%"``): the fewest ``x`` among the policies within it of the
            best ``y`` (or of ``reference``'s) is marked (``--within``).
        reference : str, optional
            A policy's registry name (``"jsq"``) whose ``y`` the margin is of (``--reference``).
        everyone : bool
            Every policy, not only those on the front (``--all``).
        format : {"text", "markdown", "latex", "csv", "html"}

        Returns
        -------
        str
            The table and its caption. `analysis.frontier.frontier` gives the same verdicts as a frame.
        """
        from analysis.frontier import frontier_table, margin
        from analysis.render import render

        _known(unknown, self.frontier, "frontier")
        table = frontier_table(self.summary, x, y, None if within is None else margin(within), reference, everyone)
        return render(table, format)

    def frame(self, metric: str | Sequence[str] | None = None, *, marks: bool = False,
              rows: Sequence[str] | None = None, cols: Sequence[str] | None = None, diff: bool = False,
              theory: bool = True, **unknown: Any) -> Any:
        """The comparison table as a pandas frame of text cells, with the table's digits.

        Parameters
        ----------
        metric, rows, cols, diff, theory
            As for `table`.
        marks : bool
            End a best value in ``" *"``, as `table` marks it.

        Returns
        -------
        pandas.DataFrame
            Rows indexed by the row keys, columns by (metric, column header).
        """
        from analysis.tables import frame, pivot

        _known(unknown, self.frame, "frame")
        return frame(pivot(self.summary, _metrics(metric), rows=rows, cols=cols, diff=diff, scenario=self.scenario,
                           theory=theory), marks)

    def styler(self, metric: str | Sequence[str] | None = None, *, rows: Sequence[str] | None = None,
               cols: Sequence[str] | None = None, diff: bool = False, theory: bool = True, **unknown: Any) -> Any:
        """The comparison table as a pandas ``Styler``: best values bold, theory rows italic, caption above.

        Parameters
        ----------
        metric, rows, cols, diff, theory
            As for `table`.

        Returns
        -------
        pandas.io.formats.style.Styler
        """
        from analysis.tables import pivot, styler

        _known(unknown, self.styler, "styler")
        return styler(pivot(self.summary, _metrics(metric), rows=rows, cols=cols, diff=diff, scenario=self.scenario,
                            theory=theory))

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


def _metrics(metric: str | Sequence[str] | None) -> list[str] | None:
    """``metric`` as the list of metrics `analysis.tables.pivot` takes: one name or several, as ``--metric``."""
    if metric is None:
        return None
    return [metric] if isinstance(metric, str) else list(metric)


def _known(unknown: dict[str, Any], method: Any, name: str) -> None:
    """`ScenarioError` naming the first keyword of ``unknown``, with the keywords ``method`` takes."""
    if not unknown:
        return
    import inspect

    given = next(iter(unknown))
    choices = [p for p in inspect.signature(method).parameters if p not in ("self", "unknown")]
    raise ScenarioError(f"{name}: expected a keyword among {', '.join(choices)}, got '{given}'"
                        f"{suggestion(given, choices)}")


def load_results(folder: str | Path) -> Results:
    """`Results.load`: the results of a results folder written by ``lbemu run``."""
    return Results.load(folder)


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

    Returns
    -------
    Results
        The runs, the summary and the scenario as it ran; ``Results.load(out)`` reads the same later.

    Raises
    ------
    emulator.ScenarioError
        Bad input, before anything runs: one line per mistake.
    emulator.RunError
        A run that could not finish (e.g. a killed worker); the finished tasks stay in ``out``.

    Examples
    --------
    >>> s = Scenario.from_dict({"replications": 2, "run": {"jobs": 1000, "warmup_jobs": 100},
    ...                         "policies": [{"name": "random"}, {"name": "jsq"}], "compare_to": "Random"})
    >>> results = run(s, workers=1)
    >>> list(results.summary["policy"]), list(results.summary["replications"])
    (['Random', 'JSQ'], [2, 2])
    """
    import pandas as pd

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
            bars.start(len(todo), stored=sum(wanted.values()) - len(todo) if bars.tasks is None else 0)
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
    from .experiment.runner import choose_engine

    cases = {(task.point.index, task.policy.label): task for task in todo}.values()
    kernels = [(task.point, task.policy) for task in cases if choose_engine(task.point, task.policy) == "compiled"]
    if not kernels:
        return False
    from . import compiled

    clock = _Clock("lbemu: compiling the simulation kernel of each policy on its first use (about "
                   f"{compiled.COMPILE_SECONDS} s each; --set run.engine=simpy runs without it)")
    try:
        return compiled.prepare(kernels, announce=clock.start if announce else None)
    finally:
        clock.stop()


class _Clock:
    """A line on stderr while something slow runs, with the seconds elapsed, and how long it took at the end.

    On a terminal the line is rewritten every second; elsewhere (a log) it is written once,
    and the time taken on a line of its own.
    """

    def __init__(self, line: str) -> None:
        self.line = line
        self.started: float | None = None
        self.done = threading.Event()
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        self.started = time.monotonic()
        if sys.stderr.isatty():
            self.thread = threading.Thread(target=self._tick, daemon=True)
            self.thread.start()
        else:
            print(self.line, file=sys.stderr, flush=True)

    def _tick(self) -> None:
        assert self.started is not None
        while not self.done.wait(1.0):
            print(f"\r{self.line}: {time.monotonic() - self.started:.0f} s", end="", file=sys.stderr, flush=True)

    def stop(self) -> None:
        if self.started is None:
            return
        self.done.set()
        if self.thread is not None:
            self.thread.join()
            print(file=sys.stderr)
        print(f"lbemu: compiled in {time.monotonic() - self.started:.0f} s", file=sys.stderr, flush=True)


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

    def start(self, total: int, stored: int = 0) -> None:
        """Show ``total`` tasks to run; ``stored``, those of a resumed run found in the store, count as done."""
        if not self.enabled:
            return
        if total == 0:
            if self.tasks is None and stored:
                print(f"lbemu: {self.name}: all {stored} task(s) were stored by an earlier run: nothing to run",
                      file=sys.stderr, flush=True)
            return
        from tqdm.auto import tqdm  # a widget in notebooks, text in a terminal

        if self.tasks is None:
            desc = f"{self.name} ({stored} stored)" if stored else self.name
            self.tasks = tqdm(total=total + stored, initial=stored, desc=desc, unit="task")
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
