"""One kernel per policy: the event loop (or the slot clock) compiled with that policy's hooks alone.

`kernel` and `slotted` are written once, as templates that import the hook names
from `policies.template`. For a policy, `loop` writes a copy of the template whose
import line binds those names to the policy's own hooks (`policies.hooks`), imports
it as a module of this package, and returns it: numba compiles its loop the first
time it runs, with the hooks inlined as direct calls (as fast as one hand-written
loop per policy), and caches it beside the copy like any other source file. So a
run compiles only its own policy's kernel, and a policy added to the registry adds
compile time to its own runs alone.

A kernel's transport (latency, faults at zero latency, slot messages held) is fixed
too: the policy module and `transport`, the helpers its hooks send and ask with, read
it through feature lines (`HOOK_FEATURES`), and the kernel imports copies of them with
those lines fixed (`specialised`), so that a policy's latency and fault branches are
not compiled into its kernels without them.

The copy's file name holds a digest of everything it was built from (the package's
sources, and the policy module's own file when it lies outside the package): a
change to any of them makes a new file, so that numba never loads a kernel compiled
from other sources; the copies of older sources are removed when a new one is written.
The copies and their numba caches live in `folder`; `cache` checks that folder's
files against its manifest as it checks the package's own.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
import sys
import uuid
from pathlib import Path
from types import ModuleType

from . import cache
from .policies import HOOKS, hooks

TEMPLATES = ("kernel", "slotted")
"""The loops built per policy: the event kernel and the slot clock."""

_HOOK_LINE = re.compile(r"^from \.policies\.template import ([a-z_, ]+)  # hooks$", re.MULTILINE)
_FEATURE = re.compile(r"^(    )([a-z_]+) = ([^\n]+?)  # feature: ([^\n]*)$", re.MULTILINE)
FEATURES = {"kernel": ("latent", "checked", "ps", "failing", "whole", "reserving", "copies",
                       "asking", "faulty"),
            "slotted": ("held", "checked", "origins")}
"""The features each template can be built with or without: a local flag whose value the build fixes, so that
numba drops the code it guards (a kernel without latency compiles in about 30% less time; only a user's
policy pays for the checks of its decisions; FIFO kernels carry no processor sharing, and only batch SQ(d)'s and late
binding's kernels carry whole batches and reservations; only LOR's slot clock keeps each job's dispatcher; only
runs with faults compile their paths: JIQ's and JBT-d's kernels with latency took 17% and 7% less time without them)."""
_PACKAGE = Path(__file__).parent


def source(template: str, module_name: str, features: tuple[bool, ...] | None = None) -> str:
    """The template's source with its hooks bound to those of the compiled policy ``module_name``.

    ``features`` fixes the template's `FEATURES` flags, in order (None: read at run time, as written).
    """
    text = (_PACKAGE / f"{template}.py").read_text(encoding="utf-8")
    if features is not None:
        names = FEATURES[template]
        assert len(features) == len(names)
        fixed = dict(zip(names, features, strict=True))
        found = set()

        def fix(match: re.Match[str]) -> str:
            if match.group(2) not in fixed:
                return match.group(0)
            found.add(match.group(2))
            return f"{match.group(1)}{match.group(2)} = {fixed[match.group(2)]}  # fixed for this kernel: " \
                   f"{match.group(4)}"

        text = _FEATURE.sub(fix, text)
        assert found == set(names), f"{template}.py: feature flags missing: {set(names) - found}"
    match = _HOOK_LINE.search(text)
    assert match is not None, f"{template}.py: the hooks' import line is missing"
    imported = [name.strip() for name in match.group(1).split(",")]
    assert set(imported) <= set(HOOKS), f"{template}.py imports unknown hooks {imported}"
    # One line, so that the copy's line numbers are the template's.
    line = (f"from .policies import hooks as _hooks; {', '.join(HOOKS)} = _hooks({module_name!r}); "
            f"del _hooks  # the hooks of {module_name}")
    return text[:match.start()] + line + text[match.end():]


def _digest(text: str, module_name: str) -> str:
    digest = hashlib.sha256(text.encode())
    digest.update(cache.sources_digest().encode())
    spec = importlib.util.find_spec(module_name)
    origin = None if spec is None else spec.origin
    if origin and not Path(origin).resolve().is_relative_to(_PACKAGE.resolve()):
        digest.update(Path(origin).read_bytes())  # a user's module: its own file too
    return digest.hexdigest()[:16]


HOOK_FEATURES = {"latent": "P[P_LATENT] != 0", "latency": "P[P_LATENT] == 1",
                 "asking": "P[P_LATENT] == faults.INSTANT", "held": "P[P_HELD] != 0",
                 "faulty": "T.fv[F_LOSS] != 0.0"}
"""The transport that `transport` and a policy's hooks read through feature lines, each written as here: either of
the next two (the event kernel's ``latent``), messages with latency (each an event), zero latency with faults (asks
through records: `faults.INSTANT`), slotted time holding idle tokens and reports for a later slot, and faults (lost
messages or failing servers: `faults.on`, ``fv[F_LOSS]`` the loss or -1). A kernel
imports copies of those modules with these lines fixed (`specialised`), so that numba compiles only the way its
runs take."""
_TRANSPORT_IMPORT = re.compile(r"^from (\.\.transport|emulator\.compiled\.transport) import ", re.MULTILINE)


def hook_features(template: str, features: tuple[bool, ...]) -> dict[str, bool]:
    """The `HOOK_FEATURES` of a kernel of ``template`` built with ``features``: an event kernel's transport has
    latency (its ``latent``), or asks through records at zero latency with faults (its ``asking``), or neither,
    holds nothing for later slots and has faults if built with them; a slot clock's messages take no latency, may
    be held and are never lost (slotted time has no faults)."""
    fixed = dict(zip(FEATURES[template], features, strict=True))
    if template == "kernel":
        return {"latent": fixed["latent"] or fixed["asking"], "latency": fixed["latent"],
                "asking": fixed["asking"], "held": False, "faulty": fixed["faulty"]}
    return {"latent": False, "latency": False, "asking": False, "held": fixed["held"], "faulty": False}


def _fix_hook_features(text: str, fixed: dict[str, bool], where: str) -> tuple[str, int]:
    """``text`` with its `HOOK_FEATURES` lines fixed to ``fixed``, and how many it had."""
    found = 0

    def fix(match: re.Match[str]) -> str:
        nonlocal found
        name = match.group(2)
        if name not in HOOK_FEATURES:
            return match.group(0)
        if match.group(3) != HOOK_FEATURES[name]:
            raise ValueError(f"{where}: the feature line of {name!r} must read "
                             f"`{name} = {HOOK_FEATURES[name]}`, not `{name} = {match.group(3)}`")
        found += 1
        return f"{match.group(1)}{name} = {fixed[name]}  # fixed for this kernel: {match.group(4)}"

    return _FEATURE.sub(fix, text), found


def specialised(module_name: str, fixed: tuple[bool, ...]) -> str:
    """The module a kernel whose transport is ``fixed`` (`HOOK_FEATURES`' values, in order) imports for
    ``module_name`` (a compiled policy, or `transport`): a copy with its feature lines fixed and its import of
    `transport` pointed at that one's copy; or ``module_name`` itself if it has neither."""
    values = dict(zip(HOOK_FEATURES, fixed, strict=True))
    spec = importlib.util.find_spec(module_name)
    assert spec is not None and spec.origin is not None, module_name
    text, found = _fix_hook_features(Path(spec.origin).read_text(encoding="utf-8"), values, module_name)
    transport = f"{__package__}.transport"
    if module_name != transport and _TRANSPORT_IMPORT.search(text):
        text = _TRANSPORT_IMPORT.sub(f"from {specialised(transport, fixed)} import ", text)
    elif not found:
        return module_name
    flags = "_".join(f"{name}{int(value)}" for name, value in values.items())
    prefix = f"{'transport' if module_name == transport else 'hooks'}__{_safe(module_name)}__{flags}__"
    # The copy's relative imports resolve as the module's (a package's own `__init__` imports from itself).
    package = module_name if spec.submodule_search_locations is not None else module_name.rpartition(".")[0]
    named = f"{package}._built_" if package else "_lbemu_built_"
    return _load(prefix, _digest(text, module_name), text, named).__name__


def _safe(module_name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "_", module_name)


@functools.cache
def loop(template: str, module_name: str, features: tuple[bool, ...]) -> ModuleType:
    """The module of ``template``'s loop built for the compiled policy ``module_name`` (written if needed).

    ``features``: the values of the template's `FEATURES` flags this kernel is built for.
    """
    assert template in TEMPLATES
    hooks(module_name)  # a form without its hooks is refused in its own name, not its copy's
    bound = specialised(module_name, tuple(hook_features(template, features).values()))
    text = source(template, bound, features)
    # e.g. kernel__emulator_compiled_policies_jsq__latent0_checked0: the names of older copies start alike
    prefix = f"{template}__{_safe(module_name)}__" + "_".join(
        f"{name}{int(value)}" for name, value in zip(FEATURES[template], features, strict=True)) + "__"
    return _load(prefix, _digest(text, module_name), text, f"{__package__}._built_")


def _load(prefix: str, digest: str, text: str, package: str) -> ModuleType:
    """Write ``text`` as the copy ``prefix + digest`` (unless it is there), remove older copies of ``prefix``, and
    import it as a module named ``package`` + its stem; its numba caches are checked like the package's own."""
    stem = prefix + digest
    where = cache.kernels_folder()
    path = where / f"{stem}.py"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        _write(path, text)
        _forget_older(where, prefix, stem)
    name = package + stem
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    built = importlib.util.module_from_spec(spec)
    sys.modules[name] = built
    spec.loader.exec_module(built)
    for cached in cache.cache_folders(built):  # before numba first reads them (at the first call)
        cache.check_folder(cached)  # (a no-op where `cache.check` checked it already)
    cache.track(built)
    cache.guard()  # an entry numba cannot read is a miss, for this kernel too
    return built


def _write(path: Path, text: str) -> None:
    """Write the file whole or not at all: a temporary file, then a rename (other processes may read it)."""
    temporary = path.with_name(f"{path.name}.tmp.{uuid.uuid4().hex[:16]}")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def _forget_older(where: Path, prefix: str, keep: str) -> None:
    """Remove the copies (and their numba caches) of this loop and policy built from older sources."""
    for old in [*where.glob(f"{prefix}*.py"), *(where / "__pycache__").glob(f"{prefix}*")]:
        if not old.name.startswith(keep):
            try:
                old.unlink()
            except OSError:
                pass
