"""The documentation site builds with warnings as errors, and holds what it promises.

Sphinx turns every page of docs/ into a page of the site (a page left out of every
table of contents is a warning, so an error here), the API reference from the
docstrings, and the tables that README.md holds into the pages that show them.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import emulator

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
               "-d", str(out / "doctrees"), str(DOCS), str(out / "html")]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-4000:]
    return out / "html"


def ids(page: Path) -> set[str]:
    return set(re.findall(r'id="([^"]+)"', page.read_text()))


def test_every_page_is_in_the_site(site: Path) -> None:
    pages = [*DOCS.glob("*.md"), *DOCS.glob("*.ipynb")]
    missing = [page.name for page in pages if not (site / f"{page.stem}.html").is_file()]
    assert not missing, missing
    index = (site / "index.html").read_text()
    for page in pages:
        if page.stem != "index":
            assert f'href="{page.stem}.html' in index, f"{page.name} is not linked from the front page"


def test_the_api_reference_comes_from_the_docstrings(site: Path) -> None:
    api = ids(site / "api" / "emulator.html")
    for name in ("simulate", "run", "Results", "Results.table", "load_scenario", "Scenario.from_dict",
                 "ScenarioError", "RunError"):
        assert f"emulator.{name}" in api, name
    policies = ids(site / "api" / "policies.html")
    assert {"emulator.register_policy", "emulator.check_policy"} <= policies
    for cls in emulator.REGISTRY.values():
        assert f"emulator.policies.{cls.__name__}" in policies, cls.__name__
    analysis = ids(site / "api" / "analysis.html")
    for name in ("tables.comparison_table", "plots.plot_folder", "report.write_report",
                 "occupancy.scaled_deviations", "theory.mm1_response", "theory.sqd_response"):
        assert f"analysis.{name}" in analysis, name
    # numpydoc rendered the sections, and a policy's References with it.
    page = (site / "api" / "policies.html").read_text()
    assert "Zhou" in page and "References" in page


def test_pages_show_the_tables_the_readme_holds(site: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    for page, marker in (("tutorial-first-run", "quickstart table"), ("background", "policy table")):
        block = readme.split(f"<!-- {marker} -->", 1)[1].split(f"<!-- /{marker} -->", 1)[0]
        last_row = [line for line in block.splitlines() if line.startswith("|")][-1]
        cells = [cell.strip().strip("*_") for cell in last_row.split("|")[1:-1]]
        cells = [cell for cell in cells if cell and "`" not in cell]  # the last row's plain cells
        text = (site / f"{page}.html").read_text()
        assert cells and all(cell in text for cell in cells), (page, cells)
    assert (site / "_images" / "quickstart_tradeoff.png").is_file()
