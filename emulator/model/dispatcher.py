"""Dispatchers: where jobs arrive and the policy's dispatcher side runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .channels import Channel
from .job import Job

if TYPE_CHECKING:
    from ..policies.base import Policy


class Dispatcher:
    """One dispatcher. It sees server state only through the messages it receives.

    ``state`` holds the policy's per-dispatcher state (an I-queue, a list of
    reported servers, a round-robin position). Policies that act on a timer
    (JBT-d's threshold updates) run a SimPy process per dispatcher.
    """

    def __init__(self, id: int, channel: Channel, servers: list[Any]) -> None:
        self.id = id
        self.channel = channel
        self.env = channel.env
        self.servers = servers
        self.policy: Policy | None = None
        self.state: Any = None
        # What a job that arrives here calls: an instance's attribute that no method of the class
        # shadows, whose read Python 3.11 specialises (one that shadows a method it does not).
        self.receive: Callable[[Job], None] = self._receive
        if type(self).send is Dispatcher.send and instant(channel):
            # Zero latency and no faults: a job reaches its server at once, so `send` need not go
            # through the channel's latency test (one call fewer per job). `InstantDispatcher` does
            # the same through its class.
            self.send = self._send_instant  # type: ignore[method-assign]

    def _receive(self, job: Job) -> None:
        """A job arrives here: the policy decides (now, or when replies are in)."""
        self.policy.dispatch(self, job)  # type: ignore[union-attr]

    def follow(self, policy: Policy) -> None:
        """Hand the jobs that arrive here to ``policy``.

        `receive` becomes ``policy.receiver(self)``: ``policy.dispatch`` with this dispatcher
        bound (a C-level `functools.partial`: the same call, without a Python frame per job),
        or what the policy calls instead. What wraps `receive` (`emulator.model.trace`,
        `emulator.model.policing`) wraps this one.
        """
        self.policy = policy
        self.receive = policy.receiver(self)

    def send(self, job: Job, server: Any) -> None:
        """Send ``job`` to ``server`` over the channel."""
        job.dispatched = self.env._now  # the property costs a call; this runs per job
        job.dispatcher = self.id
        self.channel.transfer(job, server)

    def _send_instant(self, job: Job, server: Any) -> None:
        """`send` over an instant channel: `Channel.transfer`'s counting and delivery, inlined."""
        job.dispatched = self.env._now
        job.dispatcher = self.id
        self.channel.recorder.transfers += 1
        server.accept(job)

    def __repr__(self) -> str:
        return f"Dispatcher({self.id})"


def instant(channel: Channel) -> bool:
    """Whether a job sent over ``channel`` reaches its server at once, through `Channel.transfer`."""
    return channel.instant and type(channel).transfer is Channel.transfer


class InstantDispatcher(Dispatcher):
    """A `Dispatcher` on an `instant` channel: its class's `send` is `Dispatcher._send_instant`.

    The same calls as a `Dispatcher` whose instance holds `_send_instant` as ``send``, but a
    call of a class's method is specialised by Python 3.11 (``LOAD_METHOD``), and a call of an
    instance's attribute that shadows one is not: about 15 ns per job. What wraps ``send``
    (`emulator.model.trace`, `emulator.model.policing`) sets the instance's, as before.
    """

    send = Dispatcher._send_instant


def dispatcher_for(channel: Channel) -> type[Dispatcher]:
    """`InstantDispatcher` on an `instant` channel, `Dispatcher` otherwise."""
    return InstantDispatcher if instant(channel) else Dispatcher
