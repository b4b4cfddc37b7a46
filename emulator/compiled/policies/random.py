"""Random routing, compiled (`emulator.policies.random`): a uniform server, no messages."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...policies.random import RandomConfig
from ..core import uniform
from ..state import P_N
from ..tools import Description, Tools
from .common import nothing_initialise, nothing_on_arrive, nothing_on_depart, nothing_timer

PARAMS: frozenset[str] = frozenset()  # the Config fields this description handles


def describe(config: RandomConfig, point: Any, speeds: np.ndarray) -> Description:
    return Description()


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    return int(uniform(rng, ubuf, iv) * P[P_N]), False


on_arrive, on_depart, initialise, timer = nothing_on_arrive, nothing_on_depart, nothing_initialise, nothing_timer
def instant_loss(config: Any, point: Any) -> bool:
    """Whether the kernel runs its lost messages at zero latency (`eligibility.supports`): it sends none."""
    return True


def servers_fail(config: Any, point: Any) -> bool:
    """Whether the kernel runs its failing servers (`eligibility.supports`): always, its hooks do nothing."""
    return True
