"""The up and down periods of failing servers (``system.failures``, docs/faults.md), read by both engines."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from .streams import Blocks, generator, values

if TYPE_CHECKING:
    from ..scenario.schema import FailuresConfig


def periods(failures: FailuresConfig, seed: int, server: int) -> tuple[Iterator[float], Iterator[float]]:
    """Server ``server``'s up and down periods: the draws of streams of its own, ``up.<id>`` and ``down.<id>``.

    So the failures do not depend on the policy: with the same seed every policy faces the
    same breakdowns. The SimPy model's servers read them (`emulator.model.failures`), and the
    compiled engine hands them to its kernel in rows (`emulator.compiled.failing`).
    """
    up, down = period_blocks(failures, seed, server)
    return values(up), values(down)


def period_blocks(failures: FailuresConfig, seed: int, server: int) -> tuple[Blocks, Blocks]:
    """The same periods in their streams' blocks (`emulator.workload.streams.Blocks`), as the compiled engine reads
    them: no Python float per period."""
    return (failures.up.law().blocks(generator(seed, f"up.{server}")),
            failures.down.law().blocks(generator(seed, f"down.{server}")))
