"""Scenarios: YAML or dict -> validated, frozen models -> one resolved `Point` per sweep point.

Every default lives here. Bad input raises `ScenarioError` with one line that
names the dotted key, what was expected and what was given. The JSON Schema for
editors is ``Scenario.model_json_schema()`` (``lbemu schema``).
"""

from __future__ import annotations

import copy
import itertools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

import numpy as np
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from . import distributions
from .errors import ScenarioError, show
from .expressions import ExpressionError, evaluate, parse
from .policies import REGISTRY
from .policies.base import resolve_int

MAX_NAME = 255
"""Longest scenario name: it names the results folder, and file systems take names of at most 255 bytes."""


class Strict(BaseModel):
    # strict: no silent coercion (true is not 1, "yes" is not true); lists become tuples where the
    # field says strict=False.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _shape_error(key: str, message: str, value: Any) -> PydanticCustomError:
    return PydanticCustomError("shape", "{key}: " + message, {"key": key, "value": value})


class LawConfig(Strict):
    """A service-time law: ``kind`` and ``mean``, plus its shape where it has one."""

    kind: Literal["exponential", "deterministic", "erlang", "hyperexponential", "lognormal",
                  "pareto"] = "exponential"
    mean: float = Field(1.0, gt=0, allow_inf_nan=False)
    k: int | None = Field(None, ge=1, description="erlang: number of phases")
    scv: float | None = Field(None, gt=0, allow_inf_nan=False,
                              description="hyperexponential (>= 1), lognormal: squared coefficient of variation")
    alpha: float | None = Field(None, gt=2, allow_inf_nan=False,
                                description="pareto: tail index (> 2: with a smaller one the variance is "
                                            "infinite, and so is the mean wait in a queue)")

    @model_validator(mode="after")
    def _shape(self) -> LawConfig:
        wanted = distributions.SHAPE[self.kind]
        for key in ("k", "scv", "alpha"):
            value = getattr(self, key)
            if key == wanted and value is None:
                raise _shape_error(key, f"expected a value for {self.kind}, got nothing", None)
            if key != wanted and value is not None:
                raise _shape_error(key, f"not a parameter of {self.kind}", value)
        if self.kind == "hyperexponential" and self.scv is not None and self.scv < 1:
            raise _shape_error("scv", "expected >= 1 for hyperexponential", self.scv)
        return self

    def law(self) -> distributions.Law:
        return distributions.Law(self.kind, self.mean, self.k, self.scv, self.alpha)

    def describe(self) -> str:
        shape = distributions.SHAPE[self.kind]
        suffix = f",{shape}={getattr(self, shape):g}" if shape else ""
        return f"{self.kind}({self.mean:g}{suffix})"


class LatencyConfig(LawConfig):
    """Message latency; mean 0 (the default) delivers every message at once."""

    kind: Literal["exponential", "deterministic", "erlang", "hyperexponential", "lognormal",
                  "pareto"] = "deterministic"
    mean: float = Field(0.0, ge=0, allow_inf_nan=False)


ARRIVAL_PARAMS = {"mmpp2": ("burstiness", "switch_rate"), "batch_poisson": ("mean_batch",),
                  "trace": ("path",)}


class ArrivalsConfig(Strict):
    """The arrival process; its rate follows from ``workload.load``."""

    kind: Literal["poisson", "mmpp2", "batch_poisson", "deterministic", "trace"] = "poisson"
    burstiness: float | None = Field(None, ge=1, allow_inf_nan=False,
                                     description="mmpp2: peak-to-mean rate ratio (default 2)")
    switch_rate: float | None = Field(None, gt=0, allow_inf_nan=False,
                                      description="mmpp2: high/low cycles per unit time (default 0.1)")
    mean_batch: float | None = Field(None, ge=1, allow_inf_nan=False,
                                     description="batch_poisson: mean batch size (default 2)")
    path: str | None = Field(None, description="trace: CSV with a 'time' column, optional 'size'")

    @field_validator("path")
    @classmethod
    def _absolute(cls, value: str | None) -> str | None:
        # Absolute, so that the scenario.yaml written into a results folder runs again from anywhere.
        return None if value is None else str(Path(value).absolute())

    @model_validator(mode="after")
    def _params(self) -> ArrivalsConfig:
        allowed = ARRIVAL_PARAMS.get(self.kind, ())
        for key in ("burstiness", "switch_rate", "mean_batch", "path"):
            if key not in allowed and getattr(self, key) is not None:
                raise _shape_error(key, f"not a parameter of {self.kind} arrivals", getattr(self, key))
        if self.kind == "trace" and self.path is None:
            raise _shape_error("path", "expected a CSV file for trace arrivals, got nothing", None)
        return self

    def gap_options(self) -> dict[str, Any]:
        options = {key: getattr(self, key) for key in ARRIVAL_PARAMS.get(self.kind, ())}
        return {key: value for key, value in options.items() if value is not None}


class SlotConfig(Strict):
    """The open points of slotted time (see docs/slotted.md)."""

    same_slot: bool = Field(
        True, description="a job can be served in the slot it arrives in (response >= 1 slot); "
                          "false: from the next slot on (response >= 2)")
    dispatch: Literal["slot", "job"] = Field(
        "slot", description="slot: one routing decision per slot and dispatcher, the slot's arrivals there go "
                            "together to the server it picks (Zhou et al.'s model); job: each arrival is "
                            "dispatched on its own")
    pull_delay: int = Field(
        0, ge=0, le=1000, description="slots before an idle token or report reaches the decisions: 0, one sent "
                                      "at the end of a slot is seen by the next slot's decision; k, by the "
                                      "decision k slots after that")


def _speeds_member(value: Any) -> str:
    return "speeds-law" if isinstance(value, (dict, LawConfig)) else "speeds-list"


# A list of speeds or a law; the discriminator picks the member, so an error is reported for that one only.
Speeds = Annotated[
    Annotated[tuple[Annotated[float, Field(gt=0, allow_inf_nan=False, strict=True)], ...],
              Field(strict=False), Tag("speeds-list")]
    | Annotated[LawConfig, Tag("speeds-law")],
    Discriminator(_speeds_member)]


class SystemConfig(Strict):
    servers: int = Field(10, ge=1, description="N")
    discipline: Literal["fifo", "pool"] = "fifo"
    capacity: int | None = Field(None, ge=1, description="max jobs at a server; more are blocked")
    speeds: Speeds | None = Field(
        None, description="service rate of each server (default all 1), or a law they are drawn from "
                          "once per replication")
    dispatchers: int = Field(1, ge=1)
    dispatcher_shares: tuple[Annotated[float, Field(gt=0, allow_inf_nan=False, strict=True)], ...] | None = Field(
        None, strict=False, description="fraction of the arrivals each dispatcher receives (default equal)")
    time: Literal["continuous", "slotted"] = Field(
        "continuous", description="slotted: arrivals and service in whole time slots (docs/slotted.md)")
    slot: SlotConfig | None = Field(None, description="slotted time: options of the slot semantics")

    @model_validator(mode="after")
    def _system(self) -> SystemConfig:
        if self.slot is not None and self.time != "slotted":
            raise _shape_error("slot", "expected only with system.time: slotted", self.time)
        shares = self.dispatcher_shares
        if shares is not None:
            if len(shares) != self.dispatchers:
                raise _shape_error("dispatcher_shares", f"expected {self.dispatchers} fractions (one per "
                                   f"dispatcher)", list(shares))
            if abs(math.fsum(shares) - 1.0) > 1e-9:
                raise _shape_error("dispatcher_shares", f"expected fractions summing to 1, they sum to "
                                   f"{math.fsum(shares):.12g}", list(shares))
        return self


class WorkloadConfig(Strict):
    load: float | str = Field(
        0.9, description="arrival rate / total service capacity: a number or an expression in N")
    arrivals: ArrivalsConfig = ArrivalsConfig()
    service: LawConfig = LawConfig()

    @field_validator("load")
    @classmethod
    def _load(cls, value: float | str) -> float | str:
        if isinstance(value, str):
            try:
                parse(value)
            except ExpressionError as exc:
                raise ValueError(f"expected a number > 0 or an expression in N, {show(value)}: {exc}") from None
        elif not (value > 0 and math.isfinite(value)):
            raise ValueError(f"expected a number > 0, got {value}")
        return value


class NetworkConfig(Strict):
    latency: LatencyConfig = LatencyConfig()


class RunConfig(Strict):
    jobs: int = Field(50_000, ge=1, description="measured jobs per replication, after warm-up")
    warmup_jobs: int = Field(5_000, ge=0, description="jobs discarded before measuring")
    occupancy: bool = Field(True, description="stream the queue-length distribution (occupancy.csv, "
                            "spread and heavy-traffic metrics); costs about 20% of the throughput")
    engine: Literal["simpy", "compiled", "auto"] = Field(
        "auto", description="simpy; compiled (the numba engine, where it supports the scenario, else simpy); "
                            "auto: compiled for long enough runs it supports (the same results either way)")


class PrecisionConfig(Strict):
    """Add replications until every (point, policy) meets a relative CI half-width."""

    metric: str = Field("mean_response", description="a metric column of runs.csv")
    relative_halfwidth: float = Field(0.01, gt=0, allow_inf_nan=False,
                                      description="target 95% CI half-width / |mean|")
    max_replications: int = Field(50, ge=2, description="stop adding replications here")

    @field_validator("metric")
    @classmethod
    def _metric(cls, value: str) -> str:
        from .metrics import METRICS

        if value not in METRICS:
            raise ValueError(f"expected a metric column ({', '.join(METRICS)}), got {value!r}")
        if value == "wall_seconds":  # it depends on the machine and the worker count
            raise ValueError(f"expected a simulated metric, not one of timing, got {value!r}")
        return value


Values = Annotated[tuple[Any, ...], Field(strict=False)]  # a swept key's values: a YAML list

if TYPE_CHECKING:
    PolicyEntry = Any
else:
    # One member per registered policy, told apart by `name`: built from the registry.
    PolicyEntry = Annotated[Union[tuple(cls.Config for cls in REGISTRY.values())],  # noqa: UP007
                            Field(discriminator="name")]


class Scenario(Strict):
    """A scenario: what to simulate, which policies, which sweep. See docs/scenarios.md.

    Examples
    --------
    >>> s = Scenario.from_dict({"policies": [{"name": "sqd", "d": 2}], "sweep": {"workload.load": [0.5, 0.9]}})
    >>> [(p.load, p.policies[0].label) for p in s.points()]
    [(0.5, 'SQ(2)'), (0.9, 'SQ(2)')]
    >>> s.with_overrides(**{"system.servers": 20}).system.servers
    20
    """

    name: str = Field("scenario", pattern=r"^[A-Za-z0-9_.\-]+$",
                      description="names the default output folder results/<name>/: one plain folder name")
    description: str = ""
    seed: int = Field(2026, ge=0, description="root seed: same seed, same results")
    replications: int = Field(5, ge=1)
    run: RunConfig = RunConfig()
    system: SystemConfig = SystemConfig()
    workload: WorkloadConfig = WorkloadConfig()
    network: NetworkConfig = NetworkConfig()
    policies: tuple[PolicyEntry, ...] = Field(min_length=1, strict=False)
    sweep: dict[str, Values] = Field(
        default_factory=dict, strict=False, description="cartesian product of dotted keys and their values")
    zip: tuple[dict[str, Values], ...] = Field(
        (), strict=False, description="groups of dotted keys whose values move together")
    allow_unstable: bool = Field(False, description="allow load >= 1 on FIFO queues without capacity")
    compare_to: str | None = Field(
        None, description="policy label: add paired differences against it (same jobs) to the summary")
    precision: PrecisionConfig | None = Field(None, description="add replications until a CI target is met")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        # results/. and results/.. are not folders of their own: .. is the working directory.
        if value in (".", ".."):
            raise ValueError(f"expected one plain folder name (letters, digits, _ . -), got {value!r}")
        if len(value) > MAX_NAME:  # refused here, before a results folder is made for it
            raise ValueError(f"expected a folder name of at most {MAX_NAME} characters (the file systems' "
                             f"limit), got {len(value)}: {show(value)}")
        return value

    @model_validator(mode="after")
    def _swept_once(self) -> Scenario:
        # A key in two places would silently lose one of its lists.
        groups = [("sweep", tuple(self.sweep))] + [(f"zip.{i}", tuple(g)) for i, g in enumerate(self.zip)]
        where: dict[str, str] = {}
        for name, keys in groups:
            for key in keys:
                if key in where:
                    raise _shape_error(name, f"'{key}' is also swept in {where[key]}; expected each key "
                                             f"in one place", None)
                where[key] = name
        return self

    @field_validator("sweep")
    @classmethod
    def _sweep(cls, sweep: dict[str, tuple[Any, ...]]) -> dict[str, tuple[Any, ...]]:
        for key, values in sweep.items():
            _check_swept_key(key)
            if not values:
                raise ValueError(f"'{key}': expected a non-empty list of values")
        return sweep

    @field_validator("zip")
    @classmethod
    def _zip(cls, groups: tuple[dict[str, tuple[Any, ...]], ...]) -> tuple[dict[str, tuple[Any, ...]], ...]:
        for i, group in enumerate(groups):
            for key in group:
                _check_swept_key(key)
            lengths = {key: len(values) for key, values in group.items()}
            if not group or len(set(lengths.values())) != 1 or 0 in lengths.values():
                raise ValueError(f"group {i}: expected keys with non-empty lists of equal length, got {lengths}")
        return groups

    # -- construction ----------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Scenario:
        """Validate a scenario; raise `ScenarioError` naming the first bad key."""
        if not isinstance(data, dict):
            raise ScenarioError(f"scenario: expected a mapping of keys, got {type(data).__name__}")
        try:
            data = _plain(data)
            scenario = cls.model_validate(data)
        except RecursionError:
            raise ScenarioError("scenario: expected keys and values nested a few levels deep, got deeper") from None
        except ValidationError as exc:
            raise ScenarioError(format_error(exc)) from None
        scenario.points()  # resolve every sweep point now, so bad points fail before anything runs
        return scenario

    def with_overrides(self, overrides: dict[str, Any] | None = None, /, **dotted: Any) -> Scenario:
        """A copy with dotted keys replaced; ``a__b=1`` stands for ``"a.b": 1``.

        A key that the scenario sweeps gets the one value given instead of the sweep.
        """
        changes = dict(overrides or {})
        changes.update({key.replace("__", "."): value for key, value in dotted.items()})
        data = self.to_dict()
        for key, value in changes.items():
            # An explicit value replaces a sweep over that key (a zip group cannot lose one key).
            data.get("sweep", {}).pop(key, None)
            for group in data.get("zip", ()):
                if key in group:
                    raise ScenarioError(f"{key}: expected a key outside the zip groups, "
                                        f"it moves with {', '.join(k for k in group if k != key)}")
            _assign(data, key, value)
        return Scenario.from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        """Plain data that `from_dict` turns back into an equal scenario."""
        return self.model_dump(mode="json", exclude_none=True)

    # -- expansion -------------------------------------------------------------------
    def points(self) -> list[Point]:
        """Every sweep point, resolved: expressions evaluated, checks that need N done."""
        base = self.to_dict()
        base.pop("sweep", None)
        base.pop("zip", None)
        axes: list[list[dict[str, Any]]] = [
            [{key: value} for value in values] for key, values in self.sweep.items()]
        axes += [[dict(zip(group, row, strict=True)) for row in zip(*group.values(), strict=True)]
                 for group in self.zip]
        points = []
        for index, combination in enumerate(itertools.product(*axes)):
            values: dict[str, Any] = {}
            for part in combination:
                values.update(part)
            points.append(_resolve(base, index, values))
        return points


def _plain(data: Any, done: dict[int, Any] | None = None) -> Any:
    """``data`` with numpy scalars and arrays made Python numbers and lists, for strict validation.

    A container met again (a YAML alias) is converted once: an anchor bomb stays small.
    """
    done = {} if done is None else done
    if isinstance(data, np.ndarray):
        data = data.tolist()
    if isinstance(data, np.generic):
        return data.item()
    if not isinstance(data, (dict, list, tuple)):
        return data
    if id(data) not in done:
        if isinstance(data, dict):
            mapping: dict[Any, Any] = {}
            done[id(data)] = mapping
            mapping.update((key, _plain(value, done)) for key, value in data.items())
        else:
            items: list[Any] = []
            done[id(data)] = items
            items.extend(_plain(value, done) for value in data)
    return done[id(data)]


# Keys that describe the whole run rather than a sweep point: sweeping them would change nothing.
_RUN_KEYS = ("name", "description", "seed", "replications", "sweep", "zip", "compare_to", "precision")


def _check_swept_key(key: str) -> None:
    if key.split(".")[0] in _RUN_KEYS:
        raise ValueError(f"'{key}': expected a key of a sweep point (run, system, workload, network, "
                         f"policies), not one of the whole run")


def _assign(data: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``data[a][b]...`` for ``dotted = "a.b..."``; list items by index."""
    parts = dotted.split(".")
    node: Any = data
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        where = ".".join(parts[: depth + 1])
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise ScenarioError(f"{where}: expected an index below {len(node)}, got '{part}'")
            if last:
                node[int(part)] = value
            else:
                node = node[int(part)]
        elif isinstance(node, dict):
            if last:
                node[part] = value
            else:
                node = node.setdefault(part, {})
        else:
            raise ScenarioError(f"{where}: cannot set a key inside a {type(node).__name__}")


@dataclass(frozen=True)
class ResolvedPolicy:
    """One policy at one sweep point: its registry name, label and resolved parameters."""

    name: str
    label: str
    params: dict[str, Any] = field(hash=False)

    @property
    def d(self) -> int | None:
        value = self.params.get("d")
        return value if isinstance(value, int) else None


@dataclass(frozen=True)
class Point:
    """One sweep point, fully resolved: what a replication needs, and nothing else."""

    index: int
    values: dict[str, Any] = field(hash=False)  # swept dotted key -> value
    scenario: Scenario = field(hash=False)  # the scenario with the values applied, no sweep
    load: float = 0.0
    rate: float = 0.0  # arrival rate in jobs per unit time
    policies: tuple[ResolvedPolicy, ...] = ()

    @property
    def servers(self) -> int:
        return self.scenario.system.servers

    def describe(self) -> str:
        swept = ", ".join(f"{key}={value}" for key, value in self.values.items())
        return swept or "(no sweep)"


def _resolve(base: dict[str, Any], index: int, values: dict[str, Any]) -> Point:
    where = f" (sweep point {index}: " + ", ".join(f"{k}={show(v)}" for k, v in values.items()) + ")" \
        if values else ""
    data = copy.deepcopy(base)
    try:
        for key, value in values.items():
            _assign(data, key, value)
        try:
            scenario = Scenario.model_validate(data)
        except ValidationError as exc:
            raise ScenarioError(format_error(exc)) from None
        return _resolve_point(scenario, index, values)
    except ScenarioError as exc:
        raise ScenarioError(f"{exc}{where}") from None


def _resolve_point(scenario: Scenario, index: int, values: dict[str, Any]) -> Point:
    from .limits import check_point, check_size

    system, workload = scenario.system, scenario.workload
    n = system.servers
    check_size(scenario)
    if isinstance(system.speeds, tuple) and len(system.speeds) != n:
        raise ScenarioError(f"system.speeds: expected {n} rates (one per server), got {len(system.speeds)}")
    load = workload.load
    if isinstance(load, str):
        try:
            load = evaluate(load, n)
        except ExpressionError as exc:
            raise ScenarioError(f"workload.load: '{workload.load}' {exc}") from None
        if load <= 0:
            raise ScenarioError(f"workload.load: expected > 0, '{workload.load}' gives {load:g} at N={n}")
    capacity = expected_capacity(system)
    if system.time == "slotted":
        _check_slotted(scenario)
    if workload.arrivals.kind == "trace":
        # A finite trace: its own times and sizes set the rate and the load, and it ends.
        rate, mean_size = _check_trace(scenario)
        load = rate * mean_size / capacity
    else:
        unstable = system.discipline == "fifo" and system.capacity is None and load >= 1
        if unstable and not scenario.allow_unstable:
            raise ScenarioError(
                f"workload.load: expected < 1 for FIFO queues without capacity "
                f"(or allow_unstable: true), got {load:g}")
        rate = load * capacity / workload.service.mean
    policies = []
    for i, entry in enumerate(scenario.policies):
        cls = REGISTRY[entry.name]
        params = entry.model_dump(exclude={"name", "label"})
        for key in cls.expressions:
            if params[key] is None:  # an optional parameter left out (JIQ's d)
                continue
            try:
                params[key] = resolve_int(params[key], n)
            except ExpressionError as exc:
                raise ScenarioError(f"policies.{i}.{key}: '{params[key]}' {exc}") from None
            except ValueError as exc:
                raise ScenarioError(f"policies.{i}.{key}: {exc}") from None
            if params[key] < 1:
                raise ScenarioError(f"policies.{i}.{key}: expected >= 1, got {params[key]} at N={n}")
        for key, problem in cls.check(params, n, system.dispatchers).items():
            raise ScenarioError(f"policies.{i}.{key}: {problem}")
        policies.append(ResolvedPolicy(entry.name, entry.label or cls.label(params), params))
    labels = [policy.label for policy in policies]
    for label in labels:
        if labels.count(label) > 1:
            raise ScenarioError(f"policies: expected distinct labels, '{label}' appears {labels.count(label)} times "
                                "(set label: on one of them)")
    if scenario.compare_to is not None and scenario.compare_to not in labels:
        raise ScenarioError(f"compare_to: expected one of the policy labels ({', '.join(labels)}), "
                            f"got {scenario.compare_to!r}")
    check_point(scenario, float(load), rate, policies)
    return Point(index, values, scenario, float(load), rate, tuple(policies))


def _check_slotted(scenario: Scenario) -> None:
    """What slotted time cannot run: each gets one line naming the key."""
    system, workload = scenario.system, scenario.workload
    arrivals, service = workload.arrivals, workload.service
    if system.discipline != "fifo":
        raise ScenarioError(f"system.discipline: expected fifo in slotted time, got {system.discipline!r}")
    if arrivals.kind == "trace":
        raise ScenarioError("workload.arrivals.kind: expected poisson, batch_poisson, mmpp2 or deterministic "
                            "in slotted time (counts per slot), got 'trace'")
    if arrivals.kind == "mmpp2":
        b, c = arrivals.burstiness or 2.0, arrivals.switch_rate or 0.1
        if (b + 1.0) * c > 1.0:
            raise ScenarioError(f"workload.arrivals.switch_rate: expected at most 1/(burstiness+1) = "
                                f"{1.0 / (b + 1.0):.4g} in slotted time (it sets the per-slot probability "
                                f"(b+1)*switch_rate of leaving the high state), got {c:g}")
    if scenario.network.latency.mean != 0:
        raise ScenarioError(f"network.latency.mean: expected 0 in slotted time (messages arrive within the "
                            f"slot), got {scenario.network.latency.mean:g}")
    if service.kind not in ("deterministic", "exponential"):
        raise ScenarioError(f"workload.service.kind: expected deterministic (constant capacity per slot) or "
                            f"exponential (Poisson capacity per slot) in slotted time, got {service.kind!r}")
    if service.kind == "deterministic":
        if isinstance(system.speeds, LawConfig):
            raise ScenarioError("system.speeds: expected a list of speeds with deterministic service in slotted "
                                "time (whole jobs per slot), got a law")
        for speed in system.speeds or (1.0,):
            mu = speed / service.mean
            if abs(mu - round(mu)) > 1e-9 or round(mu) < 1:
                raise ScenarioError(f"workload.service.mean: expected speed / mean to be a whole number of "
                                    f"jobs per slot with deterministic service in slotted time, got "
                                    f"{speed:g} / {service.mean:g} = {mu:.4g}")
    for i, entry in enumerate(scenario.policies):
        period = getattr(entry, "period", None)
        if isinstance(period, (int, float)) and period != round(period):
            raise ScenarioError(f"policies.{i}.period: expected a whole number of slots in slotted time, "
                                f"got {period:g}")


def expected_capacity(system: SystemConfig) -> float:
    """The total service rate: the sum of the speeds; with a law of speeds, N times its mean."""
    if isinstance(system.speeds, tuple):
        return sum(system.speeds)
    if isinstance(system.speeds, LawConfig):
        return system.servers * system.speeds.mean
    return float(system.servers)


def _check_trace(scenario: Scenario) -> tuple[float, float]:
    """Check a trace file; return its arrival rate and mean job size."""
    from .arrivals import read_trace

    path = scenario.workload.arrivals.path
    try:
        times, sizes = read_trace(path)  # type: ignore[arg-type]
    except ValueError as exc:
        raise ScenarioError(f"workload.arrivals.path: {exc}") from None
    needed = scenario.run.jobs + scenario.run.warmup_jobs
    if len(times) < needed:
        raise ScenarioError(f"workload.arrivals.path: expected at least run.warmup_jobs + run.jobs = "
                            f"{needed} arrivals, got {len(times)} in '{path}'")
    span = float(times[-1])
    if span <= 0:
        raise ScenarioError(f"workload.arrivals.path: expected arrivals spread over time, '{path}' has all at 0")
    mean_size = float(sizes.mean()) if sizes is not None else scenario.workload.service.mean
    return len(times) / span, mean_size


# -- error formatting ----------------------------------------------------------------
_TAGS = set(REGISTRY)


# The member tags pydantic appends inside a plain union, e.g. d: int | str -> "d.constrained-int".
_MEMBER = re.compile(r"^((constrained-)?(int|float|str|bool)|function-(before|after|wrap|plain)\[.*)$")
_SPEEDS_TAGS = ("speeds-list", "speeds-law")  # the member tags of system.speeds


def _location(loc: tuple[Any, ...], members: bool = True) -> str:
    parts: list[str] = []
    for i, item in enumerate(loc):
        # Drop the union tag that pydantic inserts after a policy entry's index.
        if i >= 2 and loc[i - 2] == "policies" and isinstance(loc[i - 1], int) and item in _TAGS:
            continue
        if (members and i >= 1 and isinstance(item, str) and _MEMBER.match(item)) or item in _SPEEDS_TAGS:
            continue
        parts.append(str(item))
    return ".".join(parts)


def _allowed_keys(loc: tuple[Any, ...]) -> list[str]:
    """The keys the model at ``loc`` (the parent of an unknown key) accepts."""
    model: Any = Scenario
    for i, item in enumerate(loc):
        if i >= 2 and loc[i - 2] == "policies" and isinstance(loc[i - 1], int) and item in REGISTRY:
            model = REGISTRY[item].Config
            continue
        if isinstance(item, int) or item in ("policies", "speeds"):  # the member's tag names its model
            continue
        if item == "speeds-law":
            model = LawConfig
            continue
        field = getattr(model, "model_fields", {}).get(item)
        annotation = getattr(field, "annotation", None)
        model = next((arg for arg in (annotation, *getattr(annotation, "__args__", ()))
                      if isinstance(arg, type) and issubclass(arg, BaseModel)), None)
        if model is None:
            return []
    return list(getattr(model, "model_fields", {}))


def format_error(exc: ValidationError) -> str:
    """One line for the first error: dotted key, what was expected, what was given."""
    errors = exc.errors()
    # A bad policy entry also makes the list look too short; report the entry.
    errors = [e for e in errors if e["type"] != "too_short"] or errors
    error = errors[0]
    kind, ctx, given = error["type"], error.get("ctx") or {}, error.get("input")
    loc = _location(tuple(error["loc"]), members=kind != "extra_forbidden")
    if kind == "shape":
        loc = f"{loc}.{ctx['key']}" if loc else str(ctx["key"])
        message = error["msg"].split(": ", 1)[1]
        return f"{loc}: {message}" + ("" if ctx.get("value") is None else f", got {show(ctx['value'])}")
    if kind == "extra_forbidden":
        allowed = _allowed_keys(tuple(error["loc"])[:-1])
        message = "unknown key" + (f" (expected one of {', '.join(allowed)})" if allowed else "")
    elif kind == "missing":
        message = "expected a value, got nothing"
        given = None
    elif kind in ("union_tag_invalid", "union_tag_not_found"):
        field = ctx.get("discriminator", "name").strip("'")
        loc = f"{loc}.{field}"
        expected = ctx.get("expected_tags", ", ".join(REGISTRY))
        message = f"expected one of {expected}"
        given = ctx.get("tag")
        if given is None:
            return f"{loc}: {message}, got nothing"
    elif kind == "too_short":
        message = f"expected at least {ctx.get('min_length', 1)} item(s)"
    elif kind == "literal_error":
        message = f"expected one of {ctx.get('expected')}"
    elif kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        sign = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<",
                "less_than_equal": "<="}[kind]
        bound = next(iter(v for k, v in ctx.items() if k in ("gt", "ge", "lt", "le")))
        message = f"expected a number {sign} {bound}"
    elif kind == "value_error":
        message = str(ctx.get("error", error["msg"]))
        return f"{loc}: {message}"
    else:
        message = "expected " + error["msg"][0].lower() + error["msg"][1:]
        message = message.replace("expected input should be", "expected")
    text = f"{loc}: {message}, got {show(given)}" if given is not None or kind != "missing" else f"{loc}: {message}"
    others = {_location(tuple(e["loc"])) for e in errors[1:]} - {loc}  # one per key, not per union member
    if others:
        text += f" (and {len(others)} more)"
    return text


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a YAML scenario file."""
    from .yaml_input import load

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"scenario: cannot read '{path}' ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"scenario: expected a UTF-8 text file, '{path}' has byte "
                            f"{exc.object[exc.start]:#04x} at offset {exc.start}") from None
    data = load(text, str(path))
    data = data if data is not None else {}
    _anchor_trace(data, Path(path).parent)
    return Scenario.from_dict(data)


def _anchor_trace(data: Any, folder: Path) -> None:
    """A relative trace path in a scenario file is relative to that file, not to where lbemu runs."""
    try:
        arrivals = data["workload"]["arrivals"]
        relative = arrivals["kind"] == "trace" and not Path(arrivals["path"]).is_absolute()
    except (KeyError, TypeError):
        return
    if relative:
        arrivals["path"] = str(folder / arrivals["path"])
