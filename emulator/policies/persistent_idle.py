"""Persistent-Idle: every job to the server that has last been idle."""

from __future__ import annotations

from typing import Literal

from ..measure.messages import Kind
from .base import IdList, Policy, PolicyConfig
from .views import DispatcherView, JobView, ModelView, ServerView

IDLE = Kind.IDLE

NONE = -1
"""A dispatcher's target before it has taken any server from its idle set."""


class PersistentIdleConfig(PolicyConfig):
    name: Literal["persistent_idle"] = "persistent_idle"


class Known:
    """What one dispatcher knows: the servers reported idle and sent no job since, and its target."""

    __slots__ = ("idle", "target")

    def __init__(self) -> None:
        self.idle = IdList()  # in report order: only the last is ever taken, so the order stays
        self.target = NONE


class PersistentIdlePolicy(Policy):
    """Send every job to the server that has last been idle: at most 1 message per job.

    Server side: a server whose departure leaves it empty sends one ``idle``
    message (as JIQ's token) to one dispatcher: the dispatcher, or with several a
    uniformly random one (as JIQ-Random). At time 0 every server is idle and
    reports (as JIQ's tokens): a server no dispatcher knows to be idle would
    never receive a job, have no departure and never report.

    Dispatcher side: the set of servers reported idle and sent no job since (an
    id kept once, at its first report), and a ``target``. A server idle now has
    last been idle now, so it comes before any busy one: a job goes to the last
    reporter still in the set (LIFO: the server that became idle last), which
    leaves the set and becomes the target. With the set empty every job goes to
    the target, the server whose idle period ended last (the "persistent" of the
    name); before any target, to a uniformly random server (with one dispatcher
    only while the N first reports are on their way).

    Messages: N ``idle`` at time 0, then one per departure that empties its
    server: at most one per job, whatever the number of dispatchers.

    References
    ----------
    .. [1] R. Atar, I. Keslassy, G. Mendelson, "Persistent-Idle load-distribution",
       Stochastic Systems 10(2) (2020).
    """

    name = "persistent_idle"
    Config = PersistentIdleConfig
    messages = "1 idle per departure that empties its server (at most 1 per job), N at start"
    compiled = "emulator.compiled.policies.persistent_idle"

    @classmethod
    def label(cls, config: PersistentIdleConfig) -> str:
        return "PI"

    def __init__(self, model: ModelView, config: PersistentIdleConfig) -> None:
        super().__init__(model, config)
        for dispatcher in model.dispatchers:
            dispatcher.state = Known()
        for server in model.servers:
            server.on_depart = self._departed
        for server in model.servers:
            self._report_idle(server)

    # -- server side -----------------------------------------------------------------
    def _departed(self, server: ServerView) -> None:
        if server.length == 0:
            self._report_idle(server)

    def _report_idle(self, server: ServerView) -> None:
        dispatchers = self.dispatchers
        # One dispatcher draws nothing, as `ListPolicy.random_dispatcher`.
        target = dispatchers[0] if len(dispatchers) == 1 else dispatchers[self.uniforms.randrange(len(dispatchers))]
        self.channel.send(IDLE, _report, target, server.id)

    # -- dispatcher side -------------------------------------------------------------
    def dispatch(self, dispatcher: DispatcherView, job: JobView) -> None:
        servers = dispatcher.servers
        known = dispatcher.state
        idle = known.idle
        if idle.ids:
            job.via_list = True
            known.target = idle.take(len(idle.ids) - 1)
        elif known.target == NONE:
            dispatcher.send(job, servers[self.uniforms.randrange(len(servers))])
            return
        dispatcher.send(job, servers[known.target])


def _report(dispatcher: DispatcherView, sid: int) -> None:
    """An idle message arrives: its server joins the dispatcher's idle set."""
    dispatcher.state.idle.add(sid)
