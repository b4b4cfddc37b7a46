"""``lbemu report DIR``: one self-contained HTML page of a results folder.

The page holds the scenario (``scenario.yaml`` as written by the run, with the
lbemu version and the seed), how long the run took (the sum of ``wall_seconds``
over the tasks of ``runs.csv``, and their number), the comparison tables of
`analysis.tables` (best values marked, theory rows), the figures of
`analysis.plots.plot_folder`, drawn afresh into a temporary folder (the results
folder is only read, so it may be read-only), plus any other PNG already in the
folder, all embedded as base64 PNG, and a short guide to reading messages per
job and confidence intervals, after a table of contents. Figures take the page's
width, but never shrink below `PX_PER_INCH` (a wide one scrolls instead).
Styles are inline; nothing is fetched from the network.
"""

from __future__ import annotations

import base64
import html
import tempfile
from pathlib import Path

import pandas as pd

from emulator.errors import ScenarioError

from .plots import plot_folder
from .source import read_scenario
from .tables import comparison_table

GUIDE = """
<p><strong>Messages per job</strong> counts every control message the policy sends (queries and their
replies, idle tokens, below-threshold reports, threshold broadcasts) divided by the jobs measured.
A query to a server and its reply are two messages, so SQ(d) costs 2d per job and JSQ 2N; JIQ's
idle tokens stay at or below one per job. The cost in messages is what a policy pays for its delay.</p>
<p><strong>Mean ± half-width</strong>: the mean over independent replications and the half-width of its
95% confidence interval (Student t). The digits follow the interval: two significant digits of the
half-width, the mean rounded to match. A value without ± is the same in every replication.</p>
<p><strong>Bold</strong> marks the best value among the policies at each sweep point (the lowest, for
delay, waiting, queue lengths, messages and blocking) and every value whose interval overlaps it: their
difference is not resolved by these runs. Tasks per pool (occupancy) has no best.</p>
<p><em>Italic</em> rows are theory, named after the approximation: "exact" holds at any N, "mean field,
N → ∞" and "fluid limit, N → ∞" are limits as N grows (finite N may differ by O(1/N) or more), and a "lower bound"
holds for every policy. A theory row appears only where its assumptions (Poisson arrivals, the service
law, FIFO or pools, equal speeds, one dispatcher, zero latency, continuous time) hold for that scenario.</p>
"""

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1200px; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; padding-bottom: .2em;
     margin-top: 2em; }
pre { background: #f6f8fa; padding: .8em; overflow-x: auto; font-size: .85em; }
table.pivot { border-collapse: collapse; font-size: .85em; margin: 1em 0; }
table.pivot th, table.pivot td { padding: .25em .6em; border-bottom: 1px solid #e3e3e3; white-space: nowrap; }
table.pivot thead th { border-bottom: 2px solid #555; text-align: center; }
table.pivot tbody th { text-align: left; font-weight: normal; }
table.pivot td { text-align: right; font-variant-numeric: tabular-nums; }
table.pivot tr.theory, table.pivot tr.bound { color: #555; background: #fafafa; }
table.pivot caption { caption-side: bottom; text-align: left; font-size: .9em; color: #444;
                      padding-top: .5em; max-width: 1100px; white-space: normal; }
.scroll { overflow-x: auto; }
figure { margin: 1.5em 0; } figure img { width: 100%; height: auto; border: 1px solid #eee; }
nav.toc { background: #f6f8fa; padding: .5em 1.2em; display: inline-block; } nav.toc ul { margin: .3em 0; }
figcaption { font-size: .9em; color: #444; }
dl.facts dt { font-weight: bold; float: left; clear: left; width: 11em; } dl.facts dd { margin-left: 12em; }
"""

FIGURE_NOTES = {
    "response": "Mean response time against the swept variable, 95% CI as error bars.",
    "messages": "Control messages per job against the swept variable.",
    "tradeoff": "Delay against messages, one panel per value of the swept variable: lower left is better.",
    "messages_by_kind": "Each policy's messages split by kind as shares of its bar, the total per job on top.",
    "blocking": "Fraction of jobs blocked.",
    "response_tail": "Response-time tail P(response > t) on a log scale.",
    "messages_vs_period": "Messages per job against the JBT-d threshold update period T.",
    "occupancy": "Queue-length tail on a log scale against the mean-field curve.",
    "halfin_whitt": "Pool occupancies on the diffusion scale, against JSQ's fluid point.",
}


def _runtime(folder: Path) -> str:
    path = folder / "runs.csv"
    if not path.is_file():
        return "unknown (no runs.csv)"
    try:
        runs = pd.read_csv(path).copy()  # consolidated: columns are added to it
        seconds = float(pd.to_numeric(runs["wall_seconds"], errors="coerce").sum())
    except (pd.errors.ParserError, pd.errors.EmptyDataError, KeyError, UnicodeDecodeError, OSError):
        return "unknown (runs.csv has no wall_seconds)"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    clock = f"{int(hours)} h {int(minutes)} min" if hours else f"{int(minutes)} min {secs:.0f} s" if minutes \
        else f"{secs:.1f} s"
    return f"{clock} of computer time over {len(runs)} tasks (sum of wall_seconds in runs.csv)"


DPI = 150
"""Resolution of the report's figures: sharp at the page's width."""
PX_PER_INCH = 72
"""A figure is never shown narrower than this many CSS pixels per inch of its width (its 10 pt labels
stay at 10 px or more); a wider one scrolls sideways."""


def _figure(path: Path) -> str:
    raw = path.read_bytes()
    data = base64.b64encode(raw).decode("ascii")
    note = FIGURE_NOTES.get(path.stem, "")
    inches = int.from_bytes(raw[16:20], "big") / DPI if raw[12:16] == b"IHDR" else 0  # the PNG's width
    least = f' style="min-width: {round(inches * PX_PER_INCH)}px"' if inches else ""
    return (f'<figure id="{html.escape(path.stem)}" class="scroll"><img src="data:image/png;base64,{data}" '
            f'alt="{html.escape(path.stem)}"{least}>'
            f"<figcaption>{html.escape(path.name)}{': ' + html.escape(note) if note else ''}</figcaption></figure>")


def _toc(sections: list[tuple[str, str]], figures: list[Path]) -> str:
    """The table of contents: the page's sections, and under Figures each figure by name."""
    items = []
    for anchor, title in sections:
        sub = ""
        if anchor == "figures":
            sub = "<ul>" + "".join(f'<li><a href="#{html.escape(p.stem)}">{html.escape(p.stem)}</a></li>'
                                   for p in figures) + "</ul>"
        items.append(f'<li><a href="#{anchor}">{html.escape(title)}</a>{sub}</li>')
    return '<nav class="toc"><strong>Contents</strong><ul>' + "".join(items) + "</ul></nav>"


def build_report(folder: Path) -> str:
    """The HTML text of the report of a results folder (which it only reads)."""
    from emulator.experiment.output import read_summary

    summary = read_summary(folder)
    scenario = read_scenario(folder)
    text = (folder / "scenario.yaml").read_text() if (folder / "scenario.yaml").is_file() else "(no scenario.yaml)"
    name = str(summary["scenario"].iloc[0]) if "scenario" in summary else folder.name
    tables = [("Comparison", comparison_table(summary, format="html", scenario=scenario))]
    if scenario is not None and scenario.compare_to and any(c.endswith("_diff") for c in summary.columns):
        tables.append((f"Paired differences against {scenario.compare_to}",
                       comparison_table(summary, format="html", scenario=scenario, diff=True)))
    with tempfile.TemporaryDirectory(prefix="lbemu-report-") as scratch:
        drawn = plot_folder(summary, Path(scratch), source=folder, dpi=DPI)
        # A PNG of the folder by the name of one drawn here is an earlier copy of it (from lbemu plot).
        others = sorted(p for p in folder.glob("*.png") if p.name not in {path.name for path in drawn})
        shown = [*drawn, *others]
        figures = [_figure(path) for path in shown]
    seed = getattr(scenario, "seed", None)
    version = text.splitlines()[0].removeprefix("# resolved by ") if text.startswith("# resolved by") else "unknown"
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>lbemu report: {html.escape(name)}</title><style>{CSS}</style></head><body>",
        f"<h1>lbemu report: {html.escape(name)}</h1>",
        f"<p>{html.escape(getattr(scenario, 'description', '') or '')}</p>",
        '<dl class="facts">',
        f"<dt>produced by</dt><dd>{html.escape(version)}</dd>",
        f"<dt>seed</dt><dd>{html.escape(str(seed))}</dd>",
        f"<dt>run time</dt><dd>{html.escape(_runtime(folder))}</dd>",
        f"<dt>results folder</dt><dd>{html.escape(str(folder))}</dd>",
        "</dl>",
    ]
    sections = [("guide", "How to read this"), *((f"table-{i}", title) for i, (title, _) in enumerate(tables)),
                ("figures", "Figures"), ("scenario", "Scenario")]
    parts += [_toc(sections, shown), '<h2 id="guide">How to read this</h2>', GUIDE]
    for i, (title, table) in enumerate(tables):
        parts += [f'<h2 id="table-{i}">{html.escape(title)}</h2>', f'<div class="scroll">{table}</div>']
    parts.append('<h2 id="figures">Figures</h2>')
    parts += figures
    parts += ['<h2 id="scenario">Scenario</h2>', "<p>scenario.yaml as the run resolved it; <code>lbemu run</code> "
              "runs it again as it is.</p>", f"<pre>{html.escape(text)}</pre>", "</body></html>"]
    return "\n".join(parts) + "\n"


def write_report(folder: Path, out: Path | None = None) -> Path:
    """Write ``report.html`` (or ``out``) for a results folder; return its path.

    Raises
    ------
    emulator.ScenarioError
        If ``folder`` is not a results folder, or ``out`` cannot be written.
    """
    folder = Path(folder)
    page = build_report(folder)
    out = out if out is not None else folder / "report.html"
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"--out: expected a writable file, got '{out}' ({exc.strerror})") from None
    return out
