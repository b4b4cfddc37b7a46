"""Persistent-Idle: every job to the server that last reported idle."""

from __future__ import annotations

from typing import Literal

from ..measure.messages import Kind
from .base import Policy, PolicyConfig
from .views import DispatcherView, JobView, ModelView, ServerView

IDLE = Kind.IDLE

NONE = -1
"""A dispatcher's target before any server has reported to it."""


class PersistentIdleConfig(PolicyConfig):
    name: Literal["persistent_idle"] = "persistent_idle"


class PersistentIdlePolicy(Policy):
    """Send every job to the last server that reported idle, until another reports: at most 1 message per job.

    Server side: a server whose departure leaves it empty sends one ``idle``
    message (as JIQ's token) to one dispatcher: the dispatcher, or with several a
    uniformly random one (as JIQ-Random). At time 0 no server reports: every
    server is known to be idle then, and the first departures report soon enough.

    Dispatcher side: one server id, the last reported. Unlike JIQ the id is not
    removed when a job is sent: every job goes to it until another idle message
    arrives, so a reported server keeps receiving jobs although it is no longer
    idle (the "persistent" of the name). Before its first message a dispatcher
    sends each job to a uniformly random server.

    Messages: one ``idle`` per departure that empties its server, so at most one
    per job, whatever the number of dispatchers.

    References
    ----------
    .. [1] R. Atar, I. Keslassy, G. Mendelson, "Persistent-Idle load-distribution",
       Stochastic Systems 10(2) (2020).
    """

    name = "persistent_idle"
    Config = PersistentIdleConfig
    messages = "1 idle per departure that empties its server (at most 1 per job)"
    compiled = "emulator.compiled.policies.persistent_idle"

    @classmethod
    def label(cls, config: PersistentIdleConfig) -> str:
        return "PI"

    def __init__(self, model: ModelView, config: PersistentIdleConfig) -> None:
        super().__init__(model, config)
        for dispatcher in model.dispatchers:
            dispatcher.state = NONE
        for server in model.servers:
            server.on_depart = self._departed

    # -- server side -----------------------------------------------------------------
    def _departed(self, server: ServerView) -> None:
        if server.length == 0:
            dispatchers = self.dispatchers
            # One dispatcher draws nothing, as `ListPolicy.random_dispatcher`.
            target = dispatchers[0] if len(dispatchers) == 1 else \
                dispatchers[self.uniforms.randrange(len(dispatchers))]
            self.channel.send(IDLE, _report, target, server.id)

    # -- dispatcher side -------------------------------------------------------------
    def dispatch(self, dispatcher: DispatcherView, job: JobView) -> None:
        servers = dispatcher.servers
        target = dispatcher.state
        if target == NONE:
            target = self.uniforms.randrange(len(servers))
        dispatcher.send(job, servers[target])


def _report(dispatcher: DispatcherView, sid: int) -> None:
    """An idle message arrives: its server is the dispatcher's target from now on."""
    dispatcher.state = sid
