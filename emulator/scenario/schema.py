"""The scenario's schema: frozen pydantic models of every key, with every default.

These models check what needs no sweep point (types, ranges, shapes of laws,
dotted keys of a sweep). `emulator.scenario.sweep` builds on them: `Scenario`,
its construction and its resolution into sweep points. The JSON Schema for
editors is ``Scenario.model_json_schema()`` (``lbemu schema``). The policies'
own configurations come from the registry; `refresh_policies` rebuilds the
union when a policy is registered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError

from ..errors import show
from ..measure.recorder import METRICS
from ..policies import REGISTRY, _listeners
from ..policies.base import PolicyConfig
from ..workload import distributions
from .expressions import ExpressionError, parse

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


ARRIVAL_PARAMS = {"mmpp2": ("burstiness", "switch_rate"), "batch_poisson": ("mean_batch", "batch"),
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
    batch: Literal["geometric", "deterministic"] | None = Field(
        None, description="batch_poisson: the law of the batch size, geometric with mean mean_batch (default) or "
                          "always mean_batch jobs (a whole number)")
    path: str | None = Field(None, description="trace: CSV with a 'time' column, optional 'size'")

    @field_validator("path")
    @classmethod
    def _absolute(cls, value: str | None) -> str | None:
        # Absolute, so that the scenario.yaml written into a results folder runs again from anywhere.
        return None if value is None else str(Path(value).absolute())

    @model_validator(mode="after")
    def _params(self) -> ArrivalsConfig:
        allowed = ARRIVAL_PARAMS.get(self.kind, ())
        for key in ("burstiness", "switch_rate", "mean_batch", "batch", "path"):
            if key not in allowed and getattr(self, key) is not None:
                raise _shape_error(key, f"not a parameter of {self.kind} arrivals", getattr(self, key))
        if self.kind == "trace" and self.path is None:
            raise _shape_error("path", "expected a CSV file for trace arrivals, got nothing", None)
        if self.batch == "deterministic" and self.mean_batch is not None and self.mean_batch != int(self.mean_batch):
            raise _shape_error("mean_batch", "expected a whole number of jobs per batch with batch: deterministic",
                               self.mean_batch)
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
    discipline: Literal["fifo", "pool", "ps"] = Field(
        "fifo", description="fifo: one server, first come first served; ps: one server shared equally by the "
                            "jobs present (processor sharing); pool: every job served at once at full speed")
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
    failures: FailuresConfig | None = Field(None, description="servers that fail and recover (docs/faults.md)")

    @model_validator(mode="after")
    def _system(self) -> SystemConfig:
        if self.failures is not None and (self.time != "continuous" or self.discipline != "fifo"):
            raise _shape_error("failures", "expected FIFO servers in continuous time (discipline: fifo, "
                                           "time: continuous)", f"{self.discipline}, {self.time}")
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
    loss: float = Field(0.0, ge=0, lt=1, allow_inf_nan=False,
                        description="probability that a control message is lost, each independently "
                                    "(docs/faults.md); job transfers are never lost")
    timeout: float | None = Field(
        None, ge=0, allow_inf_nan=False,
        description="how long a dispatcher waits for the replies to its queries before deciding on those "
                    "it has (at random if none came); required with loss > 0 or failures")


class FailuresConfig(Strict):
    """Servers that fail: each alternates up and down periods from its own stream (docs/faults.md)."""

    up: LawConfig = Field(description="law of the up periods (exponential: breakdowns independent of the state)")
    down: LawConfig = Field(description="law of the down (repair) periods")
    on_down: Literal["hold", "lose"] = Field(
        "hold", description="hold: a down server keeps its jobs and resumes the one in service where it "
                            "stopped; lose: the jobs it holds when it fails, and those sent to it while down, "
                            "are lost (lost_fraction)")


MIN_AUTO_JOBS = 100
"""Fewest jobs of a run with ``warmup_jobs: auto``: MSER-5 sees at least 20 batches of 5."""
MIN_BATCH_JOBS = 20
"""``run.jobs`` per batch mean at least: 10 jobs a batch even when auto drops half the run."""


class RunConfig(Strict):
    jobs: int = Field(50_000, ge=1, description="measured jobs per replication, after warm-up; with "
                      "warmup_jobs: auto, the jobs of the whole run, warm-up included")
    warmup_jobs: int | Literal["auto"] = Field(
        5_000, description="jobs discarded before measuring; auto: found in each replication by MSER-5 "
                           "(docs/warmup.md)")
    batch_means: int | None = Field(
        None, ge=2, description="B: the interval of mean_response from B batch means of each replication "
                                "(docs/warmup.md)")
    occupancy: bool = Field(True, description="stream the queue-length distribution (occupancy.csv, "
                            "spread and heavy-traffic metrics); costs about 20% of the throughput")
    engine: Literal["simpy", "compiled", "auto"] = Field(
        "auto", description="simpy; compiled (the numba engine, where it supports the scenario, else simpy); "
                            "auto: compiled for long enough runs it supports (the same results either way)")

    @field_validator("warmup_jobs", mode="before")
    @classmethod
    def _warmup(cls, value: Any) -> Any:
        # One line for both members of the union, not one error per member.
        if value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
            return value
        raise ValueError(f"expected an integer >= 0 or 'auto', got {show(value)}")

    @model_validator(mode="after")
    def _lengths(self) -> RunConfig:
        if self.warmup_jobs == "auto" and self.jobs < MIN_AUTO_JOBS:
            raise _shape_error("jobs", f"expected at least {MIN_AUTO_JOBS} with warmup_jobs: auto (MSER-5 "
                                       f"needs {MIN_AUTO_JOBS // 5} batches of 5)", self.jobs)
        if self.batch_means is not None and self.batch_means * MIN_BATCH_JOBS > self.jobs:
            raise _shape_error("batch_means", f"expected at most run.jobs / {MIN_BATCH_JOBS} = "
                                              f"{self.jobs // MIN_BATCH_JOBS} (a batch of at least "
                                              f"{MIN_BATCH_JOBS // 2} jobs after the longest warm-up auto "
                                              f"finds)", self.batch_means)
        return self

    @property
    def fixed_warmup(self) -> int:
        """The warm-up an engine runs with: ``auto`` is resolved into one before (`emulator.experiment.warmup`)."""
        if self.warmup_jobs == "auto":
            raise RuntimeError("run.warmup_jobs: auto reached an engine unresolved")
        return self.warmup_jobs

    @property
    def total_jobs(self) -> int:
        """The jobs of the run, warm-up included: with ``warmup_jobs: auto``, ``jobs`` itself."""
        return self.jobs if self.warmup_jobs == "auto" else self.warmup_jobs + self.jobs


class PrecisionConfig(Strict):
    """Add replications until every (point, policy) meets a relative CI half-width."""

    metric: str = Field("mean_response", description="a metric column of runs.csv")
    relative_halfwidth: float = Field(0.01, gt=0, allow_inf_nan=False,
                                      description="target 95% CI half-width / |mean|")
    max_replications: int = Field(50, ge=2, description="stop adding replications here")

    @field_validator("metric")
    @classmethod
    def _metric(cls, value: str) -> str:
        if value not in METRICS:
            raise ValueError(f"expected a metric column ({', '.join(METRICS)}), got {value!r}")
        if value == "wall_seconds":  # it depends on the machine and the worker count
            raise ValueError(f"expected a simulated metric, not one of timing, got {value!r}")
        return value


Values = Annotated[tuple[Any, ...], Field(strict=False)]  # a swept key's values: a YAML list


def _policy_entry() -> Any:
    """One member per registered policy, told apart by `name`: built from the registry."""
    return Annotated[Union[tuple(cls.Config for cls in REGISTRY.values())],  # noqa: UP007
                     Field(discriminator="name")]


if TYPE_CHECKING:
    PolicyEntry = Any
else:
    PolicyEntry = _policy_entry()


class ScenarioSchema(Strict):
    """The fields of a scenario and the checks that need no sweep point; see `sweep.Scenario`."""

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
    allow_unstable: bool = Field(False, description="allow load >= 1 on single servers (FIFO or PS) without capacity")
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
    def _timeout(self) -> ScenarioSchema:
        # Without loss or failures every reply comes back, so no dispatcher ever needs a timeout.
        network = self.network
        if network.loss > 0 and self.system.time == "slotted":
            # Slot decisions batch the slot's arrivals: a query waiting out a timeout would straddle slots.
            raise _shape_error("network.loss", "expected 0 with system.time: slotted (lost messages run in "
                                               "continuous time)", network.loss)
        if network.timeout is None and (network.loss > 0 or self.system.failures is not None):
            why = f"network.loss = {network.loss:g}" if network.loss > 0 else "system.failures"
            raise _shape_error("network.timeout", f"expected a time >= 0 with {why} (replies can fail to "
                                                  "come back), got nothing", None)
        return self

    @model_validator(mode="after")
    def _swept_once(self) -> ScenarioSchema:
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


# Keys that describe the whole run rather than a sweep point: sweeping them would change nothing.
_RUN_KEYS = ("name", "description", "seed", "replications", "sweep", "zip", "compare_to", "precision")


def _check_swept_key(key: str) -> None:
    if key.split(".")[0] in _RUN_KEYS:
        raise ValueError(f"'{key}': expected a key of a sweep point (run, system, workload, network, "
                         f"policies), not one of the whole run")


@dataclass(frozen=True)
class ResolvedPolicy:
    """One policy at one sweep point: its registry name, label and configuration, resolved at N."""

    name: str
    label: str
    config: PolicyConfig = field(hash=False)

    @property
    def params(self) -> dict[str, Any]:
        """The parameters as plain data (the theory references read them by name)."""
        return self.config.params()

    @property
    def d(self) -> int | None:
        value = getattr(self.config, "d", None)
        return value if isinstance(value, int) else None


def refresh_policies() -> None:
    """Rebuild the ``policies`` field of every scenario model from the registry, as it is now.

    Called when a policy is registered, so that scenarios, error messages and the
    JSON Schema know it.
    """
    pending: list[type[ScenarioSchema]] = [ScenarioSchema]
    while pending:
        model = pending.pop()
        pending.extend(model.__subclasses__())
        model.model_fields["policies"] = FieldInfo.from_annotated_attribute(
            tuple[_policy_entry(), ...], Field(min_length=1, strict=False))  # type: ignore[arg-type,misc]
        model.model_rebuild(force=True)


_listeners.append(refresh_policies)
