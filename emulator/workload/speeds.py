"""The servers' speeds of one replication: as listed, or drawn once from a law."""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING

from ..scenario.checks import can_be_unstable, check_oblivious, check_speeds
from ..scenario.schema import LawConfig, ResolvedPolicy
from .streams import generator

if TYPE_CHECKING:
    from ..scenario.sweep import Point


def draw_speeds(point: Point, policy: ResolvedPolicy, seed: int) -> tuple[tuple[float, ...], float]:
    """The servers' speeds and the arrival rate of one replication.

    Speeds given as a law are drawn here, once per replication, from their own
    stream: every policy of the replication sees the same servers. The load is
    against the drawn total capacity, so the rate is the point's load times it.
    """
    scenario = point.scenario
    system = scenario.system
    if not isinstance(system.speeds, LawConfig):
        return system.speeds or (1.0,) * system.servers, point.rate
    speeds = tuple(islice(system.speeds.law().sampler(generator(seed, "speeds")), system.servers))
    rate = point.load * sum(speeds) / scenario.workload.service.mean
    drawn = f" (drawn with seed {seed})"
    check_speeds(scenario, speeds, rate, drawn)  # validation saw the law's typical draws only: these are the draws
    if can_be_unstable(scenario):
        check_oblivious(policy, speeds, rate, scenario.workload.service.mean, drawn)
    return speeds, rate
