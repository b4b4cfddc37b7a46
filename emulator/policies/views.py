"""What a policy sees of an engine: small Protocols, so that a policy imports no engine.

A policy's SimPy behaviour is handed the model at construction (`ModelView`), a
dispatcher and a job at each decision (`DispatcherView`, `JobView`), and attaches
hooks to the servers (`ServerView`). The SimPy engine's classes (`emulator.model`)
satisfy these structurally; nothing here imports them, so reading and validating
a scenario, which needs the policies' configurations, needs no engine.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Any, Protocol

from ..measure.messages import Kind


class JobView(Protocol):
    """A job as a policy sees it: its identity and the flags the policies set and read."""

    via_list: bool  # the dispatcher took the target from its list of reported servers

    @property
    def id(self) -> int: ...

    @property
    def blocked(self) -> bool: ...  # the target was at capacity

    @property
    def batch(self) -> int: ...  # the jobs that arrived with it, itself included (`Policy.whole_batches`); else 1


class ServerView(Protocol):
    """A server: its length (jobs in service plus waiting), speed, and the hooks a policy attaches.

    ``on_arrive(server, job)`` runs after every job that reaches the server
    (accepted or blocked) and ``on_depart(server)`` after every departure, with
    ``length`` already updated.
    """

    on_arrive: Callable[[Any, Any], None] | None
    on_depart: Callable[[Any], None] | None

    @property
    def id(self) -> int: ...

    @property
    def speed(self) -> float: ...

    @property
    def length(self) -> int: ...


class ChannelView(Protocol):
    """The transport: counts every control message by kind and delivers it, at once or late."""

    @property
    def instant(self) -> bool: ...  # zero latency: a message is delivered by a direct call

    counts: list[int]  # messages sent by kind (`Kind` indexes it); a `Trace` replaces the list

    def send(self, kind: Kind, deliver: Callable[..., Any], *args: Any) -> None: ...

    def ask(self, targets: Sequence[Any], answer: Callable[[Any], int],
            then: Callable[[list[int]], None], asker: Any = None) -> None: ...  # asker: a server that asks

    def count_round_trips(self, n: int) -> None: ...


class DispatcherView(Protocol):
    """A dispatcher: where jobs arrive; ``state`` is the policy's own per-dispatcher state."""

    state: Any

    @property
    def id(self) -> int: ...

    @property
    def servers(self) -> Sequence[Any]: ...

    @property
    def channel(self) -> ChannelView: ...

    @property
    def policy(self) -> Any: ...  # the policy it follows

    def send(self, job: Any, server: Any) -> None: ...


class UniformsView(Protocol):
    """The policy's random stream (`emulator.workload.streams.Uniforms`)."""

    random: Callable[[], float]
    draws: Iterator[float]  # the same draws as ``random``'s, for `next` (cheaper per call)

    def randrange(self, n: int) -> int: ...

    def sample(self, n: int, k: int, replace: bool = False) -> list[int]: ...


class ClockView(Protocol):
    """The simulation clock, for policies that act on a timer (JBT-d's threshold updates)."""

    def process(self, generator: Generator[Any, Any, Any]) -> Any: ...

    def timeout(self, delay: float) -> Any: ...


class ModelView(Protocol):
    """One wired replication: servers, dispatchers, the channel, the policy's stream and the clock."""

    @property
    def env(self) -> ClockView: ...

    @property
    def servers(self) -> Sequence[Any]: ...

    @property
    def dispatchers(self) -> Sequence[Any]: ...

    @property
    def channel(self) -> ChannelView: ...

    @property
    def uniforms(self) -> UniformsView: ...


class PointView(Protocol):
    """What a policy's checks may read of a resolved sweep point."""

    @property
    def servers(self) -> int: ...

    @property
    def dispatchers(self) -> int: ...

    @property
    def rate(self) -> float: ...  # arrivals per unit time

    @property
    def scenario(self) -> Any: ...
