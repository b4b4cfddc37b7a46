"""The compiled engine: the zero-latency model in numba, the same results as the SimPy engine.

One policy, two implementations: `emulator.policies` (SimPy, any latency) and
`policies` here (compiled, zero latency), held to the same contract and to
identical results seed for seed. `engine.supports` says whether a scenario is
one the compiled engine reproduces exactly; `engine.run` runs one replication;
`engine.prepare` loads (or first compiles) the kernels before a run's workers start:
the event kernel (`kernel`) and, for slotted time, the slot clock (`slotted`).
Importing this package does not import numba; running does.
"""

from __future__ import annotations

from .engine import (
    AUTO_SECONDS,
    COMPILE_SECONDS,
    COMPILED,
    SLOTTED_COMPILE_SECONDS,
    available,
    prepare,
    record,
    run,
    simpy_seconds,
    supports,
)

__all__ = ["AUTO_SECONDS", "COMPILED", "COMPILE_SECONDS", "SLOTTED_COMPILE_SECONDS", "available", "prepare", "record",
           "run", "simpy_seconds", "supports"]
