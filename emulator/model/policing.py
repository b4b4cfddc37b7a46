"""Per-job checks of a user's policy: a job it drops or sends twice fails the run at once, in one line.

The contract (`emulator.policies.base`) says that ``dispatch`` sends its job now,
or later when the replies to the queries it sent come back. A policy that does
neither would make the run wait forever for the job; one that sends a job twice
would count it twice. The built-in policies are tested to keep the contract, so
only the others pay for these checks (a few operations per job): `watch` wraps
the dispatchers' ``receive`` and ``send`` and the channel's ``ask`` of one model.

A job counts as dropped when ``dispatch`` returned without sending it and without
sending any control message (nothing can answer), or when every ``ask`` made for
it, while it was being dispatched or when earlier replies came in, has had its
replies and it is still not sent. A job asked about more than `ROUNDS_PER_SERVER`
x (N + D) + `ROUNDS` times without being sent fails the run too: a policy that asks
again at every reply would otherwise keep it, and the run, going for ever.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..errors import PolicyError

ROUNDS_PER_SERVER, ROUNDS = 10, 100
"""A job may be asked about at most 10 (N + D) + 100 times before it is sent: enough to probe every server and
dispatcher one at a time, several times over, and to retry through lost replies."""


def watch(dispatchers: Sequence[Any], channel: Any, servers: Sequence[Any], name: str) -> None:
    """Check every job the policy ``name`` handles through ``dispatchers`` and ``channel``; see the module."""
    known = {id(server) for server in servers}
    most = ROUNDS_PER_SERVER * (len(servers) + len(dispatchers)) + ROUNDS
    rounds: dict[int, int] = {}  # job id -> asks made for it so far, while it is unsent
    current: list[Any] = [None]  # the job whose dispatch, or whose replies, the policy is handling
    asking: dict[int, int] = {}  # job id -> asks made for it whose replies are still to come

    def unsent(job: Any) -> bool:
        return not hasattr(job, "dispatched")  # set by `Dispatcher.send`

    def handling(job: Any, call: Callable[[], None]) -> None:
        """Run ``call`` with ``job`` as the job the policy is handling (asks made meanwhile are for it)."""
        previous, current[0] = current[0], job
        try:
            call()
        finally:
            current[0] = previous

    def wrap(dispatcher: Any) -> None:
        receive, send = dispatcher.receive, dispatcher.send

        def checked_receive(job: Any) -> None:
            before = sum(channel.counts)  # read at each job: a `Trace` replaces the counters
            handling(job, lambda: receive(job))
            if unsent(job) and job.id not in asking and sum(channel.counts) == before:
                raise PolicyError(f"policy {name!r} did not send job {job.id}: dispatch returned without "
                                  f"sending it, and sent no query whose reply could send it later")

        def checked_send(job: Any, server: Any) -> None:
            if not hasattr(job, "arrival"):
                raise PolicyError(f"policy {name!r} sent {job!r}, which is not a job")
            if id(server) not in known:
                raise PolicyError(f"policy {name!r} sent job {job.id} to {server!r}, which is not one of the "
                                  f"dispatcher's servers")
            if not unsent(job):
                raise PolicyError(f"policy {name!r} sent job {job.id} to a server twice (again to server "
                                  f"{server.id}, at t={dispatcher.env.now:g})")
            rounds.pop(job.id, None)
            send(job, server)

        dispatcher.receive = checked_receive
        dispatcher.send = checked_send

    ask = channel.ask

    def checked_ask(targets: Any, answer: Any, then: Callable[[list[int]], None], asker: Any = None) -> None:
        job = current[0]
        if job is None or asker is not None:  # from a server's hook or a timer: no job waits on it
            ask(targets, answer, then, asker)
            return
        asking[job.id] = asking.get(job.id, 0) + 1
        rounds[job.id] = asked = rounds.get(job.id, 0) + 1
        if asked > most:
            raise PolicyError(f"policy {name!r} did not send job {job.id}: it asked about it {most:,} times "
                              f"(10 (N + D) + 100) and still had not sent it")

        def replied(replies: list[int]) -> None:
            handling(job, lambda: then(replies))
            asking[job.id] -= 1
            if asking[job.id] == 0:
                del asking[job.id]
                if unsent(job):
                    raise PolicyError(f"policy {name!r} did not send job {job.id}: the replies to its "
                                      f"queries came in and it was still not sent")

        ask(targets, answer, replied)  # a dispatcher asks: `asker` is None

    for dispatcher in dispatchers:
        wrap(dispatcher)
    channel.ask = checked_ask
