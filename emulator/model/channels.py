"""Transport between dispatchers and servers: latency and counting, nothing else.

One `Channel` carries every control message and job transfer of a model. It
counts each control message by kind when it is sent, and delivers it by calling
the receiver's handler: at once when the latency is zero (no event is
scheduled, which is what keeps the default path fast), else after a latency
drawn per message, as one scheduled SimPy event per message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import simpy
from simpy.events import Timeout

from ..measure.messages import Kind
from ..measure.recorder import Recorder

T = TypeVar("T")

# The kinds the channel itself counts, bound once: reading an Enum member as a class
# attribute (``Kind.QUERY``) costs about 0.1 us on Python 3.11, and `ask` runs per job.
QUERY, REPLY = Kind.QUERY, Kind.REPLY


class Channel:
    """Counting, delaying transport.

    Parameters
    ----------
    env : simpy.Environment
    recorder : Recorder
        Holds the counters (``counts`` by kind, ``transfers``).
    latency : iterator of float or None
        Per-message latencies; None means messages arrive at once.
    """

    def __init__(self, env: simpy.Environment, recorder: Recorder,
                 latency: Iterator[float] | None) -> None:
        self.env = env
        self.recorder = recorder
        self.counts = recorder.counts
        self.latency = latency
        self.instant = latency is None

    def send(self, kind: Kind, deliver: Callable[..., Any], *args: Any) -> None:
        """Send one control message: ``deliver(*args)`` runs at the receiver."""
        self.counts[kind] += 1
        if self.latency is None:
            deliver(*args)
        else:
            self._later(deliver, args)

    def count_round_trips(self, n: int) -> None:
        """Count ``n`` instant queries and their ``n`` replies whose effect the caller applies itself.

        Only for the zero-latency shortcuts (JSQ's incremental argmin, SQ(d) reading
        the sampled lengths), where delivering the messages one by one would change
        nothing but the cost.
        """
        counts = self.counts
        counts[QUERY] += n
        counts[REPLY] += n

    def transfer(self, job: Any, server: Any) -> None:
        """Move a job to a server (not a control message)."""
        self.recorder.transfers += 1
        if self.latency is None:
            server.accept(job)
        else:
            self._later(server.accept, (job,))

    def transfer_all(self, jobs: list[Any], server: Any) -> None:
        """Move a batch of jobs to a server at once (slotted time, one decision per slot)."""
        self.recorder.transfers += len(jobs)
        if self.latency is None:
            server.accept_all(jobs)
        else:
            self._later(server.accept_all, (jobs,))

    def ask(self, targets: Sequence[T], answer: Callable[[T], int],
            then: Callable[[list[int]], None]) -> None:
        """Query every target and call ``then(answers)`` once all replies are in.

        One ``query`` and one ``reply`` per target. Each target answers when the
        query reaches it, with ``answer(target)`` at that moment; the answers
        come back in the order of ``targets``.
        """
        n = len(targets)
        if self.latency is None:
            self.count_round_trips(n)
            then(list(map(answer, targets)))
            return
        replies: list[int] = [0] * n
        missing = [n]

        def on_reply(i: int, value: int) -> None:
            replies[i] = value
            missing[0] -= 1
            if missing[0] == 0:
                then(replies)

        def on_query(i: int, target: T) -> None:
            self.send(REPLY, on_reply, i, answer(target))

        for i, target in enumerate(targets):
            self.send(QUERY, on_query, i, target)

    def _later(self, deliver: Callable[..., Any], args: tuple[Any, ...]) -> None:
        event = Timeout(self.env, next(self.latency))  # type: ignore[arg-type]
        event.callbacks.append(lambda _event: deliver(*args))
