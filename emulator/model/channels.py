"""Transport between dispatchers and servers: latency, loss and counting, nothing else.

One `Channel` carries every control message and job transfer of a model. It
counts each control message by kind when it is sent, and delivers it by calling
the receiver's handler: at once when the latency is zero (no event is
scheduled, which is what keeps the default path fast), else after a latency
drawn per message, as one scheduled SimPy event per message.

Faults (docs/faults.md) live here too, so that every policy's messages get them
without code of its own. With ``network.loss`` p, each control message is lost
with probability p: the n-th message sent draws the n-th uniform of the ``loss``
stream, whatever its kind, so policies sent the same messages lose the same
ones. A message whose receiver is a down server is lost as well (checked when it
arrives), replies to a server's own queries included (`ask`'s ``asker``), and a
server that is down when its round trip ends decides and sends nothing. A lost
message is counted as sent and as lost, in the window it was sent in, and is
never delivered.
`send` takes the receiver as the first argument after the handler: that is how
it knows where a message goes. Job transfers are never lost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import simpy
from simpy.events import Timeout

from ..measure.messages import NO_REPLY, Kind
from ..measure.recorder import Recorder

T = TypeVar("T")

# The kinds the channel itself counts, bound once: reading an Enum member as a class
# attribute (``Kind.QUERY``) costs about 0.1 us on Python 3.11, and `ask` runs per job.
QUERY, REPLY = Kind.QUERY, Kind.REPLY
# The same as plain ints, for `count_round_trips`: Python 3.11 specialises a list's item read and write
# only for an index of type exactly int (an IntEnum member takes the generic path, about twice as slow).
QUERY_AT, REPLY_AT = int(QUERY), int(REPLY)


class Channel:
    """Counting, delaying, losing transport.

    Parameters
    ----------
    env : simpy.Environment
    recorder : Recorder
        Holds the counters (``counts`` and ``lost`` by kind, ``transfers``); told of each loss.
    latency : iterator of float or None
        Per-message latencies; None means messages arrive at once.
    loss : float
        Probability that a control message is lost.
    draws : callable or None
        The ``loss`` stream's next uniform; needed when ``loss`` > 0, never called otherwise.
    timeout : float or None
        How long `ask` waits for replies that may not come; needed with faults.
    failures : bool
        Whether servers can be down (then a message to a down server is lost).
    """

    def __init__(self, env: simpy.Environment, recorder: Recorder, latency: Iterator[float] | None,
                 loss: float = 0.0, draws: Callable[[], float] | None = None,
                 timeout: float | None = None, failures: bool = False) -> None:
        self.env = env
        self.recorder = recorder
        self.counts = recorder.counts
        self.latency = latency
        self.loss = loss
        self.draws = draws
        self.timeout = timeout
        self.failures = failures
        # Faults: a reply may never come, so nothing may shortcut the round trips.
        self.faulty = loss > 0 or failures
        self.instant = latency is None and not self.faulty
        if self.faulty and type(self).send is Channel.send:
            # The plain path stays as it was: not one test per message more.
            self.send = self._send_faulty  # type: ignore[method-assign]

    def send(self, kind: Kind, deliver: Callable[..., Any], *args: Any) -> None:
        """Send one control message: ``deliver(*args)`` runs at the receiver, ``args[0]``."""
        self.counts[kind] += 1
        if self.latency is None:
            deliver(*args)
        else:
            self._later(deliver, args)

    def _send_faulty(self, kind: Kind, deliver: Callable[..., Any], *args: Any) -> None:
        self._post(kind, args[0], deliver, args)

    def _post(self, kind: Kind, receiver: Any, deliver: Callable[..., Any], args: tuple[Any, ...]) -> None:
        """Send with faults: lost in the network, or at a receiver that is down when it arrives."""
        recorder = self.recorder
        self.counts[kind] += 1
        phase = len(recorder.window)  # a loss counts in the window the message was sent in
        if self.loss > 0 and self.draws() < self.loss:  # type: ignore[misc]
            recorder.lose_message(kind, phase)
            return

        def arrive(*args: Any) -> None:
            if getattr(receiver, "up", True):
                deliver(*args)
            else:
                recorder.lose_message(kind, phase)

        if self.latency is None:
            arrive(*args)
        else:
            self._later(arrive, args)

    def count_round_trips(self, n: int) -> None:
        """Count ``n`` instant queries and their ``n`` replies whose effect the caller applies itself.

        Only for the zero-latency shortcuts (JSQ's incremental argmin, SQ(d) reading
        the sampled lengths), where delivering the messages one by one would change
        nothing but the cost; never with faults (``instant`` is false then).
        """
        counts = self.counts
        counts[QUERY_AT] += n
        counts[REPLY_AT] += n

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
            then: Callable[[list[int]], None], asker: Any = None) -> None:
        """Query every target and call ``then(answers)`` once all replies are in.

        One ``query`` and one ``reply`` per target. Each target answers when the
        query reaches it, with ``answer(target)`` at that moment; the answers
        come back in the order of ``targets``. With faults, ``then`` runs once
        all replies are in or ``timeout`` after the queries went out, whichever
        comes first; a reply that has not come by then reads `NO_REPLY`, and a
        later one is ignored. ``asker``: the server that asks, if a server does
        (None for a dispatcher). A down server sends nothing and receives
        nothing (docs/faults.md): replies that reach it while it is down are
        lost there, and if it is down when it would decide, ``then`` does not
        run (what it would send is not sent; its recovery runs its hooks anew).
        """
        n = len(targets)
        if self.instant:
            self.count_round_trips(n)
            then(list(map(answer, targets)))
            return
        if self.faulty:
            self._ask_faulty(targets, answer, then, asker)
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

    def _ask_faulty(self, targets: Sequence[T], answer: Callable[[T], int],
                    then: Callable[[list[int]], None], asker: Any) -> None:
        replies = [NO_REPLY] * len(targets)
        missing = [len(targets)]  # replies still to come; -1 once decided

        def decide(_event: Any = None) -> None:
            if missing[0] >= 0:
                missing[0] = -1
                if getattr(asker, "up", True):  # a down server decides, and so sends, nothing
                    then(replies)

        def on_reply(i: int, value: int) -> None:
            if missing[0] > 0:
                replies[i] = value
                missing[0] -= 1
                if missing[0] == 0:
                    decide()

        def on_query(i: int, target: T) -> None:
            self._post(REPLY, asker, on_reply, (i, answer(target)))

        for i, target in enumerate(targets):
            self._post(QUERY, target, on_query, (i, target))
        if missing[0] == 0:  # no targets
            decide()
        elif missing[0] > 0:
            Timeout(self.env, self.timeout).callbacks.append(decide)  # type: ignore[arg-type]

    def _later(self, deliver: Callable[..., Any], args: tuple[Any, ...]) -> None:
        event = Timeout(self.env, next(self.latency))  # type: ignore[arg-type]
        event.callbacks.append(lambda _event: deliver(*args))
