"""Rendering a comparison table: a `Pivot` as text, GitHub markdown, CSV, LaTeX (booktabs) or HTML.

The best values (`analysis.pivot`) show as bold in markdown, LaTeX and HTML,
``*`` in text and a ``best`` column in CSV; theory rows are in italics. Keys
read by their short names (`key_name`), values as in every label of a
results folder (`analysis.sweep.value_label`). The LaTeX needs only
``\\usepackage{booktabs}``; the HTML is a ``table.pivot`` for
`analysis.report`'s style sheet.
"""

from __future__ import annotations

import html
import io
from typing import Any

import pandas as pd

from emulator.errors import ScenarioError

from .cells import Cell
from .pivot import MEASURED, Entry, Pivot, Value
from .sweep import short_name, value_label

FORMATS = ("text", "markdown", "latex", "csv", "html")
KEY_NAMES = {"workload.load": "load", "load": "load", "system.servers": "N", "servers": "N"}


def key_name(key: str) -> str:
    """Short display name of a key: ``workload.load`` -> ``load``, ``system.servers`` -> ``N``.

    A policy parameter (``policies.2.period``) shows as its name (``period``).
    """
    if key.startswith("policies."):
        return key.rsplit(".", 1)[-1]
    return KEY_NAMES.get(key, short_name(key))


def _header(table: Pivot, c: int, sep: str) -> str:
    metric, combo = table.columns[c]
    where = ", ".join(f"{key_name(k)}={value_label(v)}" for k, v in zip(table.col_keys, combo, strict=True)
                      if not isinstance(v, Entry))
    entry = next((v for v in combo if isinstance(v, Entry)), None)
    if entry is not None:
        where = ", ".join(p for p in (str(entry), where) if p)
    title = table.titles.get(metric, metric)
    return f"{title}{sep}{where}" if where else title


def _key_cells(table: Pivot, r: int) -> list[str]:
    """Row key values, blank where they repeat the row above (outer keys only)."""
    out = []
    same = r > 0
    for k, (key, value) in enumerate(zip(table.row_keys, table.rows[r], strict=True)):
        above = table.rows[r - 1][k] if r > 0 else None
        same = same and key != "policy" and value_label(above) == value_label(value)
        out.append("" if same else str(value) if isinstance(value, Entry) else value_label(value))
    return out


def _cell_text(cell: Cell | Value | None, fmt: str) -> str:
    if cell is None:
        return ""
    if isinstance(cell, Value):
        text = cell.text()
        return {"markdown": f"_{text}_", "latex": f"\\textit{{{latex_escape(text)}}}",
                "html": f"<em>{html.escape(text)}</em>"}.get(fmt, text)
    if fmt == "latex":
        mean, half = cell.parts()
        body = f"${mean} \\pm {half}$" if half else f"${mean}$" if mean != "–" else "--"
        return f"{{\\boldmath {body}}}" if cell.best else body
    text = cell.text()
    if fmt == "markdown":
        return f"**{text}**" if cell.best else text
    if fmt == "html":
        return f"<strong>{html.escape(text)}</strong>" if cell.best else html.escape(text)
    return f"{text} *" if cell.best else f"{text}  "


def _span(table: Pivot, metric: str) -> str:
    """Title over a metric's block of columns: ``mean response, load =`` when one key goes across."""
    title = table.titles.get(metric, metric)
    keys = [k for k in table.col_keys if k != "policy"]
    return f"{title}, {key_name(keys[0])} =" if len(table.col_keys) == 1 and keys else title


def _sub(table: Pivot, combo: tuple[Any, ...]) -> str:
    """Header of one column under its metric's title: the value alone when one key goes across."""
    if len(table.col_keys) == 1:
        return str(combo[0]) if isinstance(combo[0], Entry) else value_label(combo[0])
    return ", ".join(str(v) if isinstance(v, Entry) else f"{key_name(k)}={value_label(v)}"
                     for k, v in zip(table.col_keys, combo, strict=True))


def render(table: Pivot, format: str = "text") -> str:
    """The table as ``text``, ``markdown``, ``csv``, ``latex`` or ``html``."""
    if format not in FORMATS:
        raise ScenarioError(f"--format: expected one of {', '.join(FORMATS)}, got '{format}'")
    if format in ("text", "markdown"):
        return _tabulated(table, format)
    return {"csv": _csv, "latex": _latex, "html": _html}[format](table)


def _tabulated(table: Pivot, format: str) -> str:
    """Text (tabulate's "simple", ``*`` for the best) or GitHub markdown (bold best, italic theory keys)."""
    from tabulate import tabulate

    markdown = format == "markdown"
    headers = [key_name(k) for k in table.row_keys] + [_header(table, c, ", " if markdown else "\n")
                                                       for c in range(len(table.columns))]
    body = []
    for r in range(len(table.rows)):
        keys = _key_cells(table, r)
        if markdown and table.row_kind(r) != MEASURED:
            keys = [f"_{k}_" if k else k for k in keys]
        body.append([*keys, *(_cell_text(table.cells.get((r, c)), format) for c in range(len(table.columns)))])
    aligns = ["left"] * len(table.row_keys) + ["right"] * len(table.columns)
    text = tabulate(body, headers, tablefmt="github" if markdown else "simple", colalign=aligns,
                    disable_numparse=True)
    return f"{text}\n\n{table.caption.replace('Marked:', 'Bold:' if markdown else '*:')}"


def _csv(table: Pivot) -> str:
    records = []
    for r, row in enumerate(table.rows):
        record: dict[str, Any] = {key: (str(v) if isinstance(v, Entry) else v)
                                  for key, v in zip(table.row_keys, row, strict=True)}
        record["kind"] = table.row_kind(r)
        for c in range(len(table.columns)):
            header = _header(table, c, " ")
            cell = table.cells.get((r, c))
            if isinstance(cell, Cell):
                mean, half = cell.parts()
                record[header], record[f"{header} ci95"] = mean, half
                record[f"{header} best"] = cell.best
            elif isinstance(cell, Value):
                record[header] = cell.text()
            else:
                record[header] = ""
        records.append(record)
    buffer = io.StringIO()
    pd.DataFrame(records).to_csv(buffer, index=False)
    return buffer.getvalue()


LATEX_SYMBOLS = {"√": r"$\surd$", "λ": r"$\lambda$", "→": r"$\to$", "∞": r"$\infty$", "±": r"$\pm$",
                 "Δ": r"$\Delta$", "≈": r"$\approx$", "≤": r"$\le$", "≥": r"$\ge$", "×": r"$\times$", "·": r"$\cdot$",
                 "–": "--", "—": "---"}


def latex_escape(text: str) -> str:
    """Text safe for pdflatex: special characters escaped, the few non-ASCII symbols in math mode.

    Examples
    --------
    >>> latex_escape("JSQ(√N log N) 50% & p_99")
    'JSQ($\\\\surd$N log N) 50\\\\% \\\\& p\\\\_99'
    """
    # Brackets in braces: a cell that starts with "[" (a swept list such as dispatcher_shares) would
    # otherwise be read as the optional argument of the \\, \midrule or \addlinespace before it.
    special = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
               "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
               "[": "{[}", "]": "{]}"}
    out = "".join(special.get(ch, LATEX_SYMBOLS.get(ch, ch)) for ch in text)
    return out.encode("ascii", "replace").decode("ascii")  # anything else: '?' rather than a failed build


def _latex(table: Pivot) -> str:
    nkeys, ncols = len(table.row_keys), len(table.columns)
    per_metric = max(ncols // max(len(table.metrics), 1), 1)
    lines = [r"\begin{table}[htbp]", r"\centering", r"\small", r"\setlength{\tabcolsep}{4pt}",
             f"\\begin{{tabular}}{{{'l' * nkeys}{'r' * ncols}}}", r"\toprule"]
    if table.col_keys:
        spans = [f"\\multicolumn{{{per_metric}}}{{c}}{{{latex_escape(_span(table, m))}}}" for m in table.metrics]
        lines.append(" & " * nkeys + " & ".join(spans) + r" \\")
        rules = [f"\\cmidrule(lr){{{nkeys + 1 + i * per_metric}-{nkeys + (i + 1) * per_metric}}}"
                 for i in range(len(table.metrics))]
        lines.append(" ".join(rules))
        names = [latex_escape(key_name(k)) for k in table.row_keys]
        subs = [latex_escape(_sub(table, combo)) for _, combo in table.columns]
        lines.append(" & ".join([*names, *subs]) + r" \\")
    else:
        lines.append(" & ".join([*(latex_escape(key_name(k)) for k in table.row_keys),
                                 *(latex_escape(table.titles.get(m, m)) for m, _ in table.columns)]) + r" \\")
    lines.append(r"\midrule")
    for r in range(len(table.rows)):
        keys = [latex_escape(k) for k in _key_cells(table, r)]
        if r > 0 and nkeys > 1 and keys[0]:
            lines.append(r"\addlinespace")
        if table.row_kind(r) != MEASURED:
            keys = [f"\\textit{{{k}}}" if k else k for k in keys]
        values = [_cell_text(table.cells.get((r, c)), "latex") for c in range(ncols)]
        lines.append(" & ".join([*keys, *values]) + r" \\")
    label = "".join(ch if ch.isalnum() else "-" for ch in table.name)
    caption = latex_escape(table.caption.replace("Marked:", "Bold:"))
    lines += [r"\bottomrule", r"\end{tabular}", f"\\caption{{{caption}}}", f"\\label{{tab:{label}}}",
              r"\end{table}"]
    return "\n".join(lines) + "\n"


def _html(table: Pivot) -> str:
    ncols = len(table.columns)
    per_metric = max(ncols // max(len(table.metrics), 1), 1)
    out = ['<table class="pivot">', "<thead>"]
    keys = "".join(f'<th rowspan="{2 if table.col_keys else 1}">{html.escape(key_name(k))}</th>'
                   for k in table.row_keys)
    if table.col_keys:
        spans = "".join(f'<th colspan="{per_metric}">{html.escape(_span(table, m))}</th>' for m in table.metrics)
        out.append(f"<tr>{keys}{spans}</tr>")
        subs = "".join(f"<th>{html.escape(_sub(table, table.columns[c][1]))}</th>" for c in range(ncols))
        out.append(f"<tr>{subs}</tr>")
    else:
        out.append(f"<tr>{keys}" + "".join(f"<th>{html.escape(table.titles.get(m, m))}</th>"
                                           for m, _ in table.columns) + "</tr>")
    out.append("</thead><tbody>")
    for r in range(len(table.rows)):
        kind = table.row_kind(r)
        cells = "".join(f"<th>{html.escape(k)}</th>" for k in _key_cells(table, r))
        cells += "".join(f"<td>{_cell_text(table.cells.get((r, c)), 'html')}</td>" for c in range(ncols))
        out.append(f'<tr class="{kind}">{cells}</tr>')
    out.append(f"</tbody><caption>{html.escape(table.caption.replace('Marked:', 'Bold:'))}</caption></table>")
    return "\n".join(out)
