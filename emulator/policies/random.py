"""Random routing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from .base import Policy, PolicyConfig

if TYPE_CHECKING:
    from ..dispatcher import Dispatcher
    from ..job import Job


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

    @classmethod
    def label(cls, params: dict[str, Any]) -> str:
        return "Random"

    def dispatch(self, dispatcher: Dispatcher, job: Job) -> None:
        servers = dispatcher.servers
        dispatcher.send(job, servers[self.uniforms.randrange(len(servers))])
