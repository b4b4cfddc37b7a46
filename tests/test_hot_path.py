"""The SimPy engine's plain path (zero latency, no faults) resumes no generator per job.

A SimPy process costs a resumption of its generator (through `simpy.Process`) per event it
waits on, and a generator that hands out numbers drawn in batches costs one per number.
On this path the FIFO servers and the arrival source are callbacks of reusable events
(`emulator.model.server.Alarm`), and gaps, sizes and uniforms come from C-level iterators,
so the generator frames a run resumes do not grow with its jobs (the policies here have
no timer process). A server's callbacks keep the order of the process they replace.
"""

from __future__ import annotations

import gc
import inspect
import sys
from collections import Counter
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest
from helpers.scenarios import make_point, traced

import emulator
from emulator.measure.sketch import QuantileSketch
from emulator.model.build import Model, build_model
from emulator.model.job import Job

FLUSH = QuantileSketch.FLUSH


def profiled(profile: Callable[[FrameType, str, Any], None], policy: str, jobs: int, **options: Any) -> None:
    """One `emulator.simulate` call on SimPy, with ``profile`` seeing each frame it starts or resumes."""
    # A generator that earlier code left unfinished is closed when the collector frees it, which
    # the profile sees as a resumption: collect what is already garbage first.
    gc.collect()
    sys.setprofile(profile)
    try:
        emulator.simulate(policy, servers=10, jobs=jobs, warmup_jobs=jobs // 10, seed=3, engine="simpy", **options)
    finally:
        sys.setprofile(None)


def generator_resumptions(policy: str, jobs: int, **options: Any) -> int:
    """Generator frames started or resumed during one `emulator.simulate` call."""
    count = 0

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        nonlocal count
        if event == "call" and frame.f_code.co_flags & inspect.CO_GENERATOR:
            count += 1

    profiled(profile, policy, jobs, **options)
    return count


@pytest.mark.parametrize("policy, options", [
    ("jsq", {}), ("sqd", {"d": 2}), ("jiq", {}), ("random", {}),
    ("sqd", {"d": 2, "dispatchers": 3}), ("random", {"service": {"kind": "erlang", "k": 2}}),
])
def test_a_plain_run_resumes_no_generator_per_job(policy: str, options: dict[str, Any]) -> None:
    generator_resumptions(policy, 100, **options)  # first calls: imports and caches
    assert generator_resumptions(policy, 4_000, **options) == generator_resumptions(policy, 2_000, **options)


def python_calls(policy: str, jobs: int, **options: Any) -> Counter[str]:
    """Python frames started during one `emulator.simulate` call, by module and function name."""
    calls: Counter[str] = Counter()

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call":
            calls[f"{frame.f_globals.get('__name__')}.{frame.f_code.co_name}"] += 1

    profiled(profile, policy, jobs, **options)
    return calls


def test_a_plain_sqd_job_starts_a_python_frame_only_where_a_tracer_or_a_policy_may_step_in() -> None:
    # A Python call costs a plain SQ(2) run more than any line of its body: per job, what runs as a
    # function of its own is the arrival, the policy's decision (a method bound to the dispatcher),
    # the dispatcher's send, the server's accept and its departure (each a seam that
    # `emulator.model.trace` or a policy may wrap or replace, or an event's callback). Building the
    # job, counting the round trips in the channel's counters, scheduling a departure and the
    # recorder's account of a job entering and, while nothing replaced `Recorder.leave`, leaving are
    # written out where they happen.
    python_calls("sqd", 100, d=2)  # first calls: imports and caches
    small, large = python_calls("sqd", 2_000, d=2), python_calls("sqd", 4_000, d=2)
    per_job = {name for name in large if large[name] - small[name] >= 2_000}
    assert per_job == {f"emulator.{name}" for name in (
        "model.build._arrive", "policies.sqd._receive_pair",
        "model.dispatcher._send_instant", "model.server.accept", "model.server._depart")}


def test_a_replaced_recorder_leave_sees_every_departure_and_the_rows_stay() -> None:
    # A FIFO server writes `Recorder.account_leave` out while nothing replaced `Recorder.leave`;
    # setting `leave` (as a trace does) makes every departure call the replacement, with the same rows.
    expected = _model({"name": "sqd", "d": 2}, servers=5, jobs=2_000).record().metrics()
    model = _model({"name": "sqd", "d": 2}, servers=5, jobs=2_000)
    recorder, seen = model.recorder, []
    leave = recorder.leave

    def watched(job: Job, now: float) -> None:
        seen.append(job)
        leave(job, now)

    recorder.leave = watched
    got = model.record().metrics()
    assert not recorder.own_leave and recorder.leave is watched
    assert len(seen) == recorder.transfers - sum(server.length for server in model.servers)
    assert sum(job.measured for job in seen) == recorder.finished == 2_000
    assert {k: v for k, v in got.items() if k != "wall_seconds"} == \
        {k: v for k, v in expected.items() if k != "wall_seconds"}


def fields(job: Job) -> dict[str, Any]:
    """The fields a job has, with their values."""
    return {name: getattr(job, name) for name in Job.__slots__ if hasattr(job, name)}


@pytest.mark.parametrize("options", [{}, {"latency": {"kind": "exponential", "mean": 0.01}}])
def test_the_source_builds_each_job_as_job_init_would(options: dict[str, Any]) -> None:
    # The arrival source sets a job's fields itself rather than calling `Job.__init__`: a job it
    # hands over has exactly the fields, and values, that `Job(...)` would give it.
    trace = traced({"name": "random"}, servers=2, jobs=30, warmup=5, arrivals={"kind": "poisson"},
                   service={"kind": "exponential", "mean": 1}, **options)
    trace.run()
    handed = [job for _, _, job in trace.received]
    assert len(handed) >= 30 and any(job.measured for job in handed) and not all(job.measured for job in handed)
    for job in handed:
        built = Job(job.id, job.arrival, job.size, job.measured)
        # Set since by the dispatcher and the server: dispatched, dispatcher, at_server, server, start.
        later = {"dispatched", "dispatcher", "at_server", "server", "start"}
        assert {k: v for k, v in fields(job).items() if k not in later} == fields(built)


def test_a_job_sent_to_a_server_by_its_departure_hook_starts_one_service(trace_rows: Any) -> None:
    # One server. Job 0 arrives at 1 and leaves at 2; its departure hook sends a job of
    # size 2 there, which finds it empty: one service, 2 to 4, then job 1 (5 to 6). The
    # server looks at its queue after the hooks, as a process would: a second service
    # scheduled for the same job would make it leave twice.
    trace = traced({"name": "random"}, servers=1, **trace_rows([(1.0, 1.0), (5.0, 1.0)]))
    server = trace.model.servers[0]
    extra = Job(99, 2.0, 2.0, False)

    def hook(departed: Any) -> None:
        if not hasattr(extra, "server"):
            departed.accept(extra)

    server.on_depart = hook
    trace.run()
    assert [(now, job.id) for now, _, job in trace.left] == [(2.0, 0), (4.0, 99), (6.0, 1)]
    assert extra.start == 2.0


def _model(policy: dict[str, Any], servers: int = 1, jobs: int = 300) -> Model:
    point = make_point(policy, servers=servers, jobs=jobs, load=0.9, arrivals={"kind": "poisson"},
                       service={"kind": "exponential", "mean": 1})
    return build_model(point, point.policies[0], 1)


def test_the_next_arrival_waits_outside_simpys_event_queue_while_the_run_loop_runs() -> None:
    # SimPy's queue holds every busy server's departure; a push and a pop there per arrival cost
    # SQ(2) at N = 100 about a tenth of its CPU. While `Model.record` runs, the next arrival waits
    # aside (`guard.Aside`), so at one server's departure nothing else is queued but the run's end.
    model = _model({"name": "random"})
    queued: list[int] = []
    model.servers[0].on_depart = lambda _server: queued.append(
        sum(event is not model.recorder.done for *_, event in model.env._queue))
    model.record()
    assert len(queued) >= 300 and max(queued) == 0


@pytest.mark.parametrize("policy", [{"name": "sqd", "d": 2}, {"name": "jbt", "d": 2, "period": 5}])
def test_a_model_stepped_with_env_run_sees_every_arrival_as_the_run_loop_does(policy: dict[str, Any]) -> None:
    # Outside the run loop the next arrival is in SimPy's queue: stepping the model with
    # env.run(until=...), before and after a stretch of the run loop, gives the run's rows.
    recorded = _model(policy, servers=5, jobs=2_000)
    expected = recorded.record().metrics()
    stepped = _model(policy, servers=5, jobs=2_000)
    stepped.env.run(until=20.0)
    assert stepped.recorder.transfers > 50
    guard_run = stepped.env.timeout(40.0)  # the run loop up to t = 60, then SimPy's own steps again
    emulator.model.guard.run(stepped.env, guard_run, stepped.watch, aside=stepped.aside)
    assert stepped.env.now == 60.0
    for until in range(70, 100_000, 10):
        if stepped.recorder.done.processed:
            break
        stepped.env.run(until=float(until))
    got = stepped.recorder.metrics()
    assert {k: v for k, v in got.items() if k != "wall_seconds"} == \
        {k: v for k, v in expected.items() if k != "wall_seconds"}


def test_the_recorder_bins_its_buffered_responses_at_most_flush_apart() -> None:
    # `Recorder.leave` looks at the sketch's buffer only when the finished count reaches a mark: the
    # buffer is still binned whenever it reaches FLUSH responses, and loses none.
    model = _model({"name": "random"}, servers=2, jobs=3 * FLUSH + 5)
    recorder, sizes = model.recorder, []
    leave = recorder.leave

    def watched(job: Job, now: float) -> None:
        leave(job, now)
        sizes.append(len(recorder.responses.buffer))

    recorder.leave = watched
    model.record()
    assert max(sizes) == FLUSH - 1 and sizes.count(0) >= 3  # binned as the FLUSH-th comes
    assert int(recorder.responses.counts.sum()) == recorder.finished == 3 * FLUSH + 5


@pytest.mark.parametrize("options, instant", [({}, True), ({"latency": {"kind": "exponential", "mean": 0.01}}, False)])
def test_an_instant_dispatchers_send_is_its_class_s_and_a_trace_still_sees_it(options: dict[str, Any],
                                                                             instant: bool) -> None:
    # Python 3.11 specialises the call of a class's method, not of an instance attribute that shadows
    # it: on an instant channel `send` is `_send_instant` through the class. A trace wraps the
    # instance's `send`, and sees every job sent.
    from emulator.model.dispatcher import Dispatcher

    trace = traced({"name": "sqd", "d": 2}, servers=3, jobs=40, warmup=5, **options)
    dispatcher = trace.model.dispatchers[0]
    assert (type(dispatcher).send is Dispatcher._send_instant) is instant
    assert "send" in vars(dispatcher)  # the trace's
    trace.run()
    assert len(trace.sent) == len(trace.received) >= 45
    plain = make_point({"name": "sqd", "d": 2}, servers=3, jobs=40, warmup=5, **options)
    built = build_model(plain, plain.policies[0], 1)
    assert ("send" in vars(built.dispatchers[0])) is False


def test_a_dispatchers_receive_is_its_own_attribute_that_no_method_of_its_class_shadows() -> None:
    # Python 3.11 specialises the read of an instance's attribute only when its class has no method of
    # that name: the source reads `receive` per job.
    from emulator.model.dispatcher import Dispatcher

    point = make_point({"name": "sqd", "d": 2}, servers=3, jobs=40, warmup=5)
    model = build_model(point, point.policies[0], 1)
    assert all("receive" in vars(dispatcher) for dispatcher in model.dispatchers)
    assert not any(hasattr(cls, "receive") for cls in (*type(model.dispatchers[0]).__mro__, Dispatcher))
