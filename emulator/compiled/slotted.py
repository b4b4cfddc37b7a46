"""The compiled slot clock: slotted time (`emulator.model.slotted`), slot by slot, in the SimPy model's order.

At each slot boundary t, as `slotted.clock` does:

1. the service phase of slot t-1 (t >= 1): the servers with jobs, in increasing id
   order, each complete up to their capacity of that slot (one row of
   `slots.capacities`, drawn by the engine in the model's blocks), first come first
   served; each departure is recorded at time t and calls the policy's ``on_depart``;
2. the policy's timer events due at t (JBT-d's update; scheduled before the clock's
   ``Timeout(0)`` at t, they run before the arrivals);
3. the slot's arrivals (`slots.arrival_counts`, drawn by the engine): with
   ``dispatch: job`` each goes through ``dispatch`` and its server on its own; with
   ``dispatch: slot`` all are first gathered by dispatcher (the window's edges and
   the dispatcher split are drawn then), and each dispatcher, in the order of its
   first arrival, makes one decision for its batch, whose jobs are accepted in
   arrival order before ``on_arrive`` runs once per job (`SlottedServer.accept_all`);
4. timer events due within the slot, (t, t+1): JSQ with asynchronous sparse
   feedback reports at any time.

A job of one decision is a batch of one, so each hook has one call site here (the
switches are inlined, and compiling one twice would cost seconds). After a batch
the policy hears of it through `on_arrive_batch`: a policy module's own
``on_arrive_batch`` where the index must move by the whole batch at once (JSQ and
JSQ-push, as `LengthIndex.arrived` does; LOR, whose decision counts its batch), else
``on_arrive`` once per job, the first one carrying the decision's ``via_list``. With
the feature ``origins`` (LOR, whose answers go to each job's own dispatcher) the
clock keeps each job's dispatcher and writes it to ``iv[I_ORIGIN]`` before the hooks
of its decision's arrival and of its departure. The run stops once every measured
job has left and the window is closed; what SimPy does after ``done`` in the same
step changes no measured value.

The kernel returns to Python for the same needs as `kernel.simulate`, plus arrival
counts (`NEED_COUNTS`), a row of capacities (`NEED_CAPS`) and room for a slot's
arrivals (`NEED_SCRATCH`), at points where it goes on exactly where it stopped.
"""

from __future__ import annotations

from numba import njit

from . import occupancy
from .core import list_room, pop, unmanaged, view
from .jobs import append, first_leaves, free_slot, pick_dispatcher, take_slot
from .needs import occupancy_full
from .network import room as network_room  # (`room` here counts the job slots)
from .policies.template import deliver, dispatch, initialise, on_arrive, on_arrive_batch, on_depart, timer  # hooks
from .recorder import RESPONSE_BATCH, edge, enter, leave
from .records import release
from .slots import BEGIN, JOBS, MEMBER, ORDER, SIZE, groups
from .state import (
    BAD_SERVER,
    DONE,
    F_NOW,
    FLUSH,
    I_BAD,
    I_BLOCKED,
    I_EDGES,
    I_FINISHED,
    I_HEAP,
    I_INIT,
    I_INSYS,
    I_JOB,
    I_LEVEL_CAP,
    I_LEVELS,
    I_NRESP,
    I_NSPLIT,
    I_ORIGIN,
    I_SPLIT,
    I_TRANSFERS,
    I_UPDATING,
    NEED_JOBS,
    NEED_LEVELS,
    NEED_LISTS,
    NEED_NETWORK,
    NEED_OCCUPANCY,
    NEED_SPLIT,
    P_CAPACITY,
    P_CHECKED,
    P_D,
    P_HELD,
    P_INDEX,
    P_JOBS,
    P_LISTS_AT_ARRIVAL,
    P_LISTS_AT_DEPARTURE,
    P_N,
    P_OCCUPANCY,
    P_SHARES,
    P_TIMER,
    P_WARMUP,
    PAUSE,
    Q_PERIOD,
)

# -- what this kernel returns besides `state`'s codes --------------------------------------
NEED_COUNTS = 32  # the arrival-count buffer is read: refill it
NEED_CAPS = 33  # the capacity rows are read: the next block
NEED_SCRATCH = 34  # the slot's arrivals outgrow the gathering arrays: grow them to S_COUNT

# -- the clock's integer state (``sv``) -------------------------------------------------------
S_PHASE = 0  # where the slot is: one of PH_*
S_T = 1  # the slot (its boundary's time is float(t))
S_COUNT = 2  # the slot's arrivals
S_GATHERED = 3  # of them, gathered (edges passed, dispatcher drawn)
S_GROUPS = 4  # decisions of the slot (dispatch: slot), once gathered
S_GROUP = 5  # the next decision to make
S_FIRST = 6  # the id of the slot's first job
S_SID = 7  # the service phase's next server ...
S_SERVED = 8  # ... and its departures so far in this phase
S_CAP = 9  # read position in the capacity rows (constant capacities: -1)
S_NCAP = 10  # rows held
S_COUNT_POS = 11  # read position in the arrival counts
S_NCOUNTS = 12  # counts held
S_BATCH = 13  # 1: dispatch: slot
S_SAME_SLOT = 14  # 1: same_slot: true
S_MAXLEN = 15  # the longest queue so far: what a batch can bring the length index to
S_NV = 16

# -- the clock's float state (``sf``) ---------------------------------------------------------
S_DUE = 0  # the policy's next timer event
S_NF = 1

# The phases of a slot, in order.
PH_SERVICE_START, PH_SERVICE, PH_TIMERS_AT, PH_COUNT, PH_GATHER, PH_ROUTE, PH_TIMERS_IN = range(7)


@njit(cache=True)
def simulate_slots(run, slots, servers, jobs_, inputs, rng, budget, start, tools, observer, heap):
    """Run slots until done or until Python is needed; return the reason (a code of `state` or this module).

    ``run``, ``slots``, ``jobs_``, ``inputs`` and ``observer`` are the records of `state`
    (`Run`, `Slots`, `Jobs`, `Inputs`, `Observer`; of the jobs' and the inputs' arrays the
    clock reads arrival, next and measured; split, ubuf and responses). ``start`` is true
    on the first call: the policy's constructor runs (its `initialise`), then slot 0's
    arrivals. ``slots.caps`` holds rows of capacities, one per slot (a single row when they
    are constant, ``sv[S_CAP]`` -1).
    """
    P, Q, iv, fv, counts, window = unmanaged(run.P), unmanaged(run.Q), unmanaged(run.iv), unmanaged(run.fv), \
        unmanaged(run.counts), unmanaged(run.window)
    sv, sf = unmanaged(slots.sv), unmanaged(slots.sf)
    servers = unmanaged(servers)
    length, head, tail = servers[:, 0], servers[:, 1], servers[:, 2]
    j_arrival, j_next, j_measured = unmanaged(jobs_.arrival), unmanaged(jobs_.next), unmanaged(jobs_.measured)
    j_dispatcher = unmanaged(jobs_.dispatcher)
    arrivals, caps, split, ubuf, responses = unmanaged(slots.arrivals), unmanaged(slots.caps), \
        unmanaged(inputs.split), unmanaged(inputs.ubuf), unmanaged(inputs.responses)
    scratch, dwork = unmanaged(slots.scratch), unmanaged(slots.dwork)
    # The heap holds only what slot.pull_delay holds back: idle tokens and reports, by the slot they are due.
    heap = unmanaged(heap)
    T = view(tools, fv, heap, unmanaged(jobs_.size), j_next)
    held = P[P_HELD] != 0  # feature: slot.pull_delay holds tokens and reports back as messages
    checked = P[P_CHECKED] != 0  # feature: a user's compiled form, its decisions checked
    origins = True  # feature: each job's dispatcher kept for the hooks that answer it (iv[I_ORIGIN]: LOR)
    occ_count, occ_lengths, occ_totals = unmanaged(observer.count), unmanaged(observer.lengths), \
        unmanaged(observer.totals)
    member, order, begin, size, jobs_of = scratch[MEMBER], scratch[ORDER], scratch[BEGIN], scratch[SIZE], \
        scratch[JOBS]
    occ = P[P_OCCUPANCY] != 0
    shares = P[P_SHARES] != 0
    n, n_dispatchers = P[P_N], P[P_D]
    capacity = P[P_CAPACITY]
    warmup, jobs = P[P_WARMUP], P[P_JOBS]
    index, lists_at_arrival, lists_at_departure = P[P_INDEX] != 0, P[P_LISTS_AT_ARRIVAL] != 0, \
        P[P_LISTS_AT_DEPARTURE] != 0
    has_timer = P[P_TIMER] != 0
    batch, same_slot = sv[S_BATCH] != 0, sv[S_SAME_SLOT] != 0
    room = len(j_arrival)
    if start:
        iv[I_INIT] = 0
        iv[I_UPDATING] = -1
    if iv[I_INIT] >= 0:  # the policy's constructor (JIQ's tokens, JBT-d's checks), before the clock starts
        if not initialise(P, Q, counts, length, rng, ubuf, iv, T):
            return NEED_LISTS
        iv[I_INIT] = -1
        sf[S_DUE] = 0.0 + Q[Q_PERIOD]
    while True:
        phase = sv[S_PHASE]
        now = float(sv[S_T])
        fv[F_NOW] = now
        if phase == PH_SERVICE_START:  # a row of capacities for the slot that ends now
            if sv[S_CAP] >= 0 and sv[S_CAP] >= sv[S_NCAP]:
                return NEED_CAPS
            sv[S_SID], sv[S_SERVED] = 0, 0
            sv[S_PHASE] = PH_SERVICE
        elif phase == PH_SERVICE:  # `SlottedServer.serve`, server by server
            row = caps[max(sv[S_CAP], 0)]
            begun = now - 1.0
            for sid in range(sv[S_SID], n):
                if length[sid] == 0:
                    continue
                limit = row[sid]
                served = sv[S_SERVED]
                while served < limit and length[sid] > 0:
                    slot = head[sid]
                    if not same_slot and j_arrival[slot] >= begun:
                        break
                    if iv[I_NRESP] >= RESPONSE_BATCH or (lists_at_departure and not list_room(iv, T.lists)):
                        sv[S_SID], sv[S_SERVED] = sid, served
                        return FLUSH if iv[I_NRESP] >= RESPONSE_BATCH else NEED_LISTS
                    if held and not network_room(P, iv):  # a token or a report after the departure, held
                        sv[S_SID], sv[S_SERVED] = sid, served
                        return NEED_NETWORK
                    first_leaves(head, tail, j_next, sid)
                    length[sid] -= 1
                    leave(iv, fv, responses, now, j_arrival[slot], j_arrival[slot], begun, j_measured[slot])
                    if occ:
                        occupancy.depart(iv, fv, occ_count, occ_lengths, occ_totals, length[sid], now)
                    if origins:  # the job's completion is answered to its own dispatcher
                        iv[I_ORIGIN] = j_dispatcher[slot]
                    free_slot(iv, j_next, slot)
                    on_depart(P, Q, counts, length, rng, ubuf, iv, T, sid)
                    served += 1
                    budget -= 1
                sv[S_SERVED] = 0
            sv[S_SID] = n
            if sv[S_CAP] >= 0:
                sv[S_CAP] += 1
            if iv[I_FINISHED] == jobs and iv[I_EDGES] == 2:
                return DONE
            sv[S_PHASE] = PH_TIMERS_AT
        elif phase == PH_TIMERS_AT or phase == PH_TIMERS_IN:
            # Due at the boundary (after its service phase), or within the slot (after its arrivals).
            while has_timer:
                resume = iv[I_UPDATING] >= 0
                if held and not network_room(P, iv):  # an update's rechecks may report from every server
                    return NEED_NETWORK
                if not resume:
                    due = sf[S_DUE]
                    if not (due <= now if phase == PH_TIMERS_AT else due < now + 1.0):
                        break
                if not timer(P, Q, counts, length, rng, ubuf, iv, T, resume):
                    return NEED_LISTS  # it goes on at the next call
                iv[I_UPDATING] = -1
                sf[S_DUE] = sf[S_DUE] + Q[Q_PERIOD]
            if phase == PH_TIMERS_AT:
                sv[S_PHASE] = PH_COUNT
            else:  # the next boundary
                if budget <= 0:
                    sv[S_PHASE] = PH_SERVICE_START
                    sv[S_T] += 1
                    return PAUSE
                sv[S_PHASE] = PH_SERVICE_START
                sv[S_T] += 1
        elif phase == PH_COUNT:
            if sv[S_COUNT_POS] >= sv[S_NCOUNTS]:
                return NEED_COUNTS
            count = arrivals[sv[S_COUNT_POS]]
            if count > scratch.shape[1]:
                sv[S_COUNT] = count
                return NEED_SCRATCH
            sv[S_COUNT_POS] += 1
            sv[S_COUNT], sv[S_GATHERED], sv[S_GROUPS], sv[S_GROUP] = count, 0, 0, 0
            sv[S_FIRST] = iv[I_JOB]
            sv[S_PHASE] = PH_GATHER
        elif phase == PH_GATHER or phase == PH_ROUTE:
            count = sv[S_COUNT]
            while True:
                # -- gather: the window's edges and the dispatcher of the next arrival -----------
                # (dispatch: slot, all of them before the first decision; job, each just before its own)
                gathering = sv[S_GATHERED] < count and (phase == PH_GATHER if batch
                                                        else sv[S_GATHERED] == sv[S_GROUP])
                if gathering:
                    if n_dispatchers > 1 and iv[I_SPLIT] >= iv[I_NSPLIT]:
                        return NEED_SPLIT
                    k = sv[S_GATHERED]
                    job = sv[S_FIRST] + k
                    if job == warmup or job == warmup + jobs:
                        edge(P, iv, fv, counts, window, occ_count, occ_lengths, occ_totals)
                    iv[I_JOB] = job + 1
                    dispatcher = pick_dispatcher(Q, iv, split, n_dispatchers, shares) if n_dispatchers > 1 else 0
                    member[k] = dispatcher
                    if not batch:  # a decision of its own
                        order[k], begin[k], size[k], jobs_of[k] = dispatcher, k, 1, k
                    sv[S_GATHERED] = k + 1
                    continue
                if phase == PH_GATHER:
                    sv[S_GROUPS] = groups(scratch, dwork, count) if batch else count
                    phase = PH_ROUTE
                    sv[S_PHASE] = PH_ROUTE
                    continue
                g = sv[S_GROUP]
                if g >= sv[S_GROUPS]:
                    # `SlotChannel.release`: the held tokens and reports due after this slot's decisions
                    while held and iv[I_HEAP] > 0 and heap[0] <= now:
                        if not list_room(iv, T.lists):
                            return NEED_LISTS
                        record = int(heap[2]) >> 2
                        pop(heap, iv)
                        msg = T.msg
                        what, a, b, c = msg[record, 0], msg[record, 1], msg[record, 2], msg[record, 3]
                        release(T, iv, record)
                        deliver(P, Q, counts, length, rng, ubuf, iv, T, what, a, b, c)
                    break
                # -- one decision: room first, then the policy, the transfer, the server -------
                k = size[g]
                if room - iv[I_INSYS] < k:
                    return NEED_JOBS
                if index and max(iv[I_LEVELS] + 1, sv[S_MAXLEN] + k + 1) >= iv[I_LEVEL_CAP]:
                    return NEED_LEVELS
                if occ and occupancy_full(iv, occ_count, occ_totals, k):
                    return NEED_OCCUPANCY
                if lists_at_arrival and not list_room(iv, T.lists):  # e.g. a report when the batch is in
                    return NEED_LISTS
                if held and not network_room(P, iv):
                    return NEED_NETWORK
                sid, via_list = dispatch(P, Q, counts, length, rng, ubuf, iv, T, order[g])
                if checked and not 0 <= sid < n:
                    iv[I_BAD] = sid
                    return BAD_SERVER
                iv[I_TRANSFERS] += k
                accepted = 0
                first = sv[S_FIRST]
                for i in range(begin[g], begin[g] + k):
                    job = first + jobs_of[i]
                    measured = warmup <= job < warmup + jobs
                    if capacity >= 0 and length[sid] >= capacity:
                        if measured:  # Recorder.block
                            iv[I_BLOCKED] += 1
                            iv[I_FINISHED] += 1
                        continue
                    slot = take_slot(iv, j_next)
                    j_arrival[slot] = now
                    j_measured[slot] = job + 1 if measured else 0  # its arrival number, for `Recorder.series`
                    if origins:
                        j_dispatcher[slot] = order[g]
                    append(head, tail, j_next, sid, slot)
                    length[sid] += 1
                    enter(iv, fv, now)
                    if occ:
                        occupancy.arrive(iv, fv, occ_count, occ_lengths, occ_totals, length[sid], now)
                    accepted += 1
                if length[sid] > sv[S_MAXLEN]:
                    sv[S_MAXLEN] = length[sid]
                if origins:  # the decision's blocked jobs are answered to its dispatcher
                    iv[I_ORIGIN] = order[g]
                if not on_arrive_batch(P, Q, counts, length, rng, ubuf, iv, T, sid, accepted, k, via_list):
                    # Without a batch hook, ``on_arrive`` once per job: those that got in are the first
                    # ``accepted``; the followers of a decision never carry its via_list (`SlotDispatcher.send`).
                    for j in range(k):
                        on_arrive(P, Q, counts, length, rng, ubuf, iv, T, sid, j >= accepted, via_list and j == 0)
                budget -= k
                sv[S_GROUP] = g + 1
            if iv[I_FINISHED] == jobs and iv[I_EDGES] == 2:
                return DONE
            sv[S_PHASE] = PH_TIMERS_IN
