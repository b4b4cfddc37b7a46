"""Processor sharing (``system.discipline: ps``): exact event-driven servers on both engines.

Hand-computed runs on one server check the bookkeeping exactly (binary fractions, so
every float is exact); the statistical checks, against `analysis.theory` with the
rules of ``tests/test_theory.py``, check that the servers share as processor sharing
does: M/G/1-PS responses that depend on the size law through its mean only, and JSQ
and SQ(2) with exponential sizes, whose queue lengths evolve as under FIFO.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.intervals import check, column, replicate
from helpers.scenarios import write_trace

import analysis.theory as theory
import emulator
from analysis.references import references
from emulator.compiled import build
from emulator.errors import ScenarioError

# Job A (size 2) at 0, job B (size 1) at 0.5, job C (size 1) at 10, on one server.
ROWS = [(0.0, 2.0), (0.5, 1.0), (10.0, 1.0)]
SHARED = [
    # Speed 1: A alone gets 0.5 of work by 0.5; then each gets 1/2: B's 1 takes until 2.5,
    # and A's last 0.5 alone until 3. Responses 3, 2, 1; A and B lose 1 each to sharing.
    pytest.param(1.0, {"mean_response": 2.0, "mean_wait": 2 / 3, "prob_wait": 2 / 3}, id="speed-1"),
    # Speed 2: A alone gets 1 by 0.5; then both need 1 at rate 1: they finish together at
    # 1.5 (a tie of virtual finishes, A first). Responses 1.5, 1, 0.5; each loses 0.5.
    pytest.param(2.0, {"mean_response": 1.0, "mean_wait": 1 / 3, "prob_wait": 2 / 3}, id="speed-2"),
]


@pytest.mark.parametrize(("speed", "expected"), SHARED)
def test_a_ps_server_shares_its_speed_equally(engine: str, tmp_path: Path, speed: float,
                                              expected: dict[str, float]) -> None:
    """The times computed by hand; mean_wait is the time lost to sharing, and C, alone, loses none."""
    row = emulator.simulate("random", servers=1, discipline="ps", speeds=[speed], jobs=len(ROWS), warmup_jobs=0,
                            arrivals={"kind": "trace", "path": write_trace(tmp_path, ROWS)}, engine=engine)
    assert row["engine"] == engine
    assert {key: row[key] for key in expected} == expected


def test_a_lone_job_leaves_after_its_size_over_the_speed(engine: str) -> None:
    """At load 0.01 most jobs find the server idle and leave alone: they lose exactly nothing,
    and those that shared lose something (prob_wait counts them), as few as theory says:
    P(another job comes during one's stay or was there) is about 2 x load."""
    row = emulator.simulate("random", servers=1, discipline="ps", load=0.01, jobs=4000, seed=3, engine=engine,
                            service="exponential", speeds=[2.0])
    assert 0.0 < row["prob_wait"] < 0.05
    assert 0.0 < row["mean_wait"] < row["mean_response"]


def test_only_ps_kernels_carry_processor_sharing() -> None:
    """The flag is a constant of each kernel: FIFO and pool kernels compile without the PS code."""
    rest = (False,) * (len(build.FEATURES["kernel"]) - 3)
    for ps in (False, True):
        text = build.source("kernel", "emulator.compiled.policies.jsq", (False, False, ps, *rest))
        assert f"    ps = {ps}  # fixed for this kernel" in text


@pytest.mark.parametrize(("options", "message"), [
    ({"time": "slotted"}, "system.discipline: expected fifo in slotted time, got 'ps'"),
    ({"load": 1.0}, "workload.load: expected < 1 for single servers (FIFO or PS) without capacity "
                    "(or allow_unstable: true), got 1"),
])
def test_what_ps_servers_cannot_run_is_refused_in_one_line(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError) as refused:
        emulator.simulate("jsq", servers=4, discipline="ps", jobs=100, **options)
    assert str(refused.value) == message


def test_ps_with_capacity_blocks_as_fifo_does(engine: str) -> None:
    """Blocking depends on the lengths only: with exponential sizes, the same law as FIFO's M/M/1/K."""
    rows = replicate(40, 4, policy="random", servers=50, load=0.9, capacity=3, jobs=40_000, discipline="ps")
    check("random, PS, capacity 3: blocking", column(rows, "blocked_fraction"), theory.mm1k(0.9, 3)["blocking"])


def test_tables_give_ps_its_theory_rows() -> None:
    """Random routing: M/G/1-PS whatever the size law (FIFO's Pollaczek-Khinchine would be 5.667 for
    these sizes); SQ(2) with exponential sizes: FIFO's mean field; other laws: none for SQ(2)."""
    def rows(service: dict[str, Any]) -> list[dict[str, Any]]:
        scenario = emulator.Scenario.from_dict({
            "system": {"servers": 100, "discipline": "ps"}, "workload": {"load": 0.7, "service": service},
            "policies": [{"name": "random"}, {"name": "sqd", "d": 2}]})
        point = scenario.points()[0]
        return [{key: (ref.value, ref.label) for key, ref in references(point, policy).items()}
                for policy in point.policies]

    random, sqd = rows({"kind": "hyperexponential", "scv": 3})
    assert random["mean_response"] == (theory.mg1_ps_response(0.7), "M/G/1-PS, exact")
    assert sqd == {}
    random, sqd = rows({"kind": "exponential"})
    assert sqd["mean_response"] == (theory.sqd_response(0.7, 2), "mean field, N → ∞")


# ---------------------------------------------------------------------------------------
# Random routing: every server is an M/G/1-PS queue, E[R] = E[S] / (1 - rho) for any size law
# ---------------------------------------------------------------------------------------
# N = 100 servers at load 0.5, 100,000 jobs (warm-up 10%: 200 time units, against a relaxation
# time of about 1/(1 - sqrt(0.5))^2 = 12 for M/M/1). Hyperexponential sizes of scv 3 would
# give 3.0 at FIFO servers (Pollaczek-Khinchine); at PS servers they give the 2.0 of
# exponential ones: the mean response depends on the size law through its mean only.
# (Exponential sizes: `test_jsq_and_sq2_with_ps_match_the_fifo_exact_chain`; the time lost
# to sharing, the response less the size job by job: `test_a_ps_server_shares_its_speed_equally`.)
def test_random_routing_is_mg1_ps_whatever_the_size_law(engine: str) -> None:
    lam = 0.5
    rows = replicate(500, 6, policy="random", servers=100, load=lam, jobs=100_000, discipline="ps",
                     service={"kind": "hyperexponential", "mean": 1, "scv": 3})
    check("random, PS, hyperexponential sizes: response", column(rows, "mean_response"),
          theory.mg1_ps_response(lam))


# ---------------------------------------------------------------------------------------
# JSQ and SQ(2), exponential sizes: the queue lengths of FIFO servers, so FIFO's exact chain
# ---------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize(("policy", "params"), [("jsq", {}), ("sqd", {"d": 2})])
def test_jsq_and_sq2_with_ps_match_the_fifo_exact_chain(engine: str, policy: str, params: dict[str, Any]) -> None:
    """N = 3 exp(1) servers at load 0.7, as `test_small_n_matches_exact_markov_chain`.

    With exponential sizes a busy server completes a job at rate 1 whatever the discipline
    (memoryless), and the policy sees lengths only: the lengths, hence the mean response
    (Little's law), are FIFO's. The two policies share their seeds: a family of 2. Runs of
    200,000 jobs (60,000 leave an interval of 0.7%, about the seeds' own offset: 1.870 and
    1.874 for SQ(2) under PS and FIFO on seeds 300-307, against 1.885).
    """
    exact = theory.exact_supermarket(policy, 3, 0.7, levels=40, **params)
    assert exact["truncation"] < 1e-8
    rows = replicate(300, 8, policy=policy, servers=3, load=0.7, jobs=200_000, discipline="ps", **params)
    check(f"{policy}, PS, N=3: response", column(rows, "mean_response", family=2), exact["mean_response"])
