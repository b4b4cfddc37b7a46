"""Mitzenmacher's threshold model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import Field

from .base import IntOrExpr, Policy, PolicyConfig, overloaded_sampling, queue_length
from .views import DispatcherView, JobView, ModelView, PointView, ServerView

ASKING, ANSWERED_LATER = -1, -2  # a probe's state, else the index of the next probe to start


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
    compiled = "emulator.compiled.policies.threshold"

    @classmethod
    def label(cls, config: ThresholdConfig) -> str:
        return f"Thr({config.d},{_compact(config.threshold)})"

    @classmethod
    def check_speeds(cls, config: ThresholdConfig, speeds: Sequence[float], work: float) -> str | None:
        return overloaded_sampling(speeds, work, int(config.d), config.replace)

    @classmethod
    def samples_per_job(cls, config: ThresholdConfig, point: PointView) -> float:
        return float(config.d)  # at most d probes

    def __init__(self, model: ModelView, config: ThresholdConfig) -> None:
        super().__init__(model, config)
        self.d = int(config.d)
        self.threshold = config.threshold
        self.replace = config.replace

    def dispatch(self, dispatcher: DispatcherView, job: JobView) -> None:
        servers = dispatcher.servers
        order = self.uniforms.sample(len(servers), self.d, self.replace)
        self._probe(dispatcher, job, [servers[i] for i in order], 0)

    def _probe(self, dispatcher: DispatcherView, job: JobView, probes: list[ServerView], i: int) -> None:
        """Probe ``probes[i]``, then the next ones until one is below the threshold or none is left.

        Without latency a reply comes back within its query: the next probe is then
        started by this loop, not by the reply, so d probes nest no d calls deep.
        """
        while True:
            server = probes[i]
            # ASKING while the query is out; the next probe's index if the reply came back within it.
            state = [ASKING]

            def on_reply(lengths: list[int], i: int = i, server: ServerView = server, state: list[int] = state) -> None:
                if lengths[0] < self.threshold or i + 1 == len(probes):
                    dispatcher.send(job, server)
                elif state[0] == ASKING:
                    state[0] = i + 1
                else:  # a reply after latency: no loop is waiting for it
                    self._probe(dispatcher, job, probes, i + 1)

            dispatcher.channel.ask([server], queue_length, on_reply)
            if state[0] == ASKING:  # no reply yet, or the job was sent
                state[0] = ANSWERED_LATER
                return
            i = state[0]


def _compact(n: int) -> str:
    """``n`` as written, or past 12 digits in scientific form (``1e30``, ``1.25e40``): a label stays short.

    Examples
    --------
    >>> _compact(2), _compact(10**30), _compact(125 * 10**38)
    ('2', '1e30', '1.25e40')
    """
    text = str(n)
    if len(text) <= 12:
        return text
    fraction = text[1:4].rstrip("0")
    return f"{text[0]}{'.' + fraction if fraction else ''}e{len(text) - 1}"
