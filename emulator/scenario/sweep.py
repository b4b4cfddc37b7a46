"""A scenario, and its sweep resolved into points: what a replication needs.

`Scenario` adds to the schema (`emulator.scenario.schema`) its construction
(`Scenario.from_dict`: one `ScenarioError` line naming the first bad key),
overrides of dotted keys and the sweep: `Scenario.points` gives one `Point` per
combination of swept values, with expressions in N evaluated, the policies'
configurations resolved and every check that needs the point done
(`emulator.scenario.checks`).
"""

from __future__ import annotations

import copy
import inspect
import itertools
import unicodedata
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import ValidationError

from ..errors import ScenarioError, describe, show
from ..policies import REGISTRY, _listeners
from ..policies.base import Policy, ResolveError
from .checks import check_point, check_size, check_slotted, check_trace, expected_capacity
from .error_text import format_error
from .expressions import ExpressionError, evaluate
from .schema import ResolvedPolicy, ScenarioSchema


class Scenario(ScenarioSchema):
    """A scenario: what to simulate, which policies, which sweep. See docs/scenarios.md.

    Build one with `from_dict` (or `emulator.load_scenario` from a YAML file): it checks every
    key and every sweep point, and refuses bad input in one line per mistake. The keywords are
    the scenario's top-level keys; each is also an attribute, read-only.

    Parameters
    ----------
    name : str
        Names the results folder (``results/<name>/``) and the tables.
    description : str
        Free text, kept in ``scenario.yaml`` and shown by the report; tables and figures
        describe the rows from the settings, not from it.
    seed : int
        Root seed: the same seed gives the same rows, on any number of workers.
    replications : int
        Replications per (sweep point, policy).
    run, system, workload, network : dict
        Run length and engine; servers, dispatchers and their speeds; load, arrivals and
        service; message latency and faults (docs/scenarios.md lists every key).
    policies : list of dict
        Each with ``name`` (a key of `emulator.REGISTRY`) and its parameters.
    sweep : dict
        Dotted key -> list of values; every combination is a sweep point.
    zip : list of dict
        Groups of keys that move together.
    allow_unstable : bool
        Allow a load >= 1 on single servers (FIFO or PS) without a capacity.
    compare_to : str, optional
        A policy label: summary.csv gets paired differences against it.
    precision : dict, optional
        Add replications until a confidence-interval target is met.

    Examples
    --------
    >>> s = Scenario.from_dict({"policies": [{"name": "sqd", "d": 2}], "sweep": {"workload.load": [0.5, 0.9]}})
    >>> [(p.load, p.policies[0].label) for p in s.points()]
    [(0.5, 'SQ(2)'), (0.9, 'SQ(2)')]
    >>> s.with_overrides(**{"system.servers": 20}).system.servers
    20
    """

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
            raise ScenarioError(*format_error(exc)) from None
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


class _Default:
    """A default as the signature of `Scenario` shows it: nested ones as ``{...}``, their keys in docs/scenarios.md."""

    def __init__(self, value: Any) -> None:
        plain = isinstance(value, (str, int, float, bool, type(None))) or value in ((), {})
        self.text = repr(value) if plain else "{...}"

    def __repr__(self) -> str:
        return self.text


def _signature() -> inspect.Signature:
    """``Scenario(*, name='scenario', ..., run={...}, ...)``: pydantic's would spell out every nested default."""
    parameters = []
    for name, info in ScenarioSchema.model_fields.items():
        default = inspect.Parameter.empty if info.is_required() \
            else _Default(info.get_default(call_default_factory=True))
        parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default))
    return inspect.Signature(parameters)


def _sign() -> None:
    Scenario.__signature__ = _signature()


_sign()
_listeners.append(_sign)  # registering a policy rebuilds the models, and pydantic their signatures


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
            raise ScenarioError(*format_error(exc)) from None
        return _resolve_point(scenario, index, values)
    except ScenarioError as exc:
        raise ScenarioError(f"{exc}{where}") from None


def _resolve_point(scenario: Scenario, index: int, values: dict[str, Any]) -> Point:
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
        check_slotted(scenario)
    if workload.arrivals.kind == "trace":
        # A finite trace: its own times and sizes set the rate and the load, and it ends.
        rate, mean_size = check_trace(scenario)
        load = rate * mean_size / capacity
    else:
        unstable = system.discipline != "pool" and system.capacity is None and load >= 1
        if unstable and not scenario.allow_unstable:
            raise ScenarioError(
                f"workload.load: expected < 1 for single servers (FIFO or PS) without capacity "
                f"(or allow_unstable: true), got {load:g}")
        rate = load * capacity / workload.service.mean
    view = _PointView(n, system.dispatchers, rate, scenario)
    policies = []
    for i, entry in enumerate(scenario.policies):
        cls = REGISTRY[entry.name]
        try:
            config = entry.resolve(n)
        except ResolveError as exc:
            raise ScenarioError(f"policies.{i}.{exc.key}: {exc.problem}") from None
        for key, problem in _problems(cls, config, view, i).items():
            raise ScenarioError(f"policies.{i}.{key}: {problem}")
        policies.append(ResolvedPolicy(entry.name, _label(cls, config, entry.label, i), config))
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


def _problems(cls: type[Policy], config: Any, view: Any, i: int) -> dict[str, str]:
    """The policy's own checks at this point, ``{field: problem}``; its ``check`` may return None for none.

    An exception its code raises, or a result of another type, is a one-line
    `ScenarioError` naming ``policies.<i>``.
    """
    try:
        problems = cls.check(config, view)
    except Exception as exc:  # the policy's own code
        raise ScenarioError(f"policies.{i}: policy {cls.name!r}: check raised {describe(exc)}") from None
    if problems is None:
        return {}
    if not isinstance(problems, dict):
        raise ScenarioError(f"policies.{i}: policy {cls.name!r}: check: expected a dict of {{field: problem}} "
                            f"or None, got {show(problems)}")
    return problems


MAX_LABEL = 200
"""Characters in a policy's label, at most: it is a row of a table and an entry of a plot's legend."""


def _label(cls: type[Policy], config: Any, given: str | None, i: int) -> str:
    """The scenario's ``label:``, else the policy's own; one that is no short line of text is refused in one line.

    A label that failed or gave no text from the policy's ``label()`` is refused as
    well, naming the policy.
    """
    if given is not None:
        key, label = f"policies.{i}.label", given
    else:
        key = f"policies.{i}: policy {cls.name!r}: label"
        try:
            label = cls.label(config)
        except Exception as exc:  # the policy's own code
            raise ScenarioError(f"policies.{i}: policy {cls.name!r}: label raised {describe(exc)}") from None
    problem = label_problem(label)
    if problem is not None:
        hint = "" if given is not None else " (or set label: in the scenario)"
        raise ScenarioError(f"{key}: {problem}{hint}")
    return label


def label_problem(label: Any) -> str | None:
    """What keeps ``label`` from being a policy's label (``expected ..., got ...``), or None.

    A label is one line of text: results files, tables and legends hold it as it is,
    so a line break or another control character would cut their rows (a carriage
    return in ``summary.csv`` made it read as cut short).
    """
    if not (isinstance(label, str) and label.strip()):
        return f"expected a non-empty string, got {show(label)}"
    if len(label) > MAX_LABEL:
        return f"expected at most {MAX_LABEL} characters, got {len(label):,} characters"
    if any(unicodedata.category(char) in ("Cc", "Zl", "Zp") for char in label):
        return f"expected one line of text with no control characters or line breaks, got {show(label)}"
    return None


@dataclass(frozen=True)
class _PointView:
    """What a policy's checks see of the point being resolved (`emulator.policies.views.PointView`)."""

    servers: int
    dispatchers: int
    rate: float
    scenario: Scenario
