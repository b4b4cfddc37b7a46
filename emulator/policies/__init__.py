"""The policy registry: one explicit dict, name -> class, and the ways to add to it.

The built-in policies are the lines of `REGISTRY` below: adding one is a module
here (and, for the compiled engine, its description under
``emulator/compiled/policies/``) and one line in that dict. Scenario validation,
the JSON Schema, ``lbemu policies``, the compiled engine's tables and the contract
tests read the registry. A policy defined elsewhere joins it with
`register_policy`, or, from an installed package, through the entry point group
``lbemu.policies`` (each entry point names a `Policy` subclass); both run on the
SimPy engine and are checked with `emulator.check_policy`.
"""

from __future__ import annotations

import re
import sys
from importlib.metadata import entry_points

from ..errors import show
from .base import Policy, PolicyConfig
from .batch_sqd import BatchSQDPolicy
from .jbt import JBTPolicy
from .jiq import JIQPolicy
from .jsq import JSQPolicy
from .jsq_push import JSQPushPolicy
from .jsq_sparse import JSQSparsePolicy
from .late_binding import LateBindingPolicy
from .least_work import LeastWorkPolicy
from .lor import LORPolicy
from .lsq import LSQPolicy
from .persistent_idle import PersistentIdlePolicy
from .random import RandomPolicy
from .redundancy import RedundancyPolicy
from .round_robin import RoundRobinPolicy
from .sed import SEDPolicy
from .sqd import SQDPolicy
from .sqd_memory import SQDMemoryPolicy
from .threshold import ThresholdPolicy

REGISTRY: dict[str, type[Policy]] = {
    "random": RandomPolicy,
    "round_robin": RoundRobinPolicy,
    "jsq": JSQPolicy,
    "sqd": SQDPolicy,
    "jiq": JIQPolicy,
    "jbt": JBTPolicy,
    "threshold": ThresholdPolicy,
    "jsq_push": JSQPushPolicy,
    "jsq_sparse": JSQSparsePolicy,
    "lsq": LSQPolicy,
    "sqd_memory": SQDMemoryPolicy,
    "redundancy": RedundancyPolicy,
    "late_binding": LateBindingPolicy,
    "persistent_idle": PersistentIdlePolicy,
    "lor": LORPolicy,
    "sed": SEDPolicy,
    "batch_sqd": BatchSQDPolicy,
    "least_work": LeastWorkPolicy,
}

BUILT_IN = frozenset(REGISTRY)
"""The policies that ship with lbemu."""

ENTRY_POINTS = "lbemu.policies"

_listeners: list = []  # called with the registry after each change (the scenario schema rebuilds its union)


def register_policy(cls: type[Policy], *, replace: bool = False) -> type[Policy]:
    """Add a policy class to the registry, so that scenarios can name it; returns the class.

    The class follows the contract of `emulator.policies.base` (``name``, ``Config``
    with ``name: Literal[...]``, ``messages``, ``dispatch``), and may name its compiled
    form (``compiled``, a module's dotted name: docs/policies.md). Usable as a decorator.

    Raises
    ------
    ValueError
        If the class does not have the contract's attributes, or its name is taken
        (by a built-in policy always; by another one unless ``replace``).
    """
    problem = contract_problem(cls)
    if problem:
        raise ValueError(f"register_policy: {problem}")
    name = cls.name
    if name in BUILT_IN and REGISTRY.get(name) is not cls:
        raise ValueError(f"register_policy: the name {name!r} is a built-in policy's; choose another")
    if name in REGISTRY and REGISTRY[name] is not cls and not replace:
        raise ValueError(f"register_policy: a policy named {name!r} is registered already (replace=True to "
                         f"replace it)")
    compiled = getattr(cls, "compiled", None)
    if compiled is not None and not (isinstance(compiled, str) and DOTTED.fullmatch(compiled)):
        raise ValueError(f"register_policy: {name}.compiled: expected the dotted name of its compiled form's module, "
                         f"got {show(compiled)}")
    REGISTRY[name] = cls
    for listener in _listeners:
        listener()
    return cls


DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
"""A module's dotted name (a policy's ``compiled``)."""

NAME = re.compile(r"[a-z][a-z0-9_]*")
"""A policy's name: lower-case letters, digits and ``_``, starting with a letter (it is a scenario's ``name:``)."""


def contract_problem(cls: object) -> str | None:
    """What a class lacks to be a policy, or None: the rule of `register_policy` and `emulator.check_policy`."""
    if not (isinstance(cls, type) and issubclass(cls, Policy)):
        return f"expected a subclass of emulator.policies.base.Policy, got {show(cls)}"
    for attribute in ("name", "Config", "messages"):
        if not hasattr(cls, attribute):
            return f"{cls.__name__} has no {attribute}"
    if not (isinstance(cls.name, str) and NAME.fullmatch(cls.name)):
        return f"{cls.__name__}.name: expected lower-case letters, digits and _, starting with a letter, " \
               f"got {show(cls.name)}"
    if not (isinstance(cls.Config, type) and issubclass(cls.Config, PolicyConfig)):
        return f"{cls.__name__}.Config must subclass PolicyConfig"
    field = cls.Config.model_fields.get("name")
    if field is None or field.default != cls.name:
        return f"{cls.__name__}.Config needs name: Literal[{cls.name!r}] = {cls.name!r}"
    if cls.dispatch is Policy.dispatch:
        return f"{cls.__name__} does not define dispatch"
    return None


def load_entry_points() -> None:
    """Register the policies that installed packages declare in the ``lbemu.policies`` group.

    A plugin that fails to load is skipped with one line on stderr: the other
    policies still run.
    """
    for point in entry_points(group=ENTRY_POINTS):
        try:
            register_policy(point.load())
        except Exception as exc:  # a broken plugin must not stop lbemu
            print(f"lbemu: warning: policy plugin {point.name!r} ({point.value}) not loaded: {exc}",
                  file=sys.stderr)


load_entry_points()

__all__ = ["REGISTRY", "Policy", "PolicyConfig", "register_policy"]
