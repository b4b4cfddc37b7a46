"""Late binding (Sparrow): its messages per job, its round trips, and what it refuses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.scenarios import make_point, trace_arrivals, traced

from emulator.errors import ScenarioError
from emulator.measure.messages import Kind


def _rows(seed: int, jobs: int, batch: bool) -> list[tuple[float, float]]:
    """Poisson arrivals at rate 3 (in pairs at one instant when ``batch``), exponential sizes."""
    rng = np.random.default_rng(seed)
    times = np.cumsum(rng.exponential(1 / 3, jobs))
    if batch:
        times[1::2] = times[::2][: len(times[1::2])]
    return [(float(t), float(s)) for t, s in zip(times, rng.exponential(1.0, jobs), strict=True)]


@pytest.mark.parametrize("options", [
    {"d": 1}, {"d": 2}, {"d": 4}, {"d": 2, "dispatchers": 3},
    {"d": 3, "speeds": [0.5, 1.0, 2.0, 1.5]}, {"d": 2, "batch": True},
], ids=["d1", "d2", "d4-all", "dispatchers-3", "speeds", "batch"])
def test_every_job_costs_d_reservations_d_requests_and_d_minus_1_cancels(
        tmp_path: Path, options: dict[str, Any]) -> None:
    # Zero latency and a finite trace run until every job has left: by then every
    # reservation has reached the head of its idle server and asked, so the totals of
    # the whole run are exact: d, d and d - 1 per job, and one transfer each.
    options = dict(options)
    d = options.pop("d")
    rows = _rows(5, 2000, options.pop("batch", False))
    trace = traced({"name": "late_binding", "d": d}, servers=4, **trace_arrivals(tmp_path, rows), **options)
    trace.run()
    recorder = trace.model.recorder
    jobs = len(rows)
    assert recorder.counts[Kind.RESERVATION] == d * jobs
    assert recorder.counts[Kind.REQUEST] == d * jobs
    assert recorder.counts[Kind.CANCEL] == (d - 1) * jobs
    assert recorder.transfers == jobs
    assert sum(recorder.counts) == (3 * d - 1) * jobs  # no other kind


@pytest.mark.parametrize("d, servers", [(1, 1), (2, 2)])
def test_asking_for_a_job_takes_a_round_trip_while_the_server_waits_idle(
        tmp_path: Path, d: int, servers: int) -> None:
    # Deterministic latency L, two unit jobs at time 0 and a third long after. Job 1: its
    # reservation arrives at L, the request at 2L, the job at 3L; it leaves at 3L + 1.
    # With one server, job 2's reservation then asks: request at 4L + 1, job at 5L + 1,
    # it leaves at 5L + 2 (the server idle for 2L between jobs). With two servers and
    # d = 2, the second server's request for job 1 is cancelled and it asks for job 2
    # as the first did: 3L + 1 after 2L of cancel round trip, 5L + 1. Job 3 finds every
    # server idle: 3L + 1.
    latency = 0.25
    rows = [(0.0, 1.0), (0.0, 1.0), (100.0, 1.0)]
    trace = traced({"name": "late_binding", "d": d}, servers=servers, latency=latency,
                   **trace_arrivals(tmp_path, rows))
    trace.run()
    responses = {job.id: left - job.arrival for left, _, job in trace.left}
    second = 5 * latency + (2.0 if servers == 1 else 1.0)
    assert responses == pytest.approx({0: 3 * latency + 1, 1: second, 2: 3 * latency + 1})
    assert trace.metrics["mean_wait"] == 0.0  # a job waits at its dispatcher, never at a server


@pytest.mark.parametrize("options, key", [
    ({"discipline": "pool", "capacity": 2}, "policies.0.name: expected FIFO servers in continuous time"),
    ({"d": 5}, "policies.0.d: expected at most N=4 servers"),
], ids=["pool", "d-over-n"])
def test_refuses_what_it_cannot_run_in_one_line(options: dict[str, Any], key: str) -> None:
    options = dict(options)
    policy = {"name": "late_binding", **({"d": options.pop("d")} if "d" in options else {})}
    with pytest.raises(ScenarioError) as refused:
        make_point(policy, servers=4, **options)
    assert str(refused.value).startswith(key) and "\n" not in str(refused.value)


@pytest.mark.parametrize("network, key", [
    ({"loss": 0.1, "timeout": 1.0}, "policies.0.name: expected no faults (network.loss: 0"),
    ({"time": "slotted"}, "policies.0.name: expected FIFO servers in continuous time"),
    ({"failures": {"up": {"kind": "exponential", "mean": 100}, "down": {"kind": "exponential", "mean": 1}},
      "timeout": 1.0}, "policies.0.name: expected no faults (network.loss: 0, no system.failures) for late binding, "
                       "got system.failures"),
], ids=["loss", "slotted", "failures"])
def test_refuses_faults_and_slotted_time_in_one_line(network: dict[str, Any], key: str) -> None:
    from emulator.api import simulate

    with pytest.raises(ScenarioError) as refused:
        simulate("late_binding", servers=4, jobs=10, engine="simpy", **network)
    assert str(refused.value).startswith(key) and "\n" not in str(refused.value)


def test_theory_rows_are_its_exact_ends() -> None:
    # d = 1: random routing (M/M/1); d = N: one central queue (Erlang C); between them no
    # closed form, the messages only. Queue lengths count jobs at servers: the load.
    import emulator
    from analysis import theory
    from analysis.references import references

    point = emulator.Scenario.from_dict({
        "system": {"servers": 10}, "workload": {"load": 0.9},
        "policies": [{"name": "late_binding", "d": d} for d in (1, 3, 10)]}).points()[0]
    found = {p.label: {m: r.value for m, r in references(point, p).items()} for p in point.policies}
    assert found == {
        "LB(1)": {"mean_response": pytest.approx(theory.mm1_response(0.9)), "messages_per_job": 2.0,
                  "mean_queue_length": pytest.approx(0.9)},
        "LB(3)": {"messages_per_job": 8.0},
        "LB(10)": {"mean_response": pytest.approx(theory.mmn_response(10, 0.9)), "messages_per_job": 29.0,
                   "mean_queue_length": pytest.approx(0.9)}}


def test_the_reservation_pool_grows_keeping_every_record() -> None:
    # The compiled engine's pool (emulator/compiled/binding.py): fill it, grow it, and every record in
    # use is where it was while the free list holds exactly the others, each once.
    from emulator.compiled import binding

    pool = binding.pool(8)
    taken = [binding.take(pool) for _ in range(6)]
    pool[taken, 2] = np.arange(6) + 100
    binding.give(pool, taken[2])
    pool = binding.grown(pool)
    free, r = [], pool[0, binding.FREE]
    while r >= 0:
        free.append(int(r))
        r = pool[r, 0]
    in_use = [r for r in taken if r != taken[2]]
    assert sorted(free + in_use) == list(range(1, 17)) and len(free) == len(set(free)) == 11
    assert pool[0, binding.USED] == 5 and list(pool[in_use, 2]) == [100, 101, 103, 104, 105]
    assert binding.room(pool, 11) and not binding.room(pool, 12)


@pytest.mark.parametrize("latency", [None, {"kind": "exponential", "mean": 0.05}], ids=["zero", "exp"])
def test_compiled_rows_equal_simpy_where_reservations_pile_up(latency: dict[str, Any] | None) -> None:
    # Near saturation every busy server holds many reservations: the kernel's pool grows from
    # its first 72 records several times over, and the rows stay SimPy's.
    from emulator.api import simulate

    rows = [simulate("late_binding", d=3, servers=4, load=0.99, jobs=3000, seed=7, latency=latency, engine=engine)
            for engine in ("simpy", "compiled")]
    assert [row.pop("engine") for row in rows] == ["simpy", "compiled"]
    for row in rows:
        row.pop("wall_seconds")
    assert repr(rows[0]) == repr(rows[1])
