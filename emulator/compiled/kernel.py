"""The compiled driver: the event loop, the servers, the recorder and the arrival source.

It replays the SimPy model event for event, in SimPy's order (`core.push`; the events: docs/compiled-engine.md).

The recorder's sums are updated in the same order with the same float operations as
`emulator.measure.recorder.Recorder`. The kernel returns whenever it needs something from Python (gaps, sizes,
split uniforms, room, a full response batch for the quantile sketch), at a point where it can go on exactly there.

A job reaches its server in one place (the loop's end); a server's length changes on an accepted arrival, a
departure and (in `failing`) a failure that loses its jobs, each next to the recorder's and the occupancy
observer's update for the same instant. Room and draws a step needs first are asked of `needs`; slots and lists
are `jobs`'s; copies `copying`'s. The source stops once the window has closed and every measured job has reached
its server.
"""

from __future__ import annotations

from numba import njit

from . import binding, faults, needs, occupancy, recovery
from . import copying as copies_
from . import failing as failures
from . import ps as sharing_
from .core import pop, push, unmanaged, view
from .jobs import append, first_leaves, free_slot, next_service, pick_dispatcher, take_slot
from .network import answer, close_ask, decided, expire, post
from .policies.template import deliver, dispatch, initialise, on_arrive, on_depart, replied, timer  # hooks
from .recorder import RESPONSE_BATCH, edge, enter, leave
from .records import release
from .recovery import BLOCKED, LISTED
from .source import ENDED, after_batch, next_gap
from .state import (
    A_DISPATCHERS,
    A_JOB,
    A_LEFT,
    ASK_MASK,
    ASK_SHIFT,
    BAD_SERVER,
    DONE,
    EMPTY,
    F_ARRIVAL,
    F_NOW,
    FLUSH,
    I_ARRIVAL_EID,
    I_ARRIVED,
    I_ASK_FREE,
    I_BAD,
    I_BATCH,
    I_BATCH_AT,
    I_BATCH_HEAD,
    I_BATCH_HELD,
    I_BATCH_TAIL,
    I_BLOCKED,
    I_CURRENT,
    I_EDGES,
    I_FINISHED,
    I_HEAP,
    I_INIT,
    I_JOB,
    I_MAXLEN,
    I_NRESP,
    I_ORIGIN,
    I_PLACING,
    I_SIZE,
    I_SRC,
    I_TRANSFERS,
    I_UPDATING,
    NEED_LISTS,
    NEED_NETWORK,
    P_CAPACITY,
    P_CHECKED,
    P_D,
    P_JOBS,
    P_LATENT,
    P_N,
    P_OCCUPANCY,
    P_POOL,
    P_SHARES,
    P_TIMER,
    P_WARMUP,
    P_WHOLE,
    PAUSE,
    POLICY_MESSAGE,
    POOL_END,
    Q_PERIOD,
    QUERY_EVENT,
    REPLY_EVENT,
    SERVICE_END,
    TARGET_MASK,
    TIMER,
    TRANSFER,
)


@njit(cache=True)
def simulate(run, servers, jobs_, heap, inputs, rng, budget, start, tools, observer):
    """Run until done or until Python is needed; return the reason (a `state` code).

    ``run``, ``jobs_``, ``inputs`` and ``observer`` are the records of `state` (`Run`, `Jobs`, `Inputs`,
    `Observer`); ``start`` is true on the first call: replay the model's construction and the URGENT process
    initialisations at time 0. ``tools`` is the policy's `tools.Tools`; its hooks are this kernel's (`build`).
    ``servers`` is a `state.Servers`: the FIFO table, the speeds, the processor-sharing servers' rows (`ps`) and
    the failing servers' `failing.Failing` (a placeholder without ``system.failures``).
    """
    # Unmanaged views of every array (see `core.unmanaged`): the caller holds the arrays.
    P, Q, iv, fv, counts, window = unmanaged(run.P), unmanaged(run.Q), unmanaged(run.iv), unmanaged(run.fv), \
        unmanaged(run.counts), unmanaged(run.window)
    table, inv_speed, sharing, fail = unmanaged(servers.table), unmanaged(servers.inv_speed), \
        unmanaged(servers.sharing), failures.views(servers.fail)
    # A server is one 16-byte record (length, head and tail of its FIFO queue, spare): one
    # cache line holds all a job needs of it, which matters once N outgrows the caches.
    length, head, tail = table[:, 0], table[:, 1], table[:, 2]
    speed_index = 1 if len(inv_speed) > 1 else 0  # one entry: every server has the same speed
    j_arrival, j_at, j_size, j_start, j_next, j_measured = unmanaged(jobs_.arrival), unmanaged(jobs_.at), \
        unmanaged(jobs_.size), unmanaged(jobs_.start), unmanaged(jobs_.next), unmanaged(jobs_.measured)
    j_dispatcher = unmanaged(jobs_.dispatcher)
    heap = unmanaged(heap)
    gaps, sizes, split, ubuf, responses = unmanaged(inputs.gaps), unmanaged(inputs.sizes), \
        unmanaged(inputs.split), unmanaged(inputs.ubuf), unmanaged(inputs.responses)
    T = view(tools, fv, heap, j_size, j_next)
    msg, asks = T.msg, T.asks
    occ_count, occ_lengths, occ_totals = unmanaged(observer.count), unmanaged(observer.lengths), \
        unmanaged(observer.totals)
    occ = P[P_OCCUPANCY] != 0
    shares = P[P_SHARES] != 0
    n_dispatchers = P[P_D]
    capacity = P[P_CAPACITY]
    pool = P[P_POOL] == 1
    warmup, jobs = P[P_WARMUP], P[P_JOBS]
    latent = P[P_LATENT] == 1  # feature: every message an event (`network`)
    checked = P[P_CHECKED] != 0  # feature: a user's compiled form, its decisions checked
    ps = P[P_POOL] == 2  # feature: processor-sharing servers (`ps`)
    reserving = len(T.binding) > 1  # feature: late binding, a dispatch places reservations (`binding`)
    whole = P[P_WHOLE] > 0  # feature: the policy places whole batches, `model.build.BatchSource`
    failing = fail.mode[0] >= 0  # feature: servers fail and recover (`failing`)
    cp = copies_.views(servers.copies)
    copies = cp.cv[0] != 0  # feature: jobs sent as copies, cancelled in place (`copying`)
    c_servers, c_measures = (length, head, tail, inv_speed, speed_index), (responses, occ, occ_count, occ_lengths,
                                                                           occ_totals)
    c_jobs = (j_arrival, j_at, j_size, j_start, j_next, j_measured, j_dispatcher)
    asking = P[P_LATENT] == 2  # feature: zero latency with faults: asks answered at once or timed out (`faults`)
    faulty = faults.on(T)  # feature: faults: messages lost or servers failing (`network`'s fault paths)
    if start:
        iv[I_INIT] = 0
        iv[I_UPDATING] = -1
    # -- steps that stopped for list room (NEED_LISTS) go on first ----------------------
    if iv[I_INIT] >= 0:
        # The policy's constructor (JIQ's tokens, JBT-d's checks), then the processes' first
        # steps in creation order: servers (idle), the policy's timer, the source (its first gap).
        if not initialise(P, Q, counts, length, rng, ubuf, iv, T):
            return NEED_LISTS
        iv[I_INIT] = -1
        if failing:  # the servers' cycles start before the policy's timer, as their processes do
            failures.start(heap, iv, fail)
        if P[P_TIMER]:
            push(heap, iv, 0.0 + Q[Q_PERIOD], TIMER)
        iv[I_SRC] = 2
    if iv[I_UPDATING] >= 0:  # a timer step reaches the rest of the servers, then the timer waits again
        if not timer(P, Q, counts, length, rng, ubuf, iv, T, iv[I_UPDATING] >= 0):  # True; a constant compiles it anew
            return NEED_LISTS
        if faults.update_done(iv, asking):  # the timer waits again (not if its ask's timeout decided the update)
            push(heap, iv, fv[F_NOW] + Q[Q_PERIOD], TIMER)
    while True:
        # What reaches a server in this step, if anything: a job slot, the server, via a list.
        slot, sid, via_list = -1, -1, False
        if copies:  # room for the services and cancels of a step (`copying`)
            need = copies_.room(iv, cp)
            if need:
                return need
        if whole and asking and iv[I_PLACING] > 0:  # a batch its ask's timeout decided: its next job, now
            need = needs.batch_member(P, iv, occ_count, occ_totals, True, False)
            if need:
                return need
            slot = iv[I_PLACING] - 1
            sid, via_list = replied(P, Q, counts, length, rng, ubuf, iv, T, -1)  # (moves I_PLACING on)
            iv[I_TRANSFERS] += 1
        # -- the source, when a job is due now or it needs its next gap ------------------
        while iv[I_SRC] == 1 or iv[I_SRC] == 2 or iv[I_SRC] == 4:
            if whole and iv[I_SRC] == 4:  # a whole batch is in: its jobs reach the policy one by one, in order
                need = needs.batch_member(P, iv, occ_count, occ_totals, pool or ps or failing, asking)
                if need:
                    return need
                slot = iv[I_BATCH_HEAD]
                iv[I_BATCH_HEAD] = j_next[slot]
                iv[I_CURRENT] = slot
                sid, via_list = replied(P, Q, counts, length, rng, ubuf, iv, T, -1)  # the next job (ask -1)
                iv[I_BATCH_AT] += 1
                if iv[I_BATCH_AT] == iv[I_BATCH]:
                    iv[I_SRC] = after_batch(iv)  # the next batch's timeout is pending, or a trace's end comes
                if sid >= 0:  # placed: its replies are in at once (with latency held, till the batch's ask decides)
                    iv[I_TRANSFERS] += 1
                    break
            elif iv[I_SRC] == 1:
                job = iv[I_JOB]
                if job >= warmup + jobs:
                    # The window closes (once), and the source stops once every measured job has
                    # reached its server: at once with zero latency (`model._source`, `_all_arrived`).
                    if job == warmup + jobs and iv[I_EDGES] == 1:
                        edge(P, iv, fv, counts, window, occ_count, occ_lengths, occ_totals)
                    if (not (latent or asking) or iv[I_ARRIVED] == jobs) and not (whole and iv[I_BATCH_HELD] > 0):
                        iv[I_SRC] = 3  # (whole batches: between batches only, as `BatchSource`)
                        break
                need = needs.arrival(P, iv, T.lists, T.binding, occ_count, occ_totals, pool or ps or failing, latent,
                                     reserving)
                if need:
                    return need
                if asking and not faults.room(P, iv):
                    return NEED_NETWORK
                if copies:  # and for the job's copies (a batch's next job is dispatched in this step too)
                    need = copies_.room_for_job(iv, cp, j_next, occ, occ_totals)
                    if need:
                        return need
                now = fv[F_NOW]
                if job == warmup:
                    edge(P, iv, fv, counts, window, occ_count, occ_lengths, occ_totals)
                iv[I_JOB] = job + 1
                slot = take_slot(iv, j_next)
                j_arrival[slot] = now
                j_size[slot] = sizes[iv[I_SIZE]]
                iv[I_SIZE] += 1
                j_measured[slot] = job + 1 if warmup <= job < warmup + jobs else 0
                dispatcher = 0
                if n_dispatchers > 1 and not (whole and iv[I_BATCH_HELD] > 0):  # whole: one per batch
                    dispatcher = pick_dispatcher(Q, iv, split, n_dispatchers, shares)
                if whole:  # held, chained, until the batch is complete (the next gap > 0)
                    if iv[I_BATCH_HELD] == 0:
                        iv[I_BATCH_HEAD] = slot
                    else:
                        j_next[iv[I_BATCH_TAIL]] = slot
                    iv[I_BATCH_TAIL] = slot
                    iv[I_BATCH_HELD] += 1
                    iv[I_SRC] = 2
                    continue
                iv[I_CURRENT] = slot
                j_dispatcher[slot] = dispatcher
                asked = iv[I_ASK_FREE]  # (asking) the record an ask of this dispatch takes
                sid, via_list = dispatch(P, Q, counts, length, rng, ubuf, iv, T, dispatcher)
                if copies:  # the job goes as copies to the servers the policy picked (`copying`)
                    copies_.send(iv, fv, counts, T, heap, c_servers, c_jobs, c_measures, cp, slot, latent)
                    sid = -1
                while asking and sid < 0 and faults.answered(P, counts, length, iv, T, fail, failing, asked):
                    sid, via_list = replied(P, Q, counts, length, rng, ubuf, iv, T, asked)  # decided now
                    if asks[asked, A_LEFT] == 0:  # (else the threshold model probes again, answered now)
                        close_ask(T, iv, asked)
                        break
                if checked and (sid >= P[P_N] or (sid < 0 and not (latent or asking))):  # (with latency -1: it asked)
                    iv[I_BAD] = sid
                    return BAD_SERVER
                iv[I_SRC] = 2
                if sid >= 0:
                    iv[I_TRANSFERS] += 1  # Channel.transfer
                    if not latent:
                        break  # the job is at its server now
                    post(T, iv, TRANSFER, slot, sid, via_list)
                # With latency the job is on its way, or waits for replies (`network`).
                slot, sid = -1, -1
            else:  # the source's next gap: its timeout, or the next job now
                need = next_gap(P, iv, fv, counts, window, gaps, c_measures, whole)
                if need == ENDED:  # a finite trace ended: Recorder.exhausted
                    break
                if need:
                    return need
        if sid < 0 or copies:  # (copies: always; they reach their servers in `copying`)
            # -- done, or something to hand to Python ---------------------------------------
            if iv[I_FINISHED] == jobs and iv[I_EDGES] == 2 and (not copies or copies_.settled(cp)):
                return DONE
            if iv[I_NRESP] >= RESPONSE_BATCH:
                return FLUSH
            waiting = iv[I_SRC] == 0  # the source's timeout is pending
            if iv[I_HEAP] == 0 and not waiting:
                return EMPTY
            if budget <= 0 or (asking and iv[I_UPDATING] >= 0):  # (or an update its timeout decided goes on)
                return PAUSE if budget <= 0 else NEED_LISTS
            if waiting:  # the source's timeout is next if it comes first in (time, id) order
                due = fv[F_ARRIVAL]
                if iv[I_HEAP] == 0 or due < heap[0] or (due == heap[0] and float(iv[I_ARRIVAL_EID]) < heap[1]):
                    fv[F_NOW] = due
                    budget -= 1
                    iv[I_SRC] = 1
                    continue
            code = int(heap[2])
            kind = code & 3
            if ps and kind == SERVICE_END and not sharing_.current(sharing, code >> 2, heap[1]):
                pop(heap, iv)  # a superseded completion: `PsServer._complete` ignores it
                continue
            if failing:
                wait = failures.before(heap, iv, fail, code)
                if wait == failures.SKIP:
                    continue
                if wait:
                    return wait
            need = needs.event(P, iv, T.lists, length, code, failing, asking, occ_count, occ_totals)
            if not need and latent:  # a delivered message may send more, reach a server or list an id: room first
                need = needs.delivery(P, iv, T.lists, T.binding, occ_count, occ_totals, reserving)
            if not need and asking and not faults.room(P, iv):  # a timeout's decision may probe again
                need = NEED_NETWORK
            if need:
                return need
            # -- the next event -----------------------------------------------------------------
            now = heap[0]
            fv[F_NOW] = now
            if kind != SERVICE_END or ps:  # a FIFO server's record stays first until its next service replaces it
                pop(heap, iv)
            budget -= 1
            if copies:  # a copy's service end, transfer or cancel (`copying`)
                copies_.event(iv, fv, counts, T, heap, c_servers, c_jobs, c_measures, cp, code, latent)
                continue
            if kind == SERVICE_END or kind == POOL_END:
                if ps:  # the PS server's job with the least virtual finish leaves
                    sid = code >> 2
                    slot = sharing_.depart(sharing, head, tail, j_next, j_at, j_size, j_start,
                                           inv_speed[sid * speed_index], sid, now)
                elif kind == SERVICE_END:  # the FIFO server's first job leaves
                    sid = code >> 2
                    slot = first_leaves(head, tail, j_next, sid)
                else:  # a pool task completes
                    slot = code >> 2
                    sid = j_next[slot]
                length[sid] -= 1
                leave(iv, fv, responses, now, j_arrival[slot], j_at[slot], j_start[slot], j_measured[slot])
                if occ:
                    occupancy.depart(iv, fv, occ_count, occ_lengths, occ_totals, length[sid], now)
                free_slot(iv, j_next, slot)
                iv[I_ORIGIN] = j_dispatcher[slot]
                on_depart(P, Q, counts, length, rng, ubuf, iv, T, sid)
                if ps:
                    if length[sid] > 0:
                        sharing_.schedule(sharing, heap, iv, length, j_start, inv_speed[sid * speed_index], sid, now)
                elif kind == SERVICE_END:  # the next job's service starts
                    inv = inv_speed[sid * speed_index]
                    following = next_service(heap, iv, head, j_start, j_size, inv, sid, now)
                    if failing:
                        failures.departed(iv, fail, sid, following, j_size[following] * inv if following >= 0 else 0.0,
                                          now)
                # Late binding: the job that the idle server's request fetched reaches it now (below).
                slot = binding.handed(T.binding) if reserving else -1
                if slot >= 0:
                    iv[I_TRANSFERS] += 1
                else:
                    sid = -1
            elif failing and kind == TIMER and code >= 4:  # a server fails, recovers or resumes (`failing`)
                back = failures.event(heap, iv, fv, fail, c_servers, c_jobs, c_measures, code >> 2)
                if back >= 0:  # it recovers: its departure hook runs once, as after a departure; then it resumes
                    while True:  # first the arrival hooks it missed (one call site: one inlined copy)
                        k = recovery.missed(P, iv, fail, j_next, j_dispatcher, back)
                        if not k:  # none is left, and iv[I_ORIGIN] is -1: LOR's departure hook answers none
                            break
                        on_arrive(P, Q, counts, length, rng, ubuf, iv, T, back, k == BLOCKED, k == LISTED)
                    on_depart(P, Q, counts, length, rng, ubuf, iv, T, back)
                    failures.resume(heap, iv, fail, back, head, now)
            elif kind == TIMER:  # the policy's timer (JBT-d: dispatcher 0's sample, then the servers learn it)
                if not timer(P, Q, counts, length, rng, ubuf, iv, T, iv[I_UPDATING] >= 0):
                    return NEED_LISTS  # it goes on at the next call, before anything else
                iv[I_UPDATING] = -1
                push(heap, iv, now + Q[Q_PERIOD], TIMER)
            elif latent:  # a message is delivered (`network`; without latency there is none)
                arg = code >> 2
                if arg & QUERY_EVENT:  # the target answers with what it holds now
                    a, b = (arg >> ASK_SHIFT) & ASK_MASK, arg & TARGET_MASK
                    target = T.targets[a, b]
                    if failing and not asks[a, A_DISPATCHERS] and not failures.up(fail, target):
                        faults.dropped(P, counts, window, iv, T, a, b)  # lost at the down server
                    elif failing and asks[a, A_DISPATCHERS]:  # a server asked: its reply is an event (`recovery`)
                        recovery.reply(P, counts, iv, T, a, b, T.count[target])
                    else:
                        value = T.count[target] if asks[a, A_DISPATCHERS] else length[target]
                        answer(P, counts, iv, T, a, b, value, faulty)
                else:
                    decide = -1  # an ask whose replies are in (or, with faults, whose timeout came)
                    if arg & REPLY_EVENT:  # an ask's last reply
                        decide = arg & ASK_MASK
                    else:
                        what, a, b, c = msg[arg, 0], msg[arg, 1], msg[arg, 2], msg[arg, 3]
                        release(T, iv, arg)
                        if what == TRANSFER:  # the job reaches its server
                            slot, sid, via_list = a, b, c != 0
                        elif failing and what == recovery.REPLY:  # a reply reaches the server that asked
                            decide = recovery.arrive(P, counts, window, iv, T, fail, a, b, c)
                        elif faulty and what < POLICY_MESSAGE:  # with faults, a reply or an ask's timeout
                            decide = faults.arrive(T, iv, what, a, b, c)
                        elif not failing or recovery.reaches(counts, window, iv, fail, what, a, c):  # the policy's own
                            deliver(P, Q, counts, length, rng, ubuf, iv, T, what & recovery.WHAT, a, b, c)
                    if decide >= 0:  # the policy decides (not a server that asked and is down: it sends nothing)
                        to, via = replied(P, Q, counts, length, rng, ubuf, iv, T, decide) \
                            if not failing or recovery.asker_up(fail, T, decide) else (-1, False)
                        if checked and to >= P[P_N]:
                            iv[I_BAD] = to
                            return BAD_SERVER
                        decided(T, iv, decide, to, via)  # (the threshold model may ask again)
            elif asking:  # zero latency with faults: an ask's timeout; the job it held reaches its server now
                decide = expire(T, iv, code >> 2)
                while decide >= 0:
                    sid, via_list = replied(P, Q, counts, length, rng, ubuf, iv, T, decide)
                    if asks[decide, A_LEFT] == 0:  # decided
                        slot = asks[decide, A_JOB]
                        close_ask(T, iv, decide)
                        if sid >= 0:
                            iv[I_TRANSFERS] += 1
                        break
                    if not faults.answered(P, counts, length, iv, T, fail, failing, decide):
                        break  # the threshold model's next probe waits for its timeout
            if sid < 0 or copies:
                continue
        # -- a job reaches server sid (Channel.transfer's delivery, then the server's accept) --------
        now = fv[F_NOW]
        measured = j_measured[slot]
        iv[I_ORIGIN] = j_dispatcher[slot]
        blocked = capacity >= 0 and length[sid] >= capacity
        if (latent or asking) and measured:
            iv[I_ARRIVED] += 1
        if failing and failures.lost(iv, fv, fail, sid, measured):  # its on_arrive waits for its recovery
            recovery.hold(fail, sid, via_list)
            free_slot(iv, j_next, slot)
            continue
        if blocked:
            if measured:  # Recorder.block
                iv[I_BLOCKED] += 1
                iv[I_FINISHED] += 1
            if not failing or not recovery.keep(P, fail, j_next, sid, slot):  # (kept: its hook waits, `recovery`)
                free_slot(iv, j_next, slot)
        else:
            length[sid] += 1
            if latent and length[sid] > iv[I_MAXLEN]:
                iv[I_MAXLEN] = length[sid]
            j_at[slot] = now
            enter(iv, fv, now)
            if occ:
                occupancy.arrive(iv, fv, occ_count, occ_lengths, occ_totals, length[sid], now)
            size = j_size[slot]
            if ps:
                inv = inv_speed[sid * speed_index]
                sharing_.arrive(sharing, length, head, tail, j_next, j_size, j_start, inv, sid, slot, now)
                sharing_.schedule(sharing, heap, iv, length, j_start, inv, sid, now)
            elif pool:
                j_start[slot] = now
                j_next[slot] = sid
                push(heap, iv, now + size * inv_speed[sid * speed_index], POOL_END + 4 * slot)
            else:
                append(head, tail, j_next, sid, slot)
                if failing:  # an idle server that is up resumes its process at an event now
                    failures.arrived(heap, iv, fail, sid, head, now)
                elif length[sid] == 1:  # idle: its service starts now
                    j_start[slot] = now
                    push(heap, iv, now + size * inv_speed[sid * speed_index], SERVICE_END + 4 * sid)
        iv[I_CURRENT] = slot  # the job that reached sid, for a hook that reads its size
        # One call site per hook: each is inlined, and compiling it twice would cost seconds.
        if failing and not failures.up(fail, sid):  # a down server's hooks wait for its recovery (`recovery`)
            recovery.hold(fail, sid, via_list)
            continue
        on_arrive(P, Q, counts, length, rng, ubuf, iv, T, sid, blocked, via_list)
