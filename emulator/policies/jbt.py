"""Join below threshold (JBT-d)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Literal

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from ..measure.messages import NO_REPLY, Kind
from .base import IntOrExpr, ListPolicy, PolicyConfig, queue_length
from .views import DispatcherView, JobView, ModelView, PointView, ServerView

UPDATE_MESSAGES_PER_JOB = 1000
"""Threshold-update messages (N + 2d per period) per arriving job, at most: a shorter period is refused."""

# Bound once: reading ``Kind.REPORT`` (an Enum member as a class attribute) costs about
# 0.1 us on Python 3.11, and a report goes out on a large share of departures.
REPORT = Kind.REPORT


class JBTConfig(PolicyConfig):
    name: Literal["jbt"] = "jbt"
    d: IntOrExpr = Field(2, description="servers sampled at each threshold update")
    period: float = Field(100.0, gt=0, description="time between threshold updates (T)")
    below: Literal["le", "lt"] = Field(
        "le", description="'le': a server is below when its length <= r; 'lt': when < r")
    reports: Literal["state", "crossing"] = Field(
        "state", description="when a server that is below and not listed reports: 'state' after departures, "
                             "jobs from the list and new thresholds (rereport and recheck default true); "
                             "'crossing', the paper's rule, only when a departure leaves it below (both false)")
    rereport: bool = Field(
        True, description="a server sent a job from the list reports again at once if still below "
                          "(default from reports)")
    recheck: bool = Field(
        True, description="on a new threshold, a server that is now below and not listed reports "
                          "(default from reports)")
    reset: bool = Field(
        False, description="on each update the dispatchers clear their lists, and the new threshold tells "
                           "every server it is no longer listed (so those below the new r report again)")
    initial_threshold: int = Field(0, ge=0, description="threshold before the first update")

    @model_validator(mode="before")
    @classmethod
    def _from_reports(cls, data: Any) -> Any:
        """``reports: crossing`` presets rereport and recheck to false, and refuses either set true."""
        if isinstance(data, dict) and data.get("reports") == "crossing":
            for key in ("rereport", "recheck"):
                if data.get(key) is True:
                    raise PydanticCustomError("shape", "{key}: expected false (or unset) with reports: crossing",
                                              {"key": key, "value": True})
            data = {**data, "rereport": False, "recheck": False}
        return data


class JBTPolicy(ListPolicy):
    """Servers below a threshold report; jobs go to a reported server, else at random.

    Server side: a server is *below* when its length is <= r (``below: le``,
    the default) or < r (``lt``), r being the last threshold it received. A
    server that is below and not listed sends one ``report`` and counts itself
    listed. It checks this after each departure, after a job taken from the list
    arrives (``rereport``) and when a new threshold arrives (``recheck``).
    ``reports`` names the two readings: ``state`` (the default, both checks on:
    the list tracks "below and not yet sent a job") and ``crossing`` (both off:
    a server reports only when a departure leaves it below, which is how the
    paper describes its servers). With
    ``reset``, each update clears the dispatchers' lists and the new threshold
    tells every server it is no longer listed, so the list holds only servers
    below the current r (at the cost of up to N more reports per period). With
    several dispatchers, dispatcher 0 clears its own list when it sets r and
    sends the update to each of the other D - 1 as a ``threshold`` message (over
    the channel, with its latency); each clears its list when that message
    arrives. A report that reaches a dispatcher before its update does is
    cleared with the list, and its server, which counts itself listed, is on no
    list until the next update: a real system with these messages has the same race.

    Dispatcher side: the list of reported ids. A job goes to an id taken uniformly
    at random from the list (with heterogeneous speeds, with probability
    proportional to the server's rate, which the report carries: JBTG-d), which
    removes it and tells the server it is no longer listed; else to a uniformly
    random server. Every ``period`` time units dispatcher 0 queries d random
    servers, sets r to the smallest reply and sends r to all N servers.

    Defaults for the points the paper leaves open: ``le``, because r is the
    minimum of sampled lengths and is often 0, and with ``lt`` a threshold of 0
    lists nobody; ``reports: state``, the state-based reading, in continuous time
    the better of the two (the paper's scenarios in ``scenarios/`` use
    ``crossing``); ``reset`` is off, so a server listed under an earlier, higher
    r stays listed. A server reports only when not listed, so reports never
    exceed the jobs taken from lists plus N: at most 1 + N/jobs per job, plus
    (N + 2d) per update period (N + 2d + D - 1 with ``reset`` and D
    dispatchers). In slotted time with one decision per slot, a decision takes
    one id for the slot's whole batch, so reports are at most the decisions
    taken from the list plus N. With several dispatchers, reports go to a
    uniformly random one. JIQ is the fixed threshold r = 0 under ``le``.

    References
    ----------
    .. [1] X. Zhou, F. Wu, J. Tan, Y. Sun, N. Shroff, "Designing Low-Complexity
       Heavy-Traffic Delay-Optimal Load Balancing Schemes: Theory to
       Algorithms", Proc. ACM Meas. Anal. Comput. Syst. 1(2) (2017); arXiv:1710.04357.
    """

    name = "jbt"
    Config = JBTConfig
    messages = ("reports: at most the jobs (slotted: decisions) taken from the list, plus N; "
                "N threshold + 2d per period (+ D-1 threshold with reset)")
    compiled = "emulator.compiled.policies.jbt"

    @classmethod
    def label(cls, config: JBTConfig) -> str:
        return f"JBT-{config.d}"

    @classmethod
    def check(cls, config: JBTConfig, point: PointView) -> dict[str, str]:
        problems = super().check(config, point)
        # Each update sends N + 2d messages: a period far below the gap between arrivals
        # would spend the run on updates.
        gap = 1.0 / point.rate
        messages = point.servers + 2 * int(config.d)
        shortest = messages * gap / UPDATE_MESSAGES_PER_JOB
        if config.period < shortest:
            problems["period"] = (
                f"expected at least {shortest:.4g}, where each update's N + 2d = {messages} messages come to "
                f"{UPDATE_MESSAGES_PER_JOB:,} per arriving job (mean gap {gap:.4g}), got {config.period:g}")
        return problems

    @classmethod
    def samples_per_job(cls, config: JBTConfig, point: PointView) -> float:
        """The N threshold messages of each update, per job."""
        return point.servers / (config.period * point.rate) if point.rate > 0 else 0.0

    def __init__(self, model: ModelView, config: JBTConfig) -> None:
        super().__init__(model, config)
        self.d = int(config.d)
        self.period = config.period
        self.strict = config.below == "lt"
        self.rereport = config.rereport
        self.recheck = config.recheck
        self.reset = config.reset
        n = len(model.servers)
        self.threshold = [config.initial_threshold] * n  # r as each server knows it
        self.listed = [False] * n
        speeds = [server.speed for server in model.servers]
        if len(set(speeds)) > 1:
            self.weights, self.top_weight = speeds, max(speeds)
        for server in model.servers:
            server.on_arrive = self._arrived
            server.on_depart = self._check
            self._check(server)
        model.env.process(self._updates())

    # -- server side -----------------------------------------------------------------
    def _check(self, server: ServerView) -> None:
        sid = server.id
        if self.listed[sid]:
            return
        r = self.threshold[sid]
        length = server.length
        if length < r or (length == r and not self.strict):
            self.listed[sid] = True
            self.channel.send(REPORT, _reported, self.random_dispatcher(), sid)

    def _arrived(self, server: ServerView, job: JobView) -> None:
        if job.via_list:
            self.listed[server.id] = False
            if self.rereport:
                self._check(server)

    def _new_threshold(self, server: ServerView, r: int) -> None:
        self.threshold[server.id] = r
        if self.reset:
            self.listed[server.id] = False
        if self.recheck or self.reset:
            self._check(server)

    # -- dispatcher side -------------------------------------------------------------
    def _updates(self) -> Generator[Any, Any, None]:
        """Dispatcher 0's timer: sample d servers, broadcast the smallest length as the threshold."""
        servers = self.model.servers
        channel = self.channel
        env = self.model.env
        while True:
            yield env.timeout(self.period)
            sampled = [servers[i] for i in self.uniforms.sample(len(servers), self.d)]

            def broadcast(lengths: list[int]) -> None:
                r = min(lengths)
                if r == NO_REPLY:  # no reply came back in time: the threshold stays as it is
                    return
                if self.reset:
                    # Dispatcher 0 clears its own list; every other one clears its list when
                    # the update reaches it, as a threshold message of its own.
                    self.dispatchers[0].state.clear()
                    for other in self.dispatchers[1:]:
                        channel.send(Kind.THRESHOLD, _cleared, other)
                for server in servers:
                    channel.send(Kind.THRESHOLD, self._new_threshold, server, r)

            channel.ask(sampled, queue_length, broadcast)



def _reported(dispatcher: DispatcherView, sid: int) -> None:
    dispatcher.state.add(sid)


def _cleared(dispatcher: DispatcherView) -> None:
    dispatcher.state.clear()
