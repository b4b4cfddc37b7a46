"""One kernel per policy (`emulator.compiled.build`): each built from the templates with that policy's hooks alone.

Building writes and imports a module; nothing here compiles (numba compiles a kernel at its first call).
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba")

from emulator.compiled import build, cache
from emulator.compiled.policies import HOOKS, common, hooks

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
    built = build.loop(template, "emulator.compiled.policies.sqd", (False,) * len(build.FEATURES[template]))
    sqd = importlib.import_module("emulator.compiled.policies.sqd")
    assert built.dispatch is sqd.dispatch and built.replied is sqd.replied
    assert built.on_arrive_batch is common.nothing_on_arrive_batch  # SQ(d) has none
    assert Path(built.__file__).parent == cache.kernels_folder()
    assert "from .policies.template import" not in Path(built.__file__).read_text()


def test_each_policy_has_its_own_kernel_module() -> None:
    sqd = build.loop("kernel", "emulator.compiled.policies.sqd", (False, False, False, False, False))
    jsq = build.loop("kernel", "emulator.compiled.policies.jsq", (False, False, False, False, False))
    assert sqd is not jsq and sqd.simulate is not jsq.simulate
    assert build.loop("kernel", "emulator.compiled.policies.sqd", (False, False, False, False, False)) is sqd  # once


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
                                                                        (False, False, False, False, False))
    assert "    held = True  # fixed for this kernel" in build.source("slotted", "emulator.compiled.policies.jsq",
                                                                      (True, False))


def test_a_users_form_gets_a_new_kernel_file_when_its_file_changes(user_form: Path) -> None:
    first = Path(build.loop("kernel", "mine_compiled", (False, False, False, False, False)).__file__)
    assert first.exists() and hooks("mine_compiled")[HOOKS.index("dispatch")] is not None
    build.loop.cache_clear()
    user_form.write_text(FORM.format(server=1))
    sys.modules.pop("mine_compiled", None)
    second = Path(build.loop("kernel", "mine_compiled", (False, False, False, False, False)).__file__)
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
    `network.posted`'s choice, as the SimPy policies leave it to their channel: no compiled policy reads P_HELD."""
    folder = Path(build.__file__).parent / "policies"
    reading = [path.name for path in sorted(folder.glob("*.py")) if "P[P_HELD]" in path.read_text()]
    assert reading == []
