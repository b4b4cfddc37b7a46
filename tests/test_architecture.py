"""The shape of the package: one direction of imports, and scenario reading free of the engines;
and test modules that stand alone.

Imports are read from the source with `ast`, all of them: at module level, under
``TYPE_CHECKING`` and inside functions. An edge goes from a module to each module it
names (``from .a import b`` names ``a.b`` where that is a module, else ``a``); the
implicit import of a parent package is not an edge.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("emulator", "analysis")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "__pycache__" in path.parts:  # the compiled engine's generated kernels, not the package's modules
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _imports(module: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that ``module`` imports, anywhere in its source."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            submodules = {f"{source}.{alias.name}" for alias in node.names} & known
            names.update(submodules)
            if len(submodules) < len(node.names):  # a name from the module itself, not only its submodules
                names.add(source)
    return {name for name in names if name in known and name != module}


@functools.cache  # read once for every test here (the callers do not change it)
def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {module: _imports(module, path, set(modules)) for module, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_among_the_modules() -> None:
    graph = _graph()
    assert len(graph) > 40 and graph["emulator.model.build"], "the graph was not read"
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("layer, forbidden", [
    ("emulator.scenario", ("emulator.model", "emulator.compiled", "emulator.experiment", "emulator.api")),
    ("emulator.policies", ("emulator.model", "emulator.compiled", "emulator.experiment", "emulator.scenario.sweep",
                           "emulator.api")),
    ("emulator.measure", ("emulator.model", "emulator.compiled", "emulator.policies", "emulator.scenario")),
    ("emulator.workload", ("emulator.model", "emulator.compiled", "emulator.experiment")),
    ("emulator.model", ("emulator.compiled", "emulator.experiment")),
    ("emulator.compiled", ("emulator.model", "emulator.experiment")),
])
def test_each_layer_imports_only_below_it(layer: str, forbidden: tuple[str, ...]) -> None:
    graph = _graph()
    for module, targets in graph.items():
        if module == layer or module.startswith(layer + "."):
            bad = sorted(t for t in targets if any(t == f or t.startswith(f + ".") for f in forbidden))
            assert not bad, f"{module} imports {bad}"


def test_reading_a_scenario_needs_no_engine() -> None:
    """Validation, the sweep and the JSON Schema import neither SimPy nor numba nor the engines."""
    script = """
import sys
from emulator.scenario.reading import load_scenario
scenario = load_scenario("scenarios/quickstart.yaml")
points = scenario.points()
schema = type(scenario).model_json_schema()
loaded = [name for name in ("simpy", "numba", "emulator.model", "emulator.compiled") if name in sys.modules]
print(len(points), len(schema) > 0, loaded)
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[0] == "3 True []", done.stdout


def _test_module_faults(source: str, tests: set[str], benchmarks: set[str]) -> list[str]:
    """What in ``source`` makes a test depend on another test module or on ``benchmarks/``.

    An import of a test module (``test_*``) or of ``conftest`` (fixtures only: shared
    helpers are in ``tests/helpers/``), an import of a benchmark script's module, or a
    change to ``sys.path`` that names ``benchmarks``.
    """
    faults = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for top in {name.split(".")[0] for name in names} if not getattr(node, "level", 0) else ():
                if top in tests or top == "conftest":
                    faults.append(f"line {node.lineno} imports the test module {top}")
                elif top in benchmarks:
                    faults.append(f"line {node.lineno} imports benchmarks/{top}.py")
        elif isinstance(node, ast.Call | ast.Assign | ast.AugAssign):
            target = node.func if isinstance(node, ast.Call) else (
                node.targets[0] if isinstance(node, ast.Assign) else node.target)
            text = ast.unparse(target)
            changes_path = text.startswith("sys.path") or text.endswith("syspath_prepend")
            if changes_path and "benchmarks" in ast.unparse(node):
                faults.append(f"line {node.lineno} puts benchmarks/ on sys.path")
    return faults


def test_test_modules_stand_alone() -> None:
    """No test module imports another, or a benchmark, or puts ``benchmarks/`` on ``sys.path``."""
    folder = ROOT / "tests"
    tests = {path.stem for path in folder.rglob("test_*.py")}
    benchmarks = {path.stem for path in (ROOT / "benchmarks").glob("*.py")}
    assert {"test_theory", "test_accounting"} <= tests and "equivalence" in benchmarks, "nothing was read"
    # The scan finds what it looks for: the dependencies the test modules once had.
    for bad in ("from test_theory import check", "import test_accounting as accounting",
                "from conftest import traced", "sys.path.insert(0, str(ROOT / 'benchmarks'))",
                "import equivalence", "monkeypatch.syspath_prepend(ROOT / 'benchmarks')"):
        assert _test_module_faults(bad, tests, benchmarks), bad
    assert _test_module_faults("from helpers.scenarios import traced\nimport emulator", tests, benchmarks) == []
    faults = {str(path.relative_to(ROOT)): found for path in sorted(folder.rglob("*.py"))
              if (found := _test_module_faults(path.read_text(), tests, benchmarks))}
    assert not faults, faults


def test_checking_a_scenario_imports_scipy_stats_only_for_a_lognormal_law() -> None:
    """Importing scipy.stats costs about 0.3 s of CPU: the bounds of a lognormal law need it, no other check."""
    script = """
import sys
from emulator.scenario.reading import load_scenario
from emulator.scenario.sweep import Scenario
load_scenario("scenarios/quickstart.yaml").points()
print("scipy.stats" in sys.modules)
lognormal = {"kind": "lognormal", "scv": 4.0}
Scenario.from_dict({"policies": [{"name": "random"}], "workload": {"service": lognormal}}).points()
print("scipy.stats" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "True"], done.stdout
