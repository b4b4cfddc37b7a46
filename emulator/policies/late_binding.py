"""Late binding (Sparrow): reservations queue at servers; a job goes to the first that asks for it."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field

from ..measure.messages import Kind
from .base import IntOrExpr, Policy, PolicyConfig, overloaded_sampling
from .views import DispatcherView, JobView, ModelView, PointView, ServerView

# Bound once: reading an Enum member as a class attribute costs about 0.1 us, and these go out per job.
RESERVATION, REQUEST, CANCEL = Kind.RESERVATION, Kind.REQUEST, Kind.CANCEL


class LateBindingConfig(PolicyConfig):
    name: Literal["late_binding"] = "late_binding"
    d: IntOrExpr = Field(2, description="distinct servers that get a reservation per job: an integer or an "
                                        "expression in N (N: one central FCFS queue)")


class LateBindingPolicy(Policy):
    """Place d reservations per job; the first of its servers to ask for the job runs it.

    Dispatcher side: a job that arrives stays at its dispatcher, which sends one
    ``reservation`` to each of d distinct servers drawn uniformly at random. When a
    ``request`` for the job comes in, the first asker gets the job (a job transfer);
    every later asker gets a ``cancel``. Jobs of a batch that arrive together are placed
    one by one (d reservations each, drawn apart): a dispatcher sees one job at a time.

    Server side: reservations wait at a server in FIFO order, apart from its jobs.
    A server that holds no job and is not waiting for an answer takes its next
    reservation and sends a ``request`` to the reservation's dispatcher; it then waits,
    idle, for the job or a cancel (a round trip with latency), and on a cancel takes
    its next reservation. So a server holds at most one job: ``length`` (and every
    queue-length column) counts that job only, never reservations, and a job's wait is
    spent at its dispatcher (``mean_wait``, the wait at a server, is zero).

    Messages: d reservations per job, and every reservation sends one request when it
    reaches the head of its queue; one request gets the job, the other d - 1 a cancel:
    3d - 1 per job. Reservations are not withdrawn when their job has started (the
    paper's proactive cancellation is not modelled): each is cancelled when it asks.

    With zero latency, d = N is a central FCFS queue of N servers (M/M/N with
    exponential service) and d = 1 is random routing (M/M/1 per server). With latency
    L every request keeps its server idle for a round trip, 2L, so a job costs the
    servers its service plus 2dL: stable only if load x (1 + 2dL / mean service) < 1.

    References
    ----------
    .. [1] K. Ousterhout, P. Wendell, M. Zaharia, I. Stoica, "Sparrow: distributed, low
       latency scheduling", Proc. 24th ACM Symposium on Operating Systems Principles
       (SOSP) (2013).
    """

    name = "late_binding"
    Config = LateBindingConfig
    messages = "3d - 1 per job: d reservation + d request + (d - 1) cancel"
    compiled = "emulator.compiled.policies.late_binding"

    @classmethod
    def label(cls, config: LateBindingConfig) -> str:
        return f"LB({config.d})"

    @classmethod
    def check(cls, config: LateBindingConfig, point: PointView) -> dict[str, str]:
        problems = super().check(config, point)
        if problems:
            return problems
        system, network = point.scenario.system, point.scenario.network
        if system.discipline != "fifo" or system.time != "continuous":
            # Reservations queue in FIFO order at a server that asks when it is idle: no pool
            # is ever idle, and slotted servers take their jobs a slot at a time.
            return {"name": f"expected FIFO servers in continuous time (system.discipline: fifo, system.time: "
                            f"continuous) for late binding, got {system.discipline}, {system.time}"}
        faults = ([f"network.loss {network.loss:g}"] if network.loss > 0 else []) \
            + (["system.failures"] if system.failures is not None else [])
        if faults:
            # A lost request or cancel would leave its server waiting for ever (the paper has no timeout).
            return {"name": "expected no faults (network.loss: 0, no system.failures) for late binding, got "
                            + " and ".join(faults)}
        return {}

    @classmethod
    def check_speeds(cls, config: LateBindingConfig, speeds: Sequence[float], work: float) -> str | None:
        # A job whose d reservations are all at some set of servers runs there, as SQ(d) sends it there.
        return overloaded_sampling(speeds, work, int(config.d), False)

    @classmethod
    def samples_per_job(cls, config: LateBindingConfig, point: PointView) -> float:
        return 3.0 * float(config.d)

    def __init__(self, model: ModelView, config: LateBindingConfig) -> None:
        super().__init__(model, config)
        self.d = int(config.d)
        n = len(model.servers)
        # Per server: its reservations (job, dispatcher) in arrival order; whether it waits for an answer;
        # whether `_ask` is running for it (with zero latency a cancel comes back inside its own request).
        self.reservations: list[deque[tuple[Any, Any]]] = [deque() for _ in range(n)]
        self.waiting = [False] * n
        self.asking = [False] * n
        for dispatcher in model.dispatchers:
            dispatcher.state = set()  # ids of its jobs not yet asked for
        for server in model.servers:
            server.on_arrive = self._arrived
            server.on_depart = self._departed

    # -- dispatcher side -------------------------------------------------------------
    def dispatch(self, dispatcher: DispatcherView, job: JobView) -> None:
        servers = dispatcher.servers
        # Waiting before the reservations go: with zero latency the first one asks at once.
        dispatcher.state.add(job.id)
        send = self.channel.send
        for i in self.uniforms.sample(len(servers), self.d):
            send(RESERVATION, self._reserve, servers[i], job, dispatcher)

    def _request(self, dispatcher: DispatcherView, server: ServerView, job: JobView) -> None:
        waiting = dispatcher.state
        if job.id in waiting:
            waiting.remove(job.id)
            dispatcher.send(job, server)
        else:
            self.channel.send(CANCEL, self._cancel, server)

    # -- server side -----------------------------------------------------------------
    def _reserve(self, server: ServerView, job: JobView, dispatcher: DispatcherView) -> None:
        self.reservations[server.id].append((job, dispatcher))
        self._ask(server)

    def _cancel(self, server: ServerView) -> None:
        self.waiting[server.id] = False
        self._ask(server)

    def _arrived(self, server: ServerView, job: JobView) -> None:
        self.waiting[server.id] = False  # the job it asked for

    def _departed(self, server: ServerView) -> None:
        if server.length == 0:
            self._ask(server)

    def _ask(self, server: ServerView) -> None:
        """An idle server that waits for no answer asks for the job of its next reservation.

        A loop, not recursion: with zero latency each cancel arrives inside the request
        that caused it, and a server may skip many reservations of started jobs in a row.
        """
        sid = server.id
        if self.asking[sid]:
            return  # the loop below, further up the stack, takes the next reservation
        self.asking[sid] = True
        queue = self.reservations[sid]
        waiting = self.waiting
        send = self.channel.send
        while queue and not waiting[sid] and server.length == 0:
            job, dispatcher = queue.popleft()
            waiting[sid] = True
            send(REQUEST, self._request, dispatcher, server, job)
        self.asking[sid] = False
