"""Power-of-d with memory: d fresh samples plus the m least loaded servers remembered from the last decision."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..measure.messages import NO_REPLY
from .base import IntOrExpr, Policy, PolicyConfig, queue_length, shortest
from .views import DispatcherView, JobView, ModelView, PointView


class SQDMemoryConfig(PolicyConfig):
    name: Literal["sqd_memory"] = "sqd_memory"
    d: IntOrExpr = Field(2, description="servers sampled per job: an integer or an expression in N")
    m: int = Field(1, ge=0, description="servers remembered from one decision to the next (at most N - d)")


class SQDMemoryPolicy(Policy):
    """Query d sampled servers and the m remembered ones, join the shortest, remember the m least loaded.

    Dispatcher side: each dispatcher remembers up to m server ids (none at the
    start). On each job it draws d distinct servers uniformly, exactly as SQ(d)
    does, adds the remembered ones that were not drawn, queries all of them and
    joins the shortest (ties uniformly at random, as in SQ(d)). It then
    remembers the m least loaded of those candidates, counting the job it has
    just sent (ties: drawn servers first, in draw order, then remembered ones).
    With m = 0 it is SQ(d), draw for draw.

    Messages: a query and a reply for every server whose length is read, so
    between 2d and 2(d + m) per job (2d + 2m once the memory is full and the
    draws miss it). With latency the job waits for all replies, and the memory
    changes when they are in. With faults (docs/faults.md) it joins the
    shortest of the replies that came, and remembers only servers that
    answered: fewer than m when fewer answered.

    References
    ----------
    .. [1] M. Mitzenmacher, B. Prabhakar, D. Shah, "Load balancing with memory",
       Proc. 43rd IEEE Symposium on Foundations of Computer Science (FOCS) (2002).
    .. [2] D. Shah, B. Prabhakar, "The use of memory in randomized load
       balancing", Proc. IEEE International Symposium on Information Theory (2002).
    """

    name = "sqd_memory"
    Config = SQDMemoryConfig
    messages = "2 per server read: 2d to 2(d + m) per job"
    compiled = "emulator.compiled.policies.sqd_memory"

    @classmethod
    def label(cls, config: SQDMemoryConfig) -> str:
        return f"SQ({config.d},m={config.m})"

    @classmethod
    def check(cls, config: SQDMemoryConfig, point: PointView) -> dict[str, str]:
        problems = super().check(config, point)
        if not problems and isinstance(config.d, int) and config.m > point.servers - config.d:
            problems["m"] = (f"expected at most N - d = {point.servers - config.d} servers to remember "
                             f"(N={point.servers}, d={config.d}), got {config.m}")
        return problems

    @classmethod
    def samples_per_job(cls, config: SQDMemoryConfig, point: PointView) -> float:
        return float(config.d) + config.m

    def __init__(self, model: ModelView, config: SQDMemoryConfig) -> None:
        super().__init__(model, config)
        self.d = int(config.d)
        self.m = config.m
        for dispatcher in model.dispatchers:
            dispatcher.state = []

    def dispatch(self, dispatcher: DispatcherView, job: JobView) -> None:
        servers = dispatcher.servers
        drawn = self.uniforms.sample(len(servers), self.d)
        remembered = [sid for sid in dispatcher.state if sid not in drawn]
        ids = drawn + remembered
        candidates = [servers[sid] for sid in ids]
        channel = dispatcher.channel

        def decide(lengths: list[int]) -> None:
            chosen = shortest(lengths, self.uniforms.random)
            if self.m:
                after = list(lengths)
                after[chosen] += 1  # the job just sent
                # Only servers that answered: a missing reply (NO_REPLY, faults) is no length to remember.
                answered = [i for i in range(len(ids)) if lengths[i] != NO_REPLY]
                order = sorted(answered, key=after.__getitem__)  # stable: draw order breaks ties
                dispatcher.state = [ids[i] for i in order[: self.m]]
            dispatcher.send(job, candidates[chosen])

        if channel.instant:  # the replies are the current lengths: count the round trips, read them
            channel.count_round_trips(len(ids))
            decide(list(map(queue_length, candidates)))
            return
        channel.ask(candidates, queue_length, decide)
