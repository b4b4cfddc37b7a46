"""The kernel's numba cache, checked before numba reads it and rewritten when in doubt.

Numba caches each ``cache=True`` function in an index file (``.nbi``, a pickle naming
the data files) and data files (``.nbc``, the pickled compiled code), and trusts them:
a truncated or overwritten file makes every later load raise (``EOFError``,
``UnpicklingError``, ...) instead of compiling anew, and a data file whose machine
code was damaged but still unpickles would be run as it is. So the cache folder also
holds a manifest (`MANIFEST`), written by the process that compiled:

- the digest of every source of `emulator.compiled`, its policies included, and of
  the registry's list of compiled policies (numba checks a cached function against
  its own file only, but the kernel inlines its siblings and the policies' switches:
  after a change to one of them alone it would load the kernel compiled before, and
  run old code);
- the SHA-256 of every cache file, as that process wrote them.

Before the kernel is first called in a process, `check` compares the folder with its
manifest. Any doubt (sources changed, a file damaged, added or missing, a manifest
that cannot be read) discards every cache file of the package: numba then compiles
once more, and `seal` records the new files. As a second line, numba's own loading is
guarded (`guard`): whatever it raises reading an entry counts as a miss. A damaged
cache therefore costs one compilation, never a failed run, and the next run loads it.
Concurrent processes can at worst make each other compile again: slower, never wrong.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MANIFEST = "lbemu-compiled-sources.sha256"
"""The file, in each numba cache folder of the package, naming its sources and the digests of its files."""

_HEADER = "lbemu numba cache 1"
_LINE = re.compile(r"([0-9a-f]{64}) ([^/\\\s]+\.nb[ic])")
_SOURCES = re.compile(r"sources ([0-9a-f]{64})")

_checked = False  # `check` ran in this process
trusted = False  # a process started by one that checked the caches for it: it checks none (and discards none)
_checked_folders: set[Path] = set()  # the folders checked in this process
_built: list[Any] = []  # the kernel modules `build` loaded in this process
_sealed = 0  # the cache misses (compilations) of this process that `seal` has recorded


def dispatchers() -> list[Any]:
    """The numba functions with a disk cache (``cache=True``): the package's, and the kernels built in this process."""
    from numba.core.dispatcher import Dispatcher

    from ..policies import BUILT_IN
    from . import binding, core, failing, faults, jobs, needs, network, occupancy, ps, recorder, slots
    from .policies import common, module, name_of

    # the built-in forms this process imported: one not imported has compiled and loaded nothing yet, and
    # `build` guards a kernel's modules when it loads them
    forms = [module(name) for name in BUILT_IN if name_of(name) in sys.modules]
    modules = (binding, core, failing, faults, jobs, needs, network, occupancy, ps, recorder, slots, common, *forms,
               *_built)
    found = [value for module in modules for value in vars(module).values() if isinstance(value, Dispatcher)]
    unique = list({id(d): d for d in found}.values())  # functions imported by a sibling appear twice
    return [d for d in unique if hasattr(getattr(d, "_cache", None), "_cache_path")]


def track(built: Any) -> None:
    """Count a kernel module that `build` loaded among the package's (its cache is checked and sealed alike)."""
    _built.append(built)


def cache_folders(built: Any) -> list[Path]:
    """The numba cache folders of a module's cached functions."""
    from numba.core.dispatcher import Dispatcher

    found: list[Any] = [getattr(value, "_cache", None) for value in vars(built).values()
                        if isinstance(value, Dispatcher)]
    return sorted({Path(cache._cache_path) for cache in found if hasattr(cache, "_cache_path")})


def folders() -> list[Path]:
    """The cache folders of the package (one in practice: `__pycache__`, or under NUMBA_CACHE_DIR)."""
    return sorted({Path(d._cache._cache_path) for d in dispatchers()})


def sources_digest() -> str:
    """The SHA-256 of every source file of `emulator.compiled` (its policies too), names included.

    Read again only when a file's size or modification time changed (a run asks several times).
    """
    root = Path(__file__).parent
    paths = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = [s for s in subfolders if s != "__pycache__"]  # numba's files and the kernels `build` writes
        paths += [Path(folder, name) for name in names if name.endswith(".py")]
    stamps = tuple((path.relative_to(root).as_posix(), *_stamp(path)) for path in sorted(paths))
    return _sources_digest(root, stamps)


def _stamp(path: Path) -> tuple[int, int]:
    found = path.stat()
    return found.st_mtime_ns, found.st_size


@functools.lru_cache(maxsize=4)
def _sources_digest(root: Path, stamps: tuple[tuple[str, int, int], ...]) -> str:
    digest = hashlib.sha256()
    for name, _, _ in stamps:
        digest.update(name.encode() + b"\0" + (root / name).read_bytes())
    return digest.hexdigest()


def _files(folder: Path) -> Iterator[Path]:
    """The numba cache files in ``folder``: all of them are the package's (the folder is its own)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.name.endswith((".nbi", ".nbc")) and entry.is_file():
            yield Path(entry.path)


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _read(folder: Path) -> tuple[str, dict[str, str]] | None:
    """The manifest's (sources digest, {file name: digest}), or None if absent or not one."""
    try:
        text = (folder / MANIFEST).read_bytes().decode("ascii")
    except (OSError, UnicodeDecodeError):
        return None
    lines = text.split("\n")
    if len(lines) < 3 or lines[0] != _HEADER or lines[-1] != "":
        return None
    sources = _SOURCES.fullmatch(lines[1])
    if sources is None:
        return None
    files = {}
    for line in lines[2:-1]:
        match = _LINE.fullmatch(line)
        if match is None:
            return None
        files[match.group(2)] = match.group(1)
    return sources.group(1), files


def _write(folder: Path, sources: str, files: dict[str, str]) -> None:
    """Write the manifest whole or not at all (a temporary file, then a rename)."""
    text = "".join([f"{_HEADER}\nsources {sources}\n", *(f"{files[name]} {name}\n" for name in sorted(files))])
    temporary = folder / f"{MANIFEST}.tmp.{uuid.uuid4().hex[:16]}"
    try:
        temporary.write_text(text, encoding="ascii")
        os.replace(temporary, folder / MANIFEST)
    except OSError:  # then the next process discards the cache again: slower, never wrong
        try:
            temporary.unlink()
        except OSError:
            pass


def intact(folder: Path, sources: str) -> bool:
    """Whether ``folder`` holds exactly the cache files its manifest names, compiled from ``sources``."""
    present = {path.name: _digest(path) for path in _files(folder)}
    return _read(folder) == (sources, present)


def check() -> list[Path]:
    """Discard every cache folder of the package that is not `intact`; return the discarded ones that held files.

    Runs once per process, before a kernel is first called (then numba loads it, or
    compiles it where the cache is gone), the folder of the kernels built per policy
    (`kernels_cache_folder`) included.
    """
    global _checked
    if _checked or trusted:
        return []
    _checked = True
    return [folder for folder in sorted({*folders(), kernels_cache_folder()}) if check_folder(folder)]


def check_folder(folder: Path) -> bool:
    """Discard ``folder``'s cache files unless it is `intact` (once per process); True if files were discarded."""
    if trusted or folder in _checked_folders:
        return False
    _checked_folders.add(folder)
    sources = sources_digest()
    if intact(folder, sources):
        return False
    present = list(_files(folder))
    for path in present:
        try:
            path.unlink()
        except OSError:
            pass
    for dispatcher in dispatchers():  # where a file could not be removed, an empty index hides it
        if Path(dispatcher._cache._cache_path) == folder and any(_files(folder)):
            try:
                dispatcher._cache.flush()
            except Exception:  # a folder that cannot be written: numba compiles each time
                pass
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass
    _write(folder, sources, {})
    return bool(present)


def _misses() -> int:
    return sum(sum(d.stats.cache_misses.values()) for d in dispatchers())


def compiled_here() -> bool:
    """Whether this process compiled any of the package's functions (a cache miss), and so wrote their files."""
    return _misses() > 0


def seal() -> None:
    """Record the digests of the cache files after this process compiled (and numba wrote them).

    A process that only loaded the cache leaves the manifest as it found it: it was
    checked, and a file changed since would be damage, not an entry to record. Each
    kernel (events, slots) is compiled on its first call, so a process that compiles
    one after it sealed the other records the files again.
    """
    global _sealed
    misses = _misses()
    if misses == _sealed:
        return
    _sealed = misses
    sources = sources_digest()
    for folder in folders():
        files = {path.name: _digest(path) for path in _files(folder)}
        _write(folder, sources, {name: digest for name, digest in files.items() if digest is not None})


def guard() -> None:
    """Make numba treat an entry it cannot read as a miss (compile, and rewrite it), not as an error.

    `check` already discards a folder whose files differ from the manifest; this covers
    what it cannot see, e.g. a file damaged by a crashed writer before its manifest was written.
    """
    for dispatcher in dispatchers():
        cache = dispatcher._cache
        if getattr(cache, "_lbemu_guarded", False):
            continue
        cache.load_overload = _guarded_load(cache, cache.load_overload)
        cache.save_overload = _guarded_save(cache.save_overload)
        cache._lbemu_guarded = True


def _guarded_load(cache: Any, load: Any) -> Any:
    def load_overload(sig: Any, target_context: Any) -> Any:
        try:
            return load(sig, target_context)
        except Exception:  # any unreadable entry: compile instead
            try:
                cache.flush()  # an empty index: the compiled entry replaces the damaged one
            except Exception:
                pass
            return None
    return load_overload


def _guarded_save(save: Any) -> Any:
    def save_overload(sig: Any, data: Any) -> None:
        try:
            save(sig, data)
        except Exception:  # e.g. an index numba cannot read: this process compiled anyway
            pass
    return save_overload


# -- the kernels built per policy (`build`) -----------------------------------------------
def kernels_folder() -> Path:
    """Where the kernels' sources are written: beside numba's cache of the package, or the user's cache.

    ``NUMBA_CACHE_DIR`` if set; else the package's ``__pycache__`` if it can be written;
    else ``~/.cache/lbemu`` (an installation in a read-only folder).
    """
    chosen = os.environ.get("NUMBA_CACHE_DIR")
    candidates = [Path(chosen) / "lbemu-kernels"] if chosen else []
    candidates += [Path(__file__).parent / "__pycache__" / "lbemu-kernels",
                   Path.home() / ".cache" / "lbemu" / "kernels"]
    for candidate in candidates:
        try:
            candidate.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(candidate, os.W_OK):
            return candidate
    raise RuntimeError("no folder to write the compiled kernels in (set NUMBA_CACHE_DIR)")


_PROBE = """# Written by lbemu: numba's cache folder for the kernels beside it (see emulator.compiled.cache).
from numba import njit


@njit(cache=True)
def here():
    return 0
"""


@functools.cache
def kernels_cache_folder() -> Path:
    """Where numba caches the kernels of `folder`: asked of numba, through a function written beside them."""
    where = kernels_folder()
    probe = where / "lbemu_probe.py"
    if not probe.exists() or probe.read_text(encoding="utf-8") != _PROBE:
        temporary = probe.with_name(f"{probe.name}.tmp.{uuid.uuid4().hex[:16]}")
        temporary.write_text(_PROBE, encoding="utf-8")
        os.replace(temporary, probe)
    spec = importlib.util.spec_from_file_location(f"{__package__}._built_probe", probe)
    assert spec is not None and spec.loader is not None
    found = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(found)  # defines `here`; nothing is compiled
    numba_cache: Any = getattr(found.here, "_cache", None)  # none when NUMBA_DISABLE_JIT runs it as Python
    return Path(numba_cache._cache_path) if hasattr(numba_cache, "_cache_path") else where / "__pycache__"
