"""Run replications: one, or many in parallel, locally or on a Dask cluster."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Generator, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..errors import RunError, describe
from ..measure.result import RunResult
from ..measure.series import Series
from ..scenario.schema import ResolvedPolicy
from ..scenario.sweep import Point, Scenario
from ..workload.streams import replication_seed


@dataclass(frozen=True)
class Task:
    """One (sweep point, policy, replication): its result is a pure function of these fields."""

    point: Point
    policy: ResolvedPolicy
    replication: int
    seed: int

    @property
    def key(self) -> tuple[int, str, int]:
        return (self.point.index, self.policy.label, self.replication)

    def describe(self) -> str:
        return f"point {self.point.index} ({self.point.describe()}), {self.policy.label}, " \
               f"replication {self.replication}"


def make_task(scenario: Scenario, point: Point, policy: ResolvedPolicy, replication: int) -> Task:
    return Task(point, policy, replication, replication_seed(scenario.seed, replication))


def run_task(task: Task, progress: Any = None) -> dict[str, Any]:
    """Simulate one task; return its row of ``runs.csv``.

    ``progress``, if given, is called with the number of measured jobs finished
    so far, every few thousand jobs (for a progress bar on long single runs).
    With ``run.warmup_jobs: auto`` the replication runs twice (`emulator.experiment.warmup`).
    """
    from .results import identity

    started = time.perf_counter()
    engine = choose_engine(task.point, task.policy)
    run = task.point.scenario.run
    point, arrays, notes = task.point, {}, []
    if run.warmup_jobs == "auto":
        from . import warmup

        point, series = warmup.first_pass(task.point)
        _simulate(point, task.policy, task.seed, engine, series, progress)
        point, found = warmup.second_pass(task.point, series)
        arrays["warmup"] = warmup.figure_data(series, found)
        notes.append(warmup.note(found, run.jobs))
    measured = point.scenario.run
    batches = None if run.batch_means is None else \
        Series.batches(measured.fixed_warmup, measured.jobs, run.batch_means)
    result = _simulate(point, task.policy, task.seed, engine, batches, progress)
    row = identity(task.point, task.policy)
    row.update(replication=task.replication, seed=task.seed)
    row.update(result.metrics())
    if batches is not None:
        from . import batchmeans

        half, correlation = batchmeans.interval(batches)
        row.update(mean_response_batch_ci95=half, mean_response_batch_lag1=correlation)
        notes.append(batchmeans.note(correlation, len(batches.means())))
    row["wall_seconds"] = time.perf_counter() - started
    row["engine"] = engine
    row.update(result.arrays())
    row.update(arrays)
    if any(notes):
        row["notes"] = [line for line in notes if line]
    return row


def _simulate(point: Point, policy: ResolvedPolicy, seed: int, engine: str, series: Series | None,
              progress: Any) -> RunResult:
    """One run of ``policy`` at ``point`` on ``engine`` (`emulator.engines`): its measurements.

    ``series``, if given, is filled with the measured responses in arrival order.
    """
    from ..engines import ENGINES

    return ENGINES[engine].record(point, policy, seed, progress, series)


def choose_engine(point: Point, policy: ResolvedPolicy) -> str:
    """The engine that runs ``policy`` at ``point``: ``simpy`` or ``compiled``.

    ``compiled`` runs where `emulator.compiled.supports` the scenario (same results,
    seed for seed); ``auto`` also requires the SimPy engine to need about a second or
    more (`compiled.simpy_seconds`, a cost model of jobs and the policy's work per job),
    so that a short run does not wait for the kernel to load. The choice depends on
    the task alone (and on numba being usable on the machine), never on the worker.
    """
    wanted = point.scenario.run.engine
    if wanted == "simpy":
        return "simpy"
    from ..engines import ENGINES

    engine = ENGINES["compiled"]
    if engine.supports(point, policy) is not None:
        return "simpy"
    from .. import compiled

    if wanted == "auto" and compiled.simpy_seconds(point, policy) < compiled.AUTO_SECONDS:
        return "simpy"
    return "compiled" if engine.available() else "simpy"


def _guarded(task: Task, progress: Any = None) -> tuple[dict[str, Any] | None, str | None]:
    """`run_task`, with an exception turned into its one-line description."""
    try:
        return run_task(task, progress), None
    except (Exception, SystemExit) as exc:  # a failing task must not stop the others (nor a policy's exit())
        return None, describe(exc)


def default_workers() -> int:
    """All cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


Outcome = tuple[Task, dict[str, Any] | None, str | None]


def execute(todo: list[Task], workers: int | None = None, executor: Executor | None = None,
            progress: Any = None) -> Generator[Outcome, None, None]:
    """Run tasks; yield ``(task, row, error)`` as each finishes (row None if it raised).

    With ``executor`` (e.g. a Dask client's ``get_executor()``) the tasks go there;
    else to ``workers`` local processes (default: all cores), or run here when
    ``workers`` is 1 (then ``progress`` gets per-job updates of each task). Each
    row depends only on its task, so the results do not depend on who runs them.
    """
    workers = default_workers() if workers is None else workers
    if executor is None and (workers <= 1 or len(todo) <= 1):
        for task in todo:
            yield (task, *_guarded(task, progress))
        return
    own = executor is None
    pool = executor or ProcessPoolExecutor(max_workers=min(workers, len(todo)), initializer=_worker_started)
    lost = 0
    try:
        with _ctrl_c_held(own):
            futures = {pool.submit(_guarded, task): task for task in todo}
        for future in as_completed(futures):
            try:
                row, error = future.result()
            except BrokenProcessPool:  # a worker died (e.g. the out-of-memory killer): every unfinished task fails
                lost += 1
                continue
            yield futures[future], row, error
    except BaseException:  # Ctrl-C, or the caller stopped: do not wait for the running tasks
        if own:
            _stop(pool)
        raise
    finally:
        if own:
            pool.shutdown(wait=True, cancel_futures=True)
    if lost:
        raise RunError(f"a worker process died (killed by a signal, e.g. out of memory): {lost} of "
                       f"{len(todo)} task(s) did not finish")


@contextmanager
def _ctrl_c_held(held: bool) -> Iterator[None]:
    """Hold back Ctrl-C (SIGINT) in this thread while the local pool starts its workers.

    Forked workers inherit the signal mask: held, a Ctrl-C cannot reach one before its
    initializer ignores it (it would print a traceback of its own), and the parent gets
    it as soon as the workers are started, not never.
    """
    hold = held and hasattr(signal, "pthread_sigmask") and threading.current_thread() is threading.main_thread()
    if hold:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        if hold:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _worker_started() -> None:
    """Set up a local worker process: Ctrl-C is the parent's to handle, and the parent's death ends it.

    Ctrl-C reaches every process in the terminal's process group; the workers ignore
    it, so that only the parent reports (one line) and stops them. A watchdog thread
    ends the worker if its parent is gone (its parent process id changes), so that
    killing only the parent leaves no orphans computing on. (The parent as the worker
    sees it: the process that started it, which is a fork server under some start methods.)
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):  # held back while the parent forked it (`_ctrl_c_held`): ignored now
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="lbemu-parent-watchdog", daemon=True).start()


def _stop(pool: Executor) -> None:
    """End a local pool at once: queued tasks are cancelled and running ones ended (their results are lost)."""
    processes = list(getattr(pool, "_processes", None) or {})  # no public handle before Python 3.14
    pool.shutdown(wait=False, cancel_futures=True)
    for pid in processes:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:  # already gone
            pass
