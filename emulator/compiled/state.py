"""Slot numbers of the compiled engine's scalar state, and the codes the kernel returns.

The kernel keeps its scalars in two small arrays (``iv`` int64, ``fv`` float64)
so that it can return to Python at any resumable point and be called again
with everything where it left it.
"""

from __future__ import annotations

from collections import namedtuple

# -- what the kernel returns ------------------------------------------------------------
DONE = 0  # every measured job has left and the window is closed
NEED_GAPS = 1  # the gap buffer is empty: refill it (or mark it final)
NEED_SIZES = 2
NEED_SPLIT = 3  # the dispatcher-split uniforms
NEED_JOBS = 4  # no free job slot: grow the job arrays
NEED_HEAP = 5  # the event heap is full: grow it
NEED_LEVELS = 6  # the length index's buckets are full: add levels
FLUSH = 8  # the response buffer holds a full QuantileSketch batch: fold it
PAUSE = 9  # the event budget of this call is spent (progress reports)
EMPTY = 10  # no event left before the run is done
NEED_OCCUPANCY = 11  # the occupancy arrays may be too short for the next arrival: grow them
NEED_LISTS = 12  # the dispatchers' lists may have no room for the next id: compact or grow them
NEED_NETWORK = 13  # with latency: less room than one step may use (latencies, messages, asks, heap): refill, grow
BAD_SERVER = 14  # a policy's compiled form chose a server outside 0 .. N - 1 (iv[I_BAD]), or none
NEED_RESERVATIONS = 15  # late binding: the reservation pool may have no room for the next dispatch (`binding`)
NEED_PERIODS = 16  # a failing server's up or down periods are used up (iv[I_PERIODS]): refill its row
NEED_COPIES = 17  # jobs sent as copies: rows for more job slots, or more copy sizes (`copying`)

# -- integer scalars (iv) ---------------------------------------------------------------
I_EID = 0  # next event id
I_HEAP = 1  # events in the heap
I_JOB = 2  # jobs created so far
I_INSYS = 3  # jobs at servers
I_FINISHED = 4
I_BLOCKED = 5
I_WAITED = 6
I_EDGES = 7  # window edges passed (0, 1, 2)
I_TRANSFERS = 8
I_FREE = 9  # head of the free list of job slots (-1: none)
I_SRC = 10  # source state: 0 waits for its timeout, 1 a job is due now, 2 needs its next gap, 3 ended
I_GAP = 11  # read position in the gap buffer
I_NGAP = 12  # valid gaps in the buffer
I_SIZE = 13
I_NSIZE = 14
I_SPLIT = 15
I_NSPLIT = 16
I_UPOS = 17  # read position in the policy's uniform batch
I_NRESP = 18  # responses buffered
I_GAPS_FINAL = 22  # 1 when the gap buffer holds the end of a finite trace
I_LEVELS = 23  # the length index: buckets in use (len(LengthIndex.buckets))
I_LOW = 24  # the length index: the smallest non-empty bucket
I_HEAP_CAP = 25
I_LEVEL_CAP = 26
# The occupancy observer (`emulator.measure.occupancy.Occupancy`); its total is I_INSYS.
I_OCC_LENGTHS = 27  # len(Occupancy.count): the longest length ever held + 1
I_OCC_TOTALS = 28  # len(Occupancy.total_area): the largest total ever held + 1
I_OCC_HIGH = 29  # Occupancy.high
I_OCC_LOW = 30  # Occupancy.low
I_OCC_EDGE_LENGTHS = 31  # len(area) and len(total_area) at the window's edges: 31, 32 open, 33, 34 close
# The dispatchers' lists (JIQ, JBT-d): `core.id_add`.
I_POOL_END = 35  # the first slot of the list pool that no block holds
I_MAXCAP = 36  # the largest block a list has had
I_NODE_FREE = 37  # head of the free list of membership nodes (-1: none)
I_INIT = 38  # the policy's construction (its `initialise`) goes on at this server (-1: done)
I_UPDATING = 39  # the policy's timer step goes on at this server (-1: none; JBT-d's update)
I_UPDATE_R = 40  # that step's value (the update's threshold)
I_ARRIVAL_EID = 41  # the event id of the source's pending timeout (kept beside the heap: F_ARRIVAL)
# Message latency (`network`): the latency buffer, the message and ask pools.
I_LAT = 42  # read position in the latency buffer
I_NLAT = 43  # valid latencies in it
I_MSG_FREE = 44  # head of the free list of message records (-1: none)
I_MSGS = 45  # message records in use (in flight)
I_MSG_CAP = 46
I_ASK_FREE = 47  # head of the free list of ask records
I_ASKS = 48
I_ASK_CAP = 49
I_ARRIVED = 50  # measured jobs that reached their server or were blocked (the source stops once all have)
I_MAXLEN = 51  # the longest length a server has had (with latency, what the length index may have to hold)
I_CURRENT = 52  # the slot of the job being dispatched (an ask that waits for replies holds it)
I_HELD = 53  # slotted time's pull_delay (0: none): a held message is due after the decisions of slot
# int(now) + I_HELD - 1 (`model.slotted.SlotChannel`)
I_LOSS = 54  # read position in the loss uniforms (`faults`)
I_NLOSS = 55  # valid uniforms in them (1 << 62 when messages cannot be lost: none is drawn)
I_BAD = 56  # the server of `BAD_SERVER`
I_ORIGIN = 57  # the dispatcher of the job whose departure or block the policy's hook follows (LOR)
# A policy that places whole batches (P_WHOLE): the jobs of the batch arriving now are held, chained by
# their ``next`` links, until the next gap > 0; then they go to the policy one by one (source state 4).
I_BATCH_HELD = 58  # jobs held so far
I_BATCH_HEAD = 59  # the first held job's slot, and the last's
I_BATCH_TAIL = 60
I_BATCH = 61  # the size of the batch being placed
I_BATCH_AT = 62  # its jobs placed so far
I_LOST_JOBS = 63  # measured jobs lost at a failing server (`failing`, Recorder.lost_jobs)
I_PERIODS = 64  # NEED_PERIODS: the period row to refill, 2 * server + (0 up, 1 down) (`failing`)
I_PLACING = 65  # 1 + the slot of the next job of a batch its ask's timeout placed, one a step (0: none)
I_NIV = 66

# -- float scalars (fv) -----------------------------------------------------------------
F_NOW = 0
F_LAST = 1  # Recorder.last
F_AREA = 2  # Recorder.area
F_SUM_RESPONSE = 3
F_SUM_WAIT = 4
F_T0 = 5  # window edges: time and area at open and close
F_A0 = 6
F_T1 = 7
F_A1 = 8
F_OCC_LAST = 9  # Occupancy.last
F_HIGH_SINCE = 10
F_HIGH_AREA = 11
F_LOW_SINCE = 12
F_LOW_AREA = 13
F_SPREAD0 = 14  # high_area - low_area at the window's edges
F_SPREAD1 = 15
F_ARRIVAL = 16  # the time of the source's pending timeout (while I_SRC is 0)
F_LOSS = 17  # network.loss: the probability that a control message is lost (`faults`)
F_TIMEOUT = 18  # network.timeout: how long an ask waits for its replies, with faults
F_NFV = 19

# -- parameters (P, int64) --------------------------------------------------------------
P_CHECKED = 0  # 1: a policy that is not built in: its decisions are checked (`BAD_SERVER`)
P_N = 1
P_D = 2  # dispatchers
P_CAPACITY = 3  # -1: none
P_POOL = 4  # the discipline: 0 FIFO, 1 pool, 2 processor sharing
P_WARMUP = 5
P_JOBS = 6
P_QUERY = 7  # message-kind indices of the counters
P_REPLY = 8
P_IDLE = 9
P_REPORT = 10
P_THRESHOLD_KIND = 11
P_OCCUPANCY = 12  # stream the lengths to the occupancy observer (run.occupancy)
P_SHARES = 13  # dispatcher_shares: pick the dispatcher by the cumulative bounds Q[Q_BOUNDS:]
# What the policy's description (`compiled.policies.<name>.pack`) asks of the driver:
P_TIMER = 16  # 1: the policy acts every Q[Q_PERIOD] (the `timer` hook), from t = period on
P_INDEX = 17  # 1: it keeps the length index (`tools`): room for one more level before each arrival
P_LISTS_AT_ARRIVAL = 18  # 1: an arrival may list a server (room in the lists first)
P_LISTS_AT_DEPARTURE = 19  # 1: a departure may
P_LATENT = 20  # 1: messages have latency; each is an event (`network`)
P_ROOM = 21  # with latency: the most messages (and latencies, heap records) one step may send
P_ASK_ROOM = 22  # with latency: the most asks one step may open
P_LISTS = 23  # 1: the policy keeps the dispatchers' lists (with latency, a delivered message may add an id)
P_HELD = 25  # 1: slotted time's pull_delay holds idle tokens and reports (`network.post`, iv[I_HELD] slots)
P_WHOLE = 26  # d > 0: the policy places whole batches, sampling min(N, dk) servers for k jobs (`Policy.whole_batches`)
P_PARAMS = 27  # the policy's own integer parameters: P[P_PARAMS + i], i < P_NPARAMS
P_NPARAMS = 8
P_NP = P_PARAMS + P_NPARAMS

# -- float parameters (Q) ----------------------------------------------------------------
Q_PERIOD = 0  # the delay to the policy's next timer event, read after `initialise` and each `timer` call,
# which may set it (JSQ with asynchronous sparse feedback: exponential gaps); else the fixed period
Q_PARAMS = 1  # the policy's own float parameters: Q[Q_PARAMS + i], i < Q_NPARAMS
Q_NPARAMS = 4
Q_BOUNDS = Q_PARAMS + Q_NPARAMS  # then, with dispatcher_shares, the cumulative shares (the last infinite)
Q_NQ = Q_BOUNDS

# -- event kinds (low two bits of an event's code; the rest is its argument) -------------
ARRIVAL = 0  # the source's timeout (never in the heap: kept beside it, F_ARRIVAL and I_ARRIVAL_EID)
MESSAGE = 0  # in the heap, the same code is a message's delivery (argument: its record; `network`)
SERVICE_END = 1  # a FIFO server's service end (argument: server)
POOL_END = 2  # a pool task's completion (argument: job slot)
TIMER = 3  # the policy's timer (JBT-d's threshold update)

# -- what a message record carries (`network`: its first field; the rest are its arguments) ----
TRANSFER = 0  # a job (slot, server, via_list) reaches its server
ASK_TIMEOUT = 2  # with faults, an ask's timeout (ask, the first target of its round trip)
POLICY_MESSAGE = 3  # from here on, the policy's own messages, delivered by its `deliver` hook
# An ask's messages need no record: a MESSAGE event's argument says what they are.
QUERY_EVENT = 1 << 48  # | ask << 24 | i: the i-th target of an ask is asked
REPLY_EVENT = 1 << 47  # | ask: the last reply of the ask arrives (`network`: the others change nothing)
ASK_SHIFT = 24
TARGET_MASK = (1 << ASK_SHIFT) - 1  # so at most 2**24 targets (servers) with latency
ASK_MASK = (1 << 23) - 1  # and 2**23 asks in flight

# -- an ask record's fields (`network.open_ask`) ---------------------------------------------
A_JOB = 0  # the job slot waiting for the replies, or -1
A_DISPATCHER = 1
A_LEFT = 2  # replies still to come
A_N = 3  # targets
A_TAG = 4  # the policy's own (the threshold model's probe, LSQ's server, JIQ's idle server)
A_DISPATCHERS = 5  # 1 when the targets are dispatchers (JIQ-SQ(d)'s idle servers ask them), else servers
A_NEXT = 6  # the free list's link while the record is free
A_DUE_ID = 7  # the event id of the reply that arrives last so far (its time: `Tools.due`)
# With faults (`faults`), where a round trip ends at its last reply or at its timeout:
A_FIRST = 8  # the first target of the round trip under way (the threshold model's probes are one each)
A_PENDING = 9  # its queries and timeouts still to come: a closed record is freed once none is
A_DONE = 10  # 0 while the round trip waits, 1 once its decision is scheduled (or none begun), 2 closed
A_LATE = 11  # 1 once a message of the round trip is lost or a reply late: its timeout decides
A_PHASE = 12  # the window edges passed when its round trip's queries went out (a loss at a down server counts there)
A_FIELDS = 13


# -- the records the kernels take (numba passes each as one argument; its arrays are the caller's) ---------
Run = namedtuple("Run", ["P", "Q", "iv", "fv", "counts", "window"])
"""A run's parameters (``P`` int64, ``Q`` float64), scalar state (``iv``, ``fv``) and message counts
(``counts``; ``window``: the counts at the window's opening and closing)."""

Jobs = namedtuple("Jobs", ["arrival", "at", "size", "start", "next", "measured", "dispatcher"])
"""The job slots: arrival time, time at the server, size, start of service, the FIFO/free-list link,
the arrival number + 1 of a measured job (0: not measured), and the dispatcher that sent it."""

Inputs = namedtuple("Inputs", ["gaps", "sizes", "split", "ubuf", "responses"])
"""What the driver refills between calls: arrival gaps, job sizes, dispatcher-split uniforms, the
policy's uniform block, and the response batch the driver folds into the sketch."""

Servers = namedtuple("Servers", ["table", "inv_speed", "sharing", "fail", "copies"])
"""The servers: the FIFO table (length, head, tail, spare), 1 / speed, the processor-sharing rows (`ps`) and
the failing servers' `failing.Failing`; the copies' `copying.Copies` (jobs sent as copies)."""

Observer = namedtuple("Observer", ["count", "lengths", "totals"])
"""The occupancy observer's arrays (`occupancy`)."""

Slots = namedtuple("Slots", ["sv", "sf", "arrivals", "caps", "scratch", "dwork"])
"""The slot clock's own state (`slotted`): its integer and float scalars, the arrival counts and
capacities it reads, and its gathering arrays."""
