"""Which faults the compiled engine runs (`compiled.supports`), policy by policy.

Whether its rows are SimPy's is `benchmarks/equivalence.py --engines --only '*_fail_*' '*_loss*'`'s
(each policy's kernel with failing servers costs 10-20 s to compile: the suite builds a few,
`helpers.equivalence.SAMPLED`); here, only that a scenario runs compiled or goes to SimPy, which
needs no kernel, and how a recovery hands back the jobs blocked at its down server (`compiled.recovery`).
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.scenarios import scenario_dict

import emulator
from emulator import compiled

FAILURES = {"up": {"kind": "exponential", "mean": 50.0}, "down": {"kind": "exponential", "mean": 1.0}}
LOSING = {**FAILURES, "on_down": "lose"}
LATENCY = {"kind": "exponential", "mean": 0.1}


def reason(policy: dict[str, Any], failures: dict[str, Any] | None = None, loss: float = 0.0,
           **options: Any) -> str | None:
    """Why the compiled engine hands this small scenario to SimPy, or None if it runs it."""
    data = scenario_dict(policy, servers=4, jobs=100, **options)
    data.setdefault("network", {}).update(loss=loss, timeout=1.0)
    if failures is not None:
        data["system"]["failures"] = failures
    point = emulator.Scenario.from_dict(data).points()[0]
    return compiled.supports(point, point.policies[0])


@pytest.mark.parametrize("policy, options", [
    ({"name": "persistent_idle"}, {"loss": 0.1, "dispatchers": 2}),
    ({"name": "persistent_idle"}, {"failures": FAILURES, "loss": 0.1}),
    ({"name": "persistent_idle"}, {"failures": LOSING, "latency": LATENCY, "dispatchers": 2}),
    ({"name": "lor"}, {"loss": 0.1, "dispatchers": 2}),
    ({"name": "lor", "d": 2}, {"failures": FAILURES}),
    ({"name": "lor"}, {"failures": LOSING, "capacity": 2, "latency": LATENCY}),
    ({"name": "lor"}, {"failures": FAILURES, "capacity": 2, "dispatchers": 2}),
    ({"name": "lor", "d": 2}, {"failures": FAILURES, "capacity": 1, "loss": 0.1, "latency": LATENCY}),
], ids=str)
def test_the_servers_messages_to_dispatchers_run_compiled_under_faults(policy: dict[str, Any],
                                                                       options: dict[str, Any]) -> None:
    """Persistent idle's reports and LOR's completions go to dispatchers, which never fail: lost at zero latency
    as JIQ's tokens are, and a recovery runs the departure hook (an empty server reports; LOR answers nothing),
    after LOR's completions of the jobs blocked at the down server (a capacity, ``hold``), each to its own
    dispatcher, in order (`compiled.recovery`)."""
    assert reason(policy, **options) is None


@pytest.mark.parametrize("options", [{"loss": 0.1}, {"failures": FAILURES}, {"failures": LOSING, "loss": 0.1},
                                     {"failures": FAILURES, "loss": 0.1, "latency": LATENCY}], ids=str)
def test_jsq_push_faults_run_compiled(options: dict[str, Any]) -> None:
    """With faults each dispatcher keeps the lengths it was told, at zero latency too, and JSQ-push tells its length
    at recovery."""
    assert reason({"name": "jsq_push"}, dispatchers=2, **options) is None


def test_jsq_push_indexes_with_faults_are_bounded() -> None:
    """With faults at zero latency each of D dispatchers keeps an index of its own: D x N ids, bounded as with
    latency (one index of the true lengths serves them all without faults)."""
    data = scenario_dict({"name": "jsq_push"}, servers=900_000, dispatchers=5, jobs=100)
    data["network"] = {"loss": 0.1, "timeout": 1e-6}  # (within the run's length at N = 900,000)
    point = emulator.Scenario.from_dict(data).points()[0]
    assert "D x N = 4,500,000" in (compiled.supports(point, point.policies[0]) or "")


@pytest.mark.parametrize("options", [{"loss": 0.1}, {"failures": FAILURES}, {"failures": LOSING, "loss": 0.1},
                                     {"failures": FAILURES, "loss": 0.1, "latency": LATENCY}], ids=str)
def test_lsq_faults_run_compiled(options: dict[str, Any]) -> None:
    """LSQ's queries each refresh one estimate: at zero latency each round trip is answered at once or never (its
    timeout changes nothing), lost at a down server too; with latency its queries are lost there."""
    assert reason({"name": "lsq", "d": 2}, dispatchers=2, **options) is None


@pytest.mark.parametrize("options", [{"loss": 0.1}, {"failures": FAILURES}, {"failures": LOSING, "loss": 0.1},
                                     {"failures": FAILURES, "loss": 0.1, "latency": LATENCY}], ids=str)
def test_jbt_faults_run_compiled(options: dict[str, Any]) -> None:
    """JBT-d's update asks from its timer: at zero latency the kernel answers it at once, or decides it at its
    timeout, and the thresholds reach the servers up within that step (`compiled.policies.jbt`); with latency its
    thresholds are lost at a down server and the arrival hooks of its jobs from lists run at its recovery
    (`compiled.recovery`)."""
    for policy in ({"name": "jbt", "d": 2, "period": 2.0}, {"name": "jbt", "d": 2, "period": 2.0, "reset": True}):
        assert reason(policy, dispatchers=3, **options) is None


def test_jiq_sqd_servers_that_ask_dispatchers_fail_compiled() -> None:
    """An idle server asks only while it is up: at zero latency the replies reach it at once; with latency one that
    reaches it while it is down is lost there, and it sends no token if it is down at its decision
    (`compiled.recovery`)."""
    assert reason({"name": "jiq", "d": 2}, failures=LOSING, dispatchers=3) is None
    assert reason({"name": "jiq", "d": 2}, failures=FAILURES, loss=0.1, latency=LATENCY, dispatchers=3) is None


@pytest.mark.parametrize("failures", [None, FAILURES], ids=str)
def test_jiq_sqd_lost_messages_at_zero_latency_run_compiled(failures: dict[str, Any] | None) -> None:
    """An idle server's ask of d dispatchers is answered at once, or its timeout decides, and a server down then
    sends no token (`compiled.policies.jiq`, `compiled.faults.asked`)."""
    assert reason({"name": "jiq", "d": 2}, failures=failures, loss=0.1, dispatchers=3) is None


def test_jsq_sparse_updates_lost_at_zero_latency_run_compiled() -> None:
    """Each update draws its loss when sent and is delivered at once, as JIQ's tokens are."""
    assert reason({"name": "jsq_sparse", "period": 1.0}, loss=0.1, dispatchers=2) is None


@pytest.mark.parametrize("options", [{"loss": 0.1}, {"failures": LOSING, "dispatchers": 2},
                                     {"failures": FAILURES, "loss": 0.1, "latency": LATENCY}], ids=str)
def test_the_threshold_models_probes_run_compiled_under_faults(options: dict[str, Any]) -> None:
    """Its probes are its dispatch's round trips, one after another: at zero latency the kernel answers each at once
    and asks the next within the same step, or at the round's timeout (`faults.answered`), lost at a down server
    too."""
    assert reason({"name": "threshold", "d": 3, "threshold": 2}, **options) is None


@pytest.mark.parametrize("feedback", [{"period": 1.0}, {"feedback": "asynchronous", "rate": 0.5}], ids=str)
def test_jsq_sparse_failing_servers_run_compiled(feedback: dict[str, Any]) -> None:
    """A down server skips its turn to update, which its timer hook sees (`compiled.policies.common.server_up`)."""
    assert reason({"name": "jsq_sparse", **feedback}, failures=FAILURES, dispatchers=2) is None
    assert reason({"name": "jsq_sparse", **feedback}, failures=LOSING, loss=0.1, latency=LATENCY) is None


def test_batch_sqd_faults_run_compiled() -> None:
    """The batch's ask is a record, its query lost at a down server left to the timeout, with latency and at
    zero latency, where a timeout that decides places the batch's jobs one a step within its instant (their rows:
    the equivalence cases)."""
    batches = {"kind": "batch_poisson", "mean_batch": 3.0}
    policy = {"name": "batch_sqd", "d": 2}
    assert reason(policy, failures=FAILURES, latency=LATENCY, arrivals=batches) is None
    assert reason(policy, failures=LOSING, loss=0.1, latency=LATENCY, dispatchers=2, arrivals=batches) is None
    assert reason(policy, failures=FAILURES, arrivals=batches) is None
    assert reason(policy, loss=0.1, dispatchers=2, arrivals=batches) is None


def test_a_recovery_hands_back_the_jobs_kept_at_its_down_server_in_order_with_room_for_their_answers() -> None:
    """`recovery.keep` chains each job blocked at a down server (its slot kept) under a policy that answers one,
    and counts its answer in the most one step may send (`state.P_ROOM`: the recovery sends them all in one
    step); `recovery.missed` hands them back in the order they came, each with its dispatcher and its slot freed,
    then the jobs from lists, then none (no job left: the dispatcher -1), and the room is what it was."""
    import numpy as np

    from emulator.compiled import recovery, state
    from emulator.compiled.failing import FLAGS, KEPT, UP, Failing

    sv = np.zeros((2, 6), dtype=np.int64)
    sv[1, FLAGS] = UP  # server 0 is down, server 1 up
    sv[:, KEPT:KEPT + 2] = -1
    fail = Failing(np.array([0, 1], dtype=np.int64), sv, np.zeros((2, 2)), np.zeros((2, 2, 2)))
    P, iv = np.zeros(state.P_NP, dtype=np.int64), np.zeros(state.I_NIV, dtype=np.int64)
    P[state.P_ROOM], iv[state.I_FREE] = 10, -1
    j_next, j_dispatcher = np.full(8, -1, dtype=np.int32), np.array([0, 0, 2, 0, 0, 3, 0, 1], dtype=np.int32)
    assert [recovery.keep(P, fail, j_next, 0, slot) for slot in (5, 2, 7)] == [True, True, True]
    assert not recovery.keep(P, fail, j_next, 1, 3)  # up: its hook runs now
    assert P[state.P_ROOM] == 13
    recovery.hold(fail, 0, True)
    handed = []
    while True:
        what = recovery.missed(P, iv, fail, j_next, j_dispatcher, 0)
        handed.append((what, int(iv[state.I_ORIGIN])))
        if not what:
            break
    blocked, listed = recovery.BLOCKED, recovery.LISTED
    assert handed[:3] == [(blocked, 3), (blocked, 2), (blocked, 1)]
    assert [what for what, _ in handed[3:]] == [listed, 0] and handed[-1][1] == -1
    assert P[state.P_ROOM] == 10
    assert (iv[state.I_FREE], j_next[7], j_next[2]) == (7, 2, 5)  # the slots freed, the last first
    fail.mode[1] = 0  # a policy that answers no blocked job: none is kept
    assert not recovery.keep(P, fail, j_next, 0, 4)
