"""Shortest expected delay (SED): join the least (length + 1) / speed of d queried servers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import Field

from .base import IntOrExpr, Policy, PolicyConfig, overloaded_sampling, queue_length
from .views import DispatcherView, JobView, ModelView, PointView


class SEDConfig(PolicyConfig):
    name: Literal["sed"] = "sed"
    d: IntOrExpr | None = Field(
        None, description="servers queried per job (distinct, drawn uniformly): an integer or an expression in N; "
                          "default all N, in server order, with no draw")
    rule: Literal["expected_delay", "length"] = Field(
        "expected_delay", description="what is joined: the least (length + 1) / speed (expected_delay), or the "
                                      "least length (length: JSQ(d), with ties: fastest JSQ with ties to the "
                                      "fastest server)")
    ties: Literal["random", "fastest"] = Field(
        "random", description="among equal values: one uniformly at random, or the fastest server (then, among "
                              "equally fast ones, at random)")


class SEDPolicy(Policy):
    """Query d servers, join the least (length + 1) / speed: 2d messages per job.

    Dispatcher side: ``d`` distinct servers drawn uniformly (default: all N, in
    server order, no draw) are queried (``query`` + ``reply``); the job joins the
    one whose expected delay, (length + 1) / speed, is least. ``ties: random``
    breaks ties uniformly at random (reservoir sampling over the queried servers,
    as JSQ's `shortest`); ``ties: fastest`` keeps the fastest of the tied
    servers, and breaks ties among equally fast ones at random. ``rule: length``
    joins the least length instead (speeds matter only to ``ties: fastest``): SQ(d),
    and with d = N and ``ties: fastest`` JSQ with ties to the fastest server.

    With equal speeds, ``rule: expected_delay`` decides as ``rule: length``, and
    with d = N as JSQ's queried form: the same servers in the same order, the same
    reservoir draws (JSQ's own zero-latency index draws differently; with latency
    the rows of SED and JSQ are identical).

    References
    ----------
    .. [1] A. Weinrib, S. Shenker, "Greed is not enough: adaptive load sharing in
       large heterogeneous systems", IEEE INFOCOM (1988).
    .. [2] A. Mukhopadhyay, R. R. Mazumdar, "Analysis of randomized
       join-the-shortest-queue (JSQ) schemes in large heterogeneous processor-sharing
       systems", IEEE Transactions on Control of Network Systems 3(2) (2016).
    """

    name = "sed"
    Config = SEDConfig
    messages = "2d per job (d query + d reply; d = N by default)"
    compiled = "emulator.compiled.policies.sed"

    @classmethod
    def label(cls, config: SEDConfig) -> str:
        base = "SED" if config.rule == "expected_delay" else "JSQ"
        label = base if config.d is None else f"{base}({config.d})"
        return label if config.ties == "random" else f"{label}-fastest"

    @classmethod
    def check_speeds(cls, config: SEDConfig, speeds: Sequence[float], work: float) -> str | None:
        return None if config.d is None else overloaded_sampling(speeds, work, int(config.d), False)

    @classmethod
    def samples_per_job(cls, config: SEDConfig, point: PointView) -> float:
        return float(point.servers if config.d is None else config.d)

    def __init__(self, model: ModelView, config: SEDConfig) -> None:
        super().__init__(model, config)
        self.d = None if config.d is None else int(config.d)
        self.speeds = [float(server.speed) for server in model.servers]
        self.by_delay = config.rule == "expected_delay"
        self.fastest = config.ties == "fastest"

    def dispatch(self, dispatcher: DispatcherView, job: JobView) -> None:
        servers = dispatcher.servers
        # (`map`, not a comprehension: that would make ``servers`` a cell, on every call.)
        queried: Sequence[Any] = servers if self.d is None else \
            list(map(servers.__getitem__, self.uniforms.sample(len(servers), self.d)))
        channel = dispatcher.channel
        if channel.instant:  # zero latency: the replies are the current lengths
            channel.count_round_trips(len(queried))
            dispatcher.send(job, queried[self.choose(queried, list(map(queue_length, queried)))])
            return
        self._ask(dispatcher, job, queried)

    def _ask(self, dispatcher: DispatcherView, job: JobView, queried: Sequence[Any]) -> None:
        """With latency or faults: ask the queried servers, send when all replies are in.

        A method of its own: the closure's variables would be cells in `dispatch`, made on
        every call, on the zero-latency path too.
        """
        dispatcher.channel.ask(queried, queue_length,
                               lambda lengths: dispatcher.send(job, queried[self.choose(queried, lengths)]))

    def choose(self, queried: Sequence[Any], lengths: list[int]) -> int:
        """The position in ``queried`` of the server to join, given its replies."""
        speeds = self.speeds
        ids = [server.id for server in queried]
        values = [(lengths[i] + 1) / speeds[sid] if self.by_delay else float(lengths[i])
                  for i, sid in enumerate(ids)]
        return least(values, [speeds[sid] for sid in ids] if self.fastest else None, self.uniforms.random)


def least(values: list[float], speeds: list[float] | None, random: Callable[[], float]) -> int:
    """Index of the smallest value; ties to the largest speed if ``speeds`` is given, the rest at random.

    A reply lost to a fault reads as `NO_REPLY` (huge), so it is joined only when none came.

    >>> least([2.0, 1.0, 1.0], [1.0, 1.0, 2.0], lambda: 0.9)
    2
    """
    best = 0
    ties = 1
    for i in range(1, len(values)):
        value, low = values[i], values[best]
        if speeds is not None and value == low and speeds[i] != speeds[best]:
            if speeds[i] > speeds[best]:
                best, ties = i, 1
            continue
        if value < low:
            best, ties = i, 1
        elif value == low:
            ties += 1  # reservoir sampling, as `shortest`: keep i with probability 1/ties
            if random() * ties < 1.0:
                best = i
    return best
