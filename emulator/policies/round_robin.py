"""Round robin."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from .base import Policy, PolicyConfig

if TYPE_CHECKING:
    from ..dispatcher import Dispatcher
    from ..job import Job
    from ..model import Model


class RoundRobinConfig(PolicyConfig):
    name: Literal["round_robin"] = "round_robin"


class RoundRobinPolicy(Policy):
    """Each dispatcher sends jobs to the servers in turn; no messages.

    Dispatcher k of D starts at server floor(k N / D), so that several
    dispatchers do not start in step.

    References
    ----------
    .. [1] A. Ephremides, P. Varaiya, J. Walrand, "A simple dynamic routing
       problem", IEEE Transactions on Automatic Control 25(4) (1980).
    """

    name = "round_robin"
    Config = RoundRobinConfig
    messages = "0 per job"

    @classmethod
    def label(cls, params: dict[str, Any]) -> str:
        return "RR"

    def __init__(self, model: Model, params: dict[str, Any]) -> None:
        super().__init__(model, params)
        n, dispatchers = len(model.servers), model.dispatchers
        for dispatcher in dispatchers:
            dispatcher.state = dispatcher.id * n // len(dispatchers)

    def dispatch(self, dispatcher: Dispatcher, job: Job) -> None:
        servers = dispatcher.servers
        position = dispatcher.state
        dispatcher.state = position + 1 if position + 1 < len(servers) else 0
        dispatcher.send(job, servers[position])
