"""The compiled policies: each registered policy's compiled form, and the hooks its kernel is built with.

A policy with a compiled form names its module in its class (`Policy.compiled`,
e.g. ``emulator.compiled.policies.jsq``, or a module of the user's own). That
module holds:

- ``PARAMS``: the Config fields it was written against (any other option runs on SimPy);
- ``describe(config, point, speeds)``: a `tools.Description`: its parameters and
  what it asks of the driver and the toolkit;
- optionally ``supports(config, point)``: why it cannot run a case exactly, or None;
- its hooks, with the signatures of `common` (`HOOKS`; `common`'s ``nothing_*``
  where it has none).

Each policy's kernel is the event loop compiled with that policy's hooks alone
(`emulator.compiled.build`): a policy adds its compile time to its own runs only.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from ...policies import REGISTRY
from . import common

HOOKS = ("dispatch", "on_arrive", "on_depart", "initialise", "timer", "replied", "deliver", "on_arrive_batch")
"""The hooks of a compiled policy, in the order of `hooks`; signatures in `common`."""


def name_of(policy: str) -> str | None:
    """The module name of registered ``policy``'s compiled form, or None if it has none."""
    cls = REGISTRY.get(policy)
    return None if cls is None else getattr(cls, "compiled", None)


def module(policy: str) -> ModuleType:
    """The compiled form of registered ``policy`` (imported: numba compiles nothing until a kernel runs)."""
    name = name_of(policy)
    if name is None:
        raise KeyError(f"policy {policy!r} has no compiled form")
    return importlib.import_module(name)


def hooks(module_name: str) -> tuple[Any, ...]:
    """The hooks of the compiled form ``module_name``, in `HOOKS` order (`common`'s defaults for those it lacks)."""
    found = importlib.import_module(module_name)
    if not hasattr(found, "dispatch"):
        raise AttributeError(f"{module_name}: a compiled policy needs a dispatch hook")
    return tuple(getattr(found, hook, None) or getattr(common, f"nothing_{hook}") for hook in HOOKS)
