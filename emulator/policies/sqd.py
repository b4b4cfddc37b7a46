"""Power-of-d: SQ(d), JSQ(d), and JSQ(d(N)) when d is an expression in N."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from .base import queue_length, IntOrExpr, Policy, PolicyConfig, shortest


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
    expressions: ClassVar[tuple[str, ...]] = ("d",)

    @classmethod
    def label(cls, params: dict) -> str:
        return f"SQ({params['d']})"

    @classmethod
    def check(cls, params: dict, servers: int, dispatchers: int) -> dict[str, str]:
        return {} if params["replace"] else super().check(params, servers, dispatchers)

    def __init__(self, model, params) -> None:  # type: ignore[no-untyped-def]
        super().__init__(model, params)
        self.d = params["d"]
        self.replace = params["replace"]

    def dispatch(self, dispatcher, job) -> None:  # type: ignore[no-untyped-def]
        servers = dispatcher.servers
        uniforms = self.model.uniforms
        sampled = [servers[i] for i in uniforms.sample(len(servers), self.d, self.replace)]
        dispatcher.channel.ask(
            sampled, queue_length,
            lambda lengths: dispatcher.send(job, sampled[shortest(lengths, uniforms.random)]))

