"""The two engines behind one interface: what each runs, and one replication's plain result.

An engine says whether it reproduces a case exactly (`Engine.supports`), whether
it can run on this machine (`Engine.available`), and runs one replication to a
`emulator.measure.result.RunResult`, the same plain value for both: the runner
turns it into a row without knowing which engine filled it. The SimPy engine
(`emulator.model`) is the reference and runs every case; the compiled engine
(`emulator.compiled`) runs the cases it `supports`, with the same rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from .measure.result import RunResult
from .measure.series import Series
from .scenario.schema import ResolvedPolicy
from .scenario.sweep import Point

Progress = Callable[[int], None] | None


class Engine(Protocol):
    """What the runner needs of an engine."""

    name: str

    def supports(self, point: Point, policy: ResolvedPolicy) -> str | None:
        """Why this engine cannot run ``policy`` at ``point`` exactly, or None if it can."""

    def available(self) -> bool:
        """Whether it runs on this machine."""

    def record(self, point: Point, policy: ResolvedPolicy, seed: int, progress: Progress = None,
               series: Series | None = None) -> RunResult:
        """One replication with replication seed ``seed``; ``progress`` is told the measured jobs finished,
        ``series`` (if given) the measured responses in arrival order (`emulator.measure.series`)."""


class SimPyEngine:
    """The process-oriented model (`emulator.model`): every case, the reference."""

    name = "simpy"

    def supports(self, point: Point, policy: ResolvedPolicy) -> str | None:
        return None

    def available(self) -> bool:
        return True

    def record(self, point: Point, policy: ResolvedPolicy, seed: int, progress: Progress = None,
               series: Series | None = None) -> RunResult:
        from .model.build import build_model

        model = build_model(point, policy, seed)
        model.recorder.series = series
        return model.record(progress)


class CompiledEngine:
    """The numba kernels (`emulator.compiled`): the cases it supports, SimPy's rows; numba imported on use."""

    name = "compiled"

    def supports(self, point: Point, policy: ResolvedPolicy) -> str | None:
        from . import compiled

        return compiled.supports(point, policy)

    def available(self) -> bool:
        from . import compiled

        return compiled.available()

    def record(self, point: Point, policy: ResolvedPolicy, seed: int, progress: Progress = None,
               series: Series | None = None) -> RunResult:
        from . import compiled

        return compiled.record(point, policy, seed, progress, series)


ENGINES: dict[str, Engine] = {"simpy": SimPyEngine(), "compiled": CompiledEngine()}
"""The engines by ``run.engine`` name."""
