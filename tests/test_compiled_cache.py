"""A damaged numba cache costs one compilation, never a failed run, and the next run loads the new cache.

Every kind of damage (to the kernel's data file ``.nbc``, its index ``.nbi``, or the
package's manifest of sources and digests) is seen by the check a process makes
before numba reads the cache. End to end, a copy of the package with a warm cache
has one file damaged, runs a compiled task in a fresh interpreter, and its row is
compared with the SimPy engine's; then it runs once more, which must load the
rewritten cache rather than compile. The copies compile at once, side by side: each
compilation takes a quarter of a minute, so one damage per file kind runs end to
end, and one that the check cannot see (numba's own loading must cope).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import emulator
from emulator import compiled
from emulator.compiled import build, cache

pytestmark = pytest.mark.xdist_group("test_compiled_cache")  # one process runs its module fixtures, once

ROOT = Path(__file__).resolve().parents[1]
SETTLE_SECONDS = 300  # the longest another process may take to compile into the package's cache and seal it
OPTIONS: dict[str, Any] = {"servers": 6, "load": 0.8, "jobs": 3000, "seed": 4, "occupancy": True}
KERNEL = ("kernel", "emulator.compiled.policies.random", (False,) * len(build.FEATURES["kernel"]))  # Random, plain
SCRIPT = f"""
import json, emulator
from emulator.compiled import build
row = emulator.simulate('random', engine='compiled', **{OPTIONS!r})
stats = build.loop(*{KERNEL!r}).simulate.stats
print(json.dumps({{'row': {{k: repr(v) for k, v in row.items()}}, 'file': emulator.__file__,
                  'hits': sum(stats.cache_hits.values()), 'misses': sum(stats.cache_misses.values())}}))
"""


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 3])


def _random_bytes(path: Path) -> None:
    path.write_bytes(random.Random(1).randbytes(max(64, path.stat().st_size)))


def _flip_a_bit(path: Path) -> None:
    """One bit in the middle: most of a data file is machine code, which still unpickles."""
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    path.write_bytes(bytes(data))


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _random_bytes_behind_the_manifest(path: Path) -> None:
    """Damage the manifest cannot see (its digest rewritten to match): numba's own loading must cope."""
    _random_bytes(path)
    manifest = path.parent / cache.MANIFEST
    lines = manifest.read_text().splitlines(keepends=True)
    digest = cache._digest(path)
    manifest.write_text("".join(f"{digest} {path.name}\n" if line.endswith(f" {path.name}\n") else line
                                for line in lines))


DAMAGE = {  # name: (file, how)
    "nbc-truncated": ("data", _truncate),
    "nbc-random-bytes": ("data", _random_bytes),
    "nbc-bit-flipped": ("data", _flip_a_bit),
    "nbi-empty": ("index", _empty),
    "nbi-random-bytes": ("index", _random_bytes),
    "manifest-random-bytes": ("manifest", _random_bytes),
    "nbi-random-bytes-unseen": ("index", _random_bytes_behind_the_manifest),
}


def _target(folder: Path, kind: str) -> Path:
    if kind == "manifest":
        return folder / cache.MANIFEST
    pattern = f"{_stem()}.simulate-*.nbi" if kind == "index" else f"{_stem()}.simulate-*.nbc"
    found = sorted(folder.glob(pattern))
    assert len(found) == 1, found
    return found[0]


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the kernel's own cache folder, compiled or loaded (so written and checked).

    Other test processes may be compiling into the package's folder at the same time (the slot
    clock, say), or discarding it: until that process seals, the files differ from the manifest.
    So the folder is copied, and copied again, until the copy is a sealed cache that holds the kernel.
    """
    from emulator.compiled import build
    from emulator.scenario.sweep import Scenario

    point = Scenario.from_dict({"name": "warm", "policies": [{"name": "random"}], "run": {"jobs": 10}}).points()[0]
    assert compiled.prepare([(point, point.policies[0])])
    folder = cache.kernels_cache_folder()
    assert folder == Path(build.loop(*KERNEL).simulate._cache._cache_path) and folder in cache.folders()
    sources = cache.sources_digest()
    snapshot = tmp_path_factory.mktemp("warm") / "cache"
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        shutil.rmtree(snapshot, ignore_errors=True)
        _copy_cache(folder, snapshot)
        if cache.intact(snapshot, sources) and any(snapshot.glob(f"{_stem()}.simulate-*.nbc")):
            return snapshot
        assert time.monotonic() < deadline, f"{folder} was not a sealed cache with the kernel for {SETTLE_SECONDS} s"
        time.sleep(1.0)


def _stem() -> str:
    """The file name stem of Random's event kernel (its sources' digest included)."""
    from emulator.compiled import build

    return Path(build.loop(*KERNEL).__file__).stem


def _copy_cache(source: Path, folder: Path) -> None:
    """The cache as the package wrote it (its file names hold no path, so it serves any copy)."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in source.iterdir():
        if path.name.endswith((".nbi", ".nbc")) or path.name == cache.MANIFEST:
            try:
                shutil.copy2(path, folder / path.name)
            except FileNotFoundError:  # removed by a process that discards the folder: the copy is not sealed
                pass


def _but_the_kernels(directory: str, names: list[str]) -> set[str]:
    """What a copy of the package leaves out: the kernels' cache (each copy gets the warm one, then damaged) and
    files being written. The functions every kernel shares keep their cache (`shutil.copytree` keeps the sources'
    times, which numba's index checks): a copy compiles only the kernels whose cache is damaged, as a user's would."""
    kernels = Path(directory).parent.name == "lbemu-kernels"
    return {name for name in names if ".tmp." in name or (kernels and name.endswith((".nbi", ".nbc")))}


def _damage(folder: Path, name: str) -> None:
    kind, damage = DAMAGE[name]
    target = _target(folder, kind)
    before = target.read_bytes()
    damage(target)
    assert target.read_bytes() != before


@pytest.mark.parametrize("name", [name for name in DAMAGE if not name.endswith("-unseen")])
def test_the_check_sees_every_kind_of_damage(tmp_path: Path, warm: Path, name: str) -> None:
    sources = cache.sources_digest()
    folder = tmp_path / "cache"
    _copy_cache(warm, folder)
    assert cache.intact(folder, sources)
    _damage(folder, name)
    assert not cache.intact(folder, sources)


def _start(copy: Path) -> subprocess.Popen[str]:
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}  # the copy's own cache
    return subprocess.Popen([sys.executable, "-c", SCRIPT], cwd=copy, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _finish(process: subprocess.Popen[str], name: str) -> dict[str, Any]:
    out, err = process.communicate(timeout=900)  # a hang guard: a compilation takes seconds
    assert process.returncode == 0, f"{name}: {err[-3000:]}"
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


# Two copies end to end, each a full compilation (of the kernels that compile fastest, Random's and round
# robin's): every kind of damage the manifest sees is checked
# cheaply by `test_the_check_sees_every_kind_of_damage`; here, damage it cannot see (bytes changed
# behind it) through `simulate`, and a damaged manifest through `lbemu run` on two workers.
END_TO_END = ("nbi-random-bytes-unseen", "manifest-random-bytes")
BY_CLI = "manifest-random-bytes"  # this copy runs `lbemu run` on two workers instead of `simulate`
RUN = {"name": "cache", "seed": 8, "replications": 2, "run": {"jobs": 3000, "warmup_jobs": 300, "engine": "compiled"},
       "system": {"servers": 6}, "policies": [{"name": "random"}, {"name": "round_robin"}]}
COMPILING = "lbemu: compiling the simulation kernel of each policy on its first use (about"


def _start_cli(copy: Path, out: Path) -> subprocess.Popen[str]:
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}
    return subprocess.Popen([sys.executable, "-m", "emulator", "run", str(copy / "s.yaml"), "--out", str(out),
                             "--workers", "2"], cwd=copy, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _runs(out: Path) -> tuple[list[dict[str, Any]], set[str]]:
    """runs.csv's rows (values by repr, less the engine and wall time) and the engines that ran them."""
    import pandas as pd

    frame = pd.read_csv(out / "runs.csv")
    rows = frame.drop(columns=["wall_seconds", "engine"]).to_dict("records")
    return [{key: repr(value) for key, value in row.items()} for row in rows], set(frame["engine"])


@pytest.mark.slow
def test_a_damaged_cache_is_recompiled_and_the_next_run_loads_it(tmp_path: Path, warm: Path) -> None:
    """Each copy compiles once, then loads; `lbemu run` compiles in the parent, saying so once, and not again."""
    import yaml

    folder = warm
    expected = {key: repr(value) for key, value in emulator.simulate("random", engine="simpy", **OPTIONS).items()
                if key not in ("wall_seconds", "engine")}
    emulator.run({**RUN, "run": {**RUN["run"], "engine": "simpy"}}, workers=1, out=tmp_path / "simpy")
    copies = {}
    for name in END_TO_END:
        copy = tmp_path / name
        shutil.copytree(ROOT / "emulator", copy / "emulator", ignore=_but_the_kernels)
        pycache = copy / "emulator" / "compiled" / "__pycache__" / "lbemu-kernels" / "__pycache__"  # the kernels
        _copy_cache(folder, pycache)
        _damage(pycache, name)
        copies[name] = copy
    (copies[BY_CLI] / "s.yaml").write_text(yaml.safe_dump(RUN))

    for run in ("damaged", "again"):
        out = copies[BY_CLI] / run
        processes = {name: _start_cli(copy, out) if name == BY_CLI else _start(copy)  # compile side by side
                     for name, copy in copies.items()}
        cli = processes.pop(BY_CLI)
        results = {name: _finish(process, name) for name, process in processes.items()}
        for name, result in results.items():
            assert result["file"] == str(copies[name] / "emulator" / "__init__.py")
            row = result["row"]
            assert row.pop("engine") == repr("compiled"), name
            row.pop("wall_seconds")
            assert row == expected, name
            if run == "damaged":
                assert result["misses"] == 1 and result["hits"] == 0, (name, result)  # not loaded: compiled
            else:
                assert result["hits"] == 1 and result["misses"] == 0, (name, result)  # the rewritten cache
        _, stderr = cli.communicate(timeout=900)
        assert cli.returncode == 0, stderr[-3000:]
        said = [line for line in stderr.splitlines() if "compiling" in line]
        assert [line.startswith(COMPILING) for line in said] == ([True] if run == "damaged" else []), stderr[-3000:]
        (rows, engines), (simpy_rows, _) = _runs(out), _runs(tmp_path / "simpy")
        assert rows == simpy_rows and engines == {"compiled"}
