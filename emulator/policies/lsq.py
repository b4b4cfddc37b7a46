"""Local shortest queue (LSQ): each dispatcher its own estimates, refreshed by d queries per job."""

from __future__ import annotations

from functools import partial
from typing import Literal

from pydantic import Field

from ..measure.messages import NO_REPLY
from .base import IntOrExpr, Policy, PolicyConfig, queue_length
from .jsq import LengthIndex
from .views import DispatcherView, JobView, ModelView, PointView


class LSQConfig(PolicyConfig):
    name: Literal["lsq"] = "lsq"
    d: IntOrExpr = Field(2, description="servers queried per job to refresh the estimates: an integer or an "
                                        "expression in N")


class LSQPolicy(Policy):
    """Join the smallest local estimate and add 1 to it; refresh d estimates per job: 2d messages.

    Dispatcher side: each dispatcher keeps its own estimate of every server's
    length (all 0 at the start), in a `LengthIndex`. On each job it queries d
    distinct servers drawn uniformly (``query`` + ``reply``) and sends the job
    at once to one of the smallest estimates (ties uniformly at random), adding
    1 to that estimate. A reply, when it arrives, replaces the estimate of its
    server. With zero latency the replies arrive before the decision, so with
    one dispatcher and d = N every estimate is the true length and LSQ is JSQ;
    with latency the job does not wait for them (the paper's dispatchers never
    wait: the queries refresh the state that later jobs use). With faults
    (docs/faults.md) a reply that is lost, or a query to a down server, leaves
    the estimate as it was: a missing reply is no answer, not a length.

    Server side: answers queries.

    References
    ----------
    .. [1] S. Vargaftik, I. Keslassy, A. Orda, "LSQ: Load Balancing in
       Large-Scale Heterogeneous Systems With Multiple Dispatchers", IEEE/ACM
       Transactions on Networking 28(3) (2020).
    """

    name = "lsq"
    Config = LSQConfig
    messages = "2d per job (d query + d reply)"
    compiled = "emulator.compiled.policies.lsq"

    @classmethod
    def label(cls, config: LSQConfig) -> str:
        return f"LSQ({config.d})"

    @classmethod
    def samples_per_job(cls, config: LSQConfig, point: PointView) -> float:
        return float(config.d)

    def __init__(self, model: ModelView, config: LSQConfig) -> None:
        super().__init__(model, config)
        self.d = int(config.d)
        n = len(model.servers)
        for dispatcher in model.dispatchers:
            dispatcher.state = LengthIndex(n)

    def dispatch(self, dispatcher: DispatcherView, job: JobView) -> None:
        servers = dispatcher.servers
        estimates: LengthIndex = dispatcher.state
        n = len(servers)
        # d = N queries every server: no draw is needed, and none is made.
        ids = range(n) if self.d == n else self.uniforms.sample(n, self.d)
        channel = dispatcher.channel
        if channel.instant:  # the replies are the current lengths, in at once: count, then apply
            channel.count_round_trips(self.d)
            for sid in ids:
                estimates.set(sid, servers[sid].length)
        else:
            for sid in ids:
                channel.ask((servers[sid],), queue_length, partial(_replied, estimates, sid))
        sid = estimates.pick(self.uniforms.random())
        estimates.set(sid, estimates.length[sid] + 1)
        dispatcher.send(job, servers[sid])


def _replied(estimates: LengthIndex, sid: int, lengths: list[int]) -> None:
    # A reply lost or unanswered (faults) reads NO_REPLY: no news, so the estimate stays.
    if lengths[0] != NO_REPLY:
        estimates.set(sid, lengths[0])
