"""The hook names the kernels' sources import: a placeholder that `emulator.compiled.build` replaces.

`kernel` and `slotted` are templates: ``build`` writes, per policy, a copy of each
whose import line names that policy's own hooks, so that numba inlines them as
direct calls. Here they are a policy that does nothing (every job to server 0), so
that the templates import and type-check as the modules they are.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..tools import Tools
from .common import (
    nothing_deliver as deliver,
)
from .common import (
    nothing_initialise as initialise,
)
from .common import (
    nothing_on_arrive as on_arrive,
)
from .common import (
    nothing_on_arrive_batch as on_arrive_batch,
)
from .common import (
    nothing_on_depart as on_depart,
)
from .common import (
    nothing_replied as replied,
)
from .common import (
    nothing_timer as timer,
)


@njit(cache=True, inline="always")
def dispatch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
             ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int) -> tuple[int, bool]:
    return 0, False


__all__ = ["deliver", "dispatch", "initialise", "on_arrive", "on_arrive_batch", "on_depart", "replied", "timer"]
