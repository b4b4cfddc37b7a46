"""Redundancy-d: copies, cancels, wasted work, the systems it refuses, and its mean field."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from helpers.intervals import check, column, replicate
from helpers.scenarios import trace_arrivals, traced

import analysis.theory as theory
import emulator
from analysis.references import bound
from emulator.errors import ScenarioError
from emulator.measure.recorder import METRICS
from emulator.model.copies import SERVING, WAITING

EXP = {"arrivals": {"kind": "poisson"}, "service": {"kind": "exponential", "mean": 1}}


def _started_jobs(trace: Any) -> set[int]:
    """The jobs at least one copy of which started service."""
    copies = [copy for _, _, copy in trace.left] + [copy for _, copy in trace.withdrawn]
    copies += [copy for server in trace.model.servers for copy in server.queue if copy.state in (WAITING, SERVING)]
    return {copy.id for copy in copies if hasattr(copy, "start")}


@pytest.mark.parametrize("cancel", ["completion", "start"])
@pytest.mark.parametrize("latency", [None, {"kind": "exponential", "mean": 0.3}])
def test_cancels_per_job_are_d_minus_1(cancel: str, latency: Any) -> None:
    """Each job's first completion (or start) sends exactly d - 1 cancels, and nothing else is sent."""
    d = 3
    trace = traced({"name": "redundancy", "d": d, "cancel": cancel}, seed=5, servers=6, jobs=2000, warmup=100,
                   load=0.8, latency=latency, **EXP)
    trace.run()
    deciding = {copy.id for _, _, copy in trace.left} if cancel == "completion" else _started_jobs(trace)
    assert trace.count("cancel") == (d - 1) * len(deciding) > 0
    assert {kind for _, kind, _ in trace.messages} == {"cancel"}
    assert trace.model.recorder.transfers == d * len(trace.jobs)  # the extra copies are transfers


def test_wasted_work_is_the_service_copies_got_without_finishing_their_job() -> None:
    """The column against the trace: each withdrawn measured copy's time in service times its server's speed."""
    trace = traced({"name": "redundancy", "d": 2}, seed=3, servers=5, jobs=2000, warmup=100, load=0.7,
                   latency={"kind": "exponential", "mean": 0.5}, speeds=[1.0, 1.0, 2.0, 2.0, 0.5], **EXP)
    metrics = trace.run()
    speed = {server.id: server.speed for server in trace.model.servers}
    wasted = sum((now - copy.start) * speed[copy.server] for now, copy in trace.withdrawn
                 if copy.measured and hasattr(copy, "start"))
    assert trace.dropped and trace.withdrawn  # cancels came before copies, and after copies had started
    assert metrics["wasted_work_per_job"] * metrics["jobs"] == pytest.approx(wasted, rel=1e-12)
    assert metrics["copies_per_job"] == 2.0


def test_a_copy_that_finishes_or_is_served_before_its_cancel_arrives_wastes_that_work(tmp_path: Path) -> None:
    """One job of size 2, identical copies on servers of speeds 1 and 2, latency 0.5.

    Both copies arrive at 0.5; the fast one finishes at 0.5 + 2/2 = 1.5, its cancel reaches the
    slow server at 2.0, which has served its copy 1.5 by then. With equal speeds both copies
    finish at 2.5, the second before its cancel comes: all its work, 2, is wasted.
    """
    rows = [(0.0, 2.0), (10.0, 2.0)]  # the second closes the window
    for speeds, response, wasted in (([1.0, 2.0], 1.5, 1.5), ([1.0, 1.0], 2.5, 2.0)):
        trace = traced({"name": "redundancy", "d": 2, "copies": "identical"}, servers=2, speeds=speeds,
                       latency=0.5, **trace_arrivals(tmp_path, rows, jobs=1))
        metrics = trace.run()
        assert metrics["mean_response"] == response
        assert metrics["wasted_work_per_job"] == wasted
        assert metrics["messages_per_job_cancel"] == 1.0


def test_cancel_on_start_serves_one_copy_per_job_without_latency() -> None:
    """Without latency the first start cancels the other copies at once: none is ever served, none wasted."""
    trace = traced({"name": "redundancy", "d": 3, "cancel": "start"}, seed=2, servers=6, jobs=2000, load=0.9,
                   **EXP)
    metrics = trace.run()
    assert metrics["wasted_work_per_job"] == 0.0
    assert not [copy for _, copy in trace.withdrawn if hasattr(copy, "start")]


def test_one_copy_is_random_routing() -> None:
    """d = 1 draws what random routing draws, in the same order: the same row."""
    options: dict[str, Any] = dict(servers=10, load=0.8, jobs=3000, seed=4, engine="simpy",
                                   latency={"kind": "exponential", "mean": 0.2})
    red = emulator.simulate("redundancy", d=1, **options)
    rnd = emulator.simulate("random", **options)
    columns = [key for key in METRICS if key != "wall_seconds"]
    assert {key: (red[key], rnd[key]) for key in columns if repr(red[key]) != repr(rnd[key])} == {}


@pytest.mark.parametrize("options, key", [
    ({"discipline": "pool"}, "system.discipline: fifo"),
    ({"capacity": 3}, "system.capacity: none"),
    ({"time": "slotted"}, "system.time: continuous"),
    ({"failures": {"up": {"kind": "exponential", "mean": 100}, "down": {"kind": "exponential", "mean": 1}},
      "timeout": 1.0}, "system.failures: none"),
])
def test_systems_without_fifo_queues_of_copies_are_refused_in_one_line(options: dict[str, Any], key: str) -> None:
    with pytest.raises(ScenarioError) as error:
        emulator.simulate("redundancy", servers=4, load=0.5, jobs=100, engine="simpy", **options)
    message = str(error.value)
    assert message.startswith(f"policies.0.name: redundancy expects {key}") and "\n" not in message


@pytest.mark.parametrize("lam", [0.3, 0.8, 0.99])
@pytest.mark.parametrize("d", [1, 2, 3, 50])
def test_mean_field_closed_form_agrees_with_its_series_and_its_tail(lam: float, d: int) -> None:
    value = theory.redundancy_response(lam, d)
    assert value == pytest.approx(theory.redundancy_response_series(lam, d), rel=1e-12)
    assert value == pytest.approx(theory.redundancy_response_quadrature(lam, d), rel=1e-9)
    if d == 1:
        assert value == pytest.approx(theory.mm1_response(lam), rel=1e-12)
    else:  # more copies, less delay, and never below the mean of the fastest of d exp(1) sizes
        assert 1.0 / d < value < theory.redundancy_response(lam, d - 1)
    assert not math.isnan(value)


@pytest.mark.slow
@pytest.mark.parametrize("lam, jobs", [(0.5, 30_000), (0.8, 60_000)])
def test_mean_response_meets_the_mean_field(lam: float, jobs: int) -> None:
    """N = 200, d = 2, independent exponential copies: the mean field within a 95% interval (Bonferroni over 2).

    At 0.8 the replications' means spread widely over 30,000 jobs (1.22 to 1.29): longer runs, not a
    wider tolerance. Four of 100,000 jobs at 0.8 gave 1.2705 (theory 1.2647): N = 200 is about 0.5% above.
    """
    rows = replicate(11, 8, policy="redundancy", d=2, servers=200, load=lam, jobs=jobs, warmup_jobs=jobs // 5,
                     engine="compiled", **EXP)  # (SimPy's rows: the redundancy cases of tests/test_compiled.py)
    check(f"Red(2), N=200, load {lam}", column(rows, "mean_response", family=2), theory.redundancy_response(lam, 2))


def test_no_single_copy_lower_bound_is_shown_beside_it() -> None:
    """M/M/N bounds dispatchers that serve each job once; Red(3) at load 0.3 is below it (0.35 against 1)."""
    assert theory.redundancy_response(0.3, 3) < theory.mmn_response(100, 0.3)
    point = emulator.Scenario.from_dict({"system": {"servers": 100}, "workload": {"load": 0.3},
                                         "policies": [{"name": "redundancy", "d": 3}, {"name": "jsq"}]}).points()[0]
    assert bound(point) is None


@pytest.mark.parametrize("options", [
    # Zero latency: cancels at the first completion, several dispatchers, listed speeds, occupancy.
    {"d": 3, "dispatchers": 2, "speeds": [1.0, 2.0, 0.5, 1.5, 1.0, 1.0], "occupancy": True},
    # Batches: a batch's jobs are dispatched in one step, each with its copies, as the job slots run out.
    {"d": 2, "servers": 20, "load": 0.9, "jobs": 4000, "seed": 7,
     "arrivals": {"kind": "batch_poisson", "mean_batch": 2.0}, "service": {"kind": "erlang", "k": 3}},
    # Cancels at the first start, identical copies, d > N / 4 (a partial shuffle), lost cancels at zero latency.
    {"d": 5, "cancel": "start", "copies": "identical", "loss": 0.2, "timeout": 0.1},
    # With latency a cancel may come before its copy (dropped), or stop a copy in service (wasted work).
    {"d": 2, "cancel": "start", "latency": {"kind": "exponential", "mean": 0.3}},
    {"d": 3, "latency": {"kind": "deterministic", "mean": 0.2}, "loss": 0.1, "timeout": 0.5},
])
def test_the_compiled_engine_gives_simpys_rows(options: dict[str, Any]) -> None:
    """Copies, cancels and wasted work come out of the kernel as SimPy computes them (floats by repr)."""
    common: dict[str, Any] = {"servers": 6, "load": 0.8, "jobs": 3000, "seed": 9, "response_bins": True, **options}
    simpy = emulator.simulate("redundancy", engine="simpy", **common)
    kernel = emulator.simulate("redundancy", engine="compiled", **common)
    assert kernel["engine"] == "compiled"
    assert simpy["copies_per_job"] == options["d"] and simpy["wasted_work_per_job"] >= 0.0
    columns = [key for key in simpy if key not in ("wall_seconds", "engine")]
    assert {key: (simpy[key], kernel[key]) for key in columns if repr(simpy[key]) != repr(kernel[key])} == {}


def test_auto_weighs_each_extra_copy_and_runs_seconds_of_simpy_compiled() -> None:
    """Each extra copy is a job more for SimPy, and its cancel: Red(2) at N = 100 took it 13.7 us a job (Random
    4-5 us), so 100,000 jobs are about 1.5 s of SimPy, which `run.engine: auto` runs compiled; 10,000 stay."""
    from helpers.scenarios import make_point

    from emulator.experiment.runner import choose_engine

    long, short = (make_point({"name": "redundancy", "d": 2}, servers=100, jobs=jobs, load=0.9)
                   for jobs in (100_000, 10_000))
    assert choose_engine(long, long.policies[0]) == "compiled"
    assert choose_engine(short, short.policies[0]) == "simpy"
