"""A traced run that also remembers where its event lists stood when the window opened and closed.

Message accounting is checked against the events inside the measurement window;
the window's edges are located by position in the run (snapshots taken when the
recorder opens and closes the window), not by time, so jobs arriving at an edge
are counted exactly.
"""

from __future__ import annotations

from typing import Any

from emulator.model.trace import Trace


class Windowed:
    """A trace that also remembers where its event lists stood when the window opened and closed."""

    def __init__(self, trace: Trace, snapshot: Any = None) -> None:
        self.trace = trace
        self.edges: list[dict[str, Any]] = []
        recorder = trace.model.recorder
        edge = recorder.edge

        def on_edge() -> None:
            state = {name: len(getattr(trace, name)) for name in ("departures", "accepted", "asks", "sent")}
            state["extra"] = snapshot(trace.model) if snapshot is not None else None
            self.edges.append(state)
            edge()

        recorder.edge = on_edge

    def inside(self, name: str) -> list[Any]:
        """The entries of ``trace.<name>`` recorded while the window was open."""
        start, end = self.edges[0][name], self.edges[1][name]
        return getattr(self.trace, name)[start:end]

    def count(self, metrics: dict[str, float], kind: str) -> int:
        value = metrics[f"messages_per_job_{kind}"] * metrics["jobs"]
        assert abs(value - round(value)) < 1e-6
        return round(value)


def listed_servers(model: Any) -> int:
    """The number of servers JBT-d has listed: a `Windowed` snapshot."""
    return sum(model.policy.listed)
