"""Batch sampling (`batch_sqd`): its exact limits, its message count, its batches and its refusals."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.intervals import check, column, replicate
from helpers.scenarios import traced, write_trace

import analysis.theory as theory
import emulator
from emulator.errors import ScenarioError
from emulator.policies.batch_sqd import placement


def fixed(k: int) -> dict[str, Any]:
    """Batch-Poisson arrivals with every batch exactly k jobs."""
    return {"kind": "batch_poisson", "mean_batch": k, "batch": "deterministic"}


def batches(trace: Any) -> list[list[Any]]:
    """The jobs that reached a dispatcher, grouped by arrival time (a batch's jobs share it)."""
    jobs = sorted((job for _, _, job in trace.received), key=lambda job: job.id)
    return [list(group) for _, group in itertools.groupby(jobs, key=lambda job: job.arrival)]


@pytest.mark.parametrize("fill", ["shortest", "water"])
@pytest.mark.parametrize("latency", [None, {"kind": "exponential", "mean": 0.1}])
def test_lone_jobs_are_sqd_decision_for_decision(fill: str, latency: Any) -> None:
    """k = 1 (Poisson arrivals): the row of SQ(d), floats and messages equal, with and without latency."""
    options = {"servers": 12, "jobs": 3000, "seed": 4, "load": 0.9, "engine": "simpy", "latency": latency}
    for d in (2, 3):
        batch = emulator.simulate("batch_sqd", d=d, fill=fill, **options)
        sqd = emulator.simulate("sqd", d=d, **options)
        differ = {key: (batch[key], sqd[key]) for key in sqd if key not in ("wall_seconds", "policy", "policy_name")
                  and repr(batch[key]) != repr(sqd[key])}
        assert not differ


@pytest.mark.parametrize("k, d, n", [(4, 2, 20), (4, 2, 8), (5, 3, 10), (3, 1, 3)])
def test_messages_per_job_are_two_min_n_dk_over_k(k: int, d: int, n: int) -> None:
    """Every batch of k asks min(N, dk) servers, a query and a reply each: per job 2 min(N, dk) / k, by kind.

    A batch's messages count in the window when they are sent, after its jobs arrived: warm-up and window
    of whole batches make the count exact."""
    row = emulator.simulate("batch_sqd", d=d, servers=n, jobs=1000 * k, warmup_jobs=100 * k, arrivals=fixed(k),
                            seed=2, engine="simpy")
    assert row["messages_per_job_query"] == row["messages_per_job_reply"] == min(n, d * k) / k
    assert row["messages_per_job"] == 2 * min(n, d * k) / k


@pytest.mark.parametrize("fill", ["shortest", "water"])
def test_a_batch_asks_once_and_goes_to_distinct_or_filled_servers(fill: str) -> None:
    """One ask of min(N, dk) distinct servers per batch; `shortest`: the k shortest of them, one job each;
    `water`: each job to a sampled server shortest counting the batch's jobs placed before it."""
    k, d, n = 3, 2, 10
    trace = traced({"name": "batch_sqd", "d": d, "fill": fill}, servers=n, jobs=600, arrivals=fixed(k),
                   service={"kind": "exponential", "mean": 1}, load=0.95, seed=7)
    trace.run()
    asks = {round(t, 12): (ids, replies) for t, ids, replies in trace.asks}
    sent = {job_id: sid for _, _, job_id, sid, _ in trace.sent}
    assert len(trace.asks) == len(batches(trace))
    for batch in batches(trace):
        ids, replies = asks[round(batch[0].arrival, 12)]
        assert len(set(ids)) == len(ids) == min(n, d * k)
        targets = [sent[job.id] for job in batch]
        length = dict(zip(ids, replies, strict=True))
        if fill == "shortest":
            assert len(set(targets)) == len(batch)
            others = [length[sid] for sid in ids if sid not in targets]
            assert not others or max(length[sid] for sid in targets) <= min(others)
        else:
            placed = dict.fromkeys(ids, 0)
            for sid in targets:
                assert length[sid] + placed[sid] == min(length[s] + placed[s] for s in ids)
                placed[sid] += 1


def test_water_filling_over_every_server_is_jsq_for_the_batch() -> None:
    """dk >= N with fill: water: each job of a batch joins a server that is shortest of all, counting the
    batch's jobs sent before it (the lengths the trace records at each send, zero latency)."""
    trace = traced({"name": "batch_sqd", "d": 2, "fill": "water"}, servers=6, jobs=900, arrivals=fixed(3),
                   service={"kind": "exponential", "mean": 1}, load=0.9, seed=3)
    trace.run()
    assert trace.sent
    for _, _, _, sid, lengths in trace.sent:
        assert lengths[sid] == min(lengths)


def test_a_batch_goes_to_one_dispatcher() -> None:
    """With several dispatchers, every job of a batch reaches the same one (one split draw per batch)."""
    trace = traced({"name": "batch_sqd", "d": 2}, servers=10, dispatchers=3, jobs=600, arrivals=fixed(4),
                   service={"kind": "exponential", "mean": 1}, seed=5)
    trace.run()
    where = {job.id: dispatcher for _, dispatcher, job in trace.received}
    groups = batches(trace)
    assert all(len({where[job.id] for job in batch}) == 1 for batch in groups)
    assert len({where[batch[0].id] for batch in groups}) == 3


def test_placement_examples() -> None:
    """`placement` by hand: the k shortest one each (ties by the draws), water filling, more jobs than servers."""
    assert placement([3, 1, 2, 1], 2, False, lambda: 0.9) == [1, 3]  # the tie keeps the first at u = 0.9
    assert placement([3, 1, 2, 1], 2, False, lambda: 0.1) == [3, 1]  # ... and takes the second at u = 0.1
    assert placement([0, 5], 3, True, lambda: 0.9) == [0, 0, 0]
    assert placement([0, 5], 3, False, lambda: 0.9) == [0, 1, 0]


def test_slotted_time_is_refused_in_one_line() -> None:
    with pytest.raises(ScenarioError, match=r"^system\.time: expected continuous with policies\.0 \(batch_sqd"):
        emulator.simulate("batch_sqd", servers=4, jobs=100, time="slotted")


# ---------------------------------------------------------------------------------------
# The mean field of fill: shortest (`analysis.theory.batch`)
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("lam", [0.5, 0.9, 0.99])
@pytest.mark.parametrize("d", [1, 2, 5])
def test_mean_field_limits_are_sqd_and_mm1(lam: float, d: int) -> None:
    """k = 1 is SQ(d)'s closed form; d = 1 (k samples for k jobs, one each) is random routing, M/M/1."""
    np.testing.assert_allclose(theory.batch_tail(lam, d, 1), theory.sqd_tail(lam, d), rtol=1e-12, atol=1e-16)
    for k in (1, 3, 10):
        assert theory.batch_response(lam, 1, k) == pytest.approx(1 / (1 - lam), rel=1e-9)


@pytest.mark.parametrize(("lam", "d", "k"), [(0.9, 2, 4), (0.8, 3, 2), (0.95, 2, 8)])
def test_mean_field_recursion_is_the_fixed_point_of_its_ode(lam: float, d: int, k: int) -> None:
    """The recursion against the ODE integrated from empty servers, its drift from E[min(Bin(dk, 1 - s), k)]
    summed over the other variable: a second computation of the same fixed point."""
    from scipy.integrate import solve_ivp
    from scipy.stats import binom

    levels = 40
    below = np.arange(d * k + 1)

    def served(s: np.ndarray) -> np.ndarray:
        """E[min(X, k)], X ~ Bin(dk, 1 - s): the batch's jobs that go to sampled servers below each level."""
        # (clipped: the integrator may step a level a round-off outside [0, 1])
        p = 1 - np.clip(s, 0, 1)[:, None]
        return (np.minimum(below, k) * binom.pmf(below, d * k, p)).sum(axis=1)

    def drift(_t: float, s: np.ndarray) -> np.ndarray:
        full = np.concatenate([[1.0], s, [0.0]])  # s_0 = 1, s_{levels+1} = 0
        g = served(full)
        return lam / k * (g[1:-1] - g[:-2]) - (full[1:-1] - full[2:])

    solution = solve_ivp(drift, (0, 2000), np.zeros(levels), method="LSODA", rtol=1e-10, atol=1e-13)
    tail = theory.batch_tail(lam, d, k, tol=1e-13)[1:]
    np.testing.assert_allclose(solution.y[: len(tail), -1], tail, atol=1e-7)


def test_large_batches_need_slightly_more_than_one_sample_per_job() -> None:
    """With d (1 - λ) > 1 the mean response falls towards the service time as k grows; below, it does not."""
    above = [theory.batch_response(0.9, 12, k) for k in (1, 4, 16, 64, 256)]
    assert all(b < a for a, b in itertools.pairwise(above)) and above[-1] < 1.001
    below = theory.batch_response(0.9, 2, 256)
    assert below > 2.2


@pytest.mark.slow
def test_large_n_matches_the_mean_field() -> None:
    """N = 1000, load 0.8, d = 2, batches of 4: the mean field's 1.7228 (its k = 1, SQ(2), is 1.4405).

    Systematic term: SQ(2)'s rough finite-N excess (`sqd_finite_n_correction`), taken as reference + c
    with allowance c, as for SQ(2). Warm-up 40,000 jobs = 50 time units, several relaxation times at 0.8.
    """
    lam, n = 0.8, 1000
    rows = replicate(300, 6, policy="batch_sqd", d=2, servers=n, load=lam, jobs=100_000, warmup_jobs=40_000,
                     arrivals=fixed(4), engine="simpy")
    correction = theory.sqd_finite_n_correction(lam, n)
    check("batch_sqd d=2 k=4 N=1000", column(rows, "mean_response"), theory.batch_response(lam, 2, 4) + correction,
          correction)


def same_rows(case: dict[str, Any]) -> None:
    """The case's row on each engine: identical but for the engine and its time, the kernel running it."""
    options = {"servers": 12, "jobs": 2000, "seed": 3, "response_bins": True, **case}
    simpy = emulator.simulate("batch_sqd", engine="simpy", **options)
    compiled = emulator.simulate("batch_sqd", engine="compiled", **options)
    assert compiled["engine"] == "compiled"
    differ = [key for key in simpy if key not in ("wall_seconds", "engine") and repr(simpy[key]) != repr(compiled[key])]
    assert not differ, (case, differ)


def test_the_compiled_engine_gives_simpys_rows() -> None:
    """Zero latency: both fills, fixed and geometric batches, several dispatchers, pools with capacity, and
    more jobs per batch than servers (samples by a partial shuffle): identical rows, the kernel running each."""
    cases = [{"arrivals": fixed(3)}, {"arrivals": fixed(3), "fill": "water"},
             {"arrivals": {"kind": "batch_poisson", "mean_batch": 3.0}, "dispatchers": 3, "servers": 10},
             {"arrivals": {"kind": "batch_poisson", "mean_batch": 2.0}, "discipline": "pool", "capacity": 4,
              "servers": 5, "occupancy": True},
             {"arrivals": fixed(8), "fill": "water", "d": 1, "servers": 4, "capacity": 3, "load": 0.95}]
    for case in cases:
        same_rows(case)


def test_latency_and_lost_messages_give_simpys_rows() -> None:
    """With latency a batch's jobs wait for its one ask's replies (with lost messages, for its timeout at most),
    then go out together: identical rows, the kernel running each. Batches of 300 jobs at 4 servers (shortest in
    rounds; each decision sends more jobs than a step's room for messages holds at first), water on missing
    replies, several dispatchers."""
    latency, lost = {"kind": "exponential", "mean": 0.05}, {"loss": 0.2, "timeout": 0.08}
    cases = [{"arrivals": fixed(300), "servers": 4, "jobs": 3000, "latency": latency},
             {"arrivals": fixed(300), "fill": "water", "servers": 4, "jobs": 3000, "latency": latency, **lost},
             {"arrivals": {"kind": "batch_poisson", "mean_batch": 3.0}, "fill": "water", "dispatchers": 3,
              "latency": {"kind": "deterministic", "mean": 0.04}, **lost}]
    for case in cases:
        same_rows(case)


def test_a_trace_of_batches_runs_compiled_to_its_end(tmp_path: Path) -> None:
    """Trace arrivals in batches (ties), the last batch of 3 jobs: it goes out whole before the trace's end closes
    the window (every row measured), as `BatchSource` hands it over before `Recorder.exhausted`; or the window
    closes at a job within that batch. Zero latency and latency with lost messages: identical rows, compiled."""
    rows = [(0.0, 1.0), (0.0, 0.5), (0.4, 2.0), (0.4, 0.1), (0.4, 0.6), (1.5, 1.0)]
    rows += [(2.0 + 0.45 * (i // 3), 0.3 + (i % 5) * 0.4) for i in range(150)]
    rows += [(80.0, 0.9), (80.0, 2.5), (80.0, 0.2)]
    path = write_trace(tmp_path, rows)
    latency, lost = {"kind": "exponential", "mean": 0.05}, {"loss": 0.2, "timeout": 0.08}
    for jobs, warmup in ((len(rows), 0), (len(rows) - 2, 0), (len(rows) - 10, 4)):
        for case in ({"dispatchers": 2}, {"fill": "water", "servers": 3}, {"latency": latency, **lost}):
            same_rows({"servers": 4, "arrivals": {"kind": "trace", "path": path}, "jobs": jobs, "warmup_jobs": warmup,
                       **case})
