"""Random routing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from .base import Policy, PolicyConfig, overloaded_evenly
from .views import DispatcherView, JobView


class RandomConfig(PolicyConfig):
    name: Literal["random"] = "random"


class RandomPolicy(Policy):
    """Send each job to a server chosen uniformly at random; no messages.

    With Poisson arrivals every server is then an independent M/G/1 queue
    (Poisson splitting), the baseline that all other policies improve on.

    References
    ----------
    .. [1] M. Mitzenmacher, "On the Analysis of Randomized Load Balancing
       Schemes", Theory of Computing Systems 32 (1999); SPAA 1997 (d = 1).
    """

    name = "random"
    Config = RandomConfig
    messages = "0 per job"
    compiled = "emulator.compiled.policies.random"

    @classmethod
    def label(cls, config: RandomConfig) -> str:
        return "Random"

    @classmethod
    def check_speeds(cls, config: RandomConfig, speeds: Sequence[float], work: float) -> str | None:
        return overloaded_evenly(speeds, work)

    def dispatch(self, dispatcher: DispatcherView, job: JobView) -> None:
        servers = dispatcher.servers
        dispatcher.send(job, servers[self.uniforms.randrange(len(servers))])
