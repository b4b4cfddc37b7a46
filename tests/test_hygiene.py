"""ruff and mypy stay clean (both come with the test extras)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _check(*command: str) -> None:
    result = subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


def test_ruff() -> None:
    _check("ruff", "check", ".")


def test_mypy() -> None:
    _check("mypy")  # files and settings in setup.cfg [mypy]
