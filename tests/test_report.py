"""Figures beyond the summary (response tail, messages against the JBT period), and ``lbemu report``.

The report is opened in headless Chromium when it is installed (Debian
``chromium``; ``.ci/run`` installs it): every image must decode and be drawn
with a non-zero size, and the tables must be there. A screenshot is saved
next to the report (``report.png``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

import emulator
from analysis import plots, response_tail
from analysis.source import Source
from analysis.style import policy_style
from emulator.cli import main

pytestmark = pytest.mark.xdist_group("test_report")  # one process runs its module fixtures, once


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results folder with the JBT period swept, a response_cdf.csv and an extra (occupancy) PNG."""
    scenario = emulator.Scenario.from_dict({
        "name": "report", "description": "JSQ against JBT-3 with its period swept", "seed": 11,
        "replications": 2, "run": {"jobs": 800, "warmup_jobs": 100}, "system": {"servers": 6},
        "policies": [{"name": "random"}, {"name": "jsq"}, {"name": "jbt", "d": 3, "period": 10}],
        "sweep": {"workload.load": [0.5, 0.9], "policies.2.period": [5, 50]}})
    out = tmp_path_factory.mktemp("report")
    results = emulator.run(scenario, workers=1, out=out)
    cdf = synthetic_cdf(results.summary)
    cdf.to_csv(out / "response_cdf.csv", index=False)
    Image.new("RGB", (300, 200), (40, 120, 200)).save(out / "occupancy.png")  # stands for the occupancy figure
    return out


@pytest.fixture(scope="module")
def report(folder: Path) -> str:
    """``lbemu report`` on the folder, once: the page's text. It writes report.html and nothing else there."""
    before = sorted(path.name for path in folder.iterdir())
    assert main(["report", str(folder)]) == 0
    assert sorted(path.name for path in folder.iterdir()) == sorted([*before, "report.html"])
    return (folder / "report.html").read_text()


FIGURES = ["response.png", "messages.png", "tradeoff.png", "messages_by_kind.png", "response_tail.png",
           "messages_vs_period.png", "occupancy.png"]
"""The figures of the report of `folder`, as plot_folder draws them (occupancy.png from occupancy.csv, in place
of the folder's own occupancy.png of that name)."""


def figure_names(page: str) -> list[str]:
    return [caption.split("</figcaption>")[0].split(":")[0] for caption in page.split("<figcaption>")[1:]]


def synthetic_cdf(summary: pd.DataFrame) -> pd.DataFrame:
    """response_cdf.csv rows: exponential response times with mean 1 / (1 - load), bins of width 0.5."""
    rows = []
    swept = [c for c in summary.columns if "." in c and not c.endswith("_ci95")]
    for _, row in summary.iterrows():
        edges = np.arange(0.5, 30.0, 0.5)
        cdf = 1.0 - np.exp(-edges * (1.0 - row["load"]))
        for edge, value in zip(edges, cdf, strict=True):
            rows.append({"point": row["point"], **{k: row[k] for k in swept}, "policy": row["policy"],
                         "response": edge, "cdf": value})
    return pd.DataFrame(rows)


@pytest.mark.slow
def test_response_tail_figure_on_a_synthetic_frame() -> None:
    frame = pd.DataFrame([{"point": p, "workload.load": load, "policy": policy, "response": t,
                           "cdf": 1 - np.exp(-t * (1 - load) * (2 if policy == "JSQ" else 1))}
                          for p, load in enumerate((0.5, 0.9)) for policy in ("Random", "JSQ")
                          for t in np.arange(0.5, 20, 0.5)])
    summary = pd.DataFrame({"policy": ["Random", "JSQ"], "policy_name": ["random", "jsq"],
                            "service": ["exponential(1)"] * 2})
    style = policy_style(["Random", "JSQ"], {"Random": "random", "JSQ": "jsq"})
    fig = response_tail.plot_response_tail(Source(summary, response_cdf=frame))
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 2 and all(ax.get_yscale() == "log" for ax in axes)
    for ax in axes:
        lines = {line.get_label(): line for line in ax.get_lines()}
        assert set(lines) == {"Random", "JSQ"}
        for policy, line in lines.items():
            assert line.get_color() == style.colors[policy] and line.get_marker() == style.markers[policy]
        # The tail is 1 - cdf, exactly, where it is positive.
        x, y = lines["Random"].get_data()
        assert ax.get_title() in ("load = 0.5", "load = 0.9")
        assert ax.get_xlabel() == "response time t (mean service times)"
        load = 0.5 if "0.5" in ax.get_title() else 0.9
        assert np.allclose(y, np.exp(-np.asarray(x) * (1 - load)))


@pytest.mark.slow
def test_plot_folder_adds_the_tail_and_period_figures_with_svg_twins(folder: Path, tmp_path: Path) -> None:
    summary = pd.read_csv(folder / "summary.csv")
    assert plots.period_key(summary) == "policies.2.period"
    from analysis.plots import plot_folder

    drawn = plot_folder(summary, tmp_path, source=folder)
    assert [path.name for path in drawn] == FIGURES
    for name in ("response.png", "messages.png", "response_tail.png", "messages_vs_period.png"):
        path = tmp_path / name
        with Image.open(path) as image:
            assert image.format == "PNG" and image.size[0] > 400
        root = ET.parse(path.with_suffix(".svg")).getroot()
        assert root.tag.endswith("svg")


def test_one_style_per_policy_across_folders() -> None:
    """A policy name keeps its colour and marker whatever else a folder holds; its variants differ."""
    quickstart = policy_style(["Random", "JSQ", "SQ(2)", "JBT-10"],
                              {"Random": "random", "JSQ": "jsq", "SQ(2)": "sqd", "JBT-10": "jbt"})
    zhou = policy_style(["JSQ", "JBT-2", "JBT-10", "JBT-N", "SQ(2)"],
                        {"JSQ": "jsq", "JBT-2": "jbt", "JBT-10": "jbt", "JBT-N": "jbt", "SQ(2)": "sqd"})
    assert quickstart.colors["JSQ"] == zhou.colors["JSQ"] and quickstart.markers["JSQ"] == zhou.markers["JSQ"]
    assert quickstart.colors["SQ(2)"] == zhou.colors["SQ(2)"]
    assert quickstart.colors["JBT-10"] == zhou.colors["JBT-2"]  # the first label of a name has the name's style
    assert len(set(zhou.colors.values())) == 5 and len(set(zhou.markers.values())) == 5
    assert policy_style(["A", "B"]) == policy_style(["A", "B"])  # plug-ins: by order, the same every time


@pytest.mark.slow
def test_report_is_one_self_contained_page(folder: Path, report: str) -> None:
    page = report
    assert "http://" not in page and "https://" not in page  # nothing to fetch
    assert page.count('<table class="pivot">') == 1 and "<strong>" in page
    assert "Random: M/M/1, exact" in page and "M/M/N (Erlang C), lower bound" in page
    assert "seed: 11" in page and "# resolved by lbemu" in page and "How to read this" in page
    runs = pd.read_csv(folder / "runs.csv")
    assert f"over {len(runs)} tasks" in page
    assert figure_names(page) == FIGURES
    assert page.count('<img src="data:image/png;base64,') == len(FIGURES)
    contents = page.split('<nav class="toc">', 1)[1].split("</nav>", 1)[0]
    for anchor in ["guide", "table-0", "figures", "scenario", *(name.removesuffix(".png") for name in FIGURES)]:
        assert f'href="#{anchor}"' in contents and f'id="{anchor}"' in page, anchor


@pytest.mark.slow
def test_report_renders_in_headless_chromium(folder: Path, report: str) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium is not installed (Debian: chromium; .ci/run installs it)")
    probe = folder / "probe.html"
    script = ("<script>window.addEventListener('load', () => { const p = document.createElement('pre');"
              " p.id = 'probe'; p.textContent = JSON.stringify([...document.images].map(i => [i.complete,"
              " i.naturalWidth, i.naturalHeight, i.getBoundingClientRect().width,"
              " i.getBoundingClientRect().height])); document.body.appendChild(p); });</script>")
    probe.write_text(report.replace("</body>", script + "</body>"))
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1280,2400"]
    dom = subprocess.run([*flags, "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    text = dom.stdout.split('<pre id="probe">', 1)[1].split("</pre>", 1)[0]
    images = json.loads(text)
    assert len(images) == len(FIGURES)
    for complete, width, height, shown_width, shown_height in images:
        assert complete and width > 0 and height > 0 and shown_width > 0 and shown_height > 0
    assert dom.stdout.count('<table class="pivot">') == 1 and "Random: M/M/1, exact" in dom.stdout
    shot = folder / "report.png"
    subprocess.run([*flags, f"--screenshot={shot}", (folder / "report.html").as_uri()], capture_output=True,
                   timeout=120, check=True)
    with Image.open(shot) as image:
        assert image.size == (1280, 2400)
        colours = image.convert("RGB").getcolors(maxcolors=1_000_000)
        assert colours is not None and len(colours) > 100  # text, tables and figures drawn


def test_bad_report_folder_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing" in err


def test_report_elsewhere_leaves_a_read_only_folder_as_it_was(folder: Path, report: str, tmp_path: Path) -> None:
    # The figures are drawn in a temporary folder: the results folder may be read-only.
    before = {path.name: path.stat().st_mtime_ns for path in folder.iterdir()}
    out = tmp_path / "elsewhere" / "r.html"
    out.parent.mkdir()
    folder.chmod(0o555)
    try:
        assert main(["report", str(folder), "--out", str(out)]) == 0
    finally:
        folder.chmod(0o755)
    assert {path.name: path.stat().st_mtime_ns for path in folder.iterdir()} == before
    others = sorted(name for name in before if name.endswith(".png") and name not in FIGURES)  # report.png
    assert figure_names(out.read_text()) == FIGURES + others
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["elsewhere", "r.html"]
