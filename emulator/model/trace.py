"""A tracer for a built SimPy model: it records what happens, without changing any decision.

It wraps a model (before it runs) and records:

- ``messages``: every increment of a control-message counter, as ``(time, kind, n)``;
- ``received``: every job reaching a dispatcher, ``(time, dispatcher id, job)``;
- ``sent``: every job a dispatcher sends, ``(time, dispatcher id, job id, server id, lengths)``
  where ``lengths`` are the true lengths of all servers at that moment;
- ``accepted``: every job reaching a server, ``(time, server id, job id)`` (blocked ones too);
- ``left``: every departure, ``(time, server id, job)``; ``blocked``: ``(time, job)``;
- ``lost``: every job lost at a failing server (``on_down: lose``), ``(time, job)``;
- ``withdrawn``: every copy of a job (redundancy) that left its server without finishing the job,
  ``(time, copy)``; ``dropped``: every copy dropped as it arrived, its cancel having come first;
- ``departures``: ``(time, server id, length left behind)`` for every departure;
- ``asks``: every query round, ``(time, [target ids], replies)`` when the replies are in.

All of it goes through the model's public seams: the recorder's counter list,
``Dispatcher.receive``/``send``, ``Server.accept`` (``accept_all`` in slotted time),
``Recorder.leave``/``block``/``lose``/``withdraw``/``drop`` and ``Channel.ask``. `emulator.check_policy` and the
tests read a policy's behaviour from it.
"""

from __future__ import annotations

from typing import Any

import simpy

from ..measure.messages import KINDS
from . import guard
from .build import Model


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
        self.lost: list[tuple[float, Any]] = []
        self.withdrawn: list[tuple[float, Any]] = []
        self.dropped: list[tuple[float, Any]] = []
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
        leave, block, lose = recorder.leave, recorder.block, recorder.lose

        def on_leave(job: Any, now: float) -> None:
            self.left.append((now, job.server, job))
            self.departures.append((now, job.server, model.servers[job.server].length))
            leave(job, now)

        def on_block(job: Any) -> None:
            self.blocked.append((env.now, job))
            block(job)

        def on_lose(job: Any, present: bool) -> None:
            self.lost.append((env.now, job))
            lose(job, present)

        recorder.leave = on_leave
        recorder.block = on_block  # type: ignore[method-assign]
        recorder.lose = on_lose  # type: ignore[method-assign]
        withdraw, drop = recorder.withdraw, recorder.drop

        def on_withdraw(job: Any, now: float, work: float) -> None:
            self.withdrawn.append((now, job))
            withdraw(job, now, work)

        def on_drop(job: Any) -> None:
            self.dropped.append((env.now, job))
            drop(job)

        recorder.withdraw = on_withdraw  # type: ignore[method-assign]
        recorder.drop = on_drop  # type: ignore[method-assign]

        channel = model.channel
        ask = channel.ask

        def traced_ask(targets: Any, answer: Any, then: Any, asker: Any = None) -> None:
            ids = [getattr(target, "id", -1) for target in targets]

            def record(replies: list[int]) -> None:
                self.asks.append((env.now, ids, list(replies)))
                then(replies)

            ask(targets, answer, record, asker)

        channel.ask = traced_ask  # type: ignore[method-assign]

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
        rather than a hang; the extra timeout does not reorder any other event. The run
        loop's guard (`emulator.model.guard`) watches it as it watches `Model.run`.
        """
        env, recorder = self.model.env, self.model.recorder
        guard.run(env, simpy.AnyOf(env, [recorder.done, env.timeout(limit)]), self.model.watch,
                  aside=self.model.aside)
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
