"""The compiled engine's first-run cost: compiling one policy's kernel, with and without more policies registered.

Each measurement is a fresh interpreter on an empty numba cache (``NUMBA_CACHE_DIR``
a new temporary folder) running one tiny compiled replication, timed from after
``import emulator`` (about 0.5 s, the same for either engine) to its end; "cached"
runs the same again on the cache the first wrote. "with ten more" registers ten more
policies with compiled forms first (the docs' Ring policy, docs/policies.md, under ten
names): a policy's kernel holds its own hooks only, so they should cost it nothing.

    python benchmarks/compile_time.py            # JSQ and SQ(2), continuous and slotted
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


def first_run_seconds(policy: str, time: str, cache: str, register: str = "") -> float:
    """Seconds of a fresh interpreter's first compiled run of ``policy`` (``time``), numba cache ``cache``."""
    params = ", d=2" if policy == "sqd" else ""
    code = (f"import time; {register or 'import emulator'}; t = time.perf_counter(); "
            f"emulator.simulate({policy!r}, servers=4, jobs=100, engine='compiled', time={time!r}{params}); "
            f"print(time.perf_counter() - t)")
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": os.pathsep.join(
        [str(Path(cache) / "forms"), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
    return float(out.stdout.split()[-1])


def measure(policy: str, time: str, more: int = 10) -> dict[str, float]:
    """Cold, cached, and cold with ``more`` policies registered: seconds each."""
    result = {}
    for label, extra in (("cold", 0), (f"cold with {more} more registered", more)):
        with tempfile.TemporaryDirectory() as cache:
            forms = Path(cache) / "forms"
            forms.mkdir()
            register = _ring_forms(forms, extra) if extra else ""
            result[label] = first_run_seconds(policy, time, cache, register)
            if not extra:
                result["cached"] = first_run_seconds(policy, time, cache)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", action="append", help="policies to measure (default jsq, sqd)")
    parser.add_argument("--time", action="append", choices=["continuous", "slotted"])
    args = parser.parse_args()
    for policy in args.policy or ["jsq", "sqd"]:
        for time in args.time or ["continuous", "slotted"]:
            found = measure(policy, time)
            print(f"{policy} {time}: " + ", ".join(f"{k} {v:.1f} s" for k, v in found.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
