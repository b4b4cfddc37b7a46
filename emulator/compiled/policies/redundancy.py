"""Redundancy-d, compiled (`emulator.policies.redundancy`): d distinct random servers, each sent a copy.

The dispatch hook draws the targets as the SimPy policy does (`Uniforms.sample(N, d)`)
into ``T.picked``; the kernel's copies feature (`emulator.compiled.copying`) sends the
copies there, serves and cancels them, and counts the cancels.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ...measure.messages import Kind
from ...policies.redundancy import RedundancyConfig
from ..core import sample
from ..state import P_N, P_PARAMS
from ..tools import Description, Tools
from .common import nothing_initialise, nothing_on_arrive, nothing_on_depart, nothing_timer

PARAMS = frozenset({"d", "cancel", "copies"})
D = P_PARAMS


def describe(config: RedundancyConfig, point: Any, speeds: np.ndarray) -> Description:
    d = int(config.d)
    # With latency a step sends at most d copies, or d - 1 cancels and one service's.
    return Description(ints=[d], sample=d, messages_per_step=2 * d)


def copy_plan(config: RedundancyConfig) -> tuple[int, bool, bool, int]:
    """What `copying` needs: d, whether the first start (not completion) cancels, identical sizes, the kind."""
    return int(config.d), config.cancel == "start", config.copies == "identical", int(Kind.CANCEL)


def instant_loss(config: Any, point: Any) -> bool:
    """Whether the kernel runs its lost messages at zero latency (`eligibility.supports`): it asks nothing."""
    return True


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    sample(rng, ubuf, iv, P[P_N], P[D], False, T.picked, T.pool)  # the kernel sends the copies there
    return -1, False


on_arrive, on_depart, initialise, timer = nothing_on_arrive, nothing_on_depart, nothing_initialise, nothing_timer
