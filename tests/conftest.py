"""Shared helpers: small scenarios, models built from them, and a tracer that records what happens.

The tracer wraps a built model (before it runs) and records, without changing
any decision:

- ``messages``: every increment of a control-message counter, as ``(time, kind, n)``;
- ``received``: every job reaching a dispatcher, ``(time, dispatcher id, job)``;
- ``sent``: every job a dispatcher sends, ``(time, dispatcher id, job id, server id, lengths)``
  where ``lengths`` are the true lengths of all servers at that moment;
- ``accepted``: every job reaching a server, ``(time, server id, job id)`` (blocked ones too);
- ``left``: every departure, ``(time, server id, job)``; ``blocked``: ``(time, job)``;
- ``departures``: ``(time, server id, length left behind)`` for every departure;
- ``asks``: every query round, ``(time, [target ids], replies)`` when the replies are in.

All of it goes through the model's public seams: the recorder's counter list,
``Dispatcher.receive``/``send``, ``Server.accept``, ``Recorder.leave``/``block``
and ``Channel.ask``.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import simpy

import emulator
from emulator.config import Point
from emulator.messages import KINDS
from emulator.model import Model, build_model


def scenario_dict(policy: dict[str, Any] | list[dict[str, Any]], *, servers: int = 2, jobs: int = 10,
                  warmup: int = 0, load: float | str = 0.5, arrivals: dict[str, Any] | None = None,
                  service: dict[str, Any] | None = None, latency: float | dict[str, Any] | None = None,
                  dispatchers: int = 1, discipline: str = "fifo", capacity: int | None = None,
                  speeds: list[float] | None = None, allow_unstable: bool = False, seed: int = 1,
                  replications: int = 1, sweep: dict[str, list[Any]] | None = None) -> dict[str, Any]:
    """A scenario as plain data; deterministic arrivals and sizes unless told otherwise."""
    policies = policy if isinstance(policy, list) else [policy]
    data: dict[str, Any] = {
        "name": "test", "seed": seed, "replications": replications,
        "run": {"jobs": jobs, "warmup_jobs": warmup},
        "system": {"servers": servers, "dispatchers": dispatchers, "discipline": discipline},
        "workload": {"load": load, "arrivals": arrivals or {"kind": "deterministic"},
                     "service": service or {"kind": "deterministic", "mean": 1}},
        "policies": copy.deepcopy(policies),
        "allow_unstable": allow_unstable,
    }
    if capacity is not None:
        data["system"]["capacity"] = capacity
    if speeds is not None:
        data["system"]["speeds"] = speeds
    if latency is not None:
        law = latency if isinstance(latency, dict) else {"kind": "deterministic", "mean": latency}
        data["network"] = {"latency": law}
    if sweep:
        data["sweep"] = sweep
    return data


def make_point(policy: dict[str, Any] | list[dict[str, Any]], **options: Any) -> Point:
    return emulator.Scenario.from_dict(scenario_dict(policy, **options)).points()[0]


def write_trace(folder: Path, rows: list[tuple[float, float]], name: str = "trace.csv") -> str:
    """A trace file of (arrival time, size) rows; returns its path."""
    path = folder / name
    path.write_text("time,size\n" + "".join(f"{t!r},{s!r}\n" for t, s in rows))
    return str(path)


def trace_arrivals(folder: Path, rows: list[tuple[float, float]], jobs: int | None = None) -> dict[str, Any]:
    """Options for `make_point`/`traced` that replay ``rows`` exactly.

    The first ``jobs`` rows (default all) are measured. With fewer, the window
    closes when row ``jobs`` arrives; with all, when the trace runs out (at the
    last arrival).
    """
    return {"arrivals": {"kind": "trace", "path": write_trace(folder, rows)},
            "jobs": len(rows) if jobs is None else jobs, "warmup": 0}


class _LoggedCounts(list):
    """The recorder's counter list, logging every increment with the time."""

    def __init__(self, values: list[int], env: Any, log: list[tuple[float, str, int]]) -> None:
        super().__init__(values)
        self.env = env
        self.log = log

    def __setitem__(self, index: Any, value: Any) -> None:
        old = self[index]
        super().__setitem__(index, value)
        self.log.append((self.env.now, KINDS[index], value - old))


class Trace:
    """What happened in one model; see the module docstring."""

    def __init__(self, model: Model) -> None:
        self.model = model
        env = model.env
        self.messages: list[tuple[float, str, int]] = []
        self.received: list[tuple[float, int, Any]] = []
        self.sent: list[tuple[float, int, int, int, tuple[int, ...]]] = []
        self.accepted: list[tuple[float, int, int]] = []
        self.left: list[tuple[float, int, Any]] = []
        self.blocked: list[tuple[float, Any]] = []
        self.departures: list[tuple[float, int, int]] = []
        self.asks: list[tuple[float, list[int], list[int]]] = []
        self.metrics: dict[str, float] | None = None

        counts = _LoggedCounts(model.recorder.counts, env, self.messages)
        # Messages sent while the model was built (a policy's start, at t=0).
        self.messages += [(env.now, KINDS[i], n) for i, n in enumerate(counts) if n]
        model.recorder.counts = counts
        model.channel.counts = counts

        for dispatcher in model.dispatchers:
            self._wrap_dispatcher(dispatcher)
        for server in model.servers:
            self._wrap_server(server)

        recorder = model.recorder
        leave, block = recorder.leave, recorder.block

        def on_leave(job: Any, now: float) -> None:
            self.left.append((now, job.server, job))
            self.departures.append((now, job.server, model.servers[job.server].length))
            leave(job, now)

        def on_block(job: Any) -> None:
            self.blocked.append((env.now, job))
            block(job)

        recorder.leave = on_leave
        recorder.block = on_block

        channel = model.channel
        ask = channel.ask

        def traced_ask(targets: Any, answer: Any, then: Any) -> None:
            ids = [getattr(target, "id", -1) for target in targets]

            def record(replies: list[int]) -> None:
                self.asks.append((env.now, ids, list(replies)))
                then(replies)

            ask(targets, answer, record)

        channel.ask = traced_ask

    def _wrap_dispatcher(self, dispatcher: Any) -> None:
        receive, send, env = dispatcher.receive, dispatcher.send, self.model.env

        def on_receive(job: Any) -> None:
            # Slotted time, one decision per slot: the slot's other arrivals here follow this one.
            for each in (job, *getattr(dispatcher, "followers", ())):
                self.received.append((env.now, dispatcher.id, each))
            receive(job)

        def on_send(job: Any, server: Any) -> None:
            lengths = tuple(s.length for s in self.model.servers)
            for each in (job, *getattr(dispatcher, "followers", ())):
                self.sent.append((env.now, dispatcher.id, each.id, server.id, lengths))
            send(job, server)

        dispatcher.receive = on_receive
        dispatcher.send = on_send

    def _wrap_server(self, server: Any) -> None:
        env = self.model.env
        accept = server.accept

        def on_accept(job: Any) -> None:
            self.accepted.append((env.now, server.id, job.id))
            accept(job)

        server.accept = on_accept
        if hasattr(server, "accept_all"):  # slotted time: a slot's batch arrives together
            accept_all = server.accept_all

            def on_accept_all(jobs: list[Any]) -> None:
                self.accepted += [(env.now, server.id, job.id) for job in jobs]
                accept_all(jobs)

            server.accept_all = on_accept_all

    # -- running and reading -----------------------------------------------------------
    def run(self, limit: float = 10_000.0) -> dict[str, float]:
        """Run until every measured job has left, as `Model.run` does, but fail at simulated time ``limit``.

        The limit only turns a broken model (a job that never leaves) into a failure
        rather than a hang; the extra timeout does not reorder any other event.
        """
        env, recorder = self.model.env, self.model.recorder
        env.run(until=simpy.AnyOf(env, [recorder.done, env.timeout(limit)]))
        assert recorder.done.triggered, f"measured jobs still unfinished at t={env.now:g}"
        self.metrics = recorder.metrics()
        return self.metrics

    @property
    def jobs(self) -> list[Any]:
        """Every job that reached a dispatcher, in arrival order (by id)."""
        return sorted((job for _, _, job in self.received), key=lambda job: job.id)

    def job(self, job_id: int) -> Any:
        return next(job for _, _, job in self.received if job.id == job_id)

    def completion(self) -> dict[int, float]:
        return {job.id: now for now, _, job in self.left}

    def servers_of(self) -> list[int]:
        """The server each job was sent to, by job id (-1 if not sent yet)."""
        where = {job_id: sid for _, _, job_id, sid, _ in self.sent}
        return [where.get(job.id, -1) for job in self.jobs]

    def count(self, kind: str, start: float = float("-inf"), end: float = float("inf")) -> int:
        """Messages of ``kind`` counted at times in [start, end]."""
        return sum(n for t, k, n in self.messages if k == kind and start <= t <= end)

    def message_times(self, kind: str) -> list[float]:
        times = []
        for t, k, n in self.messages:
            if k == kind:
                times += [t] * n
        return times


def traced(policy: dict[str, Any] | list[dict[str, Any]], seed: int = 1, **options: Any) -> Trace:
    """Build a model of the first policy of a small scenario and attach a `Trace` (not run yet)."""
    point = make_point(policy, seed=seed, **options)
    return Trace(build_model(point, point.policies[0], seed))


@pytest.fixture
def trace_rows(tmp_path: Path):  # type: ignore[no-untyped-def]
    """``trace_rows(rows, jobs=None)``: options that replay (time, size) rows as the arrival stream."""
    return lambda rows, jobs=None: trace_arrivals(tmp_path, rows, jobs)
