"""Join the shortest queue."""

from __future__ import annotations

from math import floor
from typing import Literal

from .base import Policy, PolicyConfig, queue_length, shortest
from .views import DispatcherView, JobView, ModelView, PointView, ServerView


class JSQConfig(PolicyConfig):
    name: Literal["jsq"] = "jsq"


class LengthIndex:
    """Servers bucketed by length: O(1) updates and a uniform pick among the shortest.

    With zero latency a query of all N servers returns their current lengths, so
    JSQ's choice is the argmin of the true lengths. This index keeps that argmin
    as the servers change, so a dispatch costs O(1) in Python while the channel
    still counts the N queries and N replies that a real dispatcher would send.
    """

    def __init__(self, n: int) -> None:
        self.buckets: list[list[int]] = [list(range(n))]
        self.position = list(range(n))
        self.length = [0] * n  # each server's length as indexed
        self.low = 0  # the smallest length with a non-empty bucket

    def _move(self, sid: int, old: int, new: int) -> None:
        bucket = self.buckets[old]
        i = self.position[sid]
        last = bucket.pop()
        if last != sid:
            bucket[i] = last
            self.position[last] = i
        while new >= len(self.buckets):
            self.buckets.append([])
        target = self.buckets[new]
        self.position[sid] = len(target)
        target.append(sid)

    def arrived(self, server: ServerView, job: JobView) -> None:
        sid, new = server.id, server.length
        lengths = self.length
        old = lengths[sid]
        if new == old:  # blocked, or a batch whose first job already moved it (slotted time)
            return
        lengths[sid] = new
        # `_move`, inlined: this and `departed` run once per job each.
        buckets, position = self.buckets, self.position
        bucket = buckets[old]
        i = position[sid]
        last = bucket.pop()
        if last != sid:
            bucket[i] = last
            position[last] = i
        while new >= len(buckets):
            buckets.append([])
        target = buckets[new]
        position[sid] = len(target)
        target.append(sid)
        if old == self.low:
            while not buckets[self.low]:
                self.low += 1

    def departed(self, server: ServerView) -> None:
        sid, new = server.id, server.length
        lengths = self.length
        # `_move`, inlined; a departure leaves a length seen before, whose bucket exists.
        buckets, position = self.buckets, self.position
        bucket = buckets[lengths[sid]]
        i = position[sid]
        last = bucket.pop()
        if last != sid:
            bucket[i] = last
            position[last] = i
        target = buckets[new]
        position[sid] = len(target)
        target.append(sid)
        lengths[sid] = new
        if new < self.low:
            self.low = new

    def set(self, sid: int, new: int) -> None:
        """Index server ``sid`` at length ``new``, whatever it was (a reported or estimated length).

        For lengths that move by one this makes the same moves as `arrived` and
        `departed`, so an index fed by exact reports picks as JSQ's own does.
        """
        old = self.length[sid]
        if new == old:
            return
        self._move(sid, old, new)
        self.length[sid] = new
        if new < self.low:
            self.low = new
        elif old == self.low:
            while not self.buckets[self.low]:
                self.low += 1

    def pick(self, u: float) -> int:
        bucket = self.buckets[self.low]
        # `floor`, not `int`: the same index (u * len is never negative), a call Python 3.11 specialises.
        return bucket[floor(u * len(bucket))]


class JSQPolicy(Policy):
    """Query all N servers, join one with the fewest jobs (ties at random): 2N messages per job.

    The length counts the jobs in service plus waiting. With latency, the
    dispatcher waits for all N replies and acts on lengths as they were when
    each query arrived.

    References
    ----------
    .. [1] W. Winston, "Optimality of the shortest line discipline", Journal of
       Applied Probability 14(1) (1977).
    .. [2] D. Hurtado-Lange, S. T. Maguluri, "Load balancing system under Join
       the Shortest Queue: Many-Server-Heavy-Traffic Asymptotics", arXiv:2004.04826 (2020).
    """

    name = "jsq"
    Config = JSQConfig
    messages = "2N per job (N query + N reply)"
    compiled = "emulator.compiled.policies.jsq"

    @classmethod
    def label(cls, config: JSQConfig) -> str:
        return "JSQ"

    @classmethod
    def samples_per_job(cls, config: JSQConfig, point: PointView) -> float:
        """None with zero latency (the length index); with latency all N servers are asked."""
        return float(point.servers) if point.scenario.network.latency.mean != 0 else 0.0

    def __init__(self, model: ModelView, config: JSQConfig) -> None:
        super().__init__(model, config)
        self.index: LengthIndex | None = None
        if model.channel.instant:
            self.index = LengthIndex(len(model.servers))
            for server in model.servers:
                server.on_arrive = self.index.arrived
                server.on_depart = self.index.departed

    def dispatch(self, dispatcher: DispatcherView, job: JobView) -> None:
        servers = dispatcher.servers
        if self.index is not None:
            channel = dispatcher.channel
            channel.count_round_trips(len(servers))
            dispatcher.send(job, servers[self.index.pick(next(self.uniforms.draws))])  # (`next`: specialised)
            return
        self._ask(dispatcher, job)

    def _ask(self, dispatcher: DispatcherView, job: JobView) -> None:
        """With latency: ask every server, send when all replies are in.

        A method of its own: the closure's variables would be cells in `dispatch`, made on
        every call, on the zero-latency path too.
        """
        servers, random = dispatcher.servers, self.uniforms.random
        dispatcher.channel.ask(
            servers, queue_length,
            lambda lengths: dispatcher.send(job, servers[shortest(lengths, random)]))

