"""The compiled engine: the model in numba, the same results as the SimPy engine.

One policy, two implementations: `emulator.policies` (SimPy) and its compiled form
(`policies` here for the built-in ones, or a user's module), held to the same
contract and to identical results seed for seed, with zero or random message
latency and in slotted time. `supports` (`eligibility`) says whether a scenario is one the
compiled engine reproduces exactly (`cost`, what it would cost SimPy); `engine.record`
runs one replication; `loading.prepare` loads (or first compiles) the kernels a run
needs before its workers start. Each policy has its own kernels (`build`): the event loop (`kernel`)
and the slot clock (`slotted`), compiled with that policy's hooks on first use.
Importing this package does not import numba; running does.
"""

from __future__ import annotations

from .ahead import prepare
from .engine import (
    AUTO_SECONDS,
    COMPILE_SECONDS,
    COMPILED,
    available,
    has_compiled_form,
    record,
    run,
    simpy_seconds,
    supports,
)

__all__ = ["AUTO_SECONDS", "COMPILED", "COMPILE_SECONDS", "available",
           "has_compiled_form", "prepare", "record", "run", "simpy_seconds", "supports"]
