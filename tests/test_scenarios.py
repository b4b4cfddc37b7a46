"""Every scenario file in scenarios/ loads, validates and expands into sweep points."""

from __future__ import annotations

from pathlib import Path

import pytest

import emulator

SCENARIOS = sorted((Path(__file__).resolve().parent.parent / "scenarios").glob("*.yaml"))
REPRODUCTIONS = ["supermarket", "threshold", "jbt_zhou", "pools_mukherjee", "heavy_traffic", "jbt_zhou2017",
                  "jbt_zhou2017_period", "many_server_heavy_traffic", "power_of_d_pools"]


def test_scenarios_found() -> None:
    names = {path.stem for path in SCENARIOS}
    assert {"quickstart", *REPRODUCTIONS} <= names


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda path: path.name)
def test_scenario_validates(path: Path) -> None:
    scenario = emulator.load_scenario(path)
    points = scenario.points()
    assert points
    for point in points:
        assert point.policies
        assert point.rate > 0


@pytest.mark.parametrize("path", [p for p in SCENARIOS if "compare_to" in p.read_text()], ids=lambda path: path.name)
def test_description_names_the_policy_compared_to(path: Path) -> None:
    scenario = emulator.load_scenario(path)
    assert f"against {scenario.compare_to}" in scenario.description


@pytest.mark.parametrize("name", REPRODUCTIONS)
def test_reproduction_has_a_reference_header(name: str) -> None:
    path = next(p for p in SCENARIOS if p.stem == name)
    lines = path.read_text().splitlines()
    header = [line for line in lines[: next(i for i, line in enumerate(lines) if not line.startswith("#"))]]
    assert len(header) >= 5, "expected a comment header naming the paper and the reference values"
    assert "reference" in "\n".join(header).lower()
    assert emulator.load_scenario(path).name == name


def test_expressions_resolve_per_point() -> None:
    pools = emulator.load_scenario(next(p for p in SCENARIOS if p.stem == "pools_mukherjee"))
    d = {(point.servers, policy.label): policy.d for point in pools.points() for policy in point.policies}
    assert d[(100, "JSQ(√N log N)")] == 47 and d[(1000, "JSQ(√N log N)")] == 219
    assert d[(100, "JSQ(log N)")] == 5 and d[(1000, "JSQ(log N)")] == 7

    heavy = emulator.load_scenario(next(p for p in SCENARIOS if p.stem == "heavy_traffic"))
    loads = {point.servers: point.load for point in heavy.points()}
    assert loads[100] == pytest.approx(0.9) and loads[1000] == pytest.approx(1 - 1000 ** -0.5)


def test_occupancy_scenarios_resolve() -> None:
    pools = emulator.load_scenario(next(p for p in SCENARIOS if p.stem == "power_of_d_pools"))
    d = {(point.servers, policy.label): policy.d for point in pools.points() for policy in point.policies}
    assert d[(10000, "JSQ(√N log N)")] == 922 and d[(10000, "JSQ(√N)")] == 100 and d[(100, "JSQ(log N)")] == 5
    loads = {(point.servers, point.values["workload.load"]): point.load for point in pools.points()}
    assert loads[(10000, "1 - 1/sqrt(N)")] == pytest.approx(0.99)  # λ(N) = N - β√N with β = 1
    assert loads[(100, "1 - 0.5/sqrt(N)")] == pytest.approx(0.95)
    assert all(point.scenario.run.occupancy for point in pools.points())

    heavy = emulator.load_scenario(next(p for p in SCENARIOS if p.stem == "many_server_heavy_traffic"))
    loads = {(point.servers, point.values["workload.load"]): point.load for point in heavy.points()}
    assert loads[(20, "1 - N**-1.5")] == pytest.approx(1 - 20**-1.5) and loads[(10, 0.99)] == 0.99
