"""The compiled engine's drivers: one replication on a policy's kernel, with the refill loop around it.

The kernel (`kernel.simulate`) draws the policy's uniforms itself, from the very
``generator(seed, "policy")`` object, one ``rng.random(BATCH)`` block when the
previous one is used up, as `emulator.workload.streams.Uniforms` does (its samples
too: they are made of those uniforms alone). Arrival gaps, job sizes and the dispatcher
split are drawn here, in the same ``BATCH`` blocks and with the same numpy calls
as the SimPy engine, and handed to the kernel when it runs out: each of these
streams is consumed in order and by nothing else, so drawing ahead changes
nothing. Speeds drawn from a law come from the model's own `_speeds` (the same
draws, rate and overload check). The recorder's totals, and the occupancy
observer's window, come back as the plain `RunResult` both engines return, whose
`metrics` and `arrays` compute the row as for the SimPy engine.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..measure.messages import KINDS, Kind
from ..measure.result import RunResult
from ..measure.series import Series
from ..measure.sketch import QuantileSketch
from ..policies import BUILT_IN
from ..scenario.schema import ResolvedPolicy, SlotConfig
from ..scenario.sweep import Point
from ..workload.speeds import draw_speeds
from ..workload.streams import BATCH, generator
from . import state as S
from .arrays import Jobs, OccupancyArrays, fold, measurements
from .blocks import gap_blocks, law_blocks, size_blocks, split_blocks, uniform_blocks
from .cost import AUTO_SECONDS, simpy_seconds
from .eligibility import COMPILED, PointView, has_compiled_form, supports
from .failing import failing_periods
from .loading import COMPILE_SECONDS, available, features, instant_asks
from .ps import PS_FIELDS

__all__ = ["AUTO_SECONDS", "COMPILED", "COMPILE_SECONDS", "available", "has_compiled_form", "record", "run",
           "simpy_seconds", "supports"]


def run(point: Point, policy: ResolvedPolicy, seed: int,
        progress: Callable[[int], None] | None = None) -> dict[str, float]:
    """One replication on the compiled engine: the metrics, as `Model.run` returns them."""
    return record(point, policy, seed, progress).metrics()


def record(point: Point, policy: ResolvedPolicy, seed: int,
           progress: Callable[[int], None] | None = None, series: Series | None = None) -> RunResult:
    """One replication on the compiled engine: its measurements, identical to the SimPy engine's.

    ``series``, if given, is filled as `Recorder.series`.
    """
    from .core import BATCH as KERNEL_BATCH
    from .recorder import RESPONSE_BATCH

    available()  # which also discards a damaged cache, or one compiled from other sources

    assert RESPONSE_BATCH == QuantileSketch.FLUSH and KERNEL_BATCH == BATCH
    if point.scenario.system.time == "slotted":
        return _record_slotted(point, policy, seed, progress, series)
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

    simulate = loop("kernel", name_of(policy.name), features(point, policy)).simulate  # built when first used
    description = module(policy.name).describe(policy.config, PointView(point), speeds)
    _agree(policy.name, description)
    P, Q = _parameters(point, policy, description)
    latent = scenario.network.latency.mean != 0
    asking = instant_asks(point, policy)  # zero latency with faults: asks through records (`faults.INSTANT`)
    P[S.P_LATENT] = 2 if asking else latent
    # The most one step may send: an ask of every server (JSQ) or a broadcast to all N servers
    # and D - 1 dispatchers (JBT-d), or the policy's own (JSQ-sparse's N D updates), and a job.
    # With loss, each ask's timeout too (`faults`).
    lossy = scenario.network.loss > 0
    P[S.P_ROOM] = n + dispatchers + description.messages_per_step + 8 + (description.asks_per_step + 1) * lossy
    P[S.P_ROOM] += n * asking  # (two loss draws per target: a query and its reply)
    P[S.P_ASK_ROOM] = description.asks_per_step + 1

    iv = np.zeros(S.I_NIV, dtype=np.int64)
    fv = np.zeros(S.F_NFV)
    iv[S.I_UPOS] = BATCH  # no uniform drawn yet
    counts = np.zeros(2 * len(KINDS), dtype=np.int64)  # sent, then lost, by kind (the recorder's window)
    window = np.zeros((2, 2 * len(KINDS)), dtype=np.int64)
    servers = np.zeros((n, 4), dtype=np.int32)  # length, FIFO head and tail slots, spare
    servers[:, 1:3] = -1
    inv_speed = 1.0 / speeds  # elementwise as `Server`'s 1.0 / speed
    jobs = Jobs(n + 64, iv, latent or description.reservations or asking)  # (a job may wait: a request, a timeout)
    sharing = np.zeros((n if system.discipline == "ps" else 1, PS_FIELDS))  # the PS servers' rows (`ps`)
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
        latencies = law_blocks(scenario.network.latency.law(), seed, "network")
        toolkit.open_network(description, P, iv)
        heap_cap = max(heap_cap, 2 * int(P[S.P_ROOM]) + heap_cap)
        heap = np.zeros(3 * heap_cap)
        iv[S.I_HEAP_CAP] = heap_cap
        toolkit.refill_latency(iv, latencies, int(P[S.P_ROOM]))
    if asking:
        toolkit.open_network(description, P, iv)
        heap = _network_room(P, iv, toolkit, heap)
    losses = None
    if lossy:  # `Uniforms(generator(seed, "loss"))`'s draws, one per control message sent
        losses = uniform_blocks(generator(seed, "loss"))
        fv[S.F_LOSS], fv[S.F_TIMEOUT] = scenario.network.loss, scenario.network.timeout
        iv[S.I_NLOSS] = 0
        toolkit.refill_loss(iv, losses, int(P[S.P_ROOM]))
    elif system.failures is not None:  # asks wait with timeouts, and draw no loss (`faults.on`)
        fv[S.F_LOSS], fv[S.F_TIMEOUT] = -1.0, scenario.network.timeout

    occupancy = OccupancyArrays(n, iv)
    failing = failing_periods(system.failures, system.servers, seed, description.answers_blocked)
    if failing is not None:  # a cycle per server, and a service cut short or a wake-up beside each one's end
        heap_cap += 2 * n
        heap = np.concatenate([heap, np.zeros(6 * n)])
        iv[S.I_HEAP_CAP] = heap_cap

    gaps = gap_blocks(point, rate, seed)
    sizes = size_blocks(point, seed)
    split = split_blocks(seed) if dispatchers > 1 else None
    gap_buf = size_buf = split_buf = np.zeros(1)

    budget = 1 << 62 if progress is None else 500_000  # events between progress reports
    run = S.Run(P, Q, iv, fv, counts, window)  # (none of these is replaced during the run)
    from .failing import none as no_failures

    fail = no_failures() if failing is None else failing.record
    if failing is not None:  # the hooks see which servers are up (`policies.common.server_up`)
        toolkit.failing = fail.sv
    copies = _copies(point, policy, seed, len(jobs.next))
    start = True
    while True:
        status = simulate(run, S.Servers(servers, inv_speed, sharing, fail, copies.record()), jobs.record(), heap,
                          S.Inputs(gap_buf, size_buf, split_buf, ubuf, responses), bitgen, budget, start,
                          toolkit.tools(), occupancy.record())
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
            if losses is not None:
                toolkit.refill_loss(iv, losses, int(P[S.P_ROOM]))
            if latencies is not None:  # (at zero latency only the loss uniforms: `eligibility._faults_problem`)
                toolkit.refill_latency(iv, latencies, int(P[S.P_ROOM]))
            if latencies is not None or asking:  # (and records, at zero latency for asks: `faults.INSTANT`)
                heap = _network_room(P, iv, toolkit, heap)
        elif status == S.NEED_PERIODS:
            assert failing is not None
            failing.refill(int(iv[S.I_PERIODS]) // 2, int(iv[S.I_PERIODS]) % 2)
        elif status == S.NEED_COPIES:
            copies.grow(len(jobs.next))
        elif status == S.EMPTY:  # what SimPy says when run(until=done) runs out of events
            raise RuntimeError('No scheduled events left but "until" event was not triggered')
        elif status == S.BAD_SERVER:
            _bad_decision(policy, P, iv)
        elif not _shared_need(status, iv, jobs, toolkit, occupancy, sketch, responses, progress,
                              series):
            raise RuntimeError(f"the kernel returned {status}")
    return copies.measure(_finish(point, iv, fv, window, sketch, responses, occupancy, progress, series))


def _copies(point: Point, policy: ResolvedPolicy, seed: int, slots: int) -> Any:
    """The copies' arrays (`copying.Arrays`) of a policy that sends each job as copies; a placeholder otherwise."""
    from ..policies import REGISTRY
    from .copying import Arrays
    from .policies import module

    if not getattr(REGISTRY[policy.name], "copies", False):
        return Arrays(None, 0, 0)
    plan = module(policy.name).copy_plan(policy.config)
    sizes = law_blocks(point.scenario.workload.service.law(), seed, "copies")  # `build_model`'s Copier
    return Arrays(plan, point.scenario.system.servers, slots, sizes, point.scenario.network.latency.mean != 0)


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


def _shared_need(status: int, iv: np.ndarray, jobs: Jobs, toolkit: Any, occupancy: OccupancyArrays,
                 sketch: QuantileSketch, responses: np.ndarray,
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
    elif status == S.NEED_RESERVATIONS:
        toolkit.grow_reservations()
    elif status == S.FLUSH:
        fold(sketch, responses, int(iv[S.I_NRESP]), series)
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
            responses: np.ndarray, occupancy: OccupancyArrays,
            progress: Callable[[int], None] | None, series: Series | None = None) -> RunResult:
    """The last responses folded, the last progress report, and the run's measurements."""
    fold(sketch, responses, int(iv[S.I_NRESP]), series)
    if progress is not None:  # the last report says done, as `Model.run`'s does
        progress(int(iv[S.I_FINISHED]))
    result = measurements(point, iv, fv, window, sketch)
    if point.scenario.run.occupancy:
        return dataclasses.replace(result, occupancy=occupancy.result(point, iv, fv))
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
    P[S.P_POOL] = ("fifo", "pool", "ps").index(system.discipline)
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


def _agree(name: str, description: Any) -> None:
    """Refuse a compiled form whose `tools.Description` needs kernel code its module does not declare (a kernel
    built without it would ignore whole batches or reservations: a silently wrong run)."""
    from .loading import form_features

    if (description.whole > 0, description.reservations) != form_features(name):
        raise ValueError(f"{name}: its compiled form's Description.whole and .reservations must agree with its "
                         f"module's WHOLE_BATCHES and RESERVATIONS (emulator.compiled.loading.form_features)")


def _record_slotted(point: Point, policy: ResolvedPolicy, seed: int,
                    progress: Callable[[int], None] | None, series: Series | None = None) -> RunResult:
    """One slotted replication on the compiled slot clock (`compiled.slotted`): its measurements.

    Arrival counts and capacities come from the model's own iterators and numpy calls
    (`slots.arrival_counts`, and `slots.capacities`' blocks of `slots.ROWS` slots), on
    the same streams; each is consumed in order and by nothing else, so drawing ahead
    changes nothing. Everything else is set up as for the event kernel; ``series``, if
    given, is filled as `Recorder.series` (the slot clock keeps each measured job's arrival
    number beside its response, as the event kernel does).
    """
    from ..workload import slots
    from ..workload.blocks import slot_arrivals
    from . import slotted as K
    from .build import loop
    from .policies import module, name_of
    from .tools import Toolkit

    simulate_slots = loop("slotted", name_of(policy.name), features(point, policy)).simulate_slots  # on first use

    scenario = point.scenario
    system, workload = scenario.system, scenario.workload
    slot = system.slot or SlotConfig()
    n, dispatchers = system.servers, system.dispatchers
    server_speeds, rate = draw_speeds(point, policy, seed)  # as the model: listed, drawn, or all 1
    speeds = np.array(server_speeds, dtype=np.float64)
    if bool(speeds.min() == speeds.max()):
        speeds = speeds[:1]  # one entry: every server has this speed
    description = module(policy.name).describe(policy.config, PointView(point), speeds)
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
    jobs = Jobs(n + 64, iv)

    policy_rng = generator(seed, "policy")
    interface = policy_rng.bit_generator.ctypes  # the kernel draws through it: `core.uniform`
    bitgen = (interface.next_double, interface.state_address)
    ubuf = np.zeros(BATCH)
    responses = np.zeros(2 * QuantileSketch.FLUSH)  # the responses, then their jobs' arrival numbers
    sketch = QuantileSketch()
    toolkit = Toolkit(description, n, dispatchers, speeds, iv)
    occupancy = OccupancyArrays(n, iv)
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
    count_stream = slot_arrivals(arrival, rate, seed)
    mus = [speed / workload.service.mean for speed in server_speeds]  # as `build_model`
    total = scenario.run.total_jobs
    caps_rng = generator(seed, "capacities")
    rates = np.asarray(mus)
    if workload.service.kind == "deterministic":  # one row for every slot; beyond the run's jobs, as many
        caps = np.array([[min(round(mu), total) for mu in mus]], dtype=np.int64)
        sv[K.S_CAP] = -1
    else:
        caps = np.zeros((1, n), dtype=np.int64)
    split = split_blocks(seed) if dispatchers > 1 else None
    split_buf = np.zeros(1)
    arrivals_buf = np.zeros(1, dtype=np.int64)
    scratch = np.zeros((5, 64), dtype=np.int64)
    dwork = np.zeros((2, dispatchers), dtype=np.int64)

    budget = 1 << 62 if progress is None else 500_000  # jobs and departures between progress reports
    run = S.Run(P, Q, iv, fv, counts, window)  # (none of these is replaced during the run)
    none = np.zeros(1)  # the gaps and sizes the slot clock does not read
    start = True
    while True:
        status = simulate_slots(run, S.Slots(sv, sf, arrivals_buf, caps, scratch, dwork), servers, jobs.record(),
                                S.Inputs(none, none, split_buf, ubuf, responses), bitgen, budget, start,
                                toolkit.tools(), occupancy.record(), heap)
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
        elif not _shared_need(status, iv, jobs, toolkit, occupancy, sketch, responses, progress, series):
            raise RuntimeError(f"the slot clock returned {status}")
    return _finish(point, iv, fv, window, sketch, responses, occupancy, progress, series)


