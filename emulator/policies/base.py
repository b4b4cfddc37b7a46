"""The policy contract: a dispatcher side and a server side that talk only through messages.

A policy is one class, registered by name (`emulator.policies.register_policy`):

- ``Config``: a frozen pydantic model of its scenario parameters (plus ``name`` and
  ``label``); scenario validation and the JSON Schema pick it up from the registry.
  A field annotated `IntOrExpr` may be an expression in N; the policy receives its
  Config resolved at the sweep point (`PolicyConfig.resolve`), expressions evaluated.
- ``label(config)``: the display label, e.g. ``SQ(2)``: one line of text, at most 200 characters
  without control characters (`emulator.scenario.sweep.label_problem`, as for a scenario's ``label:``).
- ``messages``: one line on its control-message cost, for ``lbemu policies``.
- ``check(config, point)``: problems that need the resolved sweep point (N, the
  dispatchers, the arrival rate), as ``{field: problem}`` (None counts as none); ``check_speeds``:
  whether given server speeds provably overload some server under this policy.
- ``__init__(model, config)``: wires the server side (hooks on the servers) and
  starts any periodic dispatcher process; ``model`` is a `views.ModelView`.
- ``dispatch(dispatcher, job)``: the dispatcher side; sends ``job`` once, with
  ``dispatcher.send(job, server)``, now or later (when the replies to the queries
  it sent for the job come back). A policy that is not built in is held to this
  per job (`emulator.model.policing`): a job it sends twice, or leaves unsent with
  no reply to come, fails the run with `emulator.errors.PolicyError`.
- ``receiver(dispatcher)``: optional, what a job that reaches ``dispatcher`` is handed to; by default
  ``dispatch`` with the dispatcher bound (SQ(2) with zero latency returns a faster callable that
  does what its ``dispatch`` does).
- ``whole_batches``: True for a policy that places the jobs that arrive together (gap 0) as one
  batch: they reach one dispatcher (one split draw per batch) one after the other in the same
  step, each with ``job.batch``, the batch's size; it sends them once the last is in.
- ``compiled``: the dotted name of its compiled description (a module under
  ``emulator.compiled.policies``), or None: then only the SimPy engine runs it.

Transport (latency, counting) belongs to the channel (`emulator.model.channels`);
a policy only says which messages go where. It sees the engine only through
`emulator.policies.views`, so defining a policy imports no engine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from typing_extensions import Self

from ..errors import show
from ..scenario.expressions import ExpressionError, evaluate, parse
from .views import DispatcherView, JobView, ModelView, PointView


def _check_expression(value: Any) -> Any:
    if isinstance(value, str):
        try:
            parse(value)
        except ExpressionError as exc:
            raise ValueError(f"expected an integer or an expression in N, {show(value)}: {exc}") from None
    return value


class _Expression:
    """Marks a field whose value may be an expression in N (see `PolicyConfig.resolve`)."""


EXPRESSION = _Expression()

MAX_SAMPLES = 1_000_000
"""Servers a job samples with replacement, at most: the bound on ``system.servers``, so that its work and
memory grow with the jobs simulated, not with ``d`` (``d: 2**63`` failed every task)."""

IntOrExpr = Annotated[Annotated[int, Field(ge=1)] | str, BeforeValidator(_check_expression), EXPRESSION]
"""An integer >= 1, or an arithmetic expression in N evaluated per sweep point."""


class PolicyConfig(BaseModel):
    """Parameters shared by every policy."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    name: str
    label: str | None = Field(None, description="display label in tables; default from the parameters")

    @classmethod
    def expressions(cls) -> tuple[str, ...]:
        """The fields that may be expressions in N (annotated `IntOrExpr`)."""
        return tuple(key for key, field in cls.model_fields.items() if EXPRESSION in field.metadata
                     or any(EXPRESSION in getattr(arg, "__metadata__", ()) for arg in _members(field.annotation)))

    def resolve(self, n: int) -> Self:
        """This configuration at ``N = n``: every expression evaluated to a whole number >= 1.

        Raises `ResolveError` naming the field.
        """
        update: dict[str, int] = {}
        for key in self.expressions():
            value = getattr(self, key)
            if value is None:  # an optional parameter left out (JIQ's d)
                continue
            try:
                resolved = resolve_int(value, n)
            except ExpressionError as exc:
                raise ResolveError(key, f"'{value}' {exc}") from None
            except ValueError as exc:
                raise ResolveError(key, str(exc)) from None
            if resolved < 1:
                raise ResolveError(key, f"expected >= 1, got {resolved} at N={n}")
            update[key] = resolved
        return self.model_copy(update=update) if update else self

    def params(self) -> dict[str, Any]:
        """The parameters as plain data (without ``name`` and ``label``), e.g. for theory lookups."""
        return self.model_dump(exclude={"name", "label"})


def _members(annotation: Any) -> tuple[Any, ...]:
    """The members of a union annotation (``IntOrExpr | None``), or the annotation itself."""
    return (annotation, *getattr(annotation, "__args__", ()))


class ResolveError(ValueError):
    """A policy parameter that does not resolve at a sweep point: ``key`` and the problem."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key}: {problem}")
        self.key, self.problem = key, problem


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
    compiled: ClassVar[str | None] = None
    whole_batches: ClassVar[bool] = False  # the jobs of a batch to one dispatcher, with their number

    def __init__(self, model: ModelView, config: Any) -> None:
        self.model = model
        self.config = config
        # Bound once: the policies reach these on every job.
        self.uniforms = model.uniforms
        self.channel = model.channel
        self.dispatchers = model.dispatchers

    @classmethod
    def label(cls, config: Any) -> str:
        return cls.name

    @classmethod
    def check(cls, config: Any, point: PointView) -> dict[str, str]:
        """Checks that need the resolved sweep point: ``{field: problem}``; empty if fine."""
        d = getattr(config, "d", None)
        if not isinstance(d, int):
            return {}
        if not getattr(config, "replace", False):
            if d > point.servers:
                return {"d": f"expected at most N={point.servers} servers to sample, got {d}"}
        elif d > MAX_SAMPLES:
            return {"d": f"expected at most {MAX_SAMPLES:,} servers sampled with replacement (a job's 2d messages "
                         f"then cost at most what JSQ's 2N do at the largest N), got {d}"}
        return {}

    @classmethod
    def check_speeds(cls, config: Any, speeds: Sequence[float], work: float) -> str | None:
        """Whether servers of these speeds are provably overloaded under this policy, whatever their state.

        ``work`` is the work arriving per unit time (arrival rate x mean size). Returns
        what overloads them, to follow "<label> " in an error line, or None. Policies
        that look at lengths (JSQ, JIQ, JBT-d) cannot be judged so and return None.
        """
        return None

    @classmethod
    def samples_per_job(cls, config: Any, point: PointView) -> float:
        """Servers (or dispatchers) it reads or tells per job beyond a fixed cost: what its SimPy run costs.

        The cost model of ``run.engine: auto`` (`emulator.compiled.cost.simpy_seconds`)
        reads it; zero for policies whose per-job work does not grow with a parameter.
        """
        return 0.0

    def dispatch(self, dispatcher: DispatcherView, job: JobView) -> None:
        raise NotImplementedError

    def receiver(self, dispatcher: DispatcherView) -> Callable[[JobView], None]:
        """What a job that reaches ``dispatcher`` is handed to: `dispatch`, with ``dispatcher`` bound.

        A C-level `functools.partial`: the same call as ``dispatch(dispatcher, job)``, without a
        Python frame of its own. A policy may return another callable that does what its
        `dispatch` does (SQ(2)'s zero-latency path is a method bound to the dispatcher).
        """
        return partial(self.dispatch, dispatcher)


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

    def __init__(self, model: ModelView, config: Any) -> None:
        super().__init__(model, config)
        for dispatcher in model.dispatchers:
            dispatcher.state = IdList()

    def random_dispatcher(self) -> DispatcherView:
        """Where a server's message goes: the dispatcher, or a uniformly random one of several."""
        dispatchers = self.dispatchers
        return dispatchers[0] if len(dispatchers) == 1 else dispatchers[self.uniforms.randrange(len(dispatchers))]

    def dispatch(self, dispatcher: DispatcherView, job: JobView) -> None:
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


def overloaded_by_samples(speeds: Sequence[float], work: float, d: int, replace: bool) -> list[int]:
    """The smallest set of the k slowest servers that jobs sampling d servers uniformly overload (empty if none).

    A policy that sends each job to one of its d uniformly sampled servers sends a
    set S of k servers at least ``work`` x P(all d samples in S) work per unit time,
    P = C(k, d) / C(N, d) (or (k/N)^d with replacement); S is overloaded when that
    reaches the sum of its speeds, and the k slowest servers are the set most likely
    to be.
    """
    import numpy as np
    from scipy.special import gammaln

    n = len(speeds)
    order = np.argsort(speeds, kind="stable")
    capacity = np.cumsum(np.asarray(speeds, dtype=float)[order])  # of the k slowest, k = 1..N
    k = np.arange(1, n + 1, dtype=float)
    if replace:
        probability = (k / n) ** d
    else:  # C(k, d) / C(N, d), zero for k < d
        inside = k >= d
        probability = np.zeros(n)
        probability[inside] = np.exp(gammaln(k[inside] + 1) - gammaln(k[inside] - d + 1)
                                     - gammaln(n + 1) + gammaln(n - d + 1))
    overloaded = np.nonzero(work * probability >= capacity * (1 + 1e-12))[0]
    return [] if overloaded.size == 0 else sorted(order[: overloaded[0] + 1].tolist())


def overloaded_evenly(speeds: Sequence[float], work: float,
                      how: str = "sends each server 1/N of the arrivals") -> str | None:
    """What a policy that sends each server 1/N of the work overloads, or None (random, round robin)."""
    share = work / len(speeds)  # work per unit time sent to each server
    slow = [i for i, speed in enumerate(speeds) if speed <= share]
    if not slow:
        return None
    listed = ", ".join(f"{i} (speed {speeds[i]:.3g})" for i in slow[:5])
    listed += f" and {len(slow) - 5} more" if len(slow) > 5 else ""
    return f"{how}, {share:.4g} units of work per unit time, which overloads server(s) {listed}"


def overloaded_sampling(speeds: Sequence[float], work: float, d: int, replace: bool) -> str | None:
    """What a policy that joins one of d uniform samples overloads (SQ(d), the threshold model), or None."""
    slowest = overloaded_by_samples(speeds, work, d, replace)
    if not slowest:
        return None
    listed = ", ".join(str(i) for i in slowest[:10]) + (" ..." if len(slowest) > 10 else "")
    return f"sends every job whose {d} sampled servers are all among the {len(slowest)} slowest (servers " \
           f"{listed}) to one of them, more work than their speeds sum to"
