"""Least outstanding requests (LOR): join the server with the fewest of this dispatcher's jobs unanswered."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..measure.messages import Kind
from .base import IntOrExpr, Policy, PolicyConfig, shortest
from .jsq import LengthIndex
from .views import DispatcherView, JobView, ModelView, PointView, ServerView

COMPLETION = Kind.COMPLETION


class LORConfig(PolicyConfig):
    name: Literal["lor"] = "lor"
    d: IntOrExpr | None = Field(
        None, description="servers compared per job (distinct, drawn uniformly; no message): an integer or an "
                          "expression in N; default all N")


class LORPolicy(Policy):
    """Join the fewest outstanding jobs of this dispatcher's own; one completion message per job.

    Dispatcher side: each dispatcher counts, per server, the jobs it has sent
    there and not yet heard back about (its outstanding requests, all 0 at the
    start), kept in a `LengthIndex`. A job joins the smallest count (ties
    uniformly at random), or with ``d`` the smallest of d distinct servers drawn
    uniformly (the power-of-d rule of proxies); the count goes up by one when
    the job is sent. Comparing its own counts costs no message.

    Server side: when a job leaves, its server sends one ``completion`` message to
    the dispatcher that sent it, which takes one off that server's count when it
    arrives. A job that finds its server full (``system.capacity``) is answered
    at once with a ``completion`` too: the dispatcher learns of the block (as a
    proxy learns of a rejected request), so a blocked job is outstanding only
    while that message travels. A job lost with its server (faults) is never
    answered: it stays outstanding.

    With one dispatcher and zero latency the counts are the queue lengths, so
    LOR with d = N makes JSQ's decisions with JSQ's draws (the same `LengthIndex`,
    moved the same way; with a capacity a blocked job moves its count up and
    down, which reorders the index). With several dispatchers each sees only its
    own jobs, and with latency its counts lag the departures.

    Messages: exactly one ``completion`` per job that reaches a server.

    References
    ----------
    .. [1] Envoy proxy, "Load balancers: weighted least request"
       (power-of-two choices over active requests); NGINX, ``least_conn``.
    .. [2] M. Mitzenmacher, "The power of two choices in randomized load
       balancing", IEEE Transactions on Parallel and Distributed Systems 12(10) (2001).
    """

    name = "lor"
    Config = LORConfig
    messages = "1 completion per job (to its dispatcher, when it leaves or is blocked)"
    compiled = "emulator.compiled.policies.lor"

    @classmethod
    def label(cls, config: LORConfig) -> str:
        return "LOR" if config.d is None else f"LOR({config.d})"

    @classmethod
    def samples_per_job(cls, config: LORConfig, point: PointView) -> float:
        """None with d = N (the index's pick); else the d counts it compares."""
        return 0.0 if config.d is None else float(config.d)

    def __init__(self, model: ModelView, config: LORConfig) -> None:
        super().__init__(model, config)
        self.d = None if config.d is None else int(config.d)
        n = len(model.servers)
        for dispatcher in model.dispatchers:
            dispatcher.state = LengthIndex(n)
        for server in model.servers:
            server.on_arrive = self._arrived
            server.on_depart = self._departed

    # -- dispatcher side -------------------------------------------------------------
    def dispatch(self, dispatcher: DispatcherView, job: JobView) -> None:
        servers = dispatcher.servers
        outstanding: LengthIndex = dispatcher.state
        if self.d is None:
            sid = outstanding.pick(self.uniforms.random())
        else:
            counts = outstanding.length
            ids = self.uniforms.sample(len(servers), self.d)
            sid = ids[shortest([counts[i] for i in ids], self.uniforms.random)]
        # In slotted time the slot's other arrivals go with this one: each is outstanding.
        sent = 1 + len(getattr(dispatcher, "followers", ()))
        outstanding.set(sid, outstanding.length[sid] + sent)
        dispatcher.send(job, servers[sid])

    # -- server side -----------------------------------------------------------------
    def _arrived(self, server: ServerView, job: Any) -> None:
        if job.blocked:
            self._answer(server, job)

    def _departed(self, server: Any) -> None:
        job = server.leaving
        if job is not None:  # (a failed server back up runs the hook with no departure)
            server.leaving = None
            self._answer(server, job)

    def _answer(self, server: ServerView, job: Any) -> None:
        self.channel.send(COMPLETION, _completed, self.dispatchers[job.dispatcher], server.id)


def _completed(dispatcher: DispatcherView, sid: int) -> None:
    """A completion arrives: one job fewer outstanding at server ``sid``."""
    outstanding: LengthIndex = dispatcher.state
    outstanding.set(sid, outstanding.length[sid] - 1)
