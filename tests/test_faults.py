"""Lost messages and failing servers (docs/faults.md): exact checks, then references with CI tolerances.

Exact: ``loss: 0`` is the scenario without the key (and draws nothing), random
routing's jobs do not see the loss, the n-th message sent is lost exactly when
the n-th uniform of the ``loss`` stream is below p, a query whose replies are
lost decides at the timeout, the compiled engine hands lost messages at zero
latency and failing servers to SimPy (with latency it runs lost messages: tests/test_compiled.py).
Statistical (fixed seeds, Student-t intervals of independent replications, as in
test_theory.py): JIQ with lossy tokens against its mean-field limit, random
routing with breakdowns against the M/G/1 with independent breakdowns.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import simpy
from scipy import stats

import emulator
from emulator.compiled import engine as compiled_engine
from emulator.experiment.runner import choose_engine
from emulator.measure.messages import KINDS, NO_REPLY, Kind
from emulator.measure.recorder import Recorder
from emulator.model import build
from emulator.model.build import build_model
from emulator.model.channels import Channel
from emulator.scenario.sweep import Scenario
from emulator.workload.streams import generator

POLICIES = [{"name": "random"}, {"name": "jsq"}, {"name": "sqd", "d": 2}, {"name": "jiq"},
            {"name": "jbt", "d": 2, "period": 10.0}, {"name": "round_robin"}]
FAILURES = {"up": {"kind": "exponential", "mean": 50.0}, "down": {"kind": "deterministic", "mean": 5.0}}


def scenario(network: dict[str, Any] | None = None, failures: dict[str, Any] | None = None,
             dispatchers: int = 1, jobs: int = 4000) -> Scenario:
    data: dict[str, Any] = {
        "name": "faults", "seed": 5, "replications": 1,
        "run": {"jobs": jobs, "warmup_jobs": jobs // 10, "engine": "simpy"},
        "system": {"servers": 10, "dispatchers": dispatchers}, "workload": {"load": 0.8},
        "policies": POLICIES}
    if network is not None:
        data["network"] = network
    if failures is not None:
        data["system"]["failures"] = failures
    return Scenario.from_dict(data)


def rows(scen: Scenario, seed: int = 99) -> dict[str, dict[str, Any]]:
    point = scen.points()[0]
    out = {}
    for policy in point.policies:
        row = build_model(point, policy, seed).run()
        out[policy.label] = {key: repr(value) for key, value in row.items() if key != "wall_seconds"}
    return out


# ---------------------------------------------------------------------------------------
# Exact checks
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("latency", [None, {"kind": "exponential", "mean": 0.05}])
@pytest.mark.parametrize("dispatchers", [1, 3])
def test_loss_zero_is_the_scenario_without_it(latency: dict[str, Any] | None, dispatchers: int,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    streams: list[str] = []
    real = build.generator

    def spy(seed: int, name: str) -> np.random.Generator:
        streams.append(name)
        return real(seed, name)

    monkeypatch.setattr(build, "generator", spy)
    plain = {} if latency is None else {"latency": latency}
    without = rows(scenario(plain or None, dispatchers=dispatchers))
    with_zero = rows(scenario({**plain, "loss": 0.0, "timeout": 1.0}, dispatchers=dispatchers))
    assert without == with_zero
    assert "loss" not in streams  # no stream, so no draw
    for row in with_zero.values():
        for kind in KINDS:
            assert row[f"lost_per_job_{kind}"] == "0.0"
            assert row[f"delivered_per_job_{kind}"] == row[f"messages_per_job_{kind}"]
        assert row["lost_fraction"] == "0.0"


def test_random_routing_does_not_see_the_loss() -> None:
    base = rows(scenario())["Random"]
    for p in (0.05, 0.5):
        assert rows(scenario({"loss": p, "timeout": 0.5}))["Random"] == base


@pytest.mark.parametrize("p", [0.01, 0.2])
def test_the_nth_message_draws_the_nth_uniform_of_the_loss_stream(p: float) -> None:
    point = scenario({"loss": p, "timeout": 0.1}, dispatchers=2).points()[0]
    for policy in point.policies:
        model = build_model(point, policy, 31)
        model.run()
        recorder = model.recorder
        sent = sum(recorder.counts)
        uniforms = generator(31, "loss").random(sent)
        assert sum(recorder.lost) == int((uniforms < p).sum()), policy.label
        assert all(lost <= sent for lost, sent in zip(recorder.lost, recorder.counts, strict=True))


def test_lost_share_is_p_by_kind() -> None:
    """Each kind loses a binomial share p of what it sends: 99.9% intervals (about 5 kinds x 3 policies)."""
    p = 0.2
    point = scenario({"loss": p, "timeout": 0.1}, jobs=20_000).points()[0]
    z = stats.norm.ppf(1 - 0.001 / 2)
    checked = 0
    for policy in point.policies:
        model = build_model(point, policy, 8)
        model.run()
        for kind, sent, lost in zip(KINDS, model.recorder.counts, model.recorder.lost, strict=True):
            if sent > 1000:
                half = z * math.sqrt(p * (1 - p) / sent)
                assert abs(lost / sent - p) <= half, (policy.label, kind, lost, sent)
                checked += 1
    assert checked >= 5


def _channel(loss: float, draws: list[float], timeout: float) -> tuple[simpy.Environment, Channel]:
    env = simpy.Environment()
    recorder = Recorder(env, 3, 0, 1)
    it = iter(draws)
    return env, Channel(env, recorder, None, loss, it.__next__, timeout)


def test_a_query_whose_reply_is_lost_decides_at_the_timeout_on_the_replies_it_has() -> None:
    # Draws: query 0 kept, its reply kept; query 1 lost; query 2 kept, its reply lost.
    env, channel = _channel(0.5, [0.9, 0.9, 0.1, 0.9, 0.1], timeout=2.5)
    decided: list[tuple[float, list[int]]] = []
    channel.ask([10, 20, 30], lambda target: target + 1, lambda replies: decided.append((env.now, replies)))
    assert decided == []
    env.run()
    assert decided == [(2.5, [11, NO_REPLY, NO_REPLY])]
    assert channel.counts[Kind.QUERY] == 3 and channel.counts[Kind.REPLY] == 2
    assert channel.recorder.lost[Kind.QUERY] == 1 and channel.recorder.lost[Kind.REPLY] == 1


def test_all_replies_in_decides_at_once() -> None:
    env, channel = _channel(0.5, [0.9] * 4, timeout=2.5)
    decided: list[tuple[float, list[int]]] = []
    channel.ask([1, 2], lambda target: target, lambda replies: decided.append((env.now, replies)))
    assert decided == [(0.0, [1, 2])]
    env.run()
    assert len(decided) == 1  # the timeout does not decide again


def test_a_down_server_answers_no_query_and_its_jobs_wait() -> None:
    """JSQ with failures: queries to down servers are lost there, never answered."""
    point = scenario({"timeout": 0.1}, FAILURES, jobs=5000).points()[0]
    jsq = next(policy for policy in point.policies if policy.label == "JSQ")
    model = build_model(point, jsq, 4)
    row = model.run()
    assert row["lost_per_job_query"] > 0 and row["lost_per_job_reply"] == 0
    assert row["lost_fraction"] == 0  # hold: nothing lost
    # Down fraction 5/55: about that share of the N queries per job reach a down server.
    assert abs(row["lost_per_job_query"] / 10 - 5 / 55) < 0.03


def test_the_compiled_engines_period_rows_are_the_models_periods() -> None:
    """The kernel's rows of up and down periods (`compiled.failing.Periods`, read from the streams' blocks) hold the
    draws the SimPy servers read one by one (`workload.failures.periods`), row after row, across the streams'
    blocks (an erlang law, drawn block by block)."""
    from emulator.compiled.failing import failing_periods
    from emulator.workload.failures import periods
    from emulator.workload.streams import BATCH

    failures = scenario({"timeout": 0.1}, {**FAILURES, "up": {"kind": "erlang", "k": 3, "mean": 50.0}}).points()[0]
    config = failures.scenario.system.failures
    assert config is not None
    rows_ = failing_periods(config, 3, 11)
    assert rows_ is not None
    model = [periods(config, 11, sid) for sid in range(3)]
    for _ in range(BATCH // rows_.width + 2):  # past the end of each stream's first block
        for sid in range(3):
            for which in (0, 1):
                read = [float(value) for value in rows_.record.periods[which, sid]]
                assert read == [next(model[sid][which]) for _ in range(rows_.width)]
                rows_.refill(sid, which)


def test_lose_counts_the_jobs_lost() -> None:
    point = scenario({"timeout": 0.1}, {**FAILURES, "on_down": "lose"}, jobs=20_000).points()[0]
    random = next(policy for policy in point.policies if policy.label == "Random")
    row = build_model(point, random, 4).run()
    # Random routing loses at least the jobs sent while down (a share 5/55 of the time), plus those present
    # at failures; fewer than those plus the mean queue at a failure times the failures per job.
    down = 5 / 55
    assert down * 0.9 < row["lost_fraction"] < 0.5
    held = build_model(scenario({"timeout": 0.1}, FAILURES, jobs=20_000).points()[0], random, 4).run()
    assert held["lost_fraction"] == 0 and row["mean_response"] < held["mean_response"]


def test_loss_is_refused_in_slotted_time_in_one_line() -> None:
    from emulator import ScenarioError

    data = {"system": {"servers": 10, "time": "slotted"}, "network": {"loss": 0.1, "timeout": 1.0},
            "policies": [{"name": "jiq"}]}
    with pytest.raises(ScenarioError, match=r"^network\.loss: expected 0 with system\.time: slotted") as info:
        Scenario.from_dict(data)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("on_down", ["hold", "lose"])
def test_faults_with_latency_and_several_dispatchers_run_and_account(on_down: str) -> None:
    """Loss, failures and latency together: every measured job is served, blocked or lost, once."""
    point = scenario({"loss": 0.1, "timeout": 0.2, "latency": {"kind": "exponential", "mean": 0.05}},
                     {**FAILURES, "on_down": on_down}, dispatchers=3, jobs=3000).points()[0]
    for policy in point.policies:
        model = build_model(point, policy, 12)
        row = model.run()
        recorder = model.recorder
        assert recorder.finished == recorder.jobs, policy.label
        served = recorder.jobs * (1 - row["lost_fraction"] - row["blocked_fraction"])
        assert math.isfinite(row["mean_response"]) and served > 0.5 * recorder.jobs
        assert (row["lost_fraction"] == 0) == (on_down == "hold")
        for kind in KINDS:
            total = row[f"delivered_per_job_{kind}"] + row[f"lost_per_job_{kind}"]
            assert total == pytest.approx(row[f"messages_per_job_{kind}"], abs=1e-12)


def test_compiled_engine_runs_faults_at_zero_latency() -> None:
    """Random, round robin, JIQ, JSQ, SQ(d), JBT-d and batch SQ(d) run them compiled where asked to
    (benchmarks/equivalence.py compares their rows with SimPy's)."""
    for network, failures in (({"loss": 0.01, "timeout": 1.0}, None), ({"timeout": 1.0}, FAILURES)):
        point = scenario(network, failures).points()[0]
        assert all(compiled_engine.supports(point, policy) is None for policy in point.policies)
        batch = point.scenario.with_overrides({"policies": [{"name": "batch_sqd", "d": 2}]}).points()[0]
        assert compiled_engine.supports(batch, batch.policies[0]) is None
        forced = batch.scenario.with_overrides({"run.engine": "compiled"}).points()[0]
        assert choose_engine(forced, forced.policies[0]) == "compiled"
    point = scenario({"loss": 0.0, "timeout": 1.0}).points()[0]
    assert all(compiled_engine.supports(point, policy) is None for policy in point.policies)
    row = emulator.simulate("jiq", servers=10, load=0.8, jobs=3000, seed=3, engine="compiled")
    assert row["engine"] == "compiled"
    assert row["delivered_per_job_idle"] == row["messages_per_job_idle"] and row["lost_per_job_idle"] == 0


# ---------------------------------------------------------------------------------------
# References
# ---------------------------------------------------------------------------------------
def interval(values: list[float], family: int = 1) -> tuple[float, float]:
    x = np.asarray(values)
    level = 1 - 0.05 / family
    return float(x.mean()), float(stats.t.ppf(0.5 + level / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))


def jiq_lossy_limit(load: float, p: float) -> tuple[float, float, float]:
    """JIQ, one dispatcher, unbounded I-queue, exp(1) service, tokens lost with probability p, N -> infinity.

    Returns the mean response 1 + p λ / (1 - λ), the idle tokens sent per job
    (1 - λ) / (1 - λ + p λ) and the probability of waiting λ p / (1 - λ + p λ);
    derived in docs/faults.md.
    """
    lam = load
    return 1 + p * lam / (1 - lam), (1 - lam) / (1 - lam + p * lam), lam * p / (1 - lam + p * lam)


def test_jiq_with_lossy_tokens_meets_its_mean_field_limit() -> None:
    # N = 1000, 6 x 40,000 jobs: about 30 s on one core. The finite-N gap is below the intervals
    # (measured: 1.1958 and 1.2003 for 1.2 at 100,000 jobs each).
    load, p = 0.5, 0.2
    runs = [emulator.simulate("jiq", servers=1000, load=load, jobs=40_000, warmup_jobs=10_000, seed=seed,
                              loss=p, timeout=1.0, engine="simpy") for seed in range(1, 7)]
    for column, reference in zip(("mean_response", "messages_per_job_idle", "prob_wait"),
                                 jiq_lossy_limit(load, p), strict=True):
        mean, half = interval([row[column] for row in runs], family=3)
        print(f"{column}: {mean:.4f} ± {half:.4f} vs {reference:.4f}")
        assert half < 0.04 * reference  # the check can see a 4% bias
        assert abs(mean - reference) <= half, column


def breakdown_response(load: float, up: float, down: float, down2: float, size: float = 1.0,
                       size2: float = 2.0) -> float:
    """Mean response of an M/G/1 queue whose server breaks down whatever its state, preemptive resume.

    Up periods exp(mean ``up``), down periods of mean ``down`` and second moment
    ``down2``; arrivals at rate ``load``, sizes of moments ``size``, ``size2``.
    With ξ = 1/up, κ = 1 + ξ E[D], ρ = λ κ E[S] (derived in docs/faults.md):
    E[T] = κ E[S] + (κ² λ E[S²] / 2 + ξ E[D²] / (2κ)) / (1 - ρ).
    """
    xi = 1 / up
    kappa = 1 + xi * down
    rho = load * kappa * size
    return kappa * size + (kappa**2 * load * size2 / 2 + xi * down2 / (2 * kappa)) / (1 - rho)


def test_random_routing_with_breakdowns_is_the_mg1_with_breakdowns() -> None:
    # Deterministic repairs (E[D^2] = E[D]^2, not the exponential's 2 E[D]^2): 6 x 150,000 jobs on 10
    # servers after 50,000 of warm-up, about 50 s on one core. A shorter warm-up leaves a visible bias
    # from the empty start: 8 x 100,000 jobs after 10,000 gave 3.380 ± 0.026 for 3.417; these give
    # 3.429 ± 0.043. An independent check of the formula (a Lindley recursion in up-time, 4 x 10^6 jobs)
    # gave 3.432 ± 0.019.
    load, up, down = 0.5, 10.0, 2.0
    failures = {"up": {"kind": "exponential", "mean": up}, "down": {"kind": "deterministic", "mean": down}}
    runs = [emulator.simulate("random", servers=10, load=load, jobs=150_000, warmup_jobs=50_000, seed=seed,
                              timeout=1.0, failures=failures, engine="simpy")["mean_response"]
            for seed in range(1, 7)]
    reference = breakdown_response(load, up, down, down**2)
    mean, half = interval(runs)
    print(f"mean_response: {mean:.4f} ± {half:.4f} vs {reference:.4f}")
    assert half < 0.04 * reference
    assert abs(mean - reference) <= half
    # Without the breakdowns during idle periods (the M/G/1 with service = completion time) the reference
    # would be lower by more than the interval: the check tells the two models apart.
    xi, kappa = 1 / up, 1 + down / up
    completion2 = kappa**2 * 2 + xi * 1 * down**2
    other = kappa + load * completion2 / (2 * (1 - load * kappa))
    assert abs(other - reference) > 3 * half


# ---------------------------------------------------------------------------------------
# The table and figure of a faults run
# ---------------------------------------------------------------------------------------
def test_degradation_table_and_figure(tmp_path: Any) -> None:
    import doctest

    import analysis.faults as faults
    from analysis.render import render

    assert doctest.testmod(faults).failed == 0
    data = {"name": "tiny_faults", "seed": 1, "replications": 2, "run": {"jobs": 600, "warmup_jobs": 60},
            "system": {"servers": 5}, "workload": {"load": 0.7}, "network": {"timeout": 0.1},
            "policies": [{"name": "jsq"}, {"name": "jiq"}],
            "sweep": {"network.loss": [0, 0.2], "system.failures": [None, {**FAILURES, "on_down": "lose"}]}}
    results = emulator.run(data, workers=1, out=tmp_path / "out")
    table = faults.degradation_table(results.summary)
    assert table.row_keys == ["system.failures", "policy", "network.loss"] and len(table.rows) == 8
    text = render(table, "markdown")
    header, _, *rows = [[cell.strip() for cell in line.split("|")[1:-1]] for line in text.splitlines()
                        if line.startswith("|")]
    assert [row[0] for row in rows if row[0]] == ["no failures", "failures (up 50, down 5), lose"]
    assert [row[1] for row in rows].count("JSQ") == 4
    first = dict(zip(header, rows[0], strict=True))
    assert (first["policy"], first["loss"], first["lost/job"]) == ("JSQ", "0", "0")  # nothing lost without loss
    faults.main([str(tmp_path / "out"), "--figure", str(tmp_path / "f.png")])
    assert (tmp_path / "f.png").stat().st_size > 10_000 and (tmp_path / "f.svg").exists()
