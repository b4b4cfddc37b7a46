"""The compiled engine's Python side: what it supports, the random streams, the refill loop.

The kernel (`kernel.simulate`) draws the policy's uniforms itself, from the very
``generator(seed, "policy")`` object, one ``rng.random(BATCH)`` block when the
previous one is used up, as `emulator.workload.streams.Uniforms` does; the rare
``rng.choice`` of `Uniforms.sample` is drawn here when the kernel asks for it,
at the same point of the stream. Arrival gaps, job sizes and the dispatcher
split are drawn here, in the same ``BATCH`` blocks and with the same numpy calls
as the SimPy engine, and handed to the kernel when it runs out: each of these
streams is consumed in order and by nothing else, so drawing ahead changes
nothing. Speeds drawn from a law come from the model's own `_speeds` (the same
draws, rate and overload check). The recorder's totals, and the occupancy
observer's window, come back as the plain `RunResult` both engines return, whose
`metrics` and `arrays` compute the row as for the SimPy engine.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ScenarioError
from ..measure.messages import KINDS, Kind
from ..measure.occupancy import OCCUPANCY_METRICS, theory_mean
from ..measure.recorder import METRICS
from ..measure.result import OccupancyResult, RunResult
from ..measure.series import Series
from ..measure.sketch import QuantileSketch
from ..policies import BUILT_IN, REGISTRY
from ..scenario.schema import ResolvedPolicy, SlotConfig
from ..scenario.sweep import Point, Scenario
from ..workload import arrivals
from ..workload.speeds import draw_speeds
from ..workload.streams import BATCH, generator
from . import state as S

COMPILED: frozenset[str] = frozenset(name for name, cls in REGISTRY.items() if name in BUILT_IN and cls.compiled)
"""The built-in policies with a compiled version (their classes name it: `Policy.compiled`), read without numba."""


def has_compiled_form(name: str) -> bool:
    """Whether registered policy ``name`` names a compiled form (`Policy.compiled`): built-in or a user's."""
    return getattr(REGISTRY.get(name), "compiled", None) is not None

AUTO_SECONDS = 1.0
"""``run.engine: auto`` runs a replication on the compiled engine when SimPy would take this long or more.

See `simpy_seconds`: above a second of SimPy, the compiled engine (at most 0.3 of
SimPy's time per job in every case measured) makes up for loading its kernel
(0.5-0.8 s per process; compiling it, once per installation, about `COMPILE_SECONDS`).
"""


def simpy_seconds(point: Point, policy: ResolvedPolicy) -> float:
    """The SimPy engine's CPU seconds for one replication of ``policy`` at ``point``, estimated.

    The cost model of ``run.engine: auto``: (warm-up + jobs) x microseconds per job, with

        4 + 0.5 per server sampled + 9 per decade of N above 1,000 (+ 1 with run.occupancy)
        + with latency, 2.4 per message: (2 + 2 x servers sampled), each one an event,
          and with network.loss 4 per query and reply (each a closure and a check more, and a timeout)

    Servers sampled per job are the policy's `Policy.samples_per_job`: d for SQ(d) and
    the threshold policy (at most d probes), d for JIQ-SQ(d) (per idle token, at most
    one per job), N / (period x arrival rate) for JBT-d (the N threshold messages of
    each update, per job); none for Random, round robin and JSQ at zero latency, whose
    2N messages SimPy counts without sending them and whose shortest queue it keeps in
    an O(1) index (`policies.jsq.LengthIndex`), but N for JSQ with latency, which asks
    them all. The N term is the machine's caches: past about a thousand servers,
    SimPy's objects outgrow them.

    Measured (CPU time per job, load 0.9, 2 shared cores; SimPy / compiled, in us):

    ====================  =====  ========  ========================  ======  ========
    case                  SimPy  compiled  case                      SimPy   compiled
    ====================  =====  ========  ========================  ======  ========
    Random N=100          4.0    0.17      SQ(3) N=1,000             8.7     0.29
    Random N=10^4         13.1             SQ(10) N=1,000            12.3    0.40
    Random N=10^5         21.8             SQ(32) N=1,000            19.8    0.74
    round robin N=100     4.1    0.16      SQ(100) N=1,000           48.4    3.2
    JSQ N=10              4.7    0.13      SQ(219) N=1,000 pools     101     12.3
    JSQ N=1,000           6.5    0.32      SQ(922) N=10^4 pools      550     162
    JSQ N=3,000           9.4              threshold d=3 N=100       7.5     0.21
    JSQ N=10^4            17.9   0.33      threshold d=30 N=1,000    26.3    0.59
    JSQ N=10^4 pools      17.6             JIQ N=100                 5.2     0.19
    JSQ N=10^5            35.8             JIQ N=1,000               7.4     0.25
    SQ(2) N=100           4.5    0.18      JIQ-SQ(2) 10 dispatchers  6.9     0.22
    SQ(2) N=10^4          12.6             JBT-2 N=100 period 5      6.7     0.22
    SQ(2) N=10^5          30.6             JBT-10 N=1,000 period 1   7.5     0.29
    JSQ N=100 occupancy   6.1    0.20      SQ(100) N=1,000 occupancy 51.2    3.3
    ====================  =====  ========  ========================  ======  ========

    With exponential latency of mean 0.01 at N = 100: JSQ 464-515 / 9.5-11, SQ(2)
    15-20 / 0.5, JIQ 8.5-14 / 0.35, JBT-10 8.8-13.6 / 0.35. With loss 0.05 too (timeout
    0.05), measured in one run with latency alone on a loaded machine (latency alone there:
    JSQ 503 / 29.5, SQ(2) 15.1 / 1.19, JIQ 9.1 / 0.47, JBT-10 9.3 / 0.48): JSQ 1,165 / 33.8,
    SQ(2) 18.9 / 1.31, JIQ 8.2 / 0.39, JBT-10 6.4 / 0.21 (its lost reports take servers out
    of the lists, so it sends fewer messages).

    The model is within a factor of 2 of each (JBT-d's lists and reports cost it 2-3 us
    more than it says); it only has to tell a run of a fraction of a second from one of
    seconds. It grows with the jobs, so a shorter run is never moved to the slower engine.

    In slotted time a job costs SimPy less and a slot costs it its clock's step, spread
    over the slot's λN arrivals (``point.rate``): 2.5 + 0.5 per server sampled + 8 / λN,
    with the same N and occupancy terms. Measured (SimPy, us per job; compiled at N = 50,
    load 0.99: 45-102 ns): N=10 load 0.3 one decision per slot, JSQ 6.4 and JIQ 3.4 (the
    model 5.2); N=10 load 0.99 JBT-2 2.5 (3.3); N=50 load 0.99 JSQ 4.1 per job and 2.8
    per slot, SQ(2) 3.4 and 2.4, JBT-10 2.7 and 2.3 (2.7-3.7); N=1,000 load 0.9 per job
    JSQ 3.5 (2.5).
    """
    run = point.scenario.run
    n = point.servers
    samples = REGISTRY[policy.name].samples_per_job(policy.config, _PointView(point))
    if point.scenario.system.time == "slotted":
        us = 2.5 + 0.5 * samples + 8.0 / point.rate
    else:
        us = 4.0 + 0.5 * samples
    us += 9.0 * max(0.0, math.log10(n / 1000)) + (1.0 if run.occupancy else 0.0)
    network = point.scenario.network
    if network.latency.mean != 0:
        us += 2.4 * 2.0 + (4.0 if network.loss > 0 else 2.4) * 2.0 * samples
    return run.total_jobs * us * 1e-6


CHUNK = 16  # BATCH blocks per refill of the gap, size and split buffers

# What the kernel was written against. Anything else in a scenario (a new key, a new
# metric column, a new policy option) is something it may not reproduce: SimPy runs it.
_KNOWN_FIELDS = {
    "system": {"servers", "discipline", "capacity", "speeds", "dispatchers", "dispatcher_shares", "time", "slot",
               "failures"},
    "workload": {"load", "arrivals", "service"},
    "arrivals": {"kind", "burstiness", "switch_rate", "mean_batch", "path"},
    "service": {"kind", "mean", "k", "scv", "alpha"},
    "network": {"latency", "loss", "timeout"},
    "run": {"jobs", "warmup_jobs", "engine", "occupancy", "batch_means"},
}
_KNOWN_METRICS = (
    "jobs", "warmup_jobs", "mean_response", "mean_wait", "p50_response", "p90_response", "p99_response",
    "prob_wait", "mean_queue_length", "messages_per_job", *(f"messages_per_job_{k}" for k in KINDS),
    *(f"delivered_per_job_{k}" for k in KINDS), *(f"lost_per_job_{k}" for k in KINDS),
    "messages_per_server_time", "blocked_fraction", "lost_fraction", "sim_time", "wall_seconds",
    *OCCUPANCY_METRICS,
)
_ARRIVALS = {"poisson", "deterministic", "mmpp2", "batch_poisson", "trace"}


def supports(point: Point, policy: ResolvedPolicy) -> str | None:
    """Why the compiled engine cannot run ``policy`` at ``point`` exactly, or None if it can."""
    scenario = point.scenario
    system = scenario.system
    if scenario.network.loss > 0 and scenario.network.latency.mean == 0:
        # SimPy delivers each message within its sender's step, and decides an ask there once its
        # replies are in: the kernel replays that for messages on their way only (`faults`).
        return "messages are lost at zero latency (network.loss > 0 with network.latency.mean 0)"
    if system.failures is not None:
        return "servers fail (system.failures)"
    if not has_compiled_form(policy.name):
        return f"policy '{policy.name}' has no compiled version"
    parts = {"system": system, "workload": scenario.workload, "arrivals": scenario.workload.arrivals,
             "service": scenario.workload.service, "network": scenario.network, "run": scenario.run}
    for name, part in parts.items():
        unknown = set(type(part).model_fields) - _KNOWN_FIELDS[name]
        if unknown:
            return f"{name} has options the compiled engine does not know: {sorted(unknown)}"
    try:
        from .policies import module as compiled_form
    except ImportError:
        return "numba is not installed"
    try:
        module = compiled_form(policy.name)
    except Exception as exc:  # a user's compiled form that does not import: `check_policy` says so too
        return f"its compiled form does not import ({type(exc).__name__}: {exc})"
    unknown = set(policy.params) - module.PARAMS
    if unknown:
        return f"policy options the compiled engine does not know: {sorted(unknown)}"
    if METRICS != _KNOWN_METRICS:  # message kinds come and go with the enum; other columns do not
        return "metric columns the compiled engine does not know"
    if (scenario.run.warmup_jobs == "auto" or scenario.run.batch_means is not None) and (
            system.time == "slotted" or scenario.run.total_jobs >= 2**53):
        return "run.warmup_jobs: auto and run.batch_means run in continuous time, below 2**53 jobs"
    if scenario.run.total_jobs >= 2**62:
        return "run.warmup_jobs + run.jobs beyond the kernel's 64-bit counters"
    # Known keys the kernel does not model yet: only their neutral values run compiled.
    if system.time == "slotted":
        problem = _slotted_problem(point, policy, module)
        if problem is not None:
            return problem
    elif system.time != "continuous":
        return f"time '{system.time}'"
    if system.discipline not in ("fifo", "pool"):
        return f"discipline '{system.discipline}'"
    if scenario.workload.arrivals.kind not in _ARRIVALS:
        return f"arrivals '{scenario.workload.arrivals.kind}'"
    problem = getattr(module, "supports", None)
    return None if problem is None else problem(policy.config, _PointView(point))


_KNOWN_SLOT = {"same_slot", "dispatch", "pull_delay"}


def _slotted_problem(point: Point, policy: ResolvedPolicy, module: Any) -> str | None:
    """Why the compiled slot clock (`compiled.slotted`) cannot run this slotted case, or None."""
    slot = point.scenario.system.slot or SlotConfig()
    unknown = set(type(slot).model_fields) - _KNOWN_SLOT
    if unknown:
        return f"system.slot has options the compiled engine does not know: {sorted(unknown)}"
    return None


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

Measured on 2 shared cores: 10-25 s by policy and loop (docs/compiled-engine.md).
"""


def prepare(cases: Iterable[tuple[Point, ResolvedPolicy]], announce: Callable[[], None] | None = None) -> bool:
    """Load the kernels of ``cases`` in this process, compiling those the cache lacks; False if numba is unusable.

    A run calls it once before its worker processes start, with the (point, policy)
    pairs it will run compiled, so that its workers share what it compiled or loaded
    (forked workers inherit the loaded kernels; others load the cache it wrote) instead
    of each compiling the same kernel at once. Each policy has its own kernel per loop
    (the event kernel, the slot clock: `build`), compiled here by one short run of the
    case. ``announce`` is called just before numba starts compiling, and not at all
    when the kernels load from the cache.
    """
    if not available():
        return False
    from numba.core import event

    from .build import loop
    from .policies import name_of

    wanted: dict[tuple[str, str], tuple[Point, ResolvedPolicy]] = {}
    for point, policy in cases:
        template = "slotted" if point.scenario.system.time == "slotted" else "kernel"
        built = loop(template, name_of(policy.name), _features(point, policy))
        function = built.simulate_slots if template == "slotted" else built.simulate
        if not function.overloads:  # not loaded or compiled in this process yet
            wanted.setdefault((template, policy.name), (point, policy))
    if not wanted:
        return True

    class Announce(event.Listener):
        said = False

        def on_start(self, what: event.Event) -> None:
            if announce is not None and not self.said:
                self.said = True
                announce()

        def on_end(self, what: event.Event) -> None:
            pass

    with event.install_listener("numba:compile", Announce()):
        for point, policy in wanted.values():
            record(*_short(point, policy), 1)
    return True


def every_case() -> list[tuple[Point, ResolvedPolicy]]:
    """A short case of every kernel of every built-in compiled policy: `prepare` them to build all ahead.

    Each policy's event kernel without and with latency, and its slot clock; with held
    messages (``slot.pull_delay``) too for the policies that send what it holds (JIQ, JBT-d).
    """
    systems: list[dict[str, Any]] = [
        {"system": {"servers": 4}},
        {"system": {"servers": 4}, "network": {"latency": {"kind": "exponential", "mean": 0.1}}},
        {"system": {"servers": 4, "time": "slotted"}}]
    held: dict[str, Any] = {"system": {"servers": 4, "time": "slotted", "slot": {"pull_delay": 1}}}
    cases = []
    for name in sorted(COMPILED):
        for system in systems + ([held] if name in ("jiq", "jbt") else []):
            scenario = {"name": name, "policies": [{"name": name}], "run": {"jobs": 20, "warmup_jobs": 0}, **system}
            try:
                point = Scenario.from_dict(scenario).points()[0]
            except ScenarioError:  # e.g. held messages for a policy that sends none
                continue
            if supports(point, point.policies[0]) is None:
                cases.append((point, point.policies[0]))
    return cases


def _features(point: Point, policy: ResolvedPolicy) -> tuple[bool, ...]:
    """The kernel's `build.FEATURES` for this case: latency (the event kernel) or held slot messages (the slot
    clock), and whether the policy's decisions are checked (a policy that is not built in)."""
    checked = policy.name not in BUILT_IN
    if point.scenario.system.time == "slotted":
        return ((point.scenario.system.slot or SlotConfig()).pull_delay > 0, checked)
    return (point.scenario.network.latency.mean != 0, checked)


def _short(point: Point, policy: ResolvedPolicy) -> tuple[Point, ResolvedPolicy]:
    """The case with a run of a few jobs: enough to compile (or load) its kernel."""
    data = point.scenario.to_dict()
    data["run"] = {**data.get("run", {}), "jobs": 20, "warmup_jobs": 0}
    short = Scenario.from_dict(data).points()[0]
    return short, next(p for p in short.policies if p.label == policy.label)


def run(point: Point, policy: ResolvedPolicy, seed: int,
        progress: Callable[[int], None] | None = None) -> dict[str, float]:
    """One replication on the compiled engine: the metrics, as `Model.run` returns them."""
    return record(point, policy, seed, progress).metrics()


def record(point: Point, policy: ResolvedPolicy, seed: int,
           progress: Callable[[int], None] | None = None, series: Series | None = None) -> RunResult:
    """One replication on the compiled engine: its measurements, identical to the SimPy engine's.

    ``series``, if given, is filled as `Recorder.series` (continuous time only).
    """
    from .core import BATCH as KERNEL_BATCH
    from .recorder import RESPONSE_BATCH

    available()  # which also discards a damaged cache, or one compiled from other sources

    assert RESPONSE_BATCH == QuantileSketch.FLUSH and KERNEL_BATCH == BATCH
    if point.scenario.system.time == "slotted":
        return _record_slotted(point, policy, seed, progress)
    scenario = point.scenario
    system = scenario.system
    n, dispatchers = system.servers, system.dispatchers
    if system.speeds is None:
        speeds, rate = np.ones(1), point.rate
    else:  # the model's function: speeds drawn from a law, and its overload check of the draw
        server_speeds, rate = draw_speeds(point, policy, seed)
        speeds = np.array(server_speeds, dtype=np.float64)
    alike = bool(speeds.min() == speeds.max())
    if alike:
        speeds = speeds[:1]  # one entry: every server has this speed
    from .build import loop
    from .policies import module, name_of
    from .tools import Toolkit

    simulate = loop("kernel", name_of(policy.name), _features(point, policy)).simulate  # built when first used
    description = module(policy.name).describe(policy.config, _PointView(point), speeds)
    P, Q = _parameters(point, policy, description)
    latent = scenario.network.latency.mean != 0
    P[S.P_LATENT] = latent
    # The most one step may send: an ask of every server (JSQ) or a broadcast to all N servers
    # and D - 1 dispatchers (JBT-d), or the policy's own (JSQ-sparse's N D updates), and a job.
    # With loss, each ask's timeout too (`faults`).
    faulty = scenario.network.loss > 0
    P[S.P_ROOM] = n + dispatchers + description.messages_per_step + 8 + (description.asks_per_step + 1) * faulty
    P[S.P_ASK_ROOM] = description.asks_per_step + 1

    iv = np.zeros(S.I_NIV, dtype=np.int64)
    fv = np.zeros(S.F_NFV)
    iv[S.I_UPOS] = BATCH  # no uniform drawn yet
    counts = np.zeros(2 * len(KINDS), dtype=np.int64)  # sent, then lost, by kind (the recorder's window)
    window = np.zeros((2, 2 * len(KINDS)), dtype=np.int64)
    servers = np.zeros((n, 4), dtype=np.int32)  # length, FIFO head and tail slots, spare
    servers[:, 1:3] = -1
    inv_speed = 1.0 / speeds  # elementwise as `Server`'s 1.0 / speed
    jobs = _Jobs(n + 64, iv, latent)
    heap_cap = n + 8 if system.discipline == "fifo" else 2 * n + 64
    heap = np.zeros(3 * heap_cap)  # (time, id, code) records: `core.push`
    iv[S.I_HEAP_CAP] = heap_cap

    policy_rng = generator(seed, "policy")
    interface = policy_rng.bit_generator.ctypes  # the kernel draws through it: `core.uniform`
    bitgen = (interface.next_double, interface.state_address)
    ubuf = np.zeros(BATCH)
    responses = np.zeros(2 * QuantileSketch.FLUSH)  # the responses, then their jobs' arrival numbers
    sketch = QuantileSketch()

    toolkit = Toolkit(description, n, dispatchers, speeds, iv)
    latencies = None
    if latent:
        latencies = _law_blocks(scenario.network.latency.law(), seed, "network")
        toolkit.open_network(description, P, iv)
        heap_cap = max(heap_cap, 2 * int(P[S.P_ROOM]) + heap_cap)
        heap = np.zeros(3 * heap_cap)
        iv[S.I_HEAP_CAP] = heap_cap
        toolkit.refill_latency(iv, latencies, int(P[S.P_ROOM]))
    losses = None
    if faulty:  # `Uniforms(generator(seed, "loss"))`'s draws, one per control message sent
        losses = _uniform_blocks(generator(seed, "loss"))
        fv[S.F_LOSS], fv[S.F_TIMEOUT] = scenario.network.loss, scenario.network.timeout
        iv[S.I_NLOSS] = 0
        toolkit.refill_loss(iv, losses, int(P[S.P_ROOM]))

    occupancy = _OccupancyArrays(n, iv)

    gaps = _gap_blocks(point, rate, seed)
    sizes = _size_blocks(point, seed)
    split = _uniform_blocks(generator(seed, "dispatchers")) if dispatchers > 1 else None
    gap_buf = size_buf = split_buf = np.zeros(1)

    budget = 1 << 62 if progress is None else 500_000  # events between progress reports
    start = True
    while True:
        status = simulate(P, Q, iv, fv, counts, window, servers, inv_speed,
                          jobs.arrival, jobs.at, jobs.size, jobs.start, jobs.next, jobs.measured,
                          heap, gap_buf, size_buf, split_buf, bitgen, ubuf,
                          responses, budget, start, toolkit.tools(),
                          occupancy.count, occupancy.lengths, occupancy.totals)
        if start:  # numba has compiled (and written the cache) or loaded the kernel by now
            from . import cache

            cache.seal()
        start = False
        if status == S.DONE:
            break
        if status == S.NEED_GAPS:
            gap_buf, final = next(gaps)
            iv[S.I_GAP], iv[S.I_NGAP], iv[S.I_GAPS_FINAL] = 0, len(gap_buf), final
        elif status == S.NEED_SIZES:
            size_buf = next(sizes)
            iv[S.I_SIZE], iv[S.I_NSIZE] = 0, len(size_buf)
        elif status == S.NEED_SPLIT:
            assert split is not None
            split_buf = next(split)
            iv[S.I_SPLIT], iv[S.I_NSPLIT] = 0, len(split_buf)
        elif status == S.NEED_HEAP:
            heap = np.concatenate([heap, np.zeros_like(heap)])
            iv[S.I_HEAP_CAP] = len(heap) // 3
        elif status == S.NEED_NETWORK:
            assert latencies is not None
            toolkit.refill_latency(iv, latencies, int(P[S.P_ROOM]))
            if losses is not None:
                toolkit.refill_loss(iv, losses, int(P[S.P_ROOM]))
            heap = _network_room(P, iv, toolkit, heap)
        elif status == S.EMPTY:  # what SimPy says when run(until=done) runs out of events
            raise RuntimeError('No scheduled events left but "until" event was not triggered')
        elif status == S.BAD_SERVER:
            _bad_decision(policy, P, iv)
        elif not _shared_need(status, iv, jobs, toolkit, occupancy, policy_rng, sketch, responses, progress,
                              series):
            raise RuntimeError(f"the kernel returned {status}")
    return _finish(point, iv, fv, window, sketch, responses, occupancy, progress, series)


def _network_room(P: np.ndarray, iv: np.ndarray, toolkit: Any, heap: np.ndarray) -> np.ndarray:
    """NEED_NETWORK: more message and ask records, and heap room for the most one step may send."""
    toolkit.grow_network(P, iv)
    if iv[S.I_HEAP_CAP] - iv[S.I_HEAP] < P[S.P_ROOM] + 2:
        heap = np.concatenate([heap, np.zeros(max(len(heap), 3 * int(P[S.P_ROOM])))])
        iv[S.I_HEAP_CAP] = len(heap) // 3
    return heap


def _bad_decision(policy: ResolvedPolicy, P: np.ndarray, iv: np.ndarray) -> None:
    """BAD_SERVER: a user's compiled form chose no server, or one that does not exist: fail in one line."""
    from ..errors import PolicyError

    chosen = int(iv[S.I_BAD])
    if chosen >= 0:
        raise PolicyError(f"policy {policy.name!r}: its compiled form sent a job to server {chosen}, expected one "
                          f"of 0..{int(P[S.P_N]) - 1}")
    raise PolicyError(f"policy {policy.name!r}: its compiled form did not send a job (dispatch returned server "
                      f"{chosen} without asking any server)")


def _shared_need(status: int, iv: np.ndarray, jobs: _Jobs, toolkit: Any, occupancy: _OccupancyArrays,
                 policy_rng: np.random.Generator, sketch: QuantileSketch, responses: np.ndarray,
                 progress: Callable[[int], None] | None, series: Series | None = None) -> bool:
    """Serve a request both kernels make (the event kernel's and the slot clock's); False if not one."""
    if status == S.NEED_JOBS:
        jobs.grow(iv)
    elif status == S.NEED_LEVELS:
        toolkit.grow_levels(iv)
    elif status == S.NEED_OCCUPANCY:
        occupancy.grow()
    elif status == S.NEED_LISTS:
        toolkit.grow_lists(iv)
    elif status == S.NEED_CHOICE:
        drawn = policy_rng.choice(int(iv[S.I_CHOICE_N]), size=int(iv[S.I_CHOICE_K]), replace=False)
        toolkit.choice[:len(drawn)] = [int(x) for x in drawn]
        iv[S.I_CHOICE] = 1
    elif status == S.FLUSH:
        _fold(sketch, responses, int(iv[S.I_NRESP]), series)
        iv[S.I_NRESP] = 0
        if progress is not None:  # every 8,192 measured jobs
            progress(int(iv[S.I_FINISHED]))
    elif status == S.PAUSE:
        assert progress is not None  # the kernels pause only to report progress
        progress(int(iv[S.I_FINISHED]))
    else:
        return False
    return True


def _finish(point: Point, iv: np.ndarray, fv: np.ndarray, window: np.ndarray, sketch: QuantileSketch,
            responses: np.ndarray, occupancy: _OccupancyArrays,
            progress: Callable[[int], None] | None, series: Series | None = None) -> RunResult:
    """The last responses folded, the last progress report, and the run's measurements."""
    _fold(sketch, responses, int(iv[S.I_NRESP]), series)
    if progress is not None:  # the last report says done, as `Model.run`'s does
        progress(int(iv[S.I_FINISHED]))
    result = _result(point, iv, fv, window, sketch)
    if point.scenario.run.occupancy:
        result.occupancy = occupancy.result(point, iv, fv)
    return result


def _parameters(point: Point, policy: ResolvedPolicy, description: Any) -> tuple[np.ndarray, np.ndarray]:
    """The kernels' parameters ``P`` (int64) and ``Q`` (float64): the scenario's and the policy's description."""
    from .tools import pack

    scenario = point.scenario
    system = scenario.system
    P = np.zeros(S.P_NP, dtype=np.int64)
    P[S.P_N] = system.servers
    P[S.P_D] = system.dispatchers
    P[S.P_CHECKED] = policy.name not in BUILT_IN  # a user's compiled form: its decisions are checked
    # The kernel's integers are int64; the SimPy engine takes any size. A capacity that cannot bind
    # runs as one that cannot either: a server never holds more jobs than the run creates.
    total = scenario.run.total_jobs  # below 2**62 (`supports`)
    capacity = system.capacity
    P[S.P_CAPACITY] = -1 if capacity is None or capacity >= total else capacity
    P[S.P_POOL] = system.discipline == "pool"
    P[S.P_WARMUP] = scenario.run.fixed_warmup
    P[S.P_JOBS] = scenario.run.jobs
    P[S.P_OCCUPANCY] = scenario.run.occupancy
    shares = system.dispatcher_shares
    P[S.P_SHARES] = shares is not None
    P[S.P_QUERY], P[S.P_REPLY], P[S.P_IDLE] = Kind.QUERY, Kind.REPLY, Kind.IDLE
    P[S.P_REPORT], P[S.P_THRESHOLD_KIND] = Kind.REPORT, Kind.THRESHOLD
    # With shares, the model's bounds (cumulative shares, the last infinite) follow.
    bounds = [] if shares is None else [*itertools.accumulate(shares[:-1]), math.inf]
    Q = np.zeros(S.Q_NQ + len(bounds))
    Q[S.Q_BOUNDS:S.Q_BOUNDS + len(bounds)] = bounds
    pack(description, P, Q)
    return P, Q


def _record_slotted(point: Point, policy: ResolvedPolicy, seed: int,
                    progress: Callable[[int], None] | None) -> RunResult:
    """One slotted replication on the compiled slot clock (`compiled.slotted`): its measurements.

    Arrival counts and capacities come from the model's own iterators and numpy calls
    (`slots.arrival_counts`, and `slots.capacities`' blocks of `slots.ROWS` slots), on
    the same streams; each is consumed in order and by nothing else, so drawing ahead
    changes nothing. Everything else is set up as for the event kernel.
    """
    from ..workload import slots
    from . import slotted as K
    from .build import loop
    from .policies import module, name_of
    from .tools import Toolkit

    simulate_slots = loop("slotted", name_of(policy.name), _features(point, policy)).simulate_slots  # on first use

    scenario = point.scenario
    system, workload = scenario.system, scenario.workload
    slot = system.slot or SlotConfig()
    n, dispatchers = system.servers, system.dispatchers
    server_speeds, rate = draw_speeds(point, policy, seed)  # as the model: listed, drawn, or all 1
    speeds = np.array(server_speeds, dtype=np.float64)
    if bool(speeds.min() == speeds.max()):
        speeds = speeds[:1]  # one entry: every server has this speed
    description = module(policy.name).describe(policy.config, _PointView(point), speeds)
    P, Q = _parameters(point, policy, description)

    iv = np.zeros(S.I_NIV, dtype=np.int64)
    fv = np.zeros(S.F_NFV)
    iv[S.I_UPOS] = BATCH  # no uniform drawn yet
    sv = np.zeros(K.S_NV, dtype=np.int64)
    sf = np.zeros(K.S_NF)
    sv[K.S_PHASE] = K.PH_COUNT  # slot 0 has no service phase before its arrivals
    sv[K.S_BATCH] = slot.dispatch == "slot"
    sv[K.S_SAME_SLOT] = slot.same_slot
    counts = np.zeros(2 * len(KINDS), dtype=np.int64)  # sent, then lost, by kind (the recorder's window)
    window = np.zeros((2, 2 * len(KINDS)), dtype=np.int64)
    servers = np.zeros((n, 4), dtype=np.int32)  # length, FIFO head and tail slots, spare
    servers[:, 1:3] = -1
    jobs = _Jobs(n + 64, iv)

    policy_rng = generator(seed, "policy")
    interface = policy_rng.bit_generator.ctypes  # the kernel draws through it: `core.uniform`
    bitgen = (interface.next_double, interface.state_address)
    ubuf = np.zeros(BATCH)
    responses = np.zeros(2 * QuantileSketch.FLUSH)  # the responses, then their jobs' arrival numbers
    sketch = QuantileSketch()
    toolkit = Toolkit(description, n, dispatchers, speeds, iv)
    occupancy = _OccupancyArrays(n, iv)
    # slot.pull_delay holds idle tokens and reports back (`model.slotted.SlotChannel`): as messages,
    # each in a heap by the slot after whose decisions it is due (`network.post`).
    held = slot.pull_delay > 0
    P[S.P_HELD], iv[S.I_HELD] = held, slot.pull_delay
    P[S.P_ROOM] = n + dispatchers + description.messages_per_step + 8  # a JBT-d update rechecks all N
    P[S.P_ASK_ROOM] = 1
    heap_cap = 2 * int(P[S.P_ROOM]) + 64 if held else 1
    heap = np.zeros(3 * heap_cap)
    iv[S.I_HEAP_CAP] = heap_cap
    if held:
        toolkit.open_network(description, P, iv)
        iv[S.I_NLAT] = 1 << 62  # no latency is drawn

    arrival = workload.arrivals
    count_stream = slots.arrival_counts(arrival.kind, rate, generator(seed, "arrivals"), **arrival.gap_options())
    mus = [speed / workload.service.mean for speed in server_speeds]  # as `build_model`
    total = scenario.run.total_jobs
    caps_rng = generator(seed, "capacities")
    rates = np.asarray(mus)
    if workload.service.kind == "deterministic":  # one row for every slot; beyond the run's jobs, as many
        caps = np.array([[min(round(mu), total) for mu in mus]], dtype=np.int64)
        sv[K.S_CAP] = -1
    else:
        caps = np.zeros((1, n), dtype=np.int64)
    split = _uniform_blocks(generator(seed, "dispatchers")) if dispatchers > 1 else None
    split_buf = np.zeros(1)
    arrivals_buf = np.zeros(1, dtype=np.int64)
    scratch = np.zeros((5, 64), dtype=np.int64)
    dwork = np.zeros((2, dispatchers), dtype=np.int64)

    budget = 1 << 62 if progress is None else 500_000  # jobs and departures between progress reports
    start = True
    while True:
        status = simulate_slots(P, Q, iv, fv, sv, sf, counts, window, servers,
                                  jobs.arrival, jobs.next, jobs.measured, arrivals_buf, caps, split_buf,
                                  bitgen, ubuf, responses, budget, start, toolkit.tools(),
                                  occupancy.count, occupancy.lengths, occupancy.totals, scratch, dwork, heap)
        if start:
            from . import cache

            cache.seal()
        start = False
        if status == S.DONE:
            break
        if status == K.NEED_COUNTS:
            arrivals_buf = np.fromiter(itertools.islice(count_stream, BATCH), dtype=np.int64)  # its blocks
            sv[K.S_COUNT_POS], sv[K.S_NCOUNTS] = 0, len(arrivals_buf)
        elif status == K.NEED_CAPS:
            caps = caps_rng.poisson(rates, (slots.ROWS, n))  # `slots.capacities`' block
            sv[K.S_CAP], sv[K.S_NCAP] = 0, slots.ROWS
        elif status == S.NEED_NETWORK:
            heap = _network_room(P, iv, toolkit, heap)
        elif status == K.NEED_SCRATCH:
            scratch = np.zeros((5, max(2 * scratch.shape[1], int(sv[K.S_COUNT]))), dtype=np.int64)
        elif status == S.NEED_SPLIT:
            assert split is not None
            split_buf = next(split)
            iv[S.I_SPLIT], iv[S.I_NSPLIT] = 0, len(split_buf)
        elif status == S.BAD_SERVER:
            _bad_decision(policy, P, iv)
        elif not _shared_need(status, iv, jobs, toolkit, occupancy, policy_rng, sketch, responses, progress):
            raise RuntimeError(f"the slot clock returned {status}")
    return _finish(point, iv, fv, window, sketch, responses, occupancy, progress)


@dataclass(frozen=True)
class _PointView:
    """A resolved point as a policy's checks see it (`emulator.policies.views.PointView`)."""

    point: Point

    @property
    def servers(self) -> int:
        return self.point.servers

    @property
    def dispatchers(self) -> int:
        return self.point.scenario.system.dispatchers

    @property
    def rate(self) -> float:
        return self.point.rate

    @property
    def scenario(self) -> Scenario:
        return self.point.scenario


def _fold(sketch: QuantileSketch, responses: np.ndarray, n: int, series: Series | None = None) -> None:
    """Bin ``responses[:n]``, the batch the SimPy engine's sketch would flush at this point.

    With ``series``, also add them to it by their jobs' arrival numbers (stored from
    ``FLUSH`` on), in the order the SimPy recorder adds them: its sums come out the same.
    """
    if n:
        sketch.fold(responses[:n].copy())
        if series is not None:
            flush = QuantileSketch.FLUSH
            series.add_many(responses[flush:flush + n].astype(np.int64), responses[:n])


def _result(point: Point, iv: np.ndarray, fv: np.ndarray, window: np.ndarray,
            sketch: QuantileSketch) -> RunResult:
    """The run's measurements from the kernel's sums and window snapshots."""
    # Each snapshot holds the counts sent, then those lost, by kind: the recorder's window.
    snapshots = [(float(fv[S.F_T0]), float(fv[S.F_A0]), window[0].tolist()),
                 (float(fv[S.F_T1]), float(fv[S.F_A1]), window[1].tolist())]
    run = point.scenario.run
    return RunResult(point.scenario.system.servers, run.fixed_warmup, run.jobs, snapshots,
                     finished=int(iv[S.I_FINISHED]), blocked=int(iv[S.I_BLOCKED]), lost_jobs=0,
                     waited=int(iv[S.I_WAITED]), sum_response=float(fv[S.F_SUM_RESPONSE]),
                     sum_wait=float(fv[S.F_SUM_WAIT]), responses=sketch)


class _Jobs:
    """Job slots (37 bytes each, 29 without latency): arrival, arrival at the server, size, start of
    service, measured, and ``next`` (the FIFO link, the free list, or a pool task's server).

    Without latency a job reaches its server at its arrival, so one array holds both times
    (the kernel writes the same value twice). They grow by a quarter when full, so that
    memory stays near the jobs in the system.
    """

    def __init__(self, capacity: int, iv: np.ndarray, latent: bool = True) -> None:
        self.arrival = np.zeros(capacity)
        self.at = np.zeros(capacity) if latent else self.arrival
        self.size = np.zeros(capacity)
        self.start = np.zeros(capacity)
        self.measured = np.zeros(capacity, dtype=np.int64)  # arrival number + 1, 0 if not measured
        self.next = np.append(np.arange(1, capacity, dtype=np.int32), np.int32(-1))
        iv[S.I_FREE] = 0

    def grow(self, iv: np.ndarray) -> None:
        old = len(self.arrival)
        new = old + old // 4 + 64
        shared = self.at is self.arrival
        self.arrival, self.size, self.start, self.measured = (
            np.concatenate([a, np.zeros(new - old, a.dtype)])
            for a in (self.arrival, self.size, self.start, self.measured))
        self.at = self.arrival if shared else np.concatenate([self.at, np.zeros(new - old)])
        # The new slots go first, then what the list holds (the event kernel grows it only when empty).
        self.next = np.concatenate([self.next, np.arange(old + 1, new, dtype=np.int32),
                                    [np.int32(iv[S.I_FREE])]])
        iv[S.I_FREE] = old


class _OccupancyArrays:
    """The compiled occupancy observer's arrays (`occupancy`), doubled when they may be outgrown."""

    def __init__(self, servers: int, iv: np.ndarray, capacity: int = 64) -> None:
        from .occupancy import AREA_AT_EDGE, TOTAL_AT_EDGE

        self.count = np.zeros(capacity, dtype=np.int64)
        self.count[0] = servers  # every server starts empty
        self.lengths = np.zeros((AREA_AT_EDGE + 2, capacity))
        self.totals = np.zeros((TOTAL_AT_EDGE + 2, capacity))
        iv[S.I_OCC_LENGTHS] = iv[S.I_OCC_TOTALS] = 1

    def grow(self) -> None:
        self.count = np.concatenate([self.count, np.zeros_like(self.count)])
        self.lengths = np.concatenate([self.lengths, np.zeros_like(self.lengths)], axis=1)
        self.totals = np.concatenate([self.totals, np.zeros_like(self.totals)], axis=1)

    def result(self, point: Point, iv: np.ndarray, fv: np.ndarray) -> OccupancyResult:
        """The window's snapshots, as the SimPy engine's observer takes them (`Occupancy.edge`)."""
        from .occupancy import AREA_AT_EDGE, TOTAL_AT_EDGE

        times = (fv[S.F_T0], fv[S.F_T1])
        window = []
        for edge in range(int(iv[S.I_EDGES])):
            held = int(iv[S.I_OCC_EDGE_LENGTHS + 2 * edge])
            totals = int(iv[S.I_OCC_EDGE_LENGTHS + 2 * edge + 1])
            window.append((float(times[edge]), self.lengths[AREA_AT_EDGE + edge, :held].tolist(),
                           self.totals[TOTAL_AT_EDGE + edge, :totals].tolist(), float(fv[S.F_SPREAD0 + edge])))
        return OccupancyResult(point.scenario.system.servers, 1.0 - point.load, theory_mean(point.scenario), window)


# -- the streams, in the SimPy engine's blocks --------------------------------------------

def _uniform_blocks(rng: np.random.Generator) -> Iterator[np.ndarray]:
    """`Uniforms`' draws: rng.random(BATCH) blocks."""
    while True:
        yield np.concatenate([rng.random(BATCH) for _ in range(CHUNK)])


def _exponential_blocks(rng: np.random.Generator, mean: float) -> Iterator[np.ndarray]:
    """``rng.exponential(mean, BATCH)`` blocks, CHUNK at a time, in one buffer refilled in place.

    Exponential draws are taken one by one from the stream, and numpy's
    ``exponential(mean)`` is ``mean * standard_exponential()``: the same floats as
    the SimPy engine's blocks, without an allocation and a copy per refill. The
    kernel has read the whole buffer before it asks for the next one.
    """
    block = np.empty(BATCH * CHUNK)
    while True:
        rng.standard_exponential(out=block)
        block *= mean
        yield block


def _size_blocks(point: Point, seed: int) -> Iterator[np.ndarray]:
    """`Law.sampler`'s draws (or a trace's sizes), in its BATCH blocks."""
    workload = point.scenario.workload
    if workload.arrivals.kind == "trace":
        trace_sizes = arrivals.read_trace(workload.arrivals.path)[1]  # type: ignore[arg-type]
        if trace_sizes is not None:
            yield np.asarray(trace_sizes, dtype=np.float64)
            return
    yield from _law_blocks(workload.service.law(), seed, "sizes")


def _law_blocks(law: Any, seed: int, stream: str) -> Iterator[np.ndarray]:
    """``law.sampler(generator(seed, stream))``'s draws, CHUNK of its BATCH blocks at a time."""
    if law.kind == "deterministic":
        block = np.full(BATCH * CHUNK, float(law.mean))
        while True:
            yield block
    rng = generator(seed, stream)
    if law.kind == "exponential":
        yield from _exponential_blocks(rng, float(law.mean))
    while True:
        yield np.concatenate([law._draw(rng, BATCH) for _ in range(CHUNK)])


def _gap_blocks(point: Point, rate: float, seed: int) -> Iterator[tuple[np.ndarray, bool]]:
    """`arrivals.gaps`' draws at ``rate``, with True once the last (finite) block is out."""
    arrival = point.scenario.workload.arrivals
    rng = generator(seed, "arrivals")
    options = arrival.gap_options()
    if arrival.kind == "poisson":
        for block in _exponential_blocks(rng, 1.0 / rate):
            yield block, False
    if arrival.kind == "deterministic":
        block = np.full(BATCH * CHUNK, 1.0 / rate)
        while True:
            yield block, False
    if arrival.kind == "batch_poisson":
        mean_batch = options.get("mean_batch", _default("mean_batch"))
        p = 1.0 / mean_batch
        while True:
            batch_gaps = rng.exponential(mean_batch / rate, BATCH)
            batch = rng.geometric(p, BATCH)
            out = np.zeros(int(batch.sum()))
            out[np.cumsum(batch) - batch] = batch_gaps  # each batch: its gap, then size - 1 zeros
            yield out, False
    # Any other process: its own iterator, read in chunks.
    stream = arrivals.gaps(arrival.kind, rate, rng, **options)
    while True:
        block = np.fromiter(itertools.islice(stream, BATCH * CHUNK), dtype=np.float64)
        yield block, len(block) < BATCH * CHUNK


def _default(name: str) -> Any:
    return inspect.signature(arrivals.gaps).parameters[name].default

