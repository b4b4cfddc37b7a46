"""The cost model of ``run.engine: auto``: what a replication would cost the SimPy engine."""

from __future__ import annotations

import math

from ..policies import REGISTRY
from ..scenario.schema import ResolvedPolicy
from ..scenario.sweep import Point
from .eligibility import PointView

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
        + 8.5 per extra copy of a job (redundancy: a job more, and its cancel)
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
    of the lists, so it sends fewer messages). Redundancy at N = 100 (a loaded machine, where
    Random took 3.9-5.0): Red(2) 13.7 / 0.90, Red(3) 21.2 / 1.35 (the model 13.5 and 22.5), Red(2)
    with latency 25.1 / 0.88 (the model 27.9).

    Where a job asks hundreds of servers, its messages in flight make each cost more (Python's
    garbage collector scans them again and again: without it, half the time): with latency
    as above, SimPy spent 0.86 s on 2,200 jobs of JSQ at N = 100, 1.2 s on 660 at N = 300 and
    5.6 s on 220 at N = 1,000 (about 2, 3 and 13 us a message), and 1.57 s on 1,100 of SQ(200)
    at N = 1,000; the per-message term is multiplied by 1 + (servers asked / 450)^2, so that
    a short run of JSQ at N = 1,000 with latency (5.6 s, the model said 1.2 without it) goes
    to the compiled engine.

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
    samples = REGISTRY[policy.name].samples_per_job(policy.config, PointView(point))
    if point.scenario.system.time == "slotted":
        us = 2.5 + 0.5 * samples + 8.0 / point.rate
    else:
        us = 4.0 + 0.5 * samples
    us += 9.0 * max(0.0, math.log10(n / 1000)) + (1.0 if run.occupancy else 0.0)
    if getattr(REGISTRY[policy.name], "copies", False):  # d copies: the servers it samples
        us += 8.5 * (samples - 1)
    network = point.scenario.network
    if network.latency.mean != 0:
        # A job that asks hundreds of servers keeps as many messages in flight, and each costs SimPy more
        # (`crowd`, measured: see above).
        crowd = 1.0 + (samples / 450.0) ** 2
        us += 2.4 * 2.0 + (4.0 if network.loss > 0 else 2.4) * 2.0 * samples * crowd
    return run.total_jobs * us * 1e-6


