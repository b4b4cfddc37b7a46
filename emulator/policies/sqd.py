"""Power-of-d: SQ(d), JSQ(d), and JSQ(d(N)) when d is an expression in N."""

from __future__ import annotations

from collections.abc import Sequence
from math import floor
from typing import Any, Literal

from pydantic import Field

from .base import IntOrExpr, Policy, PolicyConfig, overloaded_sampling, queue_length, shortest
from .views import DispatcherView, JobView, ModelView, PointView


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

    def dispatch(self, dispatcher: DispatcherView, job: JobView) -> None:
        servers = dispatcher.servers
        if self.instant_pair:
            # Written out: the same draws in the same order as `Uniforms.sample` and `shortest`,
            # without their lists and calls. `floor` rather than `int`: the same index for a
            # draw in [0, n), and a call that Python 3.11 specialises (`int(x)` costs twice as much).
            draws = self.draws
            a = floor(next(draws) * self.scale)
            b = floor(next(draws) * self.scale_other)
            first, second = servers[a], servers[b + 1 if b >= a else b]
            dispatcher.channel.count_round_trips(2)
            one, two = first.length, second.length
            # (u < 0.5 is `shortest`'s u * 2 < 1.0: doubling a float is exact.)
            dispatcher.send(job, second if two < one or (two == one and next(draws) < 0.5) else first)
            return
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

