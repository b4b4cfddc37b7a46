"""JSQ with push updates: servers tell every dispatcher each change of their length."""

from __future__ import annotations

from typing import Literal

from ..measure.messages import Kind
from .base import Policy, PolicyConfig
from .jsq import LengthIndex
from .views import DispatcherView, JobView, ModelView, PointView, ServerView

# Bound once: an update goes out on every arrival and every departure.
UPDATE = Kind.UPDATE


class JSQPushConfig(PolicyConfig):
    name: Literal["jsq_push"] = "jsq_push"


class _Told:
    """A dispatcher's view: the lengths it was told, indexed, and the newest report of each server."""

    __slots__ = ("index", "stamp")

    def __init__(self, n: int) -> None:
        self.index = LengthIndex(n)
        self.stamp = [0] * n


class JSQPushPolicy(Policy):
    """Join the shortest of the lengths the servers pushed: one ``update`` per change per dispatcher.

    Server side: every change of a server's length (an accepted arrival or a
    departure) goes to every dispatcher as one ``update`` message carrying the
    new length. A blocked arrival changes nothing and sends nothing.

    Dispatcher side: the last length each server reported (all 0 at the start),
    in a `LengthIndex`; a job joins one of the smallest, ties uniformly at
    random. No queries. With latency, an update that arrives after a newer one
    from the same server (latencies are drawn per message, so messages can
    overtake) is ignored.

    With D dispatchers that is 2D messages per job in the long run (one arrival
    and one departure per job), against JSQ's 2N. With zero latency and one
    dispatcher the told lengths are the true lengths, updated in the same order
    as JSQ's own index, so the responses are JSQ's seed for seed.

    References
    ----------
    .. [1] W. Winston, "Optimality of the shortest line discipline", Journal of
       Applied Probability 14(1) (1977).
    .. [2] M. van der Boor, S. C. Borst, J. S. H. van Leeuwaarden, D. Mukherjee,
       "Scalable load balancing in networked systems: a survey of recent
       advances", SIAM Review 64(3) (2022); arXiv:1806.05444 (push-based JSQ).
    """

    name = "jsq_push"
    Config = JSQPushConfig
    messages = "1 update per length change per dispatcher: 2D per job (D dispatchers)"
    compiled = "emulator.compiled.policies.jsq_push"

    @classmethod
    def label(cls, config: JSQPushConfig) -> str:
        return "JSQ-push"

    @classmethod
    def samples_per_job(cls, config: JSQPushConfig, point: PointView) -> float:
        return 2.0 * point.dispatchers

    def __init__(self, model: ModelView, config: JSQPushConfig) -> None:
        super().__init__(model, config)
        n = len(model.servers)
        for dispatcher in model.dispatchers:
            dispatcher.state = _Told(n)
        self.sent = [0] * n  # the length each server last pushed
        self.stamp = [0] * n  # how many updates each server has pushed
        for server in model.servers:
            server.on_arrive = self._arrived
            server.on_depart = self._changed

    # -- server side -----------------------------------------------------------------
    def _arrived(self, server: ServerView, job: JobView) -> None:
        self._changed(server)

    def _changed(self, server: ServerView) -> None:
        sid, length = server.id, server.length
        if length == self.sent[sid]:  # blocked, or a batch that moved it at its first job
            return
        self.sent[sid] = length
        self.stamp[sid] += 1
        stamp = self.stamp[sid]
        send = self.channel.send
        for dispatcher in self.dispatchers:
            send(UPDATE, _told, dispatcher, sid, length, stamp)

    # -- dispatcher side -------------------------------------------------------------
    def dispatch(self, dispatcher: DispatcherView, job: JobView) -> None:
        dispatcher.send(job, dispatcher.servers[dispatcher.state.index.pick(self.uniforms.random())])


def _told(dispatcher: DispatcherView, sid: int, length: int, stamp: int) -> None:
    told = dispatcher.state
    if stamp > told.stamp[sid]:
        told.stamp[sid] = stamp
        told.index.set(sid, length)
