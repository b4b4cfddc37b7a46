"""The documentation site builds with warnings as errors, and holds what it promises.

Sphinx turns every page of docs/ into a page of the site (a page left out of every
table of contents is a warning, so an error here), the API reference from the
docstrings, the tables that README.md holds into the pages that show them, and runs
the tutorial notebook so that its page shows its tables and figures. Building the site
takes about a minute: the module is marked slow.
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
SECTIONS = ("tutorials", "how-to", "explanation", "reference", "gallery")
"""The landing page's sections (Diátaxis' four, and the gallery): every other page is in one of them."""

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("test_docs_site")]  # one process builds the site


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
    sections = "".join((site / f"{section}.html").read_text() for section in SECTIONS)
    for section in SECTIONS:
        assert f'href="{section}.html' in index, f"{section} is not linked from the front page"
    for page in pages:
        if page.stem not in ("index", *SECTIONS):
            assert f'href="{page.stem}.html' in sections, f"{page.name} is in no section of the front page"


def test_reference_and_how_to_are_apart(site: Path) -> None:
    """Pages that list every key or column are reference, not how-to guides (Diátaxis)."""
    how_to, reference = ((site / f"{name}.html").read_text() for name in ("how-to", "reference"))
    for page in ("scenarios", "results", "policies", "configuration-notes", "occupancy"):
        assert f'href="{page}.html' in reference and f'href="{page}.html' not in how_to, page


def test_the_tutorial_page_shows_the_notebooks_outputs(site: Path) -> None:
    page = (site / "tutorial.html").read_text()
    assert page.count('class="cell_output') >= 8  # every code cell but the first, which prints nothing
    assert page.count("<img") >= 3  # the trade-off, messages by kind, and the two panels drawn into one figure
    assert "mean response" in page and "M/M/1, exact" in page  # the comparison table, with its theory row


def test_formulas_are_typeset_and_pages_linked(site: Path) -> None:
    theory = (site / "theory.html").read_text()
    assert "mathjax" in theory.lower() and r"\(1/(1-\lambda^2)\)" in theory
    assert '<a class="reference internal" href="results.html' in (site / "scenarios.html").read_text()
    # A docstring's docs/results.md is a link on the API pages.
    assert 'href="../results.html' in (site / "api" / "emulator.html").read_text()


def test_intervals_in_tables_do_not_break(site: Path) -> None:
    page = (site / "slotted-results.html").read_text()
    assert "5.741\u00a0±\u00a00.016" in page and "5.741 ± 0.016" not in page


def test_the_jbt_results_page_shows_both_capacity_laws_at_every_load(site: Path) -> None:
    import yaml

    scenario = yaml.safe_load((ROOT / "scenarios" / "jbt_zhou2017.yaml").read_text())
    page = (site / "slotted-results.html").read_text()
    for load in scenario["sweep"]["workload.load"]:
        assert f"mean response, load={load}" in page, load
    for law in scenario["sweep"]["workload.service.kind"]:
        assert f"<td><p>{law}</p></td>" in page, law


def test_the_gallery_shows_the_shipped_scenarios_figures(site: Path) -> None:
    gallery = (site / "gallery.html").read_text()
    images = re.findall(r'<img [^>]*src="_images/([^"]+)"', gallery)
    assert len(images) >= 8 and all((site / "_images" / image).is_file() for image in images)


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


PROBE = ("<script>window.addEventListener('load', () => { const p = document.createElement('pre');"
         " p.id = 'probe'; p.textContent = JSON.stringify({overflow: document.documentElement.scrollWidth"
         " - window.innerWidth, images: [...document.querySelectorAll('article img')].map(i => [i.complete,"
         " i.naturalWidth, i.getBoundingClientRect().width])}); document.body.appendChild(p); });</script>")


@pytest.mark.parametrize("page", ["index", "tutorial", "gallery", "theory"])
def test_pages_render_in_headless_chromium_at_desktop_width(site: Path, page: str) -> None:
    """At 1440 px: no page wider than the window, every figure of the article loaded and drawn at least
    400 px wide (not shrunk until its text cannot be read), and a screenshot with text and figures."""
    import json
    import shutil

    from PIL import Image

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium is not installed (Debian: chromium; .ci/run installs it)")
    html = site / f"{page}.html"
    probe = html.with_name(f"{page}.probe.html")  # beside it: the page's relative links still resolve
    probe.write_text(html.read_text().replace("</body>", PROBE + "</body>"))
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1440,900"]
    dom = subprocess.run([*flags, "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = json.loads(re.search(r'<pre id="probe"[^>]*>(.*?)</pre>', dom.stdout, re.DOTALL).group(1))  # type: ignore[union-attr]
    assert found["overflow"] <= 0, f"{page}: {found['overflow']} px wider than the window"
    for complete, width, shown in found["images"]:
        assert complete and width > 0 and shown >= min(400, width), (page, found["images"])
    if page in ("index", "tutorial", "gallery"):
        assert found["images"], f"{page}: no figure in the article"
    shot = site / f"{page}.png"
    subprocess.run([*flags, f"--screenshot={shot}", html.as_uri()], capture_output=True, timeout=120, check=True)
    with Image.open(shot) as image:
        assert image.size == (1440, 900)
        colours = image.convert("RGB").getcolors(maxcolors=1_000_000)
        assert colours is not None and len(colours) > 100  # text and figures drawn
