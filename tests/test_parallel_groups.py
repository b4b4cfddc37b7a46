"""The suite's ``-n 2 --dist loadgroup``: a module's ``xdist_group`` tests run on one process.

Modules that share a module fixture's run (the quickstart run, the documentation site) mark
their tests with one group so that one process runs that fixture once; when the group is lost
(as with pytest 9.2 and pytest-xdist 3.8: setup.cfg keeps pytest below 9.2), each process runs
it again, silently. A small suite in a temporary folder, on two processes, shows where each test
ran and under which id.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

GROUPED = """
import pytest

pytestmark = pytest.mark.xdist_group("shared")


@pytest.mark.parametrize("i", range(4))
def test_grouped(i):
    pass
"""

ALONE = """
import pytest


@pytest.mark.parametrize("i", range(8))
def test_alone(i):
    pass
"""


def test_a_modules_group_runs_on_one_process(tmp_path: Path) -> None:
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    (tmp_path / "test_alone.py").write_text(ALONE)
    # Only xdist among the installed plugins: the others (hypothesis's) take seconds to load in each process.
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "xdist", "-n", "2", "--dist", "loadgroup", "-v",
                             "-p", "no:cacheprovider", str(tmp_path)], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    grouped = re.findall(r"\[(gw\d)\] .*PASSED (\S*test_grouped\S*)", result.stdout)
    assert len(grouped) == 4, result.stdout[-3000:]
    assert all(nodeid.endswith("@shared") for _, nodeid in grouped), grouped  # the id xdist schedules by
    assert len({worker for worker, _ in grouped}) == 1, grouped
