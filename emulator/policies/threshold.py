"""Mitzenmacher's threshold model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from .base import IntOrExpr, Policy, PolicyConfig, queue_length

if TYPE_CHECKING:
    from ..dispatcher import Dispatcher
    from ..job import Job
    from ..model import Model
    from ..server import Server


class ThresholdConfig(PolicyConfig):
    name: Literal["threshold"] = "threshold"
    d: IntOrExpr = Field(2, description="at most d probes per job")
    threshold: int = Field(1, ge=1, description="join the first probed server with fewer than this many jobs")
    replace: bool = Field(False, description="probe with replacement")


class ThresholdPolicy(Policy):
    """Probe random servers one at a time, at most d; join the first with fewer than T jobs.

    If none of the d probed servers has fewer than ``threshold`` jobs, the job
    joins the last one probed. Each probe is a query and a reply (2 messages);
    with latency each probe is a round trip before the next one starts.

    References
    ----------
    .. [1] M. Mitzenmacher, "On the Analysis of Randomized Load Balancing
       Schemes", Theory of Computing Systems 32 (1999), section on threshold
       models.
    """

    name = "threshold"
    Config = ThresholdConfig
    messages = "2 per probe, at most 2d per job"
    expressions: ClassVar[tuple[str, ...]] = ("d",)

    @classmethod
    def label(cls, params: dict[str, Any]) -> str:
        return f"Thr({params['d']},{params['threshold']})"

    def __init__(self, model: Model, params: dict[str, Any]) -> None:
        super().__init__(model, params)
        self.d = params["d"]
        self.threshold = params["threshold"]
        self.replace = params["replace"]

    def dispatch(self, dispatcher: Dispatcher, job: Job) -> None:
        servers = dispatcher.servers
        order = self.uniforms.sample(len(servers), self.d, self.replace)
        self._probe(dispatcher, job, [servers[i] for i in order], 0)

    def _probe(self, dispatcher: Dispatcher, job: Job, probes: list[Server], i: int) -> None:
        server = probes[i]

        def on_reply(lengths: list[int]) -> None:
            if lengths[0] < self.threshold or i + 1 == len(probes):
                dispatcher.send(job, server)
            else:
                self._probe(dispatcher, job, probes, i + 1)

        dispatcher.channel.ask([server], queue_length, on_reply)

