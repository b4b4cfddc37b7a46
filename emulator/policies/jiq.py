"""Join the idle queue."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..measure.messages import Kind
from .base import IntOrExpr, ListPolicy, PolicyConfig, shortest
from .views import DispatcherView, ModelView, PointView, ServerView

# Bound once: reading ``Kind.IDLE`` (an Enum member as a class attribute) costs about
# 0.1 us on Python 3.11, and a token goes out on almost every departure at low load.
IDLE = Kind.IDLE


class JIQConfig(PolicyConfig):
    name: Literal["jiq"] = "jiq"
    d: IntOrExpr | None = Field(
        None,
        description="several dispatchers: an idle server queries d of them and joins the "
                    "shortest I-queue (JIQ-SQ(d)), an integer or an expression in N; default: a "
                    "uniformly random one (JIQ-Random)")
    memory: int | None = Field(
        None, ge=1, description="at most this many ids in a dispatcher's I-queue (>= 1: with 0 every idle "
                                "message is lost and JIQ is Random); default unbounded")


class JIQPolicy(ListPolicy):
    """Idle servers send a token; jobs go to a server from the I-queue, else at random.

    Server side: every time a server becomes idle it sends one ``idle`` message
    to one dispatcher (at time 0 every server is idle and sends one). With
    several dispatchers the token goes to a uniformly random one (JIQ-Random),
    or, with ``d``, to the one with the shortest I-queue among d sampled (the
    server's d queries and replies are counted too).

    Dispatcher side: an I-queue of server ids (an id is kept once). A job goes to
    an id taken uniformly at random from the I-queue, which removes it; if the
    I-queue is empty, to a uniformly random server. An entry can be stale: its
    server may have received a job from elsewhere since. With ``memory`` A, a
    token that finds A ids stored is dropped.

    At most one message per job with one dispatcher (plus N at start). With
    unbounded memory, N -> infinity and exp(1) service, mean response -> 1 and
    idle messages per job -> 1; with memory A, (1-λ)^(-1/(A+1)) and (1-λ)^(1/(A+1)).

    References
    ----------
    .. [1] Y. Lu, Q. Xie, G. Kliot, A. Geller, J. R. Larus, A. Greenberg,
       "Join-Idle-Queue: A novel load balancing algorithm for dynamically
       scalable web services", Performance Evaluation 68(11) (2011).
    .. [2] D. Gamarnik, J. N. Tsitsiklis, M. Zubeldia, "Delay, memory, and
       messaging tradeoffs in distributed service systems", SIGMETRICS (2016).
    """

    name = "jiq"
    Config = JIQConfig
    messages = "1 idle per idle period (at most 1 per job with one dispatcher); JIQ-SQ(d): + 2d"
    compiled = "emulator.compiled.policies.jiq"

    @classmethod
    def label(cls, config: JIQConfig) -> str:
        label = "JIQ" if config.d is None else f"JIQ-SQ({config.d})"
        return label if config.memory is None else f"{label}(A={config.memory})"

    @classmethod
    def check(cls, config: JIQConfig, point: PointView) -> dict[str, str]:
        d = config.d
        if isinstance(d, int) and d > point.dispatchers:
            return {"d": f"expected at most system.dispatchers={point.dispatchers} I-queues to sample, got {d}"}
        return {}

    @classmethod
    def samples_per_job(cls, config: JIQConfig, point: PointView) -> float:
        return float(config.d) if config.d is not None and point.dispatchers > 1 else 0.0  # per idle token

    def __init__(self, model: ModelView, config: JIQConfig) -> None:
        super().__init__(model, config)
        self.d = None if config.d is None else int(config.d)
        self.memory = config.memory
        for server in model.servers:
            server.on_depart = self._departed
        for server in model.servers:
            self._send_token(server)

    # -- server side -----------------------------------------------------------------
    def _departed(self, server: ServerView) -> None:
        if server.length == 0:
            self._send_token(server)

    def _send_token(self, server: ServerView) -> None:
        dispatchers = self.dispatchers
        channel = self.channel
        if self.d is None or len(dispatchers) == 1:
            channel.send(IDLE, self._token, self.random_dispatcher(), server.id)
            return
        self._ask(server)

    def _ask(self, server: ServerView) -> None:
        """JIQ-SQ(d): ask d dispatchers their I-queue lengths, send the token to the shortest.

        A method of its own: the closure's variables would be cells in `_send_token`, made on
        every call, on the one-dispatcher path too.
        """
        assert self.d is not None  # (called only with d)
        dispatchers, channel, uniforms = self.dispatchers, self.channel, self.uniforms
        sampled = [dispatchers[i] for i in uniforms.sample(len(dispatchers), self.d)]
        channel.ask(sampled, _iqueue_length, lambda lengths: channel.send(
            IDLE, self._token, sampled[shortest(lengths, uniforms.random)], server.id), asker=server)

    # -- dispatcher side -------------------------------------------------------------
    def _token(self, dispatcher: DispatcherView, sid: int) -> None:
        iqueue = dispatcher.state
        if self.memory is None or len(iqueue) < self.memory:
            iqueue.add(sid)


def _iqueue_length(dispatcher: DispatcherView) -> int:
    return len(dispatcher.state)
