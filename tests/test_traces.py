"""Tier 1: exact traces. Deterministic arrivals and sizes, every event and message checked.

Expected values are worked out by hand in the comments. Times are chosen as
binary fractions (0.25, 0.5, 1.5, ...) so that the simulated clock is exact;
where a latency of 0.1 is used, comparisons allow float rounding only.

Conventions of the emulator used below (see `emulator.measure.recorder`):
- deterministic arrivals at rate λ put job k at time (k + 1)/λ;
- a trace file replays its (time, size) rows; the window opens at the first
  measured arrival and closes at the arrival of the first unmeasured job, or
  when the trace runs out (right after the last job was dispatched);
- a control message is counted when it is sent; ``messages_per_job`` counts
  those sent inside the window.
"""

from __future__ import annotations

import pytest
from helpers.scenarios import traced

from emulator.measure.messages import KINDS

EXACT = 1e-12


def approx(value: float) -> object:
    return pytest.approx(value, abs=1e-9)


def check_fifo_timestamps(trace) -> None:  # type: ignore[no-untyped-def]
    """Every job's start is max(its time at the server, the previous departure there)."""
    done = trace.completion()
    previous: dict[int, float] = {}
    for job in sorted((j for j in trace.jobs if j.id in done), key=lambda j: (j.server, j.start)):
        assert job.start == max(job.at_server, previous.get(job.server, 0.0))
        previous[job.server] = done[job.id]


# -- round robin ---------------------------------------------------------------------------
def test_round_robin_cycles_and_never_waits() -> None:
    # N=4, load 0.5, unit sizes: λ = 0.5 * 4 = 2, so job k arrives at 0.5 (k + 1) and goes to
    # server k mod 4. Each server gets a job every 2 time units and serves it in 1: no waits.
    trace = traced({"name": "round_robin"}, servers=4, jobs=8)
    metrics = trace.run()
    assert trace.servers_of()[:8] == [0, 1, 2, 3, 0, 1, 2, 3]
    for job in trace.jobs[:8]:
        assert job.arrival == 0.5 * (job.id + 1)
        assert job.dispatched == job.at_server == job.start == job.arrival
    assert all(now - job.arrival == 1.0 for now, _, job in trace.left)
    assert trace.messages == []  # no control message at all
    assert metrics["mean_response"] == 1.0
    assert metrics["mean_wait"] == 0.0 and metrics["prob_wait"] == 0.0
    assert metrics["messages_per_job"] == 0.0
    # The window runs from job 0 (t=0.5) to job 8 (t=4.5): 4 time units. Jobs 0..6 spend
    # 1 unit each inside it, job 7 (4.0 -> 5.0) spends 0.5: area 7.5, over 4 servers.
    assert metrics["sim_time"] == 4.0
    assert metrics["mean_queue_length"] == 7.5 / 4.0 / 4
    assert metrics["p50_response"] == pytest.approx(1.0, rel=0.005)  # sketch: 0.5% bins


def test_round_robin_queues_build_fifo_waits_exact() -> None:
    # N=2, load 1.5 (allowed), size 1.5: λ = 1.5 * 2 / 1.5 = 2, arrivals every 0.5, alternately
    # to servers 0 and 1. Each server gets a job every 1.0 and needs 1.5, so its i-th job
    # (i = 0, 1, ...) arrives at a + i, starts at a + 1.5 i and waits 0.5 i.
    trace = traced({"name": "round_robin"}, servers=2, jobs=8, load=1.5,
                   service={"kind": "deterministic", "mean": 1.5}, allow_unstable=True)
    metrics = trace.run()
    for job in trace.jobs[:8]:
        i = job.id // 2
        assert job.server == job.id % 2
        assert job.start - job.arrival == 0.5 * i
    check_fifo_timestamps(trace)
    # Waits 0, 0.5, 1, 1.5 on each server: mean 0.75; response = wait + 1.5.
    assert metrics["mean_wait"] == 0.75
    assert metrics["mean_response"] == 2.25
    assert metrics["prob_wait"] == 6 / 8
    assert metrics["messages_per_job"] == 0.0


def test_round_robin_per_dispatcher_order() -> None:
    # Dispatcher k of D starts at floor(k N / D): with N=4, D=2, at 0 and 2; each then cycles.
    trace = traced({"name": "round_robin"}, servers=4, jobs=40, dispatchers=2)
    trace.run()
    by_dispatcher: dict[int, list[int]] = {0: [], 1: []}
    for _, did, _, sid, _ in trace.sent:
        by_dispatcher[did].append(sid)
    for did, start in ((0, 0), (1, 2)):
        sequence = by_dispatcher[did]
        assert sequence, "the uniform split left a dispatcher without jobs"
        assert sequence == [(start + i) % 4 for i in range(len(sequence))]
    assert trace.messages == []


# -- random --------------------------------------------------------------------------------
def test_random_single_fast_server() -> None:
    # N=1 with speed 2: capacity 2, load 0.5, so λ = 1 (arrivals at 1, 2, ...); a unit job
    # takes 1/2. The only choice is server 0; no messages.
    trace = traced({"name": "random"}, servers=1, speeds=[2.0], jobs=5)
    metrics = trace.run()
    assert trace.servers_of() == [0] * len(trace.jobs)
    assert [job.arrival for job in trace.jobs[:5]] == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert all(now - job.arrival == 0.5 for now, _, job in trace.left)
    assert metrics["mean_response"] == 0.5 and metrics["messages_per_job"] == 0.0
    assert trace.messages == []


def test_random_uses_every_server_and_is_seeded() -> None:
    # Not a statistic: with a fixed seed the choices are fixed, and over 60 jobs on 3 servers
    # a uniform choice that skipped a server would have probability 3 (2/3)^60 < 1e-10.
    first = traced({"name": "random"}, servers=3, jobs=60, seed=5)
    first.run()
    again = traced({"name": "random"}, servers=3, jobs=60, seed=5)
    again.run()
    assert first.servers_of() == again.servers_of()
    assert set(first.servers_of()) == {0, 1, 2}
    assert first.messages == []


# -- JSQ, SQ(d) with d = N, and the threshold policy: forced choices ----------------------------
FORCED = [(1.0, 1.5), (2.0, 10.0), (3.0, 10.0), (12.5, 1.0)]
# N=2. Job 0 (t=1) finds both idle: server A (tie, at random). It leaves at 2.5.
# Job 1 (t=2) finds A=1, B=0: B, until 12. Job 2 (t=3) finds A=0, B=1: A, until 13.
# Job 3 (t=12.5) finds A=1 (job 2), B=0 (job 1 left at 12): B. Nobody ever waits.


@pytest.mark.parametrize("policy, per_job", [
    ({"name": "jsq"}, [4, 4, 4, 4]),                      # 2N = 4 each
    ({"name": "sqd", "d": 2}, [4, 4, 4, 4]),              # d = N = 2 distinct: 2d = 4 each
    ({"name": "threshold", "d": 2, "threshold": 1}, None),  # 2 per probe: checked from the probes
])
def test_forced_choices_on_two_servers(trace_rows, policy, per_job) -> None:  # type: ignore[no-untyped-def]
    trace = traced(policy, servers=2, **trace_rows(FORCED))
    metrics = trace.run()
    s = trace.servers_of()
    assert s[1] != s[0] and s[2] == s[0] and s[3] == s[1]
    for _, _, _, sid, lengths in trace.sent:
        assert lengths[sid] == min(lengths)
    responses = {job.id: now - job.arrival for now, _, job in trace.left}
    assert responses == {0: 1.5, 1: 10.0, 2: 10.0, 3: 1.0}
    assert metrics["mean_response"] == (1.5 + 10 + 10 + 1) / 4
    assert metrics["mean_wait"] == 0.0
    queries = trace.count("query")
    assert trace.count("reply") == queries
    if per_job is not None:
        assert queries == sum(per_job) // 2
    else:
        # Threshold T=1, d=2: probe one server at a time and stop at an idle one; job 0 finds
        # both idle (1 probe), jobs 1, 2, 3 find exactly one idle: 1 probe if it is probed
        # first, else 2. Probes of a job are the asks at its arrival time (zero latency).
        for job in trace.jobs:
            probes = [(targets, replies) for t, targets, replies in trace.asks if t == job.arrival]
            assert all(len(targets) == 1 for targets, _ in probes)
            assert [r for _, (r,) in probes[:-1]] == [1] * (len(probes) - 1)  # busy ones
            assert probes[-1][1] == [0] and probes[-1][0] == [job.server]
            assert len(probes) == (1 if job.id == 0 else (1 if probes[0][0] == [job.server] else 2))
        assert len(trace.asks) == queries and 4 <= queries <= 7
    # Window [1, 12.5] holds all 4 jobs' messages (the trace ends after job 3 is dispatched).
    assert metrics["messages_per_job"] == 2 * queries / 4
    assert metrics["messages_per_job_query"] == queries / 4
    assert metrics["sim_time"] == 11.5


def test_jsq_breaks_ties_at_random() -> None:
    # Job 0 finds three idle servers. Over 30 fixed seeds a uniform tie-break leaves a server
    # out with probability 3 (2/3)^30 < 2e-5; a "first index" rule would always pick 0.
    first_choices = set()
    for seed in range(30):
        trace = traced({"name": "jsq"}, servers=3, jobs=1, seed=seed)
        trace.run()
        first_choices.add(trace.servers_of()[0])
    assert first_choices == {0, 1, 2}


@pytest.mark.parametrize("system", [{}, {"discipline": "pool", "capacity": 2, "load": 1.8},
                                    {"dispatchers": 3, "speeds": [1, 2, 1, 0.5, 0.5]}])
def test_jsq_joins_a_shortest_queue_at_every_dispatch(system) -> None:  # type: ignore[no-untyped-def]
    # Unit-rate exponential service and Poisson arrivals on 5 servers (FIFO at load 0.9, or
    # pools of capacity 2 that block, or 3 dispatchers and mixed speeds): whatever happens,
    # with zero latency the chosen server has the minimum true length (JSQ keeps that argmin
    # incrementally), and every job costs exactly N queries and N replies.
    options = {"load": 0.9, **system}
    trace = traced({"name": "jsq"}, servers=5, jobs=500, arrivals={"kind": "poisson"},
                   service={"kind": "exponential", "mean": 1}, **options)
    metrics = trace.run()
    for _, _, _, sid, lengths in trace.sent:
        assert lengths[sid] == min(lengths)
    assert metrics["messages_per_job_query"] == 5.0 and metrics["messages_per_job_reply"] == 5.0
    assert metrics["messages_per_job"] == 10.0


@pytest.mark.parametrize("d", [2, 3])
def test_sqd_joins_the_shortest_of_its_sample(trace_rows, d: int) -> None:  # type: ignore[no-untyped-def]
    # N=4, 12 jobs of size 100 one unit apart: nothing leaves during the trace, so a
    # server's length is the number of jobs sent to it before. Each job asks d distinct
    # servers, their replies are those lengths, and the job joins a sampled server with the
    # smallest reply. With zero latency the query round is not delivered message by message
    # (the policy reads the lengths and counts 2d messages), so the rounds are observed with a
    # latency of 1e-6: far shorter than the gaps, it changes no length and no decision.
    rows = [(float(t), 100.0) for t in range(1, 13)]
    trace = traced({"name": "sqd", "d": d}, servers=4, latency=1e-6, **trace_rows(rows))
    trace.run()
    assert len(trace.asks) == 12
    sent_before: list[int] = [0, 0, 0, 0]
    for (_, targets, replies), (_, _, _, sid, _) in zip(trace.asks, trace.sent, strict=True):
        assert len(set(targets)) == d
        assert replies == [sent_before[t] for t in targets]
        assert sid in targets and replies[targets.index(sid)] == min(replies)
        sent_before[sid] += 1
    assert trace.count("query") == trace.count("reply") == 12 * d
    # The zero-latency shortcut draws the same random numbers and makes the same choices.
    instant = traced({"name": "sqd", "d": d}, servers=4, **trace_rows(rows))
    metrics = instant.run()
    assert [sent[3] for sent in instant.sent] == [sent[3] for sent in trace.sent]
    assert instant.count("query") == instant.count("reply") == 12 * d
    assert metrics["messages_per_job"] == 2 * d


def test_sqd_with_replacement_may_ask_a_server_twice() -> None:
    # Mitzenmacher's wording: d picks with replacement. On N=2 with d=2 the two picks agree
    # with probability 1/2 per job; over 40 jobs with a fixed seed some do ((1/2)^40 otherwise).
    # Either way every pick is a query and a reply.
    # (A latency of 1e-6 makes the query rounds observable, as above.)
    trace = traced({"name": "sqd", "d": 2, "replace": True}, servers=2, jobs=40, seed=3, latency=1e-6)
    trace.run()
    assert any(len(set(targets)) == 1 for _, targets, _ in trace.asks)
    assert trace.count("query") == trace.count("reply") == 2 * len(trace.asks)


# -- JIQ --------------------------------------------------------------------------------------
def test_jiq_idle_tokens(trace_rows) -> None:  # type: ignore[no-untyped-def]
    # N=2, one dispatcher.
    # t=0: both servers are idle and send a token: I-queue {0, 1} (2 idle messages).
    # Job 0 (t=1, size 1.5) takes a random id A from the I-queue; it leaves at 2.5.
    # Job 1 (t=2, size 1.5) takes the only id left, B; it leaves at 3.5.
    # t=2.5: A is idle again and sends a token. Job 2 (t=3, size 1) takes A, leaves at 4.
    # t=3.5: B sends a token. Job 3 (t=3.75, size 1) takes B, leaves at 4.75.
    # t=4 and t=4.75: tokens from A and B. The run ends when job 3 leaves.
    trace = traced({"name": "jiq"}, servers=2,
                   **trace_rows([(1.0, 1.5), (2.0, 1.5), (3.0, 1.0), (3.75, 1.0)]))
    metrics = trace.run()
    s = trace.servers_of()
    assert s[1] != s[0] and s[2] == s[0] and s[3] == s[1]
    assert all(job.via_list for job in trace.jobs)
    assert trace.message_times("idle") == [0.0, 0.0, 2.5, 3.5, 4.0, 4.75]
    assert {k for _, k, _ in trace.messages} == {"idle"}
    # Window [1, 3.75]: the tokens at 2.5 and 3.5, for 4 jobs.
    assert metrics["messages_per_job_idle"] == 0.5
    assert metrics["messages_per_job"] == 0.5
    assert metrics["mean_wait"] == 0.0
    assert metrics["mean_response"] == (1.5 + 1.5 + 1 + 1) / 4


def test_jiq_empty_iqueue_falls_back_to_random(trace_rows) -> None:  # type: ignore[no-untyped-def]
    # As above, plus job 4 at t=3.8 while both servers are busy and the I-queue is empty.
    trace = traced({"name": "jiq"}, servers=2,
                   **trace_rows([(1.0, 1.5), (2.0, 1.5), (3.0, 1.0), (3.75, 1.0), (3.8, 1.0)]))
    trace.run()
    assert [job.via_list for job in trace.jobs] == [True, True, True, True, False]
    # Every token comes from a departure that left its server empty (plus the N at start).
    emptied = [now for now, _, length in trace.departures if length == 0]
    assert trace.message_times("idle") == [0.0, 0.0, *emptied]


def test_jiq_memory_one_keeps_the_first_token(trace_rows) -> None:  # type: ignore[no-untyped-def]
    # Memory A=1. t=0: server 0's token is stored, server 1's is dropped (still counted: it was
    # sent). Jobs come one unit after the previous one left, so server 0 is back in the
    # I-queue every time: every job goes to server 0, and server 1 is never heard from again.
    trace = traced({"name": "jiq", "memory": 1}, servers=2,
                   **trace_rows([(1.0, 1.0), (3.0, 1.0), (5.0, 1.0), (7.0, 1.0)]))
    metrics = trace.run()
    assert trace.servers_of() == [0, 0, 0, 0]
    assert all(job.via_list for job in trace.jobs)
    assert trace.message_times("idle") == [0.0, 0.0, 2.0, 4.0, 6.0, 8.0]
    assert metrics["messages_per_job_idle"] == 3 / 4  # tokens at 2, 4, 6 in the window [1, 7]


def test_jiq_with_latency(trace_rows) -> None:  # type: ignore[no-untyped-def]
    # Latency 0.25 on every message and transfer; memory 1, N=2.
    # t=0: both tokens sent; they arrive at 0.25 in order: 0 kept, 1 dropped.
    # Job 0 (t=1): I-queue {0}: sent at 1, reaches server 0 at 1.25, leaves 2.25;
    #   token sent 2.25, in the I-queue at 2.5.
    # Job 1 (t=2.75): server 0, there at 3.0, leaves 4.0; token sent 4.0, arrives 4.25.
    # Job 2 (t=4.1): the token is still in flight: I-queue empty, a random server.
    # Job 3 (t=4.5): server 0 again, from the I-queue.
    trace = traced({"name": "jiq", "memory": 1}, servers=2, latency=0.25,
                   **trace_rows([(1.0, 1.0), (2.75, 1.0), (4.1, 1.0), (4.5, 1.0)]))
    trace.run()
    jobs = trace.jobs
    assert [job.via_list for job in jobs] == [True, True, False, True]
    s = trace.servers_of()
    assert s[0] == s[1] == s[3] == 0
    done = trace.completion()
    assert jobs[0].at_server == 1.25 and done[0] == 2.25
    assert jobs[1].at_server == 3.0 and done[1] == 4.0
    assert done[0] - jobs[0].arrival == 1.25  # the response includes the transfer
    assert trace.message_times("idle")[:4] == [0.0, 0.0, 2.25, 4.0]


def test_jiq_sqd_sends_tokens_to_the_shorter_iqueue() -> None:
    # Two dispatchers, JIQ-SQ(2): an idle server queries both dispatchers and sends its token
    # to the shorter I-queue. At t=0 server 0 finds 0 and 0 (tie), server 1 then finds 1 and
    # 0: each dispatcher ends up with exactly one id, the two ids distinct. Each token costs
    # 1 idle + 2 queries + 2 replies.
    trace = traced({"name": "jiq", "d": 2}, servers=2, dispatchers=2, jobs=20)
    states = [list(dispatcher.state.ids) for dispatcher in trace.model.dispatchers]
    assert sorted(len(ids) for ids in states) == [1, 1]
    assert sorted(states[0] + states[1]) == [0, 1]
    trace.run()
    idle = trace.count("idle")
    assert trace.count("query") == trace.count("reply") == 2 * idle


# -- JBT-d ------------------------------------------------------------------------------------
JBT = {"name": "jbt", "d": 2, "period": 2}
JBT_ROWS = [(1.0, 10.0), (2.5, 10.0), (3.0, 10.0), (5.0, 10.0), (6.5, 10.0)]


def test_jbt_reports_and_threshold_updates(trace_rows) -> None:  # type: ignore[no-untyped-def]
    # N=2, d=2 (both servers sampled), period 2, defaults below=le, rereport, recheck, r=0.
    # Nothing leaves before t=11, so lengths only grow.
    # t=0: both servers have length 0 <= r=0: 2 reports; list {0, 1}.
    # Job 0 (t=1) takes A from the list (length 1 > 0: no new report). List {B}.
    # t=2: update: 2 queries, replies {A: 1, B: 0}, r = 0, 2 threshold messages; A is not
    #   below, B is already listed: no report.
    # Job 1 (t=2.5) takes B. List {}.
    # Job 2 (t=3): list empty, a random server X (length 2 now).
    # t=4: replies {1, 2}, r = 1; the other server Y (length 1 <= 1, not listed) reports.
    # Job 3 (t=5) takes Y (now 2, not below r=1).
    # t=6: replies {2, 2}, r = 2: both servers are below and unlisted: 2 reports.
    # Job 4 (t=6.5) takes one of them.
    trace = traced(JBT, servers=2, **trace_rows(JBT_ROWS))
    metrics = trace.run()
    jobs = trace.jobs
    s = trace.servers_of()
    assert [job.via_list for job in jobs] == [True, True, False, True, True]
    assert s[1] != s[0] and s[3] != s[2]
    assert [t for t in trace.message_times("report") if t <= 6.5] == [0.0, 0.0, 4.0, 6.0, 6.0]
    asks = [(t, sorted(targets), sorted(replies)) for t, targets, replies in trace.asks if t <= 6.5]
    assert asks == [(2.0, [0, 1], [0, 1]), (4.0, [0, 1], [1, 2]), (6.0, [0, 1], [2, 2])]
    for kind in ("query", "reply", "threshold"):
        assert [t for t in trace.message_times(kind) if t <= 6.5] == [2.0, 2.0, 4.0, 4.0, 6.0, 6.0]
    # Window [1, 6.5], 5 jobs: 6 queries, 6 replies, 6 thresholds, 3 reports.
    assert metrics["messages_per_job_query"] == 6 / 5
    assert metrics["messages_per_job_reply"] == 6 / 5
    assert metrics["messages_per_job_threshold"] == 6 / 5
    assert metrics["messages_per_job_report"] == 3 / 5
    assert metrics["messages_per_job"] == 21 / 5
    assert metrics["messages_per_job_idle"] == 0.0


def test_jbt_without_recheck_waits_for_departures(trace_rows) -> None:  # type: ignore[no-untyped-def]
    # Same trace, recheck off: a new threshold makes nobody report, so after t=0 there is no
    # report until a departure (t >= 11); jobs 2, 3, 4 find the list empty.
    trace = traced({**JBT, "recheck": False}, servers=2, **trace_rows(JBT_ROWS))
    trace.run()
    assert [job.via_list for job in trace.jobs] == [True, True, False, False, False]
    assert [t for t in trace.message_times("report") if t < 11] == [0.0, 0.0]


def test_jbt_strict_below_lists_nobody_at_zero(trace_rows) -> None:  # type: ignore[no-untyped-def]
    # below=lt with r=0: length < 0 never holds, so no report at t=0 and job 0 goes at random.
    # initial_threshold 1 with lt lists the idle servers at once (0 < 1), as JIQ does.
    trace = traced({**JBT, "below": "lt"}, servers=2, **trace_rows(JBT_ROWS[:1]))
    trace.run()
    assert trace.message_times("report") == [] and not trace.jobs[0].via_list
    trace = traced({**JBT, "below": "lt", "initial_threshold": 1}, servers=2, **trace_rows(JBT_ROWS[:1]))
    trace.run()
    assert trace.message_times("report")[:2] == [0.0, 0.0] and trace.jobs[0].via_list


def test_jbt_rereport_after_a_list_job(trace_rows) -> None:  # type: ignore[no-untyped-def]
    # initial_threshold 1 (below means length <= 1), N=1, no update before t=100.
    # t=0: the idle server reports. Job 0 (t=1) takes it from the list: its length 1 is still
    # <= 1, so with rereport it reports again at once (t=1) and job 1 (t=2) comes via the list;
    # without, it stays silent until a departure and job 1 goes at random (to the same server).
    rows = [(1.0, 10.0), (2.0, 10.0)]
    on = traced({"name": "jbt", "d": 1, "period": 100, "initial_threshold": 1}, servers=1,
                **trace_rows(rows))
    on.run()
    assert on.message_times("report")[:2] == [0.0, 1.0]
    assert [job.via_list for job in on.jobs] == [True, True]
    off = traced({"name": "jbt", "d": 1, "period": 100, "initial_threshold": 1, "rereport": False},
                 servers=1, **trace_rows(rows))
    off.run()
    assert [t for t in off.message_times("report") if t < 11] == [0.0]
    assert [job.via_list for job in off.jobs] == [True, False]


def test_jbt_with_latency(trace_rows) -> None:  # type: ignore[no-untyped-def]
    # Latency 0.25. t=0: two reports sent, in the list at 0.25: job 0 (t=0.125) finds the list
    # empty and goes at random; job 1 (t=1) comes from the list.
    # Update at t=2: queries sent at 2, reach the servers at 2.25 and are answered then;
    # the replies arrive at 2.5, when the 2 threshold messages are sent (reaching the
    # servers at 2.75). Job 1's transfer: sent at 1, at the server at 1.25.
    trace = traced(JBT, servers=2, latency=0.25,
                   **trace_rows([(0.125, 10.0), (1.0, 10.0), (2.125, 10.0)]))
    trace.run()
    jobs = trace.jobs
    assert [job.via_list for job in jobs[:2]] == [False, True]
    assert jobs[1].dispatched == 1.0 and jobs[1].at_server == 1.25
    assert trace.message_times("query")[:2] == [2.0, 2.0]
    assert trace.message_times("reply")[:2] == [2.25, 2.25]
    assert trace.message_times("threshold")[:2] == [2.5, 2.5]
    assert trace.asks[0][0] == 2.5  # when the last reply is in


def test_jbt_heterogeneous_picks_in_proportion_to_rate() -> None:
    # JBTG-d: a listed server j is picked with probability mu_j / sum of the listed mu. With
    # speeds 1 and 3 both listed, server 1 should come out 3/4 of the time. Seeded: 4,000
    # picks give a standard deviation of 0.007, and the tolerance is 0.03 (over 4 sigma).
    import numpy as np

    from emulator.policies.base import IdList
    from emulator.workload.streams import Uniforms

    uniforms = Uniforms(np.random.default_rng(2026))
    picks = []
    for _ in range(4000):
        listed = IdList()
        listed.add(0)
        listed.add(1)
        picks.append(listed.take_weighted(uniforms.random, [1.0, 3.0], 3.0))
        assert len(listed) == 1 and listed.ids == [1 - picks[-1]]
    assert abs(sum(picks) / 4000 - 0.75) < 0.03


# -- threshold policy --------------------------------------------------------------------------
@pytest.mark.parametrize("latency", [0.0, 0.25])
def test_threshold_probes_until_below_or_d(trace_rows, latency) -> None:  # type: ignore[no-untyped-def]
    # One server, d=3 probes with replacement, T=1 (join a server with fewer than 1 job).
    # Job 0 (t=1, size 10): one probe finds it idle: 2 messages, joins.
    # Job 1 (t=2, size 1): three probes find length 1 each: 6 messages, joins the last probed.
    # With latency L each probe is a round trip of 2L before the next starts, and the transfer
    # takes L: job 0 is sent at 1 + 2L and at the server at 1 + 3L; job 1 is sent at 2 + 6L
    # and at the server at 2 + 7L, where it waits until job 0 leaves at 11 + 3L.
    L = latency
    trace = traced({"name": "threshold", "d": 3, "threshold": 1, "replace": True}, servers=1,
                   latency=L if L else None, **trace_rows([(1.0, 10.0), (2.0, 1.0)]))
    metrics = trace.run()
    jobs = trace.jobs
    assert jobs[0].dispatched == 1 + 2 * L and jobs[0].at_server == 1 + 3 * L
    assert jobs[1].dispatched == 2 + 6 * L and jobs[1].at_server == 2 + 7 * L
    assert jobs[1].start == 11 + 3 * L
    assert [replies for _, _, replies in trace.asks] == [[0], [1], [1], [1]]
    assert trace.message_times("query") == [1.0, 2.0, 2.0 + 2 * L, 2.0 + 4 * L]
    assert trace.message_times("reply") == [1.0 + L, 2.0 + L, 2.0 + 3 * L, 2.0 + 5 * L]
    done = trace.completion()
    assert done[0] - jobs[0].arrival == 10 + 3 * L
    assert done[1] - jobs[1].arrival == 10 + 3 * L  # leaves at 12 + 3L, arrived at 2
    if L == 0:
        assert metrics["messages_per_job"] == (2 + 6) / 2


# -- latency: probes wait for replies, transfers are delayed --------------------------------------
def test_jsq_with_latency_acts_on_stale_lengths(trace_rows) -> None:  # type: ignore[no-untyped-def]
    # N=2, latency 0.25. Job 0 (t=1, size 100): queries answered at 1.25 (0, 0), replies back
    # at 1.5, sent to A (tie), there at 1.75.
    # Job 1 (t=2, size 1): queries answered at 2.25: A=1, B=0, so B; sent 2.5, at B 2.75,
    # served 2.75 -> 3.75.
    # Job 2 (t=2.1, size 1): queries answered at 2.35, before job 1 reaches B: A=1, B=0, so B
    # again; sent 2.6, at B 2.85, waits for job 1 until 3.75, leaves 4.75.
    # A trailing job at t=50 closes the window after every reply is in.
    rows = [(1.0, 100.0), (2.0, 1.0), (2.1, 1.0), (50.0, 1.0)]
    trace = traced({"name": "jsq"}, servers=2, latency=0.25, **trace_rows(rows, jobs=3))
    metrics = trace.run()
    jobs = trace.jobs
    s = trace.servers_of()
    assert s[1] == s[2] != s[0]
    assert [sorted(replies) for _, _, replies in trace.asks[:3]] == [[0, 0], [0, 1], [0, 1]]
    assert jobs[0].dispatched == 1.5 and jobs[0].at_server == 1.75
    assert jobs[1].dispatched == 2.5 and jobs[1].at_server == 2.75 and jobs[1].start == 2.75
    assert jobs[2].dispatched == approx(2.6) and jobs[2].at_server == approx(2.85)
    assert jobs[2].start == 3.75
    done = trace.completion()
    assert done[0] - jobs[0].arrival == 100.75
    assert done[1] - jobs[1].arrival == 1.75
    assert done[2] - jobs[2].arrival == approx(2.65)
    assert metrics["mean_response"] == approx((100.75 + 1.75 + 2.65) / 3)
    assert metrics["mean_wait"] == approx(0.9 / 3)  # only job 2 waits: 3.75 - 2.85
    # 2N = 4 messages per job; the window [1, 50] holds all of them.
    assert metrics["messages_per_job_query"] == 2.0 and metrics["messages_per_job_reply"] == 2.0
    assert trace.message_times("query")[:6] == approx([1.0, 1.0, 2.0, 2.0, 2.1, 2.1])
    assert trace.message_times("reply")[:6] == approx([1.25, 1.25, 2.25, 2.25, 2.35, 2.35])


@pytest.mark.parametrize("policy, messages", [
    ({"name": "random"}, 0), ({"name": "round_robin"}, 0), ({"name": "jsq"}, 6),
    ({"name": "sqd", "d": 2}, 4), ({"name": "threshold", "d": 2, "threshold": 5}, 2),
])
def test_response_includes_dispatch_delay(policy, messages) -> None:  # type: ignore[no-untyped-def]
    # N=3, load 0.25, unit sizes: λ = 0.75, a job every 4/3 and never two at a server.
    # With latency 0.1 a job waits for its probes' round trip (0.2 if it probes at all) and
    # then for its transfer (0.1): response = 1 + 0.1 + 0.2 * [probes]. The threshold policy
    # with T=5 is satisfied by its first probe. Counts per job are exact.
    trace = traced(policy, servers=3, load=0.25, jobs=20, latency=0.1)
    metrics = trace.run()
    delay = 0.1 + (0.2 if messages else 0.0)
    assert metrics["mean_response"] == approx(1 + delay)
    assert metrics["mean_wait"] == 0.0
    assert metrics["messages_per_job"] == messages
    for job in trace.jobs[:20]:
        assert job.dispatched - job.arrival == approx(delay - 0.1)
        assert job.at_server - job.arrival == approx(delay)
    assert metrics["p99_response"] == pytest.approx(1 + delay, rel=0.005)


# -- pools and blocking -------------------------------------------------------------------------
def test_pool_serves_at_once_and_blocks_when_full(trace_rows) -> None:  # type: ignore[no-untyped-def]
    # One pool, capacity 2: jobs at 1 and 2 (size 10) are served at once; job 2 (t=3) finds 2
    # and is blocked; job 3 (t=11.5) finds 1 (job 0 left at 11) and is served.
    trace = traced({"name": "random"}, servers=1, discipline="pool", capacity=2, load=3.0,
                   **trace_rows([(1.0, 10.0), (2.0, 10.0), (3.0, 10.0), (11.5, 1.0)]))
    metrics = trace.run()
    assert [job.blocked for job in trace.jobs] == [False, False, True, False]
    assert [job.id for _, job in trace.blocked] == [2]
    assert all(job.start == job.at_server for job in trace.jobs if not job.blocked)
    assert metrics["blocked_fraction"] == 0.25
    assert metrics["mean_response"] == (10 + 10 + 1) / 3  # over served jobs
    assert metrics["mean_wait"] == 0.0


def test_pool_speed_scales_service(trace_rows) -> None:  # type: ignore[no-untyped-def]
    # A pool of speed 4 serves a task of size 2 in 0.5, however many tasks it holds.
    trace = traced({"name": "round_robin"}, servers=1, discipline="pool", speeds=[4.0], load=3.0,
                   **trace_rows([(1.0, 2.0), (1.25, 2.0), (1.5, 2.0)]))
    metrics = trace.run()
    assert sorted(trace.completion().values()) == [1.5, 1.75, 2.0]
    assert metrics["mean_response"] == 0.5


def test_jsq_pools_with_capacity(trace_rows) -> None:  # type: ignore[no-untyped-def]
    # Two pools of capacity 1: job 0 -> A, job 1 -> B (forced), job 2 finds both full: blocked.
    trace = traced({"name": "jsq"}, servers=2, discipline="pool", capacity=1, load=3.0,
                   **trace_rows([(1.0, 10.0), (2.0, 10.0), (3.0, 10.0), (12.5, 1.0)]))
    metrics = trace.run()
    s = trace.servers_of()
    assert s[0] != s[1]
    assert [job.blocked for job in trace.jobs] == [False, False, True, False]
    assert metrics["blocked_fraction"] == 0.25
    assert metrics["messages_per_job"] == 4.0


def test_fifo_capacity_blocks(trace_rows) -> None:  # type: ignore[no-untyped-def]
    # One FIFO server holding at most 2 jobs (in service plus waiting): jobs 2 and 3 find 2.
    trace = traced({"name": "random"}, servers=1, capacity=2,
                   **trace_rows([(1.0, 10.0), (2.0, 10.0), (3.0, 10.0), (4.0, 10.0)]))
    metrics = trace.run()
    assert [job.blocked for job in trace.jobs] == [False, False, True, True]
    assert trace.jobs[1].start == 11.0
    assert metrics["blocked_fraction"] == 0.5
    assert metrics["mean_wait"] == 9.0 / 2  # job 1 waits 9, job 0 none
    assert metrics["prob_wait"] == 0.5


def test_message_kinds_are_the_contract_kinds() -> None:
    assert KINDS == ("query", "reply", "idle", "report", "threshold", "update", "reservation", "request", "cancel",
                     "completion")
