"""Loading the compiled kernels: whether numba works here, and which kernel a case needs."""

from __future__ import annotations

import functools

from ..policies import BUILT_IN, REGISTRY
from ..scenario.schema import ResolvedPolicy, SlotConfig
from ..scenario.sweep import Point


@functools.cache
def available() -> bool:
    """Whether the kernel loads in this process: numba is installed and can cache somewhere.

    Numba caches next to the package (``__pycache__``), or, where that is read-only,
    in the user's cache folder (``~/.cache/numba``), or in ``NUMBA_CACHE_DIR`` if set;
    with none writable it refuses to load, and the SimPy engine runs instead. The
    cache is checked first (`cache.check`): one that is damaged or was compiled from
    other sources is discarded, and the kernel compiled once more.
    """
    try:
        from . import core  # noqa: F401  (numba, imported)
    except (ImportError, RuntimeError):
        return False
    from . import cache

    cache.guard()
    cache.check()
    return True


COMPILE_SECONDS = 20
"""About how long compiling one policy's kernel takes on an empty cache (`build`; the event kernel or the slot clock).

Measured on 2 shared cores: 7-21 s by policy and loop (docs/compiled-engine.md).
"""


def features(point: Point, policy: ResolvedPolicy) -> tuple[bool, ...]:
    """The kernel's `build.FEATURES` for this case: latency (the event kernel) or held slot messages (the slot
    clock), whether the policy's decisions are checked (a policy that is not built in), (the slot clock) whether
    its hooks read each job's dispatcher (`origins`), and (the event kernel)
    processor-sharing servers, whether servers fail, and whether the policy's compiled form places whole batches
    or reservations (its module's `WHOLE_BATCHES`, `RESERVATIONS`), whether jobs go as copies (`copying`), whether
    asks go through records at zero latency (`instant_asks`), and whether there are faults (lost messages or
    failing servers: ``fv[F_LOSS]`` is not 0, `faults.on`)."""
    checked = policy.name not in BUILT_IN
    if point.scenario.system.time == "slotted":
        return ((point.scenario.system.slot or SlotConfig()).pull_delay > 0, checked, origins(policy.name))
    return (point.scenario.network.latency.mean != 0, checked, point.scenario.system.discipline == "ps",
            point.scenario.system.failures is not None, *form_features(policy.name),
            bool(getattr(REGISTRY.get(policy.name), "copies", False)), instant_asks(point, policy),
            point.scenario.network.loss > 0 or point.scenario.system.failures is not None)


def form_features(name: str) -> tuple[bool, bool]:
    """Whether policy ``name``'s compiled form places whole batches, and reservations: the event kernel's
    features ``whole`` and ``reserving``, which the form's `tools.Description` must agree with (`engine`)."""
    from .policies import module

    form = module(name)
    return bool(getattr(form, "WHOLE_BATCHES", False)), bool(getattr(form, "RESERVATIONS", False))


def origins(name: str) -> bool:
    """Whether policy ``name``'s compiled form reads the dispatcher of the job that leaves or is blocked
    (``iv[I_ORIGIN]``; its module's `ORIGINS`): the slot clock's feature ``origins`` keeps each job's dispatcher
    for it (the event kernel keeps it for every policy)."""
    from .policies import module

    return bool(getattr(module(name), "ORIGINS", False))


def instant_asks(point: Point, policy: ResolvedPolicy) -> bool:
    """Whether the event kernel asks through records at zero latency (`faults.INSTANT`): faults (lost messages or
    failing servers) under a compiled policy that asks servers (its module's ``ASKS``, or ``ASKS(config, point)``
    where that depends on its options), whose asks then wait for replies that may not come, as `Channel.ask` makes
    them."""
    from .policies import module

    network = point.scenario.network
    if network.latency.mean != 0 or (network.loss == 0 and point.scenario.system.failures is None):
        return False
    asks = getattr(module(policy.name), "ASKS", False)
    return bool(asks(policy.config, point) if callable(asks) else asks)


