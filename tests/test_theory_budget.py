"""Theory rows cost what their answer needs, never what a parameter's size says.

Each case runs in a subprocess with its address space limited to `MEMORY` bytes and
its CPU time measured: hostile but valid parameters (a threshold of 1e30, a load
within 1e-12 of 1, a pool load of 10^6, d = 10^30) give either the right value,
checked against a closed form, or no row, whose reason the computation states.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import emulator
from analysis.tables import pivot

MEMORY = 1_500_000_000
"""Address-space limit of a case: numpy, scipy and pydantic need about 0.6 GB of it."""

CPU_SECONDS = 5.0
"""CPU time a case may take once imported; the slowest below takes about 1 s."""

ROOT = Path(__file__).resolve().parents[1]


def bounded(body: str) -> Any:
    """Run ``body`` (which sets ``result``) under `MEMORY`; its JSON ``result``, after checking its CPU time."""
    code = textwrap.dedent(f"""
        import json, resource, time
        resource.setrlimit(resource.RLIMIT_AS, ({MEMORY}, {MEMORY}))
        import numpy, scipy.integrate, scipy.optimize, emulator
        from analysis import references, theory
        from analysis.occupancy import theory_tail
        start = time.process_time()
    """) + textwrap.dedent(body) + "\nprint(json.dumps({'result': result, 'cpu': time.process_time() - start}))\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, check=False)
    assert done.returncode == 0, done.stderr.strip().splitlines()[-1:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["cpu"] < CPU_SECONDS, f"{out['cpu']:.1f} s of CPU"
    return out["result"]


def table_rows(policy: dict[str, Any], load: float, system: dict[str, Any] | None = None) -> str:
    """Code that sets ``result`` to the theory a table shows for one policy at one point: metric -> (value, label)."""
    scenario = {"system": {"servers": 100, **(system or {})}, "workload": {"load": load}, "policies": [policy],
                "run": {"jobs": 1000, "warmup_jobs": 100}}
    return f"""
        point = emulator.Scenario.from_dict({scenario!r}).points()[0]
        result = {{k: [r.value, r.label] for k, r in references.references(point, point.policies[0]).items()}}
    """


def test_the_limit_binds() -> None:
    """Allocating more than `MEMORY` fails in a case: the limit is what the cases below run under."""
    done = subprocess.run([sys.executable, "-c", f"import resource; resource.setrlimit(resource.RLIMIT_AS, "
                                                 f"({MEMORY}, {MEMORY})); bytearray({MEMORY})"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert "MemoryError" in done.stderr


@pytest.mark.parametrize("threshold", [10**8, 10**30, 10**300])
def test_a_threshold_no_queue_reaches_is_random_routing(threshold: int) -> None:
    """The table's threshold row at T = 1e30 took 24 GB; it is random routing: M/M/1, one probe per job."""
    found = bounded(table_rows({"name": "threshold", "d": 2, "threshold": threshold}, 0.9))
    assert found["mean_response"][0] == pytest.approx(10.0, rel=1e-14)
    assert found["messages_per_job"][0] == 2.0


def test_just_below_the_reach_the_recursion_agrees_with_random_routing() -> None:
    """Below the threshold where the closed form takes over, the cut equations give the same value.

    At load 0.5 and d = 2, T = 50 differs from random routing by a relative 0.5^49 x 52 = 9e-14 at most
    (`_random_routing_reach`), and is computed level by level.
    """
    response, probes = bounded("result = theory.threshold_metrics(0.5, 2, 50)")
    assert response == pytest.approx(2.0, rel=1e-12)
    assert probes == pytest.approx(1.0, abs=1e-13)


def test_a_load_near_one_with_threshold_one() -> None:
    """T = 1 at a load 1e-12 from 1: the tail of 1.5e13 levels is summed in closed form, 1 / (1 - lam^2)."""
    lam = 1 - 1e-12
    response, probes = bounded(f"result = theory.threshold_metrics({lam!r}, 2, 1)")
    exact = 1 / (1 - Fraction(lam) ** 2)  # the load as the float it is
    assert response == pytest.approx(float(exact), rel=1e-6)
    assert probes == pytest.approx(1 + lam, rel=1e-15)


def test_a_threshold_past_the_levels_gives_no_row_and_says_why() -> None:
    """T = 10^6 at a load 1e-9 from 1 matters (the queues reach it) but needs 10^6 levels: no row, a reason."""
    found = bounded(table_rows({"name": "threshold", "d": 2, "threshold": 10**6}, 1 - 1e-9))
    reason = ("the threshold model's mean field at load 0.999999999 with threshold 1000000 needs more than "
              "100,000 levels")
    assert set(found) == {"mean_response", "messages_per_job", "mean_queue_length"}
    assert all(math.isnan(value) and label == reason for value, label in found.values())


def test_an_omitted_row_is_named_in_the_caption() -> None:
    """The table has no theory row for such a policy, and its caption says why."""
    scenario = emulator.Scenario.from_dict({"name": "near_one", "system": {"servers": 10},
                                            "workload": {"load": 1 - 1e-9},
                                            "policies": [{"name": "threshold", "d": 2, "threshold": 10**6},
                                                         {"name": "threshold", "d": 2, "threshold": 1}]})
    labels = [policy.label for policy in scenario.points()[0].policies]
    summary = pd.DataFrame([{"scenario": "near_one", "point": 0, "policy": label, "servers": 10,
                             "discipline": "fifo", "load": 1 - 1e-9, "mean_response": 9.0,
                             "mean_response_ci95": 1.0, "replications": 2} for label in labels])
    table = pivot(summary, ["mean_response"], scenario=scenario)
    assert [str(row[0]) for row in table.rows] == [labels[0], labels[1], f"{labels[1]}: mean field, N → ∞",
                                                   "M/M/N (Erlang C), lower bound"]
    assert table.caption.endswith(f" No theory for {labels[0]}: the threshold model's mean field at load "
                                  "0.999999999 with threshold 1000000 needs more than 100,000 levels.")


@pytest.mark.parametrize(("name", "curve"), [("random", "sqd_tail(1 - 1e-12, 1, tol=1e-9)"),
                                             ("threshold", "threshold_fixed_point(1 - 1e-12, 2, 1, tol=1e-9)")])
def test_an_occupancy_curve_near_load_one_is_refused(name: str, curve: str) -> None:
    """s_i falls below 1e-9 only after 2e13 levels: the curve is refused with a reason, and not drawn."""
    info = {"name": name, "params": {"d": 2, "threshold": 1}, "load": 1 - 1e-12, "servers": 100,
            "discipline": "fifo", "capacity": None, "exponential": True}
    reason = bounded(f"""
        try:
            theory.{curve}
            result = ''
        except ValueError as error:
            result = str(error)
        result = [result, theory_tail({info!r})]
    """)
    assert reason == ["the " + ("SQ(1) tail" if name == "random" else "threshold model's mean field")
                      + " at load 0.999999999999 holds more than 100,000 levels above 1e-09", None]


def test_sqd_with_huge_d_and_a_load_near_one() -> None:
    """SQ(d) terms are lam^((d^i - d)/(d - 1)): d = 10^30 (with replacement) is 1 + lam^(10^30) = 1."""
    found = bounded(f"result = [theory.sqd_response({1 - 1e-12!r}, 2), theory.sqd_response(0.9, 10**30)]")
    assert found[0] == pytest.approx(sum((1 - 1e-12) ** (2**i - 2) for i in range(1, 80)), rel=1e-9)
    assert found[1] == 1.0


def test_threshold_with_huge_d() -> None:
    """d = 10^30 probes cost what d = 60 does: s_3^d is below round-off either way (the ODE, term by term)."""
    huge, ode = bounded("result = [theory.threshold_metrics(0.9, 10**30, 3), "
                        "[theory.threshold_response(0.9, 60, 3), theory.threshold_probes(0.9, 60, 3)]]")
    assert huge == pytest.approx(ode, rel=1e-8)


def test_overloaded_pools_block_all_but_their_capacity() -> None:
    """Pools with capacity 3 at 10^6 tasks per pool: the ODE never settled; blocking is 1 - B / lam."""
    found = bounded(table_rows({"name": "sqd", "d": 2}, 1e6, {"servers": 10, "discipline": "pool", "capacity": 3}))
    assert found["blocked_fraction"][0] == pytest.approx(1 - 3 / 1e6, rel=1e-9)


def test_pools_past_the_ode_budget_give_no_row() -> None:
    """Pools with capacity 10^5 at 10^5 tasks per pool: a dense Jacobian of 80 GB; now no row, and a reason."""
    found = bounded(table_rows({"name": "sqd", "d": 2}, 1e5, {"servers": 10, "discipline": "pool",
                                                                 "capacity": 10**5}))
    value, reason = found["blocked_fraction"]
    assert math.isnan(value) and reason == "the JSQ(2) mean field of pools at load 100000.0 needs more than 500 levels"


def test_a_stiff_pool_ode_is_given_up() -> None:
    """Load 50 per pool with d = 300: the ODE stiffens and would run on for tens of seconds."""
    reason = bounded("""
        try:
            theory.jsqd_pool_tail(50.0, 300)
            result = ''
        except RuntimeError as error:
            result = str(error)
    """)
    assert reason.startswith("the mean-field ODE of 115 levels did not settle within")


def test_a_slotted_chain_too_large_gives_no_row_and_says_why() -> None:
    """Slotted time with Poisson capacity at a load near 1: the chain's 2,048 states are not enough."""
    found = bounded(table_rows({"name": "random"}, 1 - 1e-6, {"servers": 10, "time": "slotted"}))
    value, reason = found["mean_response"]
    assert math.isnan(value) and reason == "the chain needs more than 2048 states at lam=0.999999, mu=1.0"
    small = bounded(table_rows({"name": "random"}, 0.5, {"servers": 10, "time": "slotted"}))
    assert small["mean_response"][1] == "slotted queue, Poisson capacity, batches of a slot, exact"
