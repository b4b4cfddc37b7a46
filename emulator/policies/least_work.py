"""Least work: LL(d), the least loaded of d sampled servers by unfinished work, and LWL when d = N."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field

from .base import IntOrExpr, Policy, PolicyConfig, overloaded_sampling, shortest
from .views import DispatcherView, JobView, ModelView, PointView

DISCIPLINES = ("fifo", "pool")
"""The server disciplines whose unfinished work the servers track (``Server.work``)."""


class LeastWorkConfig(PolicyConfig):
    name: Literal["least_work"] = "least_work"
    d: IntOrExpr = Field(2, description="servers queried per job: an integer or an expression in N (N: least "
                                        "work left)")


class LeastWorkPolicy(Policy):
    """Query d servers for their unfinished work, join the least (ties at random): 2d messages per job.

    The d servers are distinct, drawn uniformly as SQ(d) draws them; with
    ``d: N`` every server is queried, in id order and without a draw, and the
    policy is least-work-left (LWL). A server answers with its unfinished work
    in time at its own speed (the remaining service times of the jobs it holds:
    for a FIFO server the time until its last job would leave, for a pool the
    sum of its tasks' remaining times), so with unequal speeds a job joins the
    server it would wait least at (FIFO). With latency a server answers with its
    work when the query reaches it, and the job goes when the last reply is in.
    A lost reply (faults) reads as more work than any server has.

    With FIFO servers and d = N the policy is the central M/G/N FCFS queue: a
    job starts service at the moment the first of N servers would be free.

    References
    ----------
    .. [1] T. Hellemans, B. Van Houdt, "On the Power-of-d-choices with Least
       Loaded Server Selection", Proceedings of the ACM on Measurement and
       Analysis of Computing Systems 2(2), Article 27 (SIGMETRICS 2018).
    """

    name = "least_work"
    Config = LeastWorkConfig
    messages = "2d per job (d query + d reply, each reply the server's unfinished work)"
    compiled = "emulator.compiled.policies.least_work"

    @classmethod
    def label(cls, config: LeastWorkConfig) -> str:
        return f"LL({config.d})"

    @classmethod
    def check(cls, config: LeastWorkConfig, point: PointView) -> dict[str, str]:
        problems = super().check(config, point)
        if problems:
            return problems
        system = point.scenario.system
        if system.discipline not in DISCIPLINES:
            return {"name": f"expected system.discipline fifo or pool (the servers whose unfinished work "
                            f"least_work reads), got {system.discipline!r}"}
        if system.time != "continuous":
            return {"name": f"expected system.time: continuous (a slotted server's unfinished work is not "
                            f"defined), got {system.time!r}"}
        if system.failures is not None:
            return {"name": "expected no system.failures (a failing server's unfinished work is not tracked), "
                            "got failures"}
        return {}

    @classmethod
    def check_speeds(cls, config: LeastWorkConfig, speeds: Sequence[float], work: float) -> str | None:
        return overloaded_sampling(speeds, work, int(config.d), False)

    @classmethod
    def samples_per_job(cls, config: LeastWorkConfig, point: PointView) -> float:
        return float(config.d)

    def __init__(self, model: ModelView, config: LeastWorkConfig) -> None:
        super().__init__(model, config)
        self.d = int(config.d)

    def dispatch(self, dispatcher: DispatcherView, job: JobView) -> None:
        servers = dispatcher.servers
        n = len(servers)
        random = self.uniforms.random
        # d = N queries every server: no draw is needed, and none is made.
        # (`map`, not a comprehension: that would make ``servers`` a cell, on every call.)
        sampled = servers if self.d == n else list(map(servers.__getitem__, self.uniforms.sample(n, self.d)))
        channel = dispatcher.channel
        if channel.instant:  # the replies are the current work: count the round trips, then compare
            channel.count_round_trips(self.d)
            dispatcher.send(job, sampled[shortest([server.work() for server in sampled], random)])
            return
        self._ask(dispatcher, job, sampled)

    def _ask(self, dispatcher: DispatcherView, job: JobView, sampled: Sequence[Any]) -> None:
        """With latency or faults: ask the sampled servers, send when all replies are in.

        A method of its own: the closure's variables would be cells in `dispatch`, made on
        every call, on the zero-latency path too.
        """
        random = self.uniforms.random
        dispatcher.channel.ask(sampled, unfinished_work,  # type: ignore[arg-type]  # (answers are lengths elsewhere)
                               lambda works: dispatcher.send(job, sampled[shortest(works, random)]))


def unfinished_work(server: Any) -> float:
    """A server's answer to a query: its unfinished work, in time at its speed (`Server.work`)."""
    return float(server.work())
