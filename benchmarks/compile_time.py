"""The compiled engine's first-run cost: compiling one policy's kernel, with and without more policies registered.

Each measurement is a fresh interpreter on an empty numba cache (``NUMBA_CACHE_DIR``
a new temporary folder) running one tiny compiled replication, timed from after
``import emulator`` (about 0.5 s, the same for either engine) to its end; "cached"
runs the same again on the cache the first wrote (the best of three). Python's
bytecode cache is on, as in a user's installation. "with ten more" registers ten more
policies with compiled forms first (the docs' Ring policy, docs/policies.md, under ten
names): a policy's kernel holds its own hooks only, so they should cost it nothing.

    python benchmarks/compile_time.py            # JSQ and SQ(2), continuous and slotted
    python benchmarks/compile_time.py --policy jiq --time continuous --latency   # JIQ's kernel with latency
    python benchmarks/compile_time.py --kernel   # each kernel alone, the shared functions cached

``--kernel`` times what a policy's first run adds to the cache of another's, in CPU
seconds (compilation takes one core; CPU time moves less than wall time on a shared
machine): a first run of round robin, the same case, fills an empty cache with what
every kernel shares; then a fresh interpreter runs the case (compiling its kernel, its
policy's hooks and whatever shared function round robin did not need), and a third
runs it from the cache; the policy's seconds are the second's less the third's.
Cases: the event kernels of Random, JSQ, SQ(2), JIQ and JBT-d with zero latency and
with exponential latency, and SQ(2)'s slot clock.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _ring_forms(folder: Path, copies: int) -> str:
    """Write ``copies`` renamed copies of the docs' Ring policy and its compiled form; the code registering them."""
    blocks = FENCE.findall((ROOT / "docs" / "policies.md").read_text())
    (policy,) = [b for b in blocks if b.startswith("# ring.py")]
    (form,) = [b for b in blocks if b.startswith("# ring_compiled.py")]
    lines = ["import emulator"]
    for k in range(copies):
        name = f"ring{k}"
        (folder / f"{name}.py").write_text(policy.replace('"ring"', f'"{name}"')
                                           .replace("ring_compiled", f"{name}_compiled"))
        (folder / f"{name}_compiled.py").write_text(form)
        lines.append(f"from {name} import RingPolicy as P{k}; emulator.register_policy(P{k})")
    return "; ".join(lines)


LATENCY = ", latency={'kind': 'exponential', 'mean': 0.01}"


def first_run_seconds(policy: str, time: str, cache: str, register: str = "", latent: bool = False) -> float:
    """Seconds of a fresh interpreter's first compiled run of ``policy`` (``time``; ``latent``: with exponential
    latency of mean 0.01), numba cache ``cache``."""
    params = (", d=2" if policy == "sqd" else "") + (LATENCY if latent else "")
    code = (f"import time; {register or 'import emulator'}; t = time.perf_counter(); "
            f"emulator.simulate({policy!r}, servers=4, jobs=100, engine='compiled', time={time!r}{params}); "
            f"print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                         env=_env(cache, str(Path(cache) / "forms")))
    return float(out.stdout.split()[-1])


def _env(cache: str, *path: str) -> dict[str, str]:
    """A child's environment: numba cache ``cache``, ``path`` and the checkout first on the import path, and
    Python's bytecode cache on, as in a user's installation (a cached run would otherwise compile every module
    it imports from source, about 0.05 s)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache,
           "PYTHONPATH": os.pathsep.join([*path, str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def measure(policy: str, time: str, more: int = 10, latent: bool = False) -> dict[str, float]:
    """Cold, cached, and cold with ``more`` policies registered: seconds each."""
    result = {}
    for label, extra in (("cold", 0), (f"cold with {more} more registered", more)):
        with tempfile.TemporaryDirectory() as cache:
            forms = Path(cache) / "forms"
            forms.mkdir()
            register = _ring_forms(forms, extra) if extra else ""
            result[label] = first_run_seconds(policy, time, cache, register, latent)
            if not extra:  # the best of three: a load this short moves with the machine's other work
                result["cached"] = min(first_run_seconds(policy, time, cache, latent=latent) for _ in range(3))
    return result


KERNEL_CASES = [(policy, "continuous", latent) for latent in (False, True)
                for policy in ("random", "jsq", "sqd", "jiq", "jbt")] + [("sqd", "slotted", False)]
"""The kernels ``--kernel`` times by default: (policy, time, with latency)."""

def _case_cpu(policy: str, time: str, latent: bool, cache: str) -> float:
    """CPU seconds of a fresh interpreter's compiled run of the case, from after ``import emulator``."""
    params = ", d=2" if policy == "sqd" else ""
    if latent:
        params += LATENCY
    code = (f"import time; import emulator; "
            f"t = time.process_time(); emulator.simulate({policy!r}, servers=4, jobs=100, engine='compiled', "
            f"time={time!r}{params}); print(time.process_time() - t)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=_env(cache))
    return float(out.stdout.split()[-1])


def kernel_seconds(policy: str, time: str, latent: bool) -> tuple[float, float]:
    """CPU seconds of round robin's first run on an empty cache, and of the case's first run after it."""
    with tempfile.TemporaryDirectory() as cache:
        cold = _case_cpu("round_robin", time, latent, cache)
        first = _case_cpu(policy, time, latent, cache)
        cached = _case_cpu(policy, time, latent, cache)
    return cold, first - cached


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", action="append", help="policies to measure (default jsq, sqd)")
    parser.add_argument("--time", action="append", choices=["continuous", "slotted"])
    parser.add_argument("--kernel", action="store_true", help="a policy's first run after round robin's (CPU s)")
    parser.add_argument("--latency", action="store_true", help="with --policy: with latency (continuous time)")
    args = parser.parse_args()
    if args.kernel:
        cases = KERNEL_CASES if not args.policy else [
            (policy, time, args.latency) for policy in args.policy for time in args.time or ["continuous"]]
        for policy, time, latent in cases:
            cold, alone = kernel_seconds(policy, time, latent)
            print(f"{policy} {time}{' latency' if latent else ''}: {alone:.1f} s after round robin's first run "
                  f"({cold:.1f} s on an empty cache; CPU)", flush=True)
        return 0
    for policy in args.policy or ["jsq", "sqd"]:
        for time in args.time or ["continuous", "slotted"]:
            found = measure(policy, time, latent=args.latency)
            case = f"{policy} {time}{' latency' if args.latency else ''}"
            print(f"{case}: " + ", ".join(f"{k} {v:.{2 if k == 'cached' else 1}f} s" for k, v in found.items()),
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
