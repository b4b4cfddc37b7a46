"""One kernel per policy (`emulator.compiled.build`): each built from the templates with that policy's hooks alone.

Building writes and imports a module; nothing here compiles (numba compiles a kernel at its first call).
"""

from __future__ import annotations

import ast
import importlib
import itertools
import re
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from emulator.compiled import build, cache
from emulator.compiled.engine import _agree
from emulator.compiled.loading import form_features, origins
from emulator.compiled.policies import HOOKS, common, hooks, name_of
from emulator.compiled.tools import Description
from emulator.policies import BUILT_IN
from emulator.scenario.sweep import Scenario

FORM = """
from numba import njit


@njit(cache=True, inline="always")
def dispatch(P, Q, counts, length, rng, ubuf, iv, T, dispatcher):
    return {server}, False
"""


@pytest.fixture
def user_form(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A compiled form outside the package, importable as ``mine_compiled``."""
    path = tmp_path / "mine_compiled.py"
    path.write_text(FORM.format(server=0))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield path
    sys.modules.pop("mine_compiled", None)


@pytest.mark.parametrize("template", build.TEMPLATES)
def test_a_kernel_binds_its_policys_hooks_and_the_defaults_for_the_rest(template: str) -> None:
    features = (False,) * len(build.FEATURES[template])
    built = build.loop(template, "emulator.compiled.policies.sqd", features)
    sqd = importlib.import_module(build.specialised("emulator.compiled.policies.sqd",
                                                    tuple(build.hook_features(template, features).values())))
    assert built.dispatch is sqd.dispatch and built.replied is sqd.replied
    assert built.on_arrive_batch is common.nothing_on_arrive_batch  # SQ(d) has none
    assert Path(built.__file__).parent == cache.kernels_folder()
    assert "from .policies.template import" not in Path(built.__file__).read_text()


def test_each_policy_has_its_own_kernel_module() -> None:
    plain = (False,) * len(build.FEATURES["kernel"])
    sqd = build.loop("kernel", "emulator.compiled.policies.sqd", plain)
    jsq = build.loop("kernel", "emulator.compiled.policies.jsq", plain)
    assert sqd is not jsq and sqd.simulate is not jsq.simulate
    assert build.loop("kernel", "emulator.compiled.policies.sqd", plain) is sqd  # built once


def test_the_copy_keeps_the_templates_line_numbers() -> None:
    """Numba and tracebacks name the template's lines."""
    for template in build.TEMPLATES:
        text = (Path(build.__file__).parent / f"{template}.py").read_text()
        size = len(build.FEATURES[template])
        for features in (None, (False,) * size, (True,) * size):
            built = build.source(template, "emulator.compiled.policies.jsq", features)
            assert len(built.splitlines()) == len(text.splitlines())


def test_a_kernel_built_without_a_feature_fixes_its_flag() -> None:
    """Without latency the flag is a constant, so numba drops the message code it guards."""
    assert "    latent = False  # fixed for this kernel" in build.source("kernel", "emulator.compiled.policies.jsq",
                                                                        (False,) * len(build.FEATURES["kernel"]))
    assert "    held = True  # fixed for this kernel" in build.source("slotted", "emulator.compiled.policies.jsq",
                                                                      (True, False, False))


def test_only_batch_sqd_and_late_binding_build_kernels_with_whole_batches_or_reservations() -> None:
    """The event kernel's ``whole`` and ``reserving`` are features: every other policy's kernel is built without
    their code; a form's `Description` that needs them where its module does not declare them is refused."""
    declared = {name: form_features(name) for name in BUILT_IN if name_of(name) is not None}
    assert declared.pop("batch_sqd") == (True, False) and declared.pop("late_binding") == (False, True)
    assert set(declared.values()) == {(False, False)}
    text = build.source("kernel", "emulator.compiled.policies.jsq", (False,) * len(build.FEATURES["kernel"]))
    assert "    whole = False  # fixed for this kernel" in text and "    reserving = False  # fixed" in text
    with pytest.raises(ValueError, match=r"^batch_sqd: its compiled form's Description\.whole and \.reservations "
                                         r"must agree with its module's WHOLE_BATCHES and RESERVATIONS"):
        _agree("batch_sqd", Description())
    with pytest.raises(ValueError, match=r"^jsq: its compiled form's Description\.whole"):
        _agree("jsq", Description(reservations=True))
    _agree("late_binding", Description(reservations=True))  # as its module declares


def test_only_lors_slot_clock_keeps_each_jobs_dispatcher() -> None:
    """The slot clock's ``origins`` is a feature: only LOR's hooks read the dispatcher of the job that leaves or is
    blocked, and every other policy's slot clock is built without the code that keeps it."""
    assert {name for name in BUILT_IN if name_of(name) is not None and origins(name)} == {"lor"}
    text = build.source("slotted", "emulator.compiled.policies.jsq", (False, False, False))
    assert "    origins = False  # fixed for this kernel" in text


def test_a_users_form_gets_a_new_kernel_file_when_its_file_changes(user_form: Path) -> None:
    first = Path(build.loop("kernel", "mine_compiled", (False,) * len(build.FEATURES["kernel"])).__file__)
    assert first.exists() and hooks("mine_compiled")[HOOKS.index("dispatch")] is not None
    build.loop.cache_clear()
    user_form.write_text(FORM.format(server=1))
    sys.modules.pop("mine_compiled", None)
    second = Path(build.loop("kernel", "mine_compiled", (False,) * len(build.FEATURES["kernel"])).__file__)
    assert second != first and second.exists()
    assert not first.exists()  # the copy built from the old file is removed


def test_a_form_without_dispatch_is_refused_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "empty_form.py").write_text("PARAMS = frozenset()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(AttributeError, match="empty_form: a compiled policy needs a dispatch hook"):
        hooks("empty_form")


@pytest.mark.parametrize("template", build.TEMPLATES)
def test_the_templates_pass_no_constant_to_a_hook(template: str) -> None:
    """Numba compiles a function once per constant passed to it (a literal type): a hook called with True in one
    place and False in another, JBT-d's timer not inlined, was compiled twice in every kernel."""
    tree = ast.parse((Path(build.__file__).parent / f"{template}.py").read_text())
    constant = [f"line {node.lineno}: {ast.unparse(node)}" for node in ast.walk(tree)
                if isinstance(node, ast.Call) and ast.unparse(node.func) in HOOKS
                and any(isinstance(arg, ast.Constant) for arg in node.args)]
    assert constant == []


def test_the_policies_leave_a_messages_way_to_the_transport() -> None:
    """Whether a policy's message goes out as an event (latency, or held for a later slot) or is delivered now is
    `transport.posted`'s choice, as the SimPy policies leave it to their channel: no compiled policy reads P_HELD."""
    folder = Path(build.__file__).parent / "policies"
    reading = [path.name for path in sorted(folder.glob("*.py")) if "P[P_HELD]" in path.read_text()]
    assert reading == []


def test_the_package_keeps_its_modules_short_and_simpy_free() -> None:
    """Each module of the compiled engine stays readable (about 450 lines at most) and runs without SimPy."""
    package = Path(build.__file__).parent
    sources = [path for path in package.rglob("*.py") if "__pycache__" not in path.parts]
    long = {path.name: n for path in sources if (n := len(path.read_text().splitlines())) > 450}
    assert long == {}
    simpy = [path.name for path in sources for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Import | ast.ImportFrom)
             and any((alias.name if isinstance(node, ast.Import) else node.module or "").startswith("simpy")
                     for alias in node.names)]
    assert simpy == []


def test_no_function_of_the_compiled_engine_takes_more_than_a_dozen_parameters() -> None:
    """A function that needs more of the kernel's state takes the records the kernel has (`Tools`, `Failing`, the
    kernel's tuples of the servers', jobs' and measures' arrays) rather than one parameter per array."""
    package = Path(build.__file__).parent
    many = []
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names = [arg.arg for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]
                if len([name for name in names if name not in ("self", "cls")]) > 12:
                    many.append(f"{path.name}: {node.name}")
    assert many == []


def test_what_an_ask_at_zero_latency_with_faults_calls_per_job_is_inlined() -> None:
    """Each job's ask is opened, answered and closed in the kernel (`faults.INSTANT`): a compiled call that takes
    the policy's `Tools` passes its arrays and their reference counts at every call (SQ(2), N = 100, loss 0.05
    took 630 ns a job so, 210 ns inlined), so these are inlined where they are called."""
    from emulator.compiled import faults, network, records, transport

    called = {"network": ("open_ask", "close_ask", "expire"), "transport": ("query_all",),
              "records": ("take_message",), "faults": ("room", "answered", "lost", "close", "arrive")}
    modules = {"network": network, "transport": transport, "records": records, "faults": faults}
    apart = [f"{module}.{name}" for module, names in called.items() for name in names
             if getattr(modules[module], name).targetoptions.get("inline") != "always"]
    assert apart == []


def test_the_kernel_reads_its_servers_arrays_through_unmanaged_views() -> None:
    """Numba counts references to a managed array each time the kernel reads it out of a record (an atomic
    increment and decrement): every array of the kernel's ``servers`` record (the FIFO table, speeds, processor
    sharing, failing servers, copies) is bound as an unmanaged view (`core.unmanaged`, or a record's ``views``)."""
    tree = ast.parse((Path(build.__file__).parent / "kernel.py").read_text())
    wrapped = {id(arg) for node in ast.walk(tree) if isinstance(node, ast.Call)
               and ast.unparse(node.func).split(".")[-1] in ("unmanaged", "views") for arg in node.args}
    bare = [ast.unparse(node) for node in ast.walk(tree) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name) and node.value.id == "servers" and id(node) not in wrapped]
    assert bare == []


def test_message_records_are_taken_from_their_free_list_in_records_alone() -> None:
    """`records.take_message` takes a message record (its slot from the free list, the count, the four fields) for
    every sender, `records.release` gives it back: no other module of the compiled engine writes the free list's
    head."""
    package = Path(build.__file__).parent
    writers = []
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts or path.name == "records.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Subscript) and "I_MSG_FREE" in ast.unparse(t.slice) for t in targets):
                    writers.append(f"{path.name}: line {node.lineno}")
    assert writers == []


def test_ahead_builds_each_kernel_a_policy_uses_not_one_per_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """A policy's event kernel without and with latency are two kernels: `ahead.prepare` builds both."""
    from helpers.scenarios import make_point

    from emulator.compiled import ahead

    built: list[float] = []
    monkeypatch.setattr(ahead, "record", lambda point, policy, seed: built.append(point.scenario.network.latency.mean))
    # As in a process that has loaded neither kernel yet (this one may have run both already).
    fresh = SimpleNamespace(simulate=SimpleNamespace(overloads={}), simulate_slots=SimpleNamespace(overloads={}))
    monkeypatch.setattr(build, "loop", lambda template, name, flags: fresh)
    points = [make_point({"name": "jsq"}, servers=4, jobs=20, latency=latency) for latency in (0.0, 0.1)]
    assert ahead.prepare([(point, point.policies[0]) for point in points])
    assert sorted(built) == [0.0, 0.1]


@pytest.mark.parametrize("options", [
    {"servers": 100, "load": 0.9, "jobs": 5000, "time": "slotted"},  # a window of 5 slots: 450 jobs or more
    {"servers": 10, "load": 0.7, "jobs": 5000, "timeout": 1,  # a run longer than the mean down time
     "failures": {"up": {"kind": "exponential", "mean": 50}, "down": {"kind": "exponential", "mean": 2}}},
])
def test_the_short_case_that_builds_a_kernel_passes_the_scenarios_checks(options: dict[str, Any]) -> None:
    """`ahead.short_case` takes as many jobs as the checks ask of a run (never more than the case's own), so that
    building a kernel ahead never refuses a scenario the run itself accepts."""
    from emulator.api import scenario_data
    from emulator.compiled import ahead

    point = Scenario.from_dict(scenario_data("jsq", **options)).points()[0]
    short, policy = ahead.short_case(point, point.policies[0])
    assert 20 <= short.scenario.run.jobs < point.scenario.run.jobs and policy.name == "jsq"


@pytest.mark.parametrize("template", build.TEMPLATES)
def test_a_kernels_transport_is_what_the_feature_lines_read_at_run_time(template: str) -> None:
    """The values a kernel fixes in its hooks' feature lines are those the lines would read from its run's
    parameters (`engine`: P_LATENT 1 with latency, 2 asking at zero latency with faults; P_HELD; F_LOSS the loss,
    or -1 with failing servers)."""
    from types import SimpleNamespace

    from emulator.compiled import faults
    from emulator.compiled.state import F_LOSS, P_HELD, P_LATENT

    names = build.FEATURES[template]
    for values in itertools.product((False, True), repeat=len(names)):
        fixed = dict(zip(names, values, strict=True))
        if fixed.get("latent") and fixed.get("asking"):
            continue  # (asks through records only at zero latency: `loading.instant_asks`)
        P = np.zeros(64, dtype=np.int64)
        P[P_LATENT] = 1 if fixed.get("latent") else 2 if fixed.get("asking") else 0
        P[P_HELD] = fixed.get("held", False)
        fv = np.zeros(64)
        fv[F_LOSS] = (-1.0 if fixed.get("failing") else 0.05) if fixed.get("faulty") else 0.0
        names_read = {"P": P, "P_LATENT": P_LATENT, "P_HELD": P_HELD, "faults": faults, "T": SimpleNamespace(fv=fv),
                      "F_LOSS": F_LOSS}
        read = {name: bool(eval(expression, names_read)) for name, expression in build.HOOK_FEATURES.items()}
        assert build.hook_features(template, values) == read, fixed


def test_a_policys_kernel_imports_its_hooks_and_transport_with_the_feature_lines_fixed() -> None:
    """Without latency or faults, JBT-d's kernel is built from a copy of its module whose feature lines are
    constants, importing a copy of `transport` alike, so that numba compiles none of the branches they close."""
    plain = (False,) * len(build.FEATURES["kernel"])
    built = build.loop("kernel", "emulator.compiled.policies.jbt", plain)
    hooks_copy = sys.modules[built.dispatch.py_func.__module__]
    text = Path(hooks_copy.__file__).read_text()
    assert "    asking = False  # fixed for this kernel" in text and "P[P_LATENT]" not in text
    transport = re.search(r"^from (\S+) import late, lost, posted, query_all, send$", text, re.MULTILINE)
    assert transport is not None and "._built_transport__" in transport.group(1)
    transport_text = Path(sys.modules[transport.group(1)].__file__).read_text()
    assert "    held = False  # fixed for this kernel" in transport_text and "P[P_HELD]" not in transport_text
    assert "    faulty = False  # fixed for this kernel" in transport_text and "T.fv[F_LOSS]" not in transport_text
    latent = build.loop("kernel", "emulator.compiled.policies.jbt", (True, *plain[1:]))
    assert "    latency = True  # fixed" in Path(sys.modules[latent.dispatch.py_func.__module__].__file__).read_text()
    # Random reads no transport: its kernel binds its module itself.
    assert build.specialised("emulator.compiled.policies.random", (False,) * len(build.HOOK_FEATURES)) == \
        "emulator.compiled.policies.random"


def test_a_feature_line_written_otherwise_is_refused_in_one_line(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A line that names a transport feature but reads something else would be fixed to a value it does not
    compute: the build refuses it, naming the module and the line it must be."""
    (tmp_path / "odd_compiled.py").write_text(FORM.format(server=0).replace(
        "    return 0, False", "    latency = P[0] == 1  # feature: mine\n    return 0, False"))
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match=r"^odd_compiled: the feature line of 'latency' must read "
                                         r"`latency = P\[P_LATENT\] == 1`, not `latency = P\[0\] == 1`$"):
        build.specialised("odd_compiled", (False,) * len(build.HOOK_FEATURES))


def test_a_form_that_is_a_package_keeps_its_relative_imports_in_its_copy(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A compiled form written as a package (its `__init__` importing from its own modules) that asks through
    `transport` is copied; the copy's relative imports still reach the package's modules."""
    package = tmp_path / "minepkg"
    package.mkdir()
    (package / "helper.py").write_text("SERVER = 1\n")
    (package / "__init__.py").write_text(FORM.replace("from numba import njit", (
        "from numba import njit\n\nfrom emulator.compiled.transport import ask_lengths  # noqa: F401\n"
        "from .helper import SERVER")).format(server="SERVER"))
    monkeypatch.syspath_prepend(str(tmp_path))
    copy = importlib.import_module(build.specialised("minepkg", (False,) * len(build.HOOK_FEATURES)))
    assert copy.__name__.startswith("minepkg._built_hooks__") and copy.SERVER == 1
    for name in [name for name in sys.modules if name == "minepkg" or name.startswith("minepkg.")]:
        sys.modules.pop(name)
