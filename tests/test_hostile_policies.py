"""Users' policies that break the contract, and runs that stop advancing: each fails in one line, none hangs.

In the manner of test_input_limits.py, for what a policy's author can get wrong.
A case that used to hang runs in a process of its own with a time limit (`_run`),
so that losing a guard fails the test instead of hanging the suite; registering a
policy changes the registry of the process that does it, another reason for a
process of its own. The rest runs here, with the registry restored after each test.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import simpy

import emulator
from emulator import ScenarioError, check_policy, register_policy
from emulator.cli import main
from emulator.policies import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 120  # seconds: each case below takes a few

# A user's policy module: `make(name, dispatch, **attributes)` builds a documented policy class.
POLICIES = '''
from typing import Literal
from emulator.policies.base import Policy, PolicyConfig


def make(name, dispatch, **attributes):
    config = type(f"{name.title()}Config", (PolicyConfig,),
                  {"__annotations__": {"name": Literal[name]}, "name": name})
    doc = "A user's policy.\\n\\nReferences\\n----------\\n.. [1] Nobody, a note.\\n"
    return type(f"{name.title()}Policy", (Policy,), {"name": name, "Config": config, "messages": "0 per job",
                                                     "dispatch": dispatch, "__doc__": doc, **attributes})


def first(self, dispatcher, job):
    dispatcher.send(job, dispatcher.servers[0])


def never(self, dispatcher, job):
    pass


def twice(self, dispatcher, job):
    dispatcher.send(job, dispatcher.servers[0])
    dispatcher.send(job, dispatcher.servers[1])


def drops(self, dispatcher, job):  # one job in a hundred, without a word
    if job.id % 100 != 17:
        dispatcher.send(job, dispatcher.servers[job.id % len(dispatcher.servers)])


def forever(self, dispatcher, job):  # asks again at every reply, and never sends
    def again(replies):
        self.channel.ask([dispatcher.servers[0]], lambda server: server.length, again)
    self.channel.ask([dispatcher.servers[0]], lambda server: server.length, again)


def exits(self, dispatcher, job):
    if job.id == 50:
        raise SystemExit(3)
    dispatcher.send(job, dispatcher.servers[0])


def two_choices(keep_all):
    def dispatch(self, dispatcher, job):
        servers = dispatcher.servers
        pair = [servers[self.uniforms.randrange(len(servers))] for _ in range(2)]

        def then(replies):
            if keep_all or job.id % 100 != 17:  # else: the replies came, and job 17 is dropped
                dispatcher.send(job, pair[0] if replies[0] <= replies[1] else pair[1])

        self.channel.ask(pair, lambda server: server.length, then)
    return dispatch
'''


def _run(body: str, tmp_path: Path) -> str:
    """Run ``body`` after ``from mine import *`` (`POLICIES`) in a process of its own; return its stdout.

    A process still running after `LIMIT` seconds fails the test: that is a hang.
    """
    (tmp_path / "mine.py").write_text(POLICIES)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", ""), str(ROOT)])}
    code = "import emulator\nfrom mine import *\n" + textwrap.dedent(body)
    try:
        done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=LIMIT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {LIMIT} s: a hang")
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def _one_error(body: str, tmp_path: Path) -> str:
    """The one task error of the run that ``body`` prints as ``print(results.errors)``-like ``error`` lines."""
    out = _run(textwrap.dedent(body) + "\nfor _, error in results.errors:\n    print('error:', error)\n", tmp_path)
    errors = [line.removeprefix("error: ") for line in out.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, out
    return errors[0]


def _policy_run(dispatch: str, tmp_path: Path, network: str = "{}") -> str:
    return _one_error(f"""
        emulator.register_policy(make("mine", {dispatch}))
        results = emulator.run({{"name": "h", "replications": 1, "network": {network},
                                "run": {{"jobs": 500, "warmup_jobs": 50, "engine": "simpy"}},
                                "system": {{"servers": 4}}, "policies": [{{"name": "mine"}}]}}, workers=1)
    """, tmp_path)


LATENCY = '{"latency": {"kind": "exponential", "mean": 0.1}}'


# -- 9. a policy that does not send a job, sends one twice or drops one --------------------
@pytest.mark.parametrize("network", ["{}", LATENCY])
def test_a_policy_that_never_sends_fails_the_run_naming_it(tmp_path: Path, network: str) -> None:
    error = _policy_run("never", tmp_path, network)
    assert error == "PolicyError: policy 'mine' did not send job 0: dispatch returned without sending it, " \
                    "and sent no query whose reply could send it later"


def test_a_policy_that_never_sends_fails_in_slotted_time_too(tmp_path: Path) -> None:
    """One decision per slot: the slot's other arrivals wait on the first job's, which is never sent."""
    error = _one_error("""
        emulator.register_policy(make("mine", never))
        results = emulator.run({"name": "h", "replications": 1, "run": {"jobs": 500, "warmup_jobs": 50,
                                "engine": "simpy"}, "workload": {"load": 0.5},
                                "system": {"servers": 4, "time": "slotted", "slot": {"dispatch": "slot"}},
                                "policies": [{"name": "mine"}]}, workers=1)
    """, tmp_path)
    assert re.fullmatch(r"PolicyError: policy 'mine' did not send job \d+: dispatch returned without sending it, "
                        r"and sent no query whose reply could send it later", error), error


def test_a_policy_that_sends_a_job_twice_fails_the_run_naming_it(tmp_path: Path) -> None:
    error = _policy_run("twice", tmp_path)
    assert error.startswith("PolicyError: policy 'mine' sent job 0 to a server twice (again to server 1"), error


@pytest.mark.parametrize("network", ["{}", LATENCY])
def test_a_policy_that_drops_one_job_in_a_hundred_fails_at_the_first(tmp_path: Path, network: str) -> None:
    error = _policy_run("drops", tmp_path, network)
    assert error.startswith("PolicyError: policy 'mine' did not send job 17: dispatch returned without"), error


@pytest.mark.parametrize("network", ["{}", LATENCY])
def test_a_policy_that_drops_a_job_once_its_replies_are_in_fails_naming_it(tmp_path: Path, network: str) -> None:
    error = _policy_run("two_choices(keep_all=False)", tmp_path, network)
    assert error == "PolicyError: policy 'mine' did not send job 17: the replies to its queries came in and it " \
                    "was still not sent"


@pytest.mark.parametrize("network", ["{}", LATENCY])
def test_a_policy_that_asks_again_at_every_reply_fails_naming_it(tmp_path: Path, network: str) -> None:
    """Its job is never sent, but always has a question out: it would keep the run going for ever."""
    error = _policy_run("forever", tmp_path, network)
    assert re.fullmatch(r"PolicyError: policy 'mine' did not send job \d+: it asked about it 150 times "
                        r"\(10 \(N \+ D\) \+ 100\) and still had not sent it", error), error


def test_a_policy_that_calls_exit_fails_its_task_not_the_run(tmp_path: Path) -> None:
    """`SystemExit` from a policy's code is the task's failure, in one line; the other policy's rows are kept."""
    out = _run("""
        emulator.register_policy(make("mine", exits))
        results = emulator.run({"name": "h", "replications": 1, "run": {"jobs": 500, "warmup_jobs": 50,
                                "engine": "simpy"}, "system": {"servers": 4},
                                "policies": [{"name": "mine"}, {"name": "random"}]}, workers=1)
        print([error for _, error in results.errors])
        print(list(results.runs["policy"]))
    """, tmp_path)
    line = POLICIES.splitlines().index("        raise SystemExit(3)") + 1
    assert out.splitlines() == [f"['SystemExit: 3 (at mine.py:{line})']", "['Random']"], out


@pytest.mark.parametrize("network", [
    '{"latency": {"kind": "pareto", "mean": 0.5, "alpha": 2.1}}',  # heavy-tailed: some jobs wait long
    '{"latency": {"kind": "exponential", "mean": 0.1}, "loss": 0.2, "timeout": 0.5}',  # some replies never come
])
def test_a_policy_that_waits_for_its_replies_is_not_called_a_dropper(tmp_path: Path, network: str) -> None:
    out = _run(f"""
        emulator.register_policy(make("mine", two_choices(keep_all=True)))
        row = emulator.simulate("mine", servers=4, load=0.8, jobs=2000, seed=3, engine="simpy",
                                **{network})
        print(row["jobs"], row["messages_per_job_query"])
    """, tmp_path)
    assert out.split() == ["2000", "2.0"]  # every job finished, after one query to each of its two servers


# -- the run loop's guard: events without a job moving, a clock that stands ------------------
GUARDED = """
    from simpy.events import Timeout
    from emulator.api import scenario_data
    from emulator.model.build import build_model
    from emulator.scenario.sweep import Scenario

    data = scenario_data("random", servers=4, load=0.8, jobs=200, warmup_jobs=20, seed=1, engine="simpy",
                         **OPTIONS)
    point = Scenario.from_dict(data).points()[0]
    model = build_model(point, point.policies[0], 1)
    env = model.env
    env.process(meddle(model))
    try:
        model.run()
        print("finished")
    except Exception as exc:
        print(f"{type(exc).__name__}: {exc}")
"""


def _stalled(meddle: str, tmp_path: Path, options: str = "{}") -> str:
    return _run(f"OPTIONS = {options}\n" + textwrap.dedent(meddle) + textwrap.dedent(GUARDED), tmp_path)


@pytest.mark.parametrize(("delay", "standing"), [
    (0.0, ", the clock standing still"),  # events that schedule each other without delay
    (1e-12, ""),  # a timer far faster than the jobs, whose arrivals are about 0.3 apart
])
def test_events_without_a_job_moving_fail_in_one_line(tmp_path: Path, delay: float, standing: str) -> None:
    message = _stalled(f"""
        def meddle(model):
            yield Timeout(model.env, 5.0)
            while True:
                yield Timeout(model.env, {delay!r})
    """, tmp_path)
    assert re.fullmatch(r"StalledRun: the run stopped advancing at t=5(\.\d+)?: no job was sent, reached a server "
                        r"or left one for [\d,]+ events" + re.escape(standing), message), message


def test_jobs_arriving_at_a_clock_that_stands_fail_in_one_line(tmp_path: Path) -> None:
    """Jobs keep coming, all at one instant (as at t = 1e300, where t + 1 == t): jobs move, the clock does not."""
    message = _stalled("""
        from emulator.model.job import Job

        def meddle(model):
            yield Timeout(model.env, 5.0)
            job_id = 10**9
            while True:  # at capacity 2, most are blocked: nothing piles up
                model.dispatchers[0].receive(Job(job_id, model.env.now, 1.0, False))
                job_id += 1
                yield Timeout(model.env, 0.0)
    """, tmp_path, options='{"capacity": 2}')
    assert re.fullmatch(r"StalledRun: the run stopped advancing at t=5: the clock stood still for [\d,]+ events "
                        r"\(t \+ delay == t in floating point, or events that schedule each other without delay\)",
                        message), message


def test_measured_jobs_that_never_finish_while_jobs_keep_coming_fail_in_one_line(tmp_path: Path) -> None:
    """A measured job whose transfer never arrives: the source goes on admitting jobs to wait for it."""
    message = _stalled("""
        def meddle(model):
            for server in model.servers:  # job 100 never arrives, wherever it was sent
                server.accept = lambda job, accept=server.accept: None if job.id == 100 else accept(job)
            yield Timeout(model.env, 0.0)
    """, tmp_path, options='{"latency": {"kind": "deterministic", "mean": 0.1}}')
    assert re.fullmatch(r"StalledRun: the run stopped advancing at t=[\d.e+]+: 1 measured job\(s\) unfinished while "
                        r"[\d,]+ later jobs came, 100 times the run's own", message), message


def test_a_run_without_events_left_fails_in_one_line(tmp_path: Path) -> None:
    message = _stalled("""
        def meddle(model):
            def swallow(job, accept):
                if job.id == 100:
                    job.server = 0  # it seems to have arrived: the arrivals stop
                else:
                    accept(job)

            for server in model.servers:
                server.accept = lambda job, accept=server.accept: swallow(job, accept)
            yield Timeout(model.env, 0.0)
    """, tmp_path)
    assert re.fullmatch(r"StalledRun: the run stopped advancing at t=[\d.]+: no event is left, with 199 of 200 "
                        r"measured jobs finished", message), message


KNOWN = """
    import dataclasses
    from emulator.api import scenario_data
    from emulator.model.build import build_model
    from emulator.scenario.sweep import Scenario


    def unchecked(model, path, value):
        \"\"\"``model`` with the dotted ``path`` set to ``value``, past validation (whose bounds may refuse it).\"\"\"
        head, _, rest = path.partition(".")
        return model.model_copy(update={head: unchecked(getattr(model, head), rest, value) if rest else value})


    point = Scenario.from_dict(scenario_data(POLICY, servers=4, load=0.9, jobs=200, warmup_jobs=20, seed=1,
                                             engine="simpy", timeout=1.0, **OPTIONS)).points()[0]
    scenario = point.scenario
    for path, value in HOSTILE.items():
        scenario = unchecked(scenario, path, value)
    point = dataclasses.replace(point, scenario=scenario)
    try:
        build_model(point, point.policies[0], 1).run()
        print("finished")
    except Exception as exc:
        print(f"{type(exc).__name__}: {exc}")
"""
FAILING = {"up": {"kind": "exponential", "mean": 10.0}, "down": {"kind": "deterministic", "mean": 1.0}}


@pytest.mark.parametrize(("policy", "options", "hostile", "expected"), [
    # Billions of up/down cycles per job.
    ("random", {"failures": FAILING}, {"system.failures.up.mean": 1e-9, "system.failures.down.mean": 1e-9},
     r"t=[\d.e-]+: no job was sent, reached a server or left one for [\d,]+ events; check "
     r"system\.failures\.up\.mean and \.down\.mean \(1e-09 and 1e-09: many up/down cycles per arrival, "
     r"0\.277778 apart\)"),
    # The clock reaches 1e300, where t + 1 == t: services end and servers fail at once, down by 1e300 again.
    ("random", {"failures": {**FAILING, "on_down": "hold"}}, {"system.failures.down.mean": 1e300},
     r"t=[\d.e+]+: no job was sent, reached a server or left one for [\d,]+ events; "
     r"check system\.failures\.down\.mean \(1e\+300\)"),
    # A lost query's job waits 1e300 for its timeout; arrivals go on meanwhile.
    ("sqd", {"d": 2, "loss": 0.3}, {"network.timeout": 1e300},
     r"t=[\d.e+]+: \d+ measured job\(s\) unfinished while [\d,]+ later jobs came, 100 times the run's own; "
     r"check network\.timeout \(1e\+300\)"),
])
def test_the_known_endless_inputs_fail_in_one_line_naming_the_key(
        tmp_path: Path, policy: str, options: dict[str, Any], hostile: dict[str, float], expected: str) -> None:
    """Past validation, whose bounds may refuse these inputs: the guard is the backstop whatever they are."""
    out = _run(f"POLICY, OPTIONS, HOSTILE = {policy!r}, {options!r}, {hostile!r}\n" + textwrap.dedent(KNOWN),
               tmp_path)
    assert re.fullmatch(r"StalledRun: the run stopped advancing at " + expected, out), out


# -- 10. errors a policy's author sees -------------------------------------------------------
@pytest.fixture
def restored() -> Iterator[None]:
    """The registry as it was, after a test that registers policies here."""
    from emulator.policies import _listeners

    before = dict(REGISTRY)
    yield
    REGISTRY.clear()
    REGISTRY.update(before)
    for listener in _listeners:
        listener()


def _make(name: str, **attributes: Any) -> Any:
    """A policy class from `POLICIES` that sends every job to server 0, with ``attributes`` set."""
    namespace: dict[str, Any] = {}
    exec(POLICIES, namespace)
    return namespace["make"](name, **{"dispatch": namespace["first"], **attributes})


@pytest.mark.parametrize("thing", [42, int, None, "jsq"])
def test_check_policy_on_what_is_not_a_policy_is_one_assertion_line(thing: Any) -> None:
    with pytest.raises(AssertionError) as info:
        check_policy(thing)
    assert re.fullmatch(r"check_policy: expected a subclass of emulator\.policies\.base\.Policy, got .+",
                        str(info.value)), info.value


@pytest.mark.parametrize("name", ["", "Bad-Name", "9lives", None])
def test_register_policy_refuses_the_names_check_policy_refuses(name: Any) -> None:
    cls = _make("fine")
    cls.name = name
    with pytest.raises(ValueError, match=r"^register_policy: FinePolicy\.name: expected lower-case letters"):
        register_policy(cls)
    assert name not in REGISTRY


def test_a_check_that_returns_none_means_no_problems(restored: None) -> None:
    register_policy(_make("quiet", check=classmethod(lambda cls, config, point: None)))
    row = emulator.simulate("quiet", servers=4, jobs=300, engine="simpy")
    assert row["jobs"] == 300


@pytest.mark.parametrize(("attribute", "value", "expected"), [
    ("check", classmethod(lambda cls, config, point: ["d"]),
     "policies.0: policy 'odd': check: expected a dict of {field: problem} or None, got ['d']"),
    ("check", classmethod(lambda cls, config, point: [][1]),
     r"policies.0: policy 'odd': check raised IndexError: list index out of range \(at test_hostile_policies.py:\d+\)"),
    ("label", classmethod(lambda cls, config: None),
     "policies.0: policy 'odd': label: expected a non-empty string, got None (or set label: in the scenario)"),
    ("label", classmethod(lambda cls, config: 7),
     "policies.0: policy 'odd': label: expected a non-empty string, got 7 (or set label: in the scenario)"),
    ("label", classmethod(lambda cls, config: "a\nb"),  # would print as two rows of a table
     r"policies.0: policy 'odd': label: expected .*no control.*, got 'a\\nb' \(or set label: in the scenario\)"),
])
def test_a_policy_whose_check_or_label_misbehaves_is_refused_in_one_line(
        restored: None, attribute: str, value: Any, expected: str) -> None:
    register_policy(_make("odd", **{attribute: value}))
    with pytest.raises(ScenarioError) as info:
        emulator.simulate("odd", servers=4, jobs=300, engine="simpy")
    message = str(info.value)
    assert message == expected or re.fullmatch(expected, message), message


def test_lbemu_policies_lists_a_policy_whose_label_fails(restored: None, capsys: pytest.CaptureFixture[str]) -> None:
    register_policy(_make("odd", label=classmethod(lambda cls, config: [][1])))
    assert main(["policies"]) == 0
    assert re.search(r"^odd \(label e\.g\. none: label raised IndexError: list index out of range "
                     r"\(at test_hostile_policies\.py:\d+\)\): 0 per job", capsys.readouterr().out, re.MULTILINE)


def test_an_exception_of_the_policys_own_code_fails_check_policy_naming_the_check(restored: None) -> None:
    def dispatch(self: Any, dispatcher: Any, job: Any) -> None:
        if job.id == 50:
            [][1]  # the policy's own bug
        dispatcher.send(job, dispatcher.servers[0])

    line = dispatch.__code__.co_firstlineno + 2
    cls = register_policy(_make("buggy", dispatch=dispatch))
    with pytest.raises(AssertionError) as info:
        check_policy(cls)
    assert str(info.value) == f"BuggyPolicy fails runs_everywhere: IndexError: list index out of range " \
                              f"(at test_hostile_policies.py:{line})"


def test_a_failed_run_is_located_in_the_policys_code_not_simpys(restored: None) -> None:
    def dispatch(self: Any, dispatcher: Any, job: Any) -> None:
        raise KeyError(job.id)

    line = dispatch.__code__.co_firstlineno + 1
    register_policy(_make("raising", dispatch=dispatch))
    results = emulator.run({"replications": 1, "run": {"jobs": 300, "engine": "simpy"},
                            "policies": [{"name": "raising"}]}, workers=1)
    assert [error for _, error in results.errors] == [f"KeyError: 0 (at test_hostile_policies.py:{line})"]


def test_describe_finds_the_raising_line_under_simpys_copy_of_the_exception() -> None:
    from emulator.errors import describe

    def process(env: simpy.Environment) -> Any:
        yield env.timeout(1.0)
        raise ValueError("two\nlines")

    line = process.__code__.co_firstlineno + 2
    env = simpy.Environment()
    env.process(process(env))
    with pytest.raises(ValueError) as info:
        env.run()
    assert describe(info.value) == f"ValueError: two lines (at test_hostile_policies.py:{line})"


def test_a_users_policy_whose_servers_ask_runs_as_the_built_in_one_with_faults(tmp_path: Path) -> None:
    """Servers that ask (JIQ-SQ(2)'s I-queue queries, with the asker that a down server's replies need)
    pass through the users' checks: the same policy under another name gives the built-in's row."""
    out = _run("""
        from typing import Literal
        from emulator.policies.jiq import JIQConfig, JIQPolicy

        class MineConfig(JIQConfig):
            name: Literal["mine"] = "mine"

        class Mine(JIQPolicy):
            name = "mine"
            Config = MineConfig
            compiled = None

        emulator.register_policy(Mine)
        options = dict(servers=6, dispatchers=3, load=0.8, jobs=1000, seed=1, engine="simpy", d=2,
                       latency={"kind": "exponential", "mean": 0.05}, timeout=0.5,
                       failures={"up": {"kind": "exponential", "mean": 20.0},
                                 "down": {"kind": "exponential", "mean": 1.0}})
        rows = [emulator.simulate(name, **options) for name in ("jiq", "mine")]
        same = lambda a, b: a == b or a != a and b != b  # NaN (an undefined statistic) is itself
        print(sorted(key for key in rows[0] if key not in ("policy", "policy_name", "wall_seconds")
                     and not same(rows[0][key], rows[1][key])))
    """, tmp_path)
    assert out == "[]"


def test_a_long_pause_of_the_arrivals_with_a_busy_timer_is_no_stall(tmp_path: Path) -> None:
    """A trace that pauses for 800 time units (about 190 of its mean gaps) while a timer ticks 1,500 times
    a unit: over a million events without a job moving (more than `Watch.idle_limit` at N = 4), but spread
    over many gaps, as a correct run's quiet stretch is (an MMPP's low state, a trace's night)."""
    times = [*range(100), *range(900, 1050)]  # gaps of 1, and once 800 without an arrival
    (tmp_path / "trace.csv").write_text("time,size\n" + "".join(f"{t},0.5\n" for t in times))
    message = _stalled("""
        def meddle(model):
            while True:
                yield Timeout(model.env, 1 / 1500)
    """, tmp_path, options='{"arrivals": {"kind": "trace", "path": "trace.csv"}}')
    assert message == "finished"


def test_a_policy_that_calls_exit_fails_check_policy_naming_the_check(restored: None) -> None:
    def dispatch(self: Any, dispatcher: Any, job: Any) -> None:
        if job.id == 50:
            raise SystemExit(3)
        dispatcher.send(job, dispatcher.servers[0])

    cls = register_policy(_make("quitter", dispatch=dispatch))
    with pytest.raises(AssertionError) as info:
        check_policy(cls)
    assert str(info.value).startswith("QuitterPolicy fails runs_everywhere: SystemExit: 3 (at "
                                      "test_hostile_policies.py:")
