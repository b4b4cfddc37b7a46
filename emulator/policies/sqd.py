"""Power-of-d: SQ(d), JSQ(d), and JSQ(d(N)) when d is an expression in N."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import floor
from types import MethodType
from typing import Any, Literal

from pydantic import Field

from ..measure.messages import Kind
from .base import IntOrExpr, Policy, PolicyConfig, overloaded_sampling, queue_length, shortest
from .views import DispatcherView, JobView, ModelView, PointView

# The counters' indices as plain ints: Python 3.11 specialises a list's item read and write only for
# an index of type exactly int (an IntEnum member takes the generic path).
QUERY_AT, REPLY_AT = int(Kind.QUERY), int(Kind.REPLY)


class SQDConfig(PolicyConfig):
    name: Literal["sqd"] = "sqd"
    d: IntOrExpr = Field(2, description="servers sampled per job: an integer or an expression in N")
    replace: bool = Field(False, description="sample with replacement (Mitzenmacher's wording)")


class SQDPolicy(Policy):
    """Sample d servers, query them, join the shortest (ties at random): 2d messages per job.

    The d servers are distinct by default; ``replace: true`` samples with
    replacement. When ``d`` is an expression in N (e.g. ``ceil(sqrt(N) * log(N))``)
    this is JSQ(d(N)).

    References
    ----------
    .. [1] M. Mitzenmacher, "On the Analysis of Randomized Load Balancing
       Schemes", Theory of Computing Systems 32 (1999).
    .. [2] N. D. Vvedenskaya, R. L. Dobrushin, F. I. Karpelevich, "Queueing
       system with selection of the shortest of two queues: an asymptotic
       approach", Problems of Information Transmission 32(1) (1996).
    .. [3] D. Mukherjee, S. C. Borst, J. S. H. van Leeuwaarden, P. A. Whiting,
       "Asymptotic Optimality of Power-of-d Load Balancing in Large-Scale
       Systems", Mathematics of Operations Research 43(4) (2018); arXiv:1612.00722.
    """

    name = "sqd"
    Config = SQDConfig
    messages = "2d per job (d query + d reply)"
    compiled = "emulator.compiled.policies.sqd"

    @classmethod
    def label(cls, config: SQDConfig) -> str:
        return f"SQ({config.d})"

    @classmethod
    def check_speeds(cls, config: SQDConfig, speeds: Sequence[float], work: float) -> str | None:
        return overloaded_sampling(speeds, work, int(config.d), config.replace)

    @classmethod
    def samples_per_job(cls, config: SQDConfig, point: PointView) -> float:
        return float(config.d)

    def __init__(self, model: ModelView, config: SQDConfig) -> None:
        super().__init__(model, config)
        self.d = int(config.d)
        self.replace = config.replace
        # SQ(2) with zero latency, the common case: decided without a test of the parameters per job.
        self.instant_pair = self.d == 2 and not self.replace and model.channel.instant
        self.draws = self.uniforms.draws  # read with `next`: `Uniforms.random`'s draws, a specialised call
        # N and N - 1 as floats: a draw times a float is a product Python 3.11 specialises (times an
        # int it is not), and the same product, N being exact.
        self.scale, self.scale_other = float(len(model.servers)), float(len(model.servers) - 1)

    def receiver(self, dispatcher: DispatcherView) -> Callable[[JobView], None]:
        """SQ(2) with zero latency: `_receive_pair` bound to ``dispatcher``; otherwise `Policy.receiver`'s.

        A bound method is called from the arrival source's bytecode in the source's own eval
        loop; a `functools.partial` is called from C, which starts one of its own (about 20 ns
        more per job). Not for a subclass that decides otherwise (its own `dispatch`).
        """
        if self.instant_pair and type(self).dispatch is SQDPolicy.dispatch:
            return MethodType(_receive_pair, dispatcher)
        return super().receiver(dispatcher)

    def dispatch(self, dispatcher: DispatcherView, job: JobView) -> None:
        if self.instant_pair:  # (``dispatcher`` follows this policy: it is its `policy`)
            _receive_pair(dispatcher, job)
            return
        servers = dispatcher.servers
        uniforms = self.uniforms
        channel = dispatcher.channel
        # (`map`, not a comprehension: that would make ``servers`` a cell, on every call.)
        sampled = list(map(servers.__getitem__, uniforms.sample(len(servers), self.d, self.replace)))
        if channel.instant:
            # Zero latency: the replies are the current lengths, so the round trip that
            # `Channel.ask` would make reduces to counting it; no closure per job.
            channel.count_round_trips(self.d)
            dispatcher.send(job, sampled[shortest(list(map(queue_length, sampled)), uniforms.random)])
            return
        self._ask(dispatcher, job, sampled)

    def _ask(self, dispatcher: DispatcherView, job: JobView, sampled: list[Any]) -> None:
        """With latency: ask the sampled servers, send when all replies are in.

        A method of its own: the closure's variables would be cells in `dispatch`, made on
        every call, on the zero-latency path too.
        """
        random = self.uniforms.random
        dispatcher.channel.ask(sampled, queue_length,
                               lambda lengths: dispatcher.send(job, sampled[shortest(lengths, random)]))


def _receive_pair(dispatcher: DispatcherView, job: JobView) -> None:
    """SQ(2) with zero latency: the decision for ``job``, which reached ``dispatcher`` (one that follows the policy).

    Written out: the same draws in the same order as `Uniforms.sample` and `shortest`, without
    their lists and calls. `floor` rather than `int`: the same index for a draw in [0, n), and a
    call that Python 3.11 specialises (`int(x)` costs twice as much).
    """
    policy = dispatcher.policy
    servers = dispatcher.servers
    draws = policy.draws
    a = floor(next(draws) * policy.scale)
    b = floor(next(draws) * policy.scale_other)
    first, second = servers[a], servers[b + 1 if b >= a else b]
    # `Channel.count_round_trips(2)`, written out: the same two increments of the channel's counter
    # list, read at each job (a `Trace` replaces it), without a call per job.
    counts = dispatcher.channel.counts
    counts[QUERY_AT] += 2
    counts[REPLY_AT] += 2
    one, two = first.length, second.length
    # (u < 0.5 is `shortest`'s u * 2 < 1.0: doubling a float is exact.)
    dispatcher.send(job, second if two < one or (two == one and next(draws) < 0.5) else first)

