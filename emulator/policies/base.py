"""The policy contract: a dispatcher side and a server side that talk only through messages.

A policy is one class, registered by name in `emulator.policies.REGISTRY`:

- ``Config``: a frozen pydantic model of its scenario parameters (plus ``name`` and
  ``label``); scenario validation and the JSON Schema pick it up from the registry.
- ``label(params)``: the display label, e.g. ``SQ(2)``.
- ``messages``: one line on its control-message cost, for ``lbemu policies``.
- ``__init__(model, params)``: wires the server side (hooks on the servers) and
  starts any periodic dispatcher process.
- ``dispatch(dispatcher, job)``: the dispatcher side; sends ``job`` with
  ``dispatcher.send(job, server)`` now or later (when probe replies come back).

Transport (latency, counting) belongs to `emulator.channels.Channel`; a policy
only says which messages go where.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from ..errors import show
from ..expressions import ExpressionError, evaluate, parse

if TYPE_CHECKING:
    from ..dispatcher import Dispatcher
    from ..job import Job
    from ..model import Model


def _check_expression(value: Any) -> Any:
    if isinstance(value, str):
        try:
            parse(value)
        except ExpressionError as exc:
            raise ValueError(f"expected an integer or an expression in N, {show(value)}: {exc}") from None
    return value


IntOrExpr = Annotated[Annotated[int, Field(ge=1)] | str, BeforeValidator(_check_expression)]
"""An integer >= 1, or an arithmetic expression in N evaluated per sweep point."""


class PolicyConfig(BaseModel):
    """Parameters shared by every policy."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    label: str | None = Field(None, description="display label in tables; default from the parameters")


def resolve_int(value: int | str, n: int) -> int:
    """Resolve an `IntOrExpr` at ``N = n``; raise `ValueError` if it is not a whole number."""
    if isinstance(value, int):
        return value
    result = evaluate(value, n)
    if abs(result - round(result)) > 1e-9:
        raise ValueError(
            f"expected a whole number, '{value}' gives {result:.6g} at N={n} (use floor or ceil)")
    return round(result)


class Policy:
    """Base class of the policies; see the module docstring for the contract."""

    name: ClassVar[str]
    Config: ClassVar[type[PolicyConfig]]
    messages: ClassVar[str]
    expressions: ClassVar[tuple[str, ...]] = ()  # parameters that may be expressions in N

    def __init__(self, model: Model, params: dict[str, Any]) -> None:
        self.model = model
        # Bound once: the policies reach these on every job.
        self.uniforms = model.uniforms
        self.channel = model.channel
        self.dispatchers = model.dispatchers

    @classmethod
    def label(cls, params: dict[str, Any]) -> str:
        return cls.name

    @classmethod
    def check(cls, params: dict[str, Any], servers: int, dispatchers: int) -> dict[str, str]:
        """Checks that need the resolved sweep point: ``{field: problem}``; empty if fine."""
        d = params.get("d")
        if d is not None and d > servers and not params.get("replace", False):
            return {"d": f"expected at most N={servers} servers to sample, got {d}"}
        return {}

    def dispatch(self, dispatcher: Dispatcher, job: Job) -> None:
        raise NotImplementedError


def shortest(lengths: list[int], random: Callable[[], float]) -> int:
    """Index of the smallest value, ties broken uniformly at random.

    >>> shortest([3, 1, 2], lambda: 0.5)
    1
    """
    best = 0
    low = lengths[0]
    ties = 1
    for i in range(1, len(lengths)):
        value = lengths[i]
        if value < low:
            best, low, ties = i, value, 1
        elif value == low:
            # Reservoir sampling over the ties: keep i with probability 1/ties.
            ties += 1
            if random() * ties < 1.0:
                best = i
    return best


class IdList:
    """A set of server ids with O(1) add, membership and removal of a random member.

    The dispatcher side of the pull-based policies: JIQ's I-queue and JBT-d's
    list of servers known to be below the threshold.
    """

    __slots__ = ("ids", "where")

    def __init__(self) -> None:
        self.ids: list[int] = []
        self.where: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def add(self, sid: int) -> None:
        if sid not in self.where:
            self.where[sid] = len(self.ids)
            self.ids.append(sid)

    def clear(self) -> None:
        self.ids.clear()
        self.where.clear()

    def take(self, i: int) -> int:
        """Remove and return the member at position ``i`` (swap with the last)."""
        ids, where = self.ids, self.where
        sid = ids[i]
        last = ids.pop()
        if last != sid:
            ids[i] = last
            where[last] = i
        del where[sid]
        return sid

    def take_weighted(self, random: Callable[[], float], weight: list[float], top: float) -> int:
        """Remove a member with probability proportional to ``weight[sid]``; ``top`` >= every weight."""
        n = len(self.ids)
        while True:  # rejection sampling: expected tries at most top / min weight
            i = int(random() * n)
            if random() * top < weight[self.ids[i]]:
                return self.take(i)


def queue_length(server: Any) -> int:
    """A server's answer to a query: its jobs in service plus waiting."""
    return int(server.length)


class ListPolicy(Policy):
    """The dispatcher side of the pull-based policies (JIQ, JBT-d).

    ``dispatcher.state`` is an `IdList` of reported servers. A job goes to a
    listed server taken uniformly at random (or with probability proportional to
    ``weights``, the servers' rates, when set), which removes it and tells the
    server through ``job.via_list``; with an empty list, to a uniformly random server.
    """

    weights: list[float] | None = None
    top_weight = 0.0  # max(weights), set with them: rejection sampling needs it on every pick

    def __init__(self, model: Model, params: dict[str, Any]) -> None:
        super().__init__(model, params)
        for dispatcher in model.dispatchers:
            dispatcher.state = IdList()

    def random_dispatcher(self) -> Dispatcher:
        """Where a server's message goes: the dispatcher, or a uniformly random one of several."""
        dispatchers = self.dispatchers
        return dispatchers[0] if len(dispatchers) == 1 else dispatchers[self.uniforms.randrange(len(dispatchers))]

    def dispatch(self, dispatcher: Dispatcher, job: Job) -> None:
        listed = dispatcher.state
        servers = dispatcher.servers
        uniforms = self.uniforms
        if listed.ids:  # the list itself: IdList's __len__ would cost a Python call, twice per job
            job.via_list = True
            if self.weights is None:
                sid = listed.take(int(uniforms.random() * len(listed.ids)))
            else:
                sid = listed.take_weighted(uniforms.random, self.weights, self.top_weight)
            dispatcher.send(job, servers[sid])
        else:
            dispatcher.send(job, servers[uniforms.randrange(len(servers))])
