"""The compiled policies, and the switches the kernel calls: both derived from the policy registry.

A built-in policy with a compiled form names its description module in its class
(`Policy.compiled`, e.g. ``emulator.compiled.policies.jsq``). That module holds:

- ``PARAMS``: the Config fields it was written against (any other option runs on SimPy);
- ``describe(config, point, speeds)``: a `tools.Description`: its parameters and
  what it asks of the driver and the toolkit;
- optionally ``supports(config, point)``: why it cannot run a case exactly, or None;
- its hooks, with the signatures of `common`: ``dispatch``, ``on_arrive``,
  ``on_depart``, ``initialise``, ``timer``, and with latency ``replied`` and
  ``deliver`` (the defaults of `common` where it has none).

From the registry this module builds `MODULES` (name -> description module),
`CODES` (name -> the kernel's policy code) and the seven switches the kernel calls,
one branch per policy. The switches are written as source text and compiled
here; they are inlined into the kernel, whose numba cache a digest of these
sources and of the registry's list keeps fresh (`compiled.cache`).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from numba import njit

from ...policies import BUILT_IN, REGISTRY
from . import common

MODULES: dict[str, ModuleType] = {
    name: importlib.import_module(cls.compiled) for name, cls in REGISTRY.items()
    if name in BUILT_IN and cls.compiled is not None}
"""The compiled descriptions of the built-in policies, by registry name, in registry order."""

CODES: dict[str, int] = {name: code for code, name in enumerate(MODULES)}
"""The kernel's code of each compiled policy (``P[P_POLICY]``)."""

HOOKS = {
    "dispatch": "P, Q, counts, length, rng, ubuf, iv, T, dispatcher",
    "on_arrive": "P, Q, counts, length, rng, ubuf, iv, T, sid, blocked, via_list",
    "on_depart": "P, Q, counts, length, rng, ubuf, iv, T, sid",
    "initialise": "P, Q, counts, length, rng, ubuf, iv, T",
    "timer": "P, Q, counts, length, rng, ubuf, iv, T, resume",
    "replied": "P, Q, counts, length, rng, ubuf, iv, T, ask",
    "deliver": "P, Q, counts, length, rng, ubuf, iv, T, what, a, b, c",
}
"""The hooks every compiled policy has, and their arguments (`common`)."""


def _switch(hook: str) -> Any:
    """``hook(code, ...)``: the branch of the policy with that code, as one inlined if-chain."""
    arguments = HOOKS[hook]
    lines = [f"def {hook}(code, {arguments}):"]
    namespace: dict[str, Any] = {}
    for name, module in MODULES.items():
        # A hook a policy does not define is `common`'s nothing_<hook>.
        namespace[f"{name}_{hook}"] = getattr(module, hook, None) or getattr(common, f"nothing_{hook}")
        lines.append(f"    if code == {CODES[name]}:")
        lines.append(f"        return {name}_{hook}({arguments})")
    last = list(MODULES)[-1]  # numba needs every path to return: the last branch is the fallback
    lines.append(f"    return {last}_{hook}({arguments})")
    exec(compile("\n".join(lines), f"<lbemu switch {hook}>", "exec"), namespace)
    return njit(inline="always")(namespace[hook])


dispatch = _switch("dispatch")
on_arrive = _switch("on_arrive")
on_depart = _switch("on_depart")
initialise = _switch("initialise")
timer = _switch("timer")
replied = _switch("replied")
deliver = _switch("deliver")


def fingerprint() -> str:
    """What the switches were built from: the compiled policies and their codes (for the cache's digest)."""
    return ";".join(f"{name}={CODES[name]}:{module.__name__}" for name, module in MODULES.items())
