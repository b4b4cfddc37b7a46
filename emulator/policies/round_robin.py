"""Round robin."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from .base import Policy, PolicyConfig, overloaded_evenly
from .views import DispatcherView, JobView, ModelView


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
    compiled = "emulator.compiled.policies.round_robin"

    @classmethod
    def label(cls, config: RoundRobinConfig) -> str:
        return "RR"

    @classmethod
    def check_speeds(cls, config: RoundRobinConfig, speeds: Sequence[float], work: float) -> str | None:
        return overloaded_evenly(speeds, work, "sends each server every N-th arrival")

    def __init__(self, model: ModelView, config: RoundRobinConfig) -> None:
        super().__init__(model, config)
        n, dispatchers = len(model.servers), model.dispatchers
        for dispatcher in dispatchers:
            dispatcher.state = dispatcher.id * n // len(dispatchers)

    def dispatch(self, dispatcher: DispatcherView, job: JobView) -> None:
        servers = dispatcher.servers
        position = dispatcher.state
        dispatcher.state = position + 1 if position + 1 < len(servers) else 0
        dispatcher.send(job, servers[position])
