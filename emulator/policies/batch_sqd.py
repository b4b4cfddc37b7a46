"""Batch sampling: d samples per job of a batch, the batch's jobs on the shortest sampled servers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import Field

from .base import IntOrExpr, Policy, PolicyConfig, overloaded_sampling, queue_length, shortest
from .views import DispatcherView, JobView, ModelView, PointView


class BatchSQDConfig(PolicyConfig):
    name: Literal["batch_sqd"] = "batch_sqd"
    d: IntOrExpr = Field(2, description="servers sampled per job of a batch: an integer or an expression in N")
    fill: Literal["shortest", "water"] = Field(
        "shortest", description="shortest: the k jobs on the k shortest sampled servers, one each; water: one by "
                                "one on the currently shortest sampled server, counting the jobs placed")


class BatchSQDPolicy(Policy):
    """For a batch of k jobs, sample min(N, dk) distinct servers and place the k jobs on them.

    The jobs of a batch (``batch_poisson`` arrivals, or a trace's equal times) reach
    one dispatcher together. It queries min(N, dk) distinct servers drawn uniformly;
    once every reply is in, ``fill: shortest`` sends the jobs to the k shortest of
    them, one each (when N < k, one each per round), and ``fill: water`` sends them
    one by one to the sampled server that is shortest counting the jobs of the
    batch placed on it so far. Ties are broken at random. A lone job (k = 1) is
    SQ(d), decision for decision. Slotted time is refused (a slot's arrivals at a
    dispatcher are one decision there already).

    Both fills are k passes of the SQ(d) choice (`shortest`) over the samples: a pass
    picks the shortest, ties uniformly at random; ``shortest`` then drops it from
    the candidates (it has its job), ``water`` adds one to its length. So k = 1 draws
    what SQ(d) draws, and the choice among tied servers is uniform.

    Messages: one query and one reply per sampled server, 2 min(N, dk) per batch:
    2d per job while dk <= N.

    References
    ----------
    .. [1] L. Ying, R. Srikant, X. Kang, "The power of slightly more than one sample
       in randomized load balancing", Mathematics of Operations Research 42(3)
       (2017); INFOCOM 2015.
    """

    name = "batch_sqd"
    Config = BatchSQDConfig
    messages = "2 min(N, dk) per batch of k (query + reply per sampled server): 2d per job while dk <= N"
    whole_batches = True
    compiled = "emulator.compiled.policies.batch_sqd"

    @classmethod
    def label(cls, config: BatchSQDConfig) -> str:
        return f"Batch-SQ({config.d})" + ("-water" if config.fill == "water" else "")

    @classmethod
    def check_speeds(cls, config: BatchSQDConfig, speeds: Sequence[float], work: float) -> str | None:
        # A lone job is SQ(d); a batch samples more servers, so overloads no set that SQ(d) does not.
        return overloaded_sampling(speeds, work, int(config.d), False)

    @classmethod
    def samples_per_job(cls, config: BatchSQDConfig, point: PointView) -> float:
        return float(config.d)

    def __init__(self, model: ModelView, config: BatchSQDConfig) -> None:
        super().__init__(model, config)
        self.d = int(config.d)
        self.water = config.fill == "water"
        for dispatcher in model.dispatchers:
            dispatcher.state = []  # the jobs of the batch received so far

    def dispatch(self, dispatcher: DispatcherView, job: JobView) -> None:
        """Hold the job until its batch (``job.batch`` jobs, received together) is in; then place the batch."""
        held: list[Any] = dispatcher.state
        held.append(job)
        if len(held) < job.batch:
            return
        jobs = held.copy()
        held.clear()
        servers = dispatcher.servers
        n = len(servers)
        sampled = [servers[i] for i in self.uniforms.sample(n, min(n, self.d * len(jobs)))]
        self.channel.ask(sampled, queue_length, lambda lengths: self._place(dispatcher, jobs, sampled, lengths))

    def _place(self, dispatcher: DispatcherView, jobs: list[Any], sampled: list[Any], lengths: list[int]) -> None:
        """Send the batch's jobs, in arrival order, to the servers `placement` picks."""
        for job, i in zip(jobs, placement(lengths, len(jobs), self.water, self.uniforms.random), strict=True):
            dispatcher.send(job, sampled[i])


def placement(lengths: list[int], k: int, water: bool, random: Callable[[], float]) -> list[int]:
    """The sampled server (an index into ``lengths``) of each of ``k`` jobs, in order.

    Each job takes the shortest candidate, ties at random (`shortest`). ``water``: the
    candidate's length grows by one. Else it leaves the candidates (one job each); once
    all have one, every sampled server is a candidate again (dk < k only when N < k).

    >>> placement([2, 0, 1], 2, False, lambda: 0.5)
    [1, 2]
    >>> placement([2, 0, 1], 3, True, lambda: 0.9)
    [1, 1, 2]
    """
    current = list(lengths)
    candidates = list(range(len(lengths)))
    chosen: list[int] = []
    for _ in range(k):
        if not candidates:
            candidates = list(range(len(lengths)))
        at = shortest([current[i] for i in candidates], random)
        server = candidates[at]
        chosen.append(server)
        if water:
            current[server] += 1
        else:
            del candidates[at]
    return chosen
