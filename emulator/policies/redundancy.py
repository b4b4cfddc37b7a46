"""Redundancy-d, Red(d): a copy of each job at d distinct random servers; the first copy to finish (or start) wins."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from ..measure.messages import Kind
from .base import IntOrExpr, Policy, PolicyConfig
from .views import DispatcherView, JobView, ModelView, PointView

CANCEL = Kind.CANCEL


class RedundancyConfig(PolicyConfig):
    name: Literal["redundancy"] = "redundancy"
    d: IntOrExpr = Field(2, description="copies per job, at distinct random servers: an integer or an expression "
                                        "in N")
    cancel: Literal["completion", "start"] = Field(
        "completion", description="when the other copies are cancelled: the first copy's completion, or its start")
    copies: Literal["independent", "identical"] = Field(
        "independent", description="copies' sizes: each drawn on its own, or all the job's size")


class RedundancyPolicy(Policy):
    """Send a copy of each job to d distinct random servers; the first copy to finish finishes the job.

    With ``cancel: completion`` the server where the first copy completes sends a
    ``cancel`` to the server of each other copy; with ``cancel: start`` the server
    where the first copy starts service does. A cancelled copy leaves its server
    at once, waiting or in service. The job's response time runs until its first
    copy completes. With ``copies: independent`` each extra copy's size is drawn
    from the service law (the ``copies`` stream); ``identical`` copies all have
    the job's size.

    Messages: d - 1 cancels per job (server -> server) and no query; the extra
    copies are job transfers (``copies_per_job`` = d). With latency a cancel takes
    its latency: a copy may start, or finish, before its cancel arrives; its
    service is then wasted work (``wasted_work_per_job``), and a cancel that
    arrives before its copy drops the copy when it comes.

    FIFO servers without capacity, in continuous time, without failures: other
    systems are refused.

    References
    ----------
    .. [1] K. Gardner, M. Harchol-Balter, A. Scheller-Wolf, M. Velednitsky,
       S. Zbarsky, "Redundancy-d: The Power of d Choices for Redundancy",
       Operations Research 65(4) (2017).
    """

    name = "redundancy"
    Config = RedundancyConfig
    messages = "d - 1 cancel per job (server -> server); the d - 1 extra copies are job transfers"
    copies: ClassVar[bool] = True  # its servers hold copies that may be cancelled (`emulator.model.copies`)
    compiled = "emulator.compiled.policies.redundancy"

    @classmethod
    def label(cls, config: RedundancyConfig) -> str:
        options = [option for option, default in ((f"cancel={config.cancel}", config.cancel == "completion"),
                                                  (config.copies, config.copies == "independent")) if not default]
        return f"Red({config.d})" + (f"[{','.join(options)}]" if options else "")

    @classmethod
    def check(cls, config: RedundancyConfig, point: PointView) -> dict[str, str]:
        problems = super().check(config, point)
        if problems:
            return problems
        system = point.scenario.system
        have = {"system.discipline": system.discipline, "system.capacity": system.capacity,
                "system.time": system.time, "system.failures": system.failures}
        want = {"system.discipline": "fifo", "system.capacity": None, "system.time": "continuous",
                "system.failures": None}
        for key, value in have.items():
            if value != want[key]:
                # The copies wait in FIFO queues that may cancel them; a blocked copy, a pool, a slot or a
                # failure would each need their own reading of the paper's model.
                return {"name": f"redundancy expects {key}: {want[key] if want[key] is not None else 'none'} "
                                f"(copies wait in FIFO queues, cancelled in place), got {_show(value)}"}
        return {}

    @classmethod
    def samples_per_job(cls, config: RedundancyConfig, point: PointView) -> float:
        return float(config.d)

    def __init__(self, model: ModelView, config: RedundancyConfig) -> None:
        super().__init__(model, config)
        self.d = int(config.d)
        self.identical = config.copies == "identical"
        self.copier: Any = model.copier  # type: ignore[attr-defined]  # the SimPy model's `Copier`
        for server in model.servers:
            if config.cancel == "completion":
                server.on_finish = self._cancel_others
            else:
                server.on_start = self._started

    def dispatch(self, dispatcher: DispatcherView, job: JobView) -> None:
        servers = dispatcher.servers
        targets = [servers[i] for i in self.uniforms.sample(len(servers), self.d)]
        for copy in self.copier(job, targets, self.identical):
            dispatcher.send(copy, copy.target)

    # -- server side -----------------------------------------------------------------
    def _started(self, server: Any, copy: Any) -> None:
        group = copy.group
        if not group.started:
            group.started = True
            self._cancel_others(server, copy)

    def _cancel_others(self, server: Any, copy: Any) -> None:
        """The server of ``copy`` tells the server of every other copy of its job to drop it."""
        send = self.channel.send
        for other in copy.group.copies:
            if other is not copy:
                send(CANCEL, _deliver, other.target, other)


def _deliver(server: Any, copy: Any) -> None:
    server.cancel(copy)


def _show(value: Any) -> str:
    return "none" if value is None else str(value)
