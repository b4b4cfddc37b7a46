"""Hyper-scalable JSQ with sparse feedback: upper bounds per server, refreshed by occasional updates."""

from __future__ import annotations

import math
from collections.abc import Generator
from typing import Any, Literal

import numpy as np
from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from ..measure.messages import Kind
from .base import Policy, PolicyConfig
from .views import DispatcherView, JobView, ModelView, PointView

UPDATE = Kind.UPDATE

UPDATE_MESSAGES_PER_JOB = 1000
"""Update messages per arriving job, at most: a shorter period (or a higher rate) is refused."""


class JSQSparseConfig(PolicyConfig):
    name: Literal["jsq_sparse"] = "jsq_sparse"
    feedback: Literal["synchronous", "asynchronous"] = Field(
        "synchronous", description="'synchronous': every server reports every period; 'asynchronous': each "
                                   "server reports at exponential intervals of the given rate")
    period: float | None = Field(None, gt=0, description="synchronous feedback: time between updates "
                                                         "(default 1; .inf: none, round robin)")
    rate: float | None = Field(None, gt=0, description="asynchronous feedback: updates per server per unit "
                                                       "time (required)")

    @model_validator(mode="before")
    @classmethod
    def _one_clock(cls, data: Any) -> Any:
        """Synchronous feedback takes a period (default 1) and no rate; asynchronous a rate and no period."""
        if not isinstance(data, dict) or data.get("feedback", "synchronous") not in ("synchronous", "asynchronous"):
            return data  # the field's own validation names the bad feedback
        synchronous = data.get("feedback", "synchronous") == "synchronous"
        wanted, other = ("period", "rate") if synchronous else ("rate", "period")
        if data.get(other) is not None:
            raise PydanticCustomError("shape", "{key}: expected no {key} with feedback: {feedback} (it takes "
                                      "{wanted})", {"key": other, "feedback": data.get("feedback", "synchronous"),
                                                    "wanted": wanted, "value": data[other]})
        if data.get(wanted) is None:
            if not synchronous:
                raise PydanticCustomError("shape", "rate: expected a number > 0 with feedback: asynchronous",
                                          {"key": "rate", "value": None})
            data = {**data, "period": 1.0}
        return data


    def per_server(self) -> float:
        """Updates each server sends per unit time (to each dispatcher): 1 / period, or the rate."""
        if self.feedback == "synchronous":
            assert self.period is not None  # `_one_clock` set it
            return 1.0 / self.period
        assert self.rate is not None  # `_one_clock` required it
        return self.rate


class _Bounds:
    """A dispatcher's upper bounds, one per server, and where its cyclic tie-break starts."""

    __slots__ = ("bound", "next", "stamp")

    def __init__(self, n: int, start: int) -> None:
        self.bound = np.zeros(n, dtype=np.int64)
        self.stamp = np.zeros(n, dtype=np.int64)
        self.next = start


class JSQSparsePolicy(Policy):
    """Join the smallest upper bound; servers report their length now and then (``update`` messages).

    Dispatcher side: each dispatcher keeps an upper bound U_i per server: the
    last length server i reported to it, plus the jobs it has sent there since
    (all 0 at the start). A job goes to a server with the smallest bound, which
    then grows by 1. Ties go to the first tied server in cyclic order from the
    one after the dispatcher's last choice (dispatcher k of D starts at
    floor(k N / D), as round robin does): the paper breaks ties arbitrarily, and
    this rule makes the policy without updates exactly round robin, job for job.

    Server side: ``feedback: synchronous`` has every server send its length to
    every dispatcher every ``period`` (first at t = period); ``asynchronous`` has
    each server do so at the events of its own Poisson process of ``rate``
    (simulated as their superposition: events at rate N x rate, each from a
    uniformly drawn server). A report that arrives after a newer one from the
    same server is ignored; ``period: .inf`` sends none (round robin). With
    faults (docs/faults.md) a lost update never arrives: the bound stays the
    old length plus the jobs sent since. A down server skips its updates; its
    next one after recovery tells its length.

    Messages: N D / period (synchronous) or N D rate (asynchronous) ``update``
    messages per unit time, so per job that over the arrival rate; no queries.
    As the period shrinks (the rate grows) the bounds become the true lengths at
    every decision and the policy tends to JSQ.

    References
    ----------
    .. [1] M. van der Boor, S. C. Borst, J. S. H. van Leeuwaarden, "Hyper-scalable
       JSQ with sparse feedback", Proc. ACM Meas. Anal. Comput. Syst. 3(1) (2019).
    """

    name = "jsq_sparse"
    Config = JSQSparseConfig
    messages = "N D / period (synchronous) or N D rate (asynchronous) update messages per unit time"
    compiled = "emulator.compiled.policies.jsq_sparse"

    @classmethod
    def label(cls, config: JSQSparseConfig) -> str:
        if config.feedback == "synchronous":
            return f"JSQ-sparse(T={config.period:g})"
        return f"JSQ-sparse(rate={config.rate:g})"

    @classmethod
    def updates_per_time(cls, config: JSQSparseConfig, point: PointView) -> float:
        """Update messages per unit time: N D / period or N D rate."""
        return point.servers * point.dispatchers * config.per_server()

    @classmethod
    def check(cls, config: JSQSparseConfig, point: PointView) -> dict[str, str]:
        per_job = cls.updates_per_time(config, point) / point.rate
        if per_job > UPDATE_MESSAGES_PER_JOB:
            key = "period" if config.feedback == "synchronous" else "rate"
            value = config.period if key == "period" else config.rate
            return {key: f"expected at most {UPDATE_MESSAGES_PER_JOB:,} update messages per arriving job, "
                         f"got {per_job:.4g} (N={point.servers}, D={point.dispatchers}, arrival rate "
                         f"{point.rate:.4g}, {key} {value:g})"}
        return {}

    @classmethod
    def samples_per_job(cls, config: JSQSparseConfig, point: PointView) -> float:
        return cls.updates_per_time(config, point) / point.rate if point.rate > 0 else 0.0

    def __init__(self, model: ModelView, config: JSQSparseConfig) -> None:
        super().__init__(model, config)
        n, dispatchers = len(model.servers), model.dispatchers
        for dispatcher in dispatchers:
            dispatcher.state = _Bounds(n, dispatcher.id * n // len(dispatchers))
        self.stamp = [0] * n
        if config.feedback == "synchronous":
            assert config.period is not None  # `_one_clock` set it
            # The period itself: 1 / per_server() is 1 / 0 for period .inf (no update ever).
            model.env.process(self._synchronous(config.period))
        else:
            model.env.process(self._asynchronous(n * config.per_server()))

    # -- server side -----------------------------------------------------------------
    def _report(self, server: Any) -> None:
        if not getattr(server, "up", True):  # a down server sends nothing (docs/faults.md); its turn passes
            return
        sid = server.id
        self.stamp[sid] += 1
        for dispatcher in self.dispatchers:
            self.channel.send(UPDATE, _told, dispatcher, sid, server.length, self.stamp[sid])

    def _synchronous(self, period: float) -> Generator[Any, Any, None]:
        env = self.model.env
        while True:
            yield env.timeout(period)
            for server in self.model.servers:
                self._report(server)

    def _asynchronous(self, total: float) -> Generator[Any, Any, None]:
        env, servers, random = self.model.env, self.model.servers, self.uniforms.random
        while True:
            yield env.timeout(-math.log(1.0 - random()) / total)
            self._report(servers[int(random() * len(servers))])

    # -- dispatcher side -------------------------------------------------------------
    def dispatch(self, dispatcher: DispatcherView, job: JobView) -> None:
        state: _Bounds = dispatcher.state
        bound = state.bound
        ties = np.flatnonzero(bound == bound.min())
        k = int(ties.searchsorted(state.next))
        sid = int(ties[k] if k < len(ties) else ties[0])
        bound[sid] += 1
        state.next = sid + 1 if sid + 1 < len(bound) else 0
        dispatcher.send(job, dispatcher.servers[sid])


def _told(dispatcher: DispatcherView, sid: int, length: int, stamp: int) -> None:
    state: _Bounds = dispatcher.state
    if stamp > state.stamp[sid]:
        state.stamp[sid] = stamp
        state.bound[sid] = length
