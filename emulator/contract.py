"""The policy contract as a public check: `check_policy` runs on any policy what lbemu runs on its own.

In the manner of scikit-learn's ``check_estimator``: a policy written outside
lbemu is registered (`emulator.register_policy`) and then checked here, by the
same functions the project's tests parametrize over every built-in policy
(`policy_checks`). Each check raises `AssertionError` saying what failed:

- ``documented``: the class and its Config follow the contract (a ``name`` literal,
  extra keys forbidden, every parameter described, a References section, a
  message count, a label);
- ``validates``: it validates through a scenario, refuses an unknown parameter and
  a value of the wrong type in one line naming the key, and takes a label;
- ``runs_everywhere``: it runs in every system the emulator models (latency,
  several dispatchers, pools with capacity, heterogeneous speeds, one server),
  conserves jobs, keeps FIFO order and Little's law as sample-path identities;
  a system its ``check`` refuses in one line naming a key of ``policies.0`` is
  passed over, except the plain one; a policy that sends a job as copies
  (redundancy) is held to these identities copy by copy;
- ``accounts_messages``: every message it sends is counted once, by kind, through
  the channel, and with zero latency every query has its reply;
- ``reproducible``: the same seed gives the same row, another seed another;
- ``same_on_both_engines``: where it has a compiled form, the compiled engine's
  rows equal SimPy's (repr) in every system;
- ``listed``: ``lbemu policies`` lists it with its message count.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import math
import re
import typing
from collections.abc import Callable
from typing import Any

from .errors import ScenarioError, describe
from .measure.messages import KINDS
from .policies import REGISTRY, contract_problem
from .policies.base import Policy, PolicyConfig

POISSON = {"arrivals": {"kind": "poisson"}, "service": {"kind": "exponential", "mean": 1}}
SYSTEMS: dict[str, dict[str, Any]] = {
    "plain": {},
    "latency": {"latency": {"kind": "deterministic", "mean": 0.1}},
    "random-latency": {"latency": {"kind": "exponential", "mean": 0.2}},
    "dispatchers-3": {"dispatchers": 3},
    "dispatchers-3-latency": {"dispatchers": 3, "latency": {"kind": "deterministic", "mean": 0.05}},
    "pool-capacity": {"discipline": "pool", "capacity": 2, "load": 1.5},
    "fifo-capacity": {"capacity": 2},
    # Speed-oblivious policies overload the two slow servers here (refused unless allowed); the run is short.
    "speeds": {"speeds": [0.5, 1.0, 1.5, 3.0], "allow_unstable": True},
    "speeds-pool-latency": {"speeds": [0.5, 1.0, 1.5, 3.0], "discipline": "pool", "capacity": 3,
                            "load": 1.2, "latency": {"kind": "deterministic", "mean": 0.1}},
    "one-server": {"servers": 1},
}
"""The systems every policy must run in: each a set of `simulate`-style options over 4 servers."""


def check_policy(cls: type[Policy]) -> None:
    """Run every contract check on a policy class; raise `AssertionError` naming the first that fails.

    The class must be registered (`emulator.register_policy`), since the checks run
    it from scenarios by its name. Whatever a check meets, the error is one
    `AssertionError` line: something that is not a policy class is refused first,
    and an exception the policy's own code raises during a check names the check,
    the exception and where the policy raised it, e.g. ``MinePolicy fails
    runs_everywhere: IndexError: list index out of range (at mine.py:12)``.

    Examples
    --------
    >>> from emulator.policies import REGISTRY
    >>> check_policy(REGISTRY["random"])
    """
    problem = contract_problem(cls)
    if problem:
        raise AssertionError(f"check_policy: {problem}")
    for name, check in policy_checks(cls):
        try:
            check()
        except AssertionError as exc:
            raise AssertionError(f"{cls.__name__} fails {name}: {exc}") from exc
        except (Exception, SystemExit) as exc:  # the policy's own code failed (or called exit()) inside the check
            raise AssertionError(f"{cls.__name__} fails {name}: {describe(exc)}") from exc


def policy_checks(cls: type[Policy]) -> list[tuple[str, Callable[[], None]]]:
    """The contract's checks of ``cls``, as ``(name, check)``; each check raises `AssertionError`."""
    return [(name, _bound(check, cls)) for name, check in _CHECKS.items()]


def _bound(check: Callable[[type[Policy]], None], cls: type[Policy]) -> Callable[[], None]:
    return lambda: check(cls)


# -- what a policy entry looks like in a scenario ------------------------------------------
def entry(cls: type[Policy], servers: int = 4) -> dict[str, Any]:
    """The policy with its defaults, as a scenario entry; a sampling ``d``, and a memory ``m`` beside it, kept
    within ``servers``."""
    config = _defaults(cls).resolve(servers)
    data: dict[str, Any] = {"name": cls.name}
    d = getattr(config, "d", None)
    if isinstance(d, int) and "d" in type(config).expressions():
        if d > servers:
            data["d"] = d = servers
        m = getattr(config, "m", None)
        if isinstance(m, int) and m > servers - d:  # SQ(d) with memory reads d + m distinct servers
            data["m"] = servers - d
    return data


def _defaults(cls: type[Policy]) -> PolicyConfig:
    """The policy's configuration with every default."""
    return cls.Config.model_validate({"name": cls.name})


def _params(cls: type[Policy], servers: int) -> dict[str, Any]:
    return {k: v for k, v in entry(cls, servers).items() if k != "name"}


def _registered(cls: type[Policy]) -> None:
    assert REGISTRY.get(cls.name) is cls, (f"{cls.__name__} is not registered under {cls.name!r}: call "
                                          f"emulator.register_policy({cls.__name__}) first")


# -- the checks ----------------------------------------------------------------------------
def documented(cls: type[Policy]) -> None:
    problem = contract_problem(cls)
    assert problem is None, problem
    name_field = cls.Config.model_fields["name"]
    assert typing.get_args(name_field.annotation) == (cls.name,) and name_field.default == cls.name, \
        f"Config needs name: Literal[{cls.name!r}] = {cls.name!r}"
    assert cls.Config.model_config.get("extra") == "forbid", "Config must forbid unknown keys"
    for field, info in cls.Config.model_fields.items():
        if field not in ("name", "label"):
            assert info.description, f"parameter {field} has no description (shown by `lbemu policies`)"
    doc = inspect.getdoc(cls) or ""
    assert re.search(r"^References\n-{10}", doc, re.MULTILINE), "the docstring needs a References section"
    assert re.search(r"\.\. \[1\] ", doc), "References need at least one entry"
    assert isinstance(cls.messages, str) and cls.messages.strip(), "messages must say the control-message cost"
    label = cls.label(_defaults(cls).resolve(10))
    assert isinstance(label, str) and label.strip(), "label must be a non-empty string"


def validates(cls: type[Policy]) -> None:
    from .scenario.sweep import Scenario

    _registered(cls)
    scenario = Scenario.from_dict({"policies": [entry(cls)], "system": {"servers": 4}})
    (policy,) = scenario.points()[0].policies
    assert policy.name == cls.name and isinstance(policy.config, cls.Config)
    assert policy.label == cls.label(policy.config)
    _refused({"policies": [{**entry(cls), "no_such_parameter": 1}]}, r"^policies\.0\.no_such_parameter: ")
    for field in cls.Config.model_fields:
        if field not in ("name", "label"):
            _refused({"policies": [{**entry(cls), field: {"not": "a value"}}]}, rf"^policies\.0\.{field}: ")
    labelled = Scenario.from_dict({"policies": [{**entry(cls), "label": "mine"}]})
    assert labelled.points()[0].policies[0].label == "mine"


def _refused(data: dict[str, Any], key: str) -> None:
    from .scenario.sweep import Scenario

    try:
        Scenario.from_dict(data)
    except ScenarioError as exc:
        message = str(exc)
        assert re.match(key, message) and "\n" not in message, f"expected one line naming {key}, got {message!r}"
        return
    raise AssertionError(f"{data['policies'][0]} was accepted; expected it refused naming {key}")


def runs_everywhere(cls: type[Policy]) -> None:
    from .measure.recorder import METRICS

    _registered(cls)
    for system, options in SYSTEMS.items():
        options = {"servers": 4, "load": 0.8, "jobs": 400, "warmup_jobs": 40, **POISSON, **options}
        if _refuses(cls, system, options):
            continue
        trace = traced(cls, seed=17, **options)
        metrics = trace.run()
        where = f"in system {system!r}"
        check_conservation(trace, where)
        check_timestamps(trace, where)
        check_little_exact(trace, where)
        assert metrics["jobs"] == 400, where
        assert set(METRICS) - {"wall_seconds"} <= set(metrics), f"{where}: metric columns missing"
        if "capacity" in options:
            assert 0 <= metrics["blocked_fraction"] < 1, where
        else:
            assert metrics["blocked_fraction"] == 0, f"{where}: jobs blocked without a capacity"
        assert all(0 <= sid < options["servers"] for _, _, _, sid, _ in trace.sent), f"{where}: no such server"


def accounts_messages(cls: type[Policy]) -> None:
    _registered(cls)
    for system in ("plain", "dispatchers-3", "latency", "dispatchers-3-latency"):
        options = {"servers": 4, "load": 0.8, "jobs": 400, "warmup_jobs": 40, **POISSON, **SYSTEMS[system]}
        if _refuses(cls, system, options):
            continue
        trace = traced(cls, seed=23, **options)
        metrics = trace.run()
        recorder = trace.model.recorder
        where = f"in system {system!r}"
        assert trace.model.channel.counts is recorder.counts, f"{where}: messages counted outside the channel"
        assert all(n > 0 for _, _, n in trace.messages), f"{where}: a message counter went down"
        logged = _sums(trace.messages)
        assert logged == {kind: n for kind, n in zip(KINDS, recorder.counts, strict=True) if n}, \
            f"{where}: the counters changed other than through the channel"
        (_, _, opened), (_, _, closed) = recorder.window
        for i, kind in enumerate(KINDS):
            counted = closed[i] - opened[i]
            # n / jobs * jobs need not give n back exactly in floating point (997 / 400 * 400 does not).
            assert abs(metrics[f"messages_per_job_{kind}"] * metrics["jobs"] - counted) <= 1e-9 * max(counted, 1), \
                f"{where}: {kind} per job"
        assert math.isclose(metrics["messages_per_job"] * metrics["jobs"], sum(closed) - sum(opened))
        if "latency" not in options:  # every query is answered at once
            assert metrics["messages_per_job_query"] == metrics["messages_per_job_reply"], \
                f"{where}: queries without replies"


def reproducible(cls: type[Policy]) -> None:
    from .api import simulate

    _registered(cls)
    options: dict[str, Any] = dict(servers=4, load=0.85, jobs=1000, dispatchers=2, engine="simpy",
                                   latency={"kind": "exponential", "mean": 0.1})
    rows = [simulate(cls.name, seed=seed, **options, **_params(cls, 4)) for seed in (31, 31, 32)]
    for row in rows:
        row.pop("wall_seconds")
    assert rows[0] == rows[1], "the same seed gave another row"
    assert rows[0] != rows[2], "another seed gave the same row"


def same_on_both_engines(cls: type[Policy], systems: tuple[str, ...] = tuple(SYSTEMS)) -> None:
    """In every system (of ``systems``) the compiled engine's row is SimPy's; without a compiled form SimPy runs
    both.

    A policy that names a compiled form (``compiled``) must run compiled in the plain
    system at least: a form that does not import, or refuses the simplest case, fails here.
    """
    from .api import scenario_data, simulate
    from .compiled import has_compiled_form, supports
    from .scenario.sweep import Scenario

    _registered(cls)
    for system in systems:
        options = {"servers": 4, "load": 0.8, "jobs": 400, "warmup_jobs": 40, **POISSON, **SYSTEMS[system]}
        if _refuses(cls, system, options):
            continue
        params = _params(cls, options["servers"])
        # A compiled form may refuse a case it cannot run exactly (`supports`): then SimPy runs it.
        point = Scenario.from_dict(scenario_data(cls.name, seed=17, **options, **params)).points()[0]
        why = supports(point, point.policies[0]) if has_compiled_form(cls.name) else "no compiled form"
        if system == "plain" and has_compiled_form(cls.name):
            assert why is None, f"its compiled form {cls.compiled!r} does not run the plain system: {why}"
        old = simulate(cls.name, seed=17, engine="simpy", **options, **params)
        new = simulate(cls.name, seed=17, engine="compiled", **options, **params)
        assert new["engine"] == ("compiled" if why is None else "simpy"), f"{system}: engine"
        for row in (old, new):
            row.pop("wall_seconds"), row.pop("engine")
        differ = {k: (old[k], new[k]) for k in old if repr(old[k]) != repr(new.get(k))}
        assert not differ, f"in system {system!r} the engines differ: {differ}"


def _refuses(cls: type[Policy], system: str, options: dict[str, Any]) -> bool:
    """Whether the policy's own ``check`` refuses this system, in one line naming a key of ``policies.0``.

    A policy may refuse a system that makes no sense for it (pools for job copies), but
    never the plain one, and never otherwise than a scenario refuses any bad value.
    """
    from .api import scenario_data
    from .scenario.sweep import Scenario

    try:
        Scenario.from_dict(scenario_data(cls.name, seed=1, **options, **_params(cls, options["servers"]))).points()
    except ScenarioError as exc:
        message = str(exc)
        assert message.startswith("policies.0.") and "\n" not in message, \
            f"in system {system!r}: refused other than in one line naming its key: {message!r}"
        assert system != "plain", f"it refuses the plain system: {message}"
        return True
    return False


def listed(cls: type[Policy]) -> None:
    from .cli import main

    _registered(cls)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["policies"]) == 0
    text = out.getvalue()
    assert re.search(rf"^{re.escape(cls.name)}\b", text, re.MULTILINE), "not listed by `lbemu policies`"
    assert cls.messages in text, "its message count is not listed by `lbemu policies`"


_CHECKS: dict[str, Callable[[type[Policy]], None]] = {
    "documented": documented, "validates": validates, "runs_everywhere": runs_everywhere,
    "accounts_messages": accounts_messages, "reproducible": reproducible,
    "same_on_both_engines": same_on_both_engines, "listed": listed,
}


# -- the sample-path identities every run keeps (the tests use them too) ----------------------
def traced(cls: type[Policy], seed: int = 1, **options: Any) -> Any:
    """A model of ``cls`` in a small system (`simulate`-style options), with a `Trace` attached, not run."""
    from .api import scenario_data
    from .model.build import build_model
    from .model.trace import Trace
    from .scenario.sweep import Scenario

    data = scenario_data(cls.name, seed=seed, **options, **_params(cls, options.get("servers", 4)))
    point = Scenario.from_dict(data).points()[0]
    return Trace(build_model(point, point.policies[0], seed))


def check_conservation(trace: Any, where: str = "") -> None:
    """Every job that arrived is at a dispatcher, in transit, at a server, gone, blocked or lost.

    Lost: at a failing server with ``on_down: lose`` (docs/faults.md), whether it
    was there when the server failed or reached it while down.
    """
    if _copies(trace):
        _check_copies_conservation(trace, where)
        return
    model = trace.model
    received = {job.id for job in trace.jobs}
    assert sorted(received) == list(range(len(received))), f"{where}: job ids out of order or lost"
    sent = [job_id for _, _, job_id, _, _ in trace.sent]
    accepted = [job_id for _, _, job_id in trace.accepted]
    left = [job.id for _, _, job in trace.left]
    blocked = [job.id for _, job in trace.blocked]
    lost = [job.id for _, job in trace.lost]
    for ids in (sent, accepted, left, blocked, lost):
        assert len(ids) == len(set(ids)), f"{where}: a job was sent, accepted, finished or lost twice"
    assert set(sent) <= received and set(accepted) <= set(sent), f"{where}: a job reached a server unsent"
    ends = (set(left), set(blocked), set(lost))
    assert set().union(*ends) <= set(accepted), f"{where}: a job ended at no server"
    assert sum(map(len, ends)) == len(set().union(*ends)), f"{where}: a job both served, blocked or lost"
    lengths = [server.length for server in model.servers]
    assert all(length >= 0 for length in lengths), f"{where}: a negative length"
    assert len(accepted) == len(left) + len(blocked) + len(lost) + sum(lengths), f"{where}: jobs lost at the servers"
    assert model.recorder.in_system == sum(lengths), where
    assert model.recorder.transfers == len(sent), f"{where}: transfers outside Dispatcher.send"
    for server in model.servers:
        if server.capacity is not None:
            assert server.length <= server.capacity, f"{where}: a server above its capacity"
    # The measured jobs all finished: served, blocked or lost, nothing else.
    metrics = trace.metrics
    measured = [job for job in trace.jobs if job.measured]
    assert len(measured) == metrics["jobs"], where
    finished = set().union(*ends)
    assert all(job.id in finished for job in measured), f"{where}: a measured job never finished"
    assert metrics["blocked_fraction"] == sum(job.blocked for job in measured) / metrics["jobs"], where
    lost_measured = sum(job.id in ends[2] for job in measured)
    assert metrics.get("lost_fraction", 0.0) == lost_measured / metrics["jobs"], where


def check_timestamps(trace: Any, where: str = "") -> None:
    """Waits are >= 0, FIFO servers serve in order of arrival, service takes size / speed."""
    if _copies(trace):
        _check_copies_timestamps(trace, where)
        return
    done = trace.completion()
    speed = {server.id: server.speed for server in trace.model.servers}
    fifo = trace.model.servers[0].discipline == "fifo"
    previous: dict[int, float] = {}
    jobs = sorted((job for job in trace.jobs if job.id in done), key=lambda j: (j.server, j.start, j.id))
    for job in jobs:
        assert job.arrival <= job.dispatched <= job.at_server <= job.start, f"{where}: job {job.id} times"
        expected = job.start + job.size / speed[job.server]
        assert math.isclose(done[job.id], expected, rel_tol=1e-9, abs_tol=1e-9), f"{where}: job {job.id} service"
        if fifo:
            assert job.start == max(job.at_server, previous.get(job.server, -math.inf)), \
                f"{where}: job {job.id} out of FIFO order"
            previous[job.server] = done[job.id]
        else:
            assert job.start == job.at_server, f"{where}: a pool made job {job.id} wait"


def check_little_exact(trace: Any, where: str = "") -> None:
    """Time-average jobs at servers x span = the sum of each job's time at a server inside the window.

    This is Little's law as a sample-path identity: no tolerance beyond float rounding.
    With ``on_down: lose`` a job lost at a down server leaves it when it is lost, and
    one lost on arrival (it has no ``at_server``) was never at it.
    """
    metrics = trace.metrics
    warmup = trace.model.recorder.warmup
    t0 = trace.job(warmup).arrival
    t1 = t0 + metrics["sim_time"]
    done = trace.completion() | {job.id: now for now, job in trace.lost}
    now = trace.model.env.now
    accepted = {job_id for _, _, job_id in trace.accepted}
    area = 0.0
    if _copies(trace):  # the lengths count copies: each copy's time at its server
        for end, copy in _copy_ends(trace) + [(now, copy) for copy in _copies_present(trace)]:
            area += max(0.0, min(end, t1) - max(copy.at_server, t0))
    for job in trace.jobs if not _copies(trace) else ():
        if job.blocked or job.id not in accepted or not hasattr(job, "at_server"):
            continue
        start, end = job.at_server, done.get(job.id, now)
        area += max(0.0, min(end, t1) - max(start, t0))
    servers = len(trace.model.servers)
    measured = metrics["mean_queue_length"] * servers * metrics["sim_time"]
    assert math.isclose(measured, area, rel_tol=1e-9, abs_tol=1e-9), f"{where}: Little's law {measured} != {area}"


def _copies(trace: Any) -> bool:
    """Whether the model sends each job as copies (`emulator.model.copies`)."""
    return getattr(trace.model, "copier", None) is not None


def _copy_ends(trace: Any) -> list[tuple[float, Any]]:
    """Every copy that left its server, ``(time, copy)``: finishing its job, or not (withdrawn)."""
    return [(now, copy) for now, _, copy in trace.left] + list(trace.withdrawn)


def _copies_present(trace: Any) -> list[Any]:
    """The copies at the servers now (a cancelled copy may still sit in a queue, marked gone)."""
    from .model.copies import SERVING, WAITING

    return [copy for server in trace.model.servers for copy in server.queue if copy.state in (WAITING, SERVING)]


def _check_copies_conservation(trace: Any, where: str) -> None:
    """Copy by copy: each sent once to its server, and there, gone, or dropped; each job finished by one copy.

    A job's copies go to distinct servers, so a copy is (job id, server id).
    """
    model = trace.model
    received = {job.id for job in trace.jobs}
    assert sorted(received) == list(range(len(received))), f"{where}: job ids out of order or lost"
    sent = [(job_id, sid) for _, _, job_id, sid, _ in trace.sent]
    accepted = [(job_id, sid) for _, sid, job_id in trace.accepted]
    ended = [(copy.id, copy.server) for _, copy in _copy_ends(trace)]
    dropped = [(copy.id, copy.target.id) for _, copy in trace.dropped]
    present = [(copy.id, copy.server) for copy in _copies_present(trace)]
    for copies in (sent, accepted, ended, dropped, present):
        assert len(copies) == len(set(copies)), f"{where}: a copy was sent, accepted, ended or dropped twice"
    assert {job_id for job_id, _ in sent} <= received and set(accepted) <= set(sent), \
        f"{where}: a copy reached a server unsent"
    assert sorted(accepted) == sorted(ended + dropped + present), f"{where}: copies lost at the servers"
    lengths = [server.length for server in model.servers]
    assert lengths == [sum(copy.server == server.id for copy in _copies_present(trace)) for server in model.servers], \
        f"{where}: lengths other than the copies present"
    assert model.recorder.in_system == sum(lengths), where
    assert model.recorder.transfers == len(sent), f"{where}: transfers outside Dispatcher.send"
    finished = [copy.id for _, _, copy in trace.left]
    assert len(finished) == len(set(finished)), f"{where}: a job finished by two copies"
    metrics = trace.metrics
    measured = [job for job in trace.jobs if job.measured]
    assert len(measured) == metrics["jobs"], where
    assert {job.id for job in measured} <= set(finished), f"{where}: a measured job never finished"
    assert metrics["blocked_fraction"] == 0 and metrics["lost_fraction"] == 0, where


def _check_copies_timestamps(trace: Any, where: str) -> None:
    """Copy by copy: times in order, the finishing copy served size / speed, each server's copies in FIFO order.

    A copy starts when it arrives at an idle server, or when the copy before it there left
    (finished, or cancelled in service); a copy cancelled while waiting never starts.
    """
    speed = {server.id: server.speed for server in trace.model.servers}
    for now, _, copy in trace.left:
        assert copy.arrival <= copy.dispatched <= copy.at_server <= copy.start, f"{where}: copy of {copy.id} times"
        assert math.isclose(now, copy.start + copy.size / speed[copy.server], rel_tol=1e-9, abs_tol=1e-9), \
            f"{where}: job {copy.id} service"
    ends = [*_copy_ends(trace), *((math.inf, copy) for copy in _copies_present(trace))]
    served = sorted((copy.server, copy.start, copy.at_server, end) for end, copy in ends if hasattr(copy, "start"))
    previous: dict[int, tuple[float, float]] = {}  # by server: the last served copy's arrival and end
    for sid, start, at_server, end in served:
        arrived, ended = previous.get(sid, (-math.inf, -math.inf))
        assert at_server >= arrived, f"{where}: server {sid} served copies out of FIFO order"
        assert start == max(at_server, ended), f"{where}: server {sid} idle, or serving two copies, at {start:g}"
        previous[sid] = (at_server, end)


def _sums(log: list[tuple[float, str, int]]) -> dict[str, int]:
    sums: dict[str, int] = {}
    for _, kind, n in log:
        sums[kind] = sums.get(kind, 0) + n
    return {kind: n for kind, n in sums.items() if n}
