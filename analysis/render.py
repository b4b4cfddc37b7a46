"""Rendering a comparison table: a `Pivot` as text, GitHub markdown, CSV, LaTeX (booktabs) or HTML.

The best values (`analysis.pivot`) show as bold in markdown, LaTeX and HTML,
``*`` in text and a ``best`` column in CSV; theory rows are in italics. Keys
read by their short names (`key_name`), values as in every label of a
results folder (`analysis.sweep.value_label`). The LaTeX (`analysis.latex`)
needs only ``\\usepackage{booktabs}``; the HTML is a ``table.pivot`` for
`analysis.report`'s style sheet. `frame` and `styler` give the same cells as a
pandas frame and a ``Styler``.

Text fits a width (the terminal's by default, `terminal_width`): a table wider
than that is printed in blocks, one per metric, a metric's columns split into
even runs where it is still too wide; the row keys repeat in every block.
"""

from __future__ import annotations

import html
import io
import shutil
import textwrap
from typing import Any

import pandas as pd

from emulator.errors import ScenarioError

from .cells import Cell
from .labels import KEY_NAMES, LATEX_SYMBOLS, header, key_cells, key_name, latex_escape, span, sub
from .pivot import MEASURED, Entry, Pivot, Value, split

FORMATS = ("text", "markdown", "latex", "csv", "html")
__all__ = ["FORMATS", "KEY_NAMES", "LATEX_SYMBOLS", "frame", "key_name", "latex_escape", "render", "styler",
           "terminal_width"]


def terminal_width() -> int:
    """Columns of the terminal; 100 when the output is not a terminal (a file, a pipe, a notebook)."""
    return shutil.get_terminal_size((100, 24)).columns


def _cell_text(cell: Cell | Value | None, fmt: str) -> str:
    if cell is None:
        return ""
    if isinstance(cell, Value):
        text = cell.text()
        return {"markdown": f"_{text}_", "html": f"<em>{html.escape(text)}</em>"}.get(fmt, text)
    text = cell.text()
    if fmt == "markdown":
        return f"**{text}**" if cell.best else text
    if fmt == "html":
        return f"<strong>{html.escape(text)}</strong>" if cell.best else html.escape(text)
    if fmt == "plain":
        return text
    return f"{text} *" if cell.best else f"{text}  "


def render(table: Pivot, format: str = "text", *, width: int | None = None, layout: str = "auto",
           siunitx: bool = False) -> str:
    """The table as ``text``, ``markdown``, ``csv``, ``latex`` or ``html``.

    Parameters
    ----------
    table : Pivot
    format : {"text", "markdown", "latex", "csv", "html"}
    width : int, optional
        Text only: the most characters a line may take (default `terminal_width`);
        a wider table is printed in blocks. 0: one block, however wide.
    layout : {"auto", "split", "single", "resize"}
        LaTeX only: see `analysis.latex`.
    siunitx : bool
        LaTeX only: siunitx ``S`` columns.
    """
    if format not in FORMATS:
        raise ScenarioError(f"--format: expected one of {', '.join(FORMATS)}, got '{format}'")
    if format == "latex":
        from .latex import latex

        return latex(table, layout, siunitx)
    if width is not None and (isinstance(width, bool) or not isinstance(width, int) or width < 0):
        raise ScenarioError(f"--width: expected an integer >= 0 (0: no limit), got {width!r}")
    if format == "text":
        return _text(table, terminal_width() if width is None else width)
    if format == "markdown":
        return f"{_grid(table, 'markdown')}\n\n{table.caption.replace('Marked:', 'Bold:')}"
    return {"csv": _csv, "html": _html}[format](table)


def _grid(table: Pivot, format: str) -> str:
    """Text (tabulate's "simple", ``*`` for the best) or GitHub markdown (bold best, italic theory keys)."""
    from tabulate import tabulate

    markdown = format == "markdown"
    headers = [key_name(k) for k in table.row_keys] + [header(table, c, ", " if markdown else "\n")
                                                       for c in range(len(table.columns))]
    body = []
    for r in range(len(table.rows)):
        keys = key_cells(table, r)
        if markdown and table.row_kind(r) != MEASURED:
            keys = [f"_{k}_" if k else k for k in keys]
        body.append([*keys, *(_cell_text(table.cells.get((r, c)), format) for c in range(len(table.columns)))])
    aligns = ["left"] * len(table.row_keys) + ["right"] * len(table.columns)
    return str(tabulate(body, headers, tablefmt="github" if markdown else "simple", colalign=aligns,
                        disable_numparse=True))


def _text(table: Pivot, width: int) -> str:
    def fits(part: Pivot) -> bool:
        return width == 0 or max(map(len, _grid(part, "text").splitlines())) <= width

    blocks = [_grid(part, "text") for part in split(table, fits)]
    caption = table.caption.replace("Marked:", "*:")
    if width:
        caption = textwrap.fill(caption, width, break_on_hyphens=False)
    return "\n\n".join([*blocks, caption])


def frame(table: Pivot, marks: bool = False) -> pd.DataFrame:
    """The cells as text with the table's digits, indexed by the row keys, columns (metric, header).

    With ``marks`` a best value ends in " *", as in the text table; `styler` shows them bold instead.
    """
    index = pd.MultiIndex.from_tuples(
        [tuple(str(v) if isinstance(v, Entry) else v for v in row) for row in table.rows],
        names=[key_name(k) for k in table.row_keys])
    columns = pd.MultiIndex.from_tuples(
        [(table.titles.get(m, m), sub(table, combo) if table.col_keys else "") for m, combo in table.columns],
        names=["metric", ", ".join(key_name(k) for k in table.col_keys) or None])
    data = [[_cell_text(table.cells.get((r, c)), "text" if marks else "plain").rstrip()
             for c in range(len(table.columns))] for r in range(len(table.rows))]
    return pd.DataFrame(data, index=index, columns=columns)


def styler(table: Pivot) -> Any:
    """A pandas ``Styler`` of `frame`: best values bold, theory rows italic, the caption above."""
    shown = frame(table)
    bold = pd.DataFrame([["font-weight: bold" if isinstance(table.cells.get((r, c)), Cell)
                          and table.cells[r, c].best else "" for c in range(len(table.columns))]  # type: ignore[union-attr]
                         for r in range(len(table.rows))], index=shown.index, columns=shown.columns)
    theory = [r for r in range(len(table.rows)) if table.row_kind(r) != MEASURED]
    italic = pd.DataFrame("", index=shown.index, columns=shown.columns)
    for r in theory:
        italic.iloc[r, :] = "font-style: italic"
    style = bold.where(bold != "", italic)
    return (shown.style.apply(lambda _: style, axis=None)
            .set_caption(html.escape(table.caption.replace("Marked:", "Bold:")))
            .set_table_styles([{"selector": "caption", "props": "caption-side: top; text-align: left"},
                               {"selector": "td", "props": "text-align: right"}]))


def _csv(table: Pivot) -> str:
    records = []
    for r, row in enumerate(table.rows):
        record: dict[str, Any] = {key: (str(v) if isinstance(v, Entry) else v)
                                  for key, v in zip(table.row_keys, row, strict=True)}
        record["kind"] = table.row_kind(r)
        for c in range(len(table.columns)):
            name = header(table, c, " ")
            cell = table.cells.get((r, c))
            if isinstance(cell, Cell):
                mean, half = cell.parts()
                record[name], record[f"{name} ci95"] = mean, half
                record[f"{name} best"] = cell.best
            elif isinstance(cell, Value):
                record[name] = cell.text()
            else:
                record[name] = ""
        records.append(record)
    buffer = io.StringIO()
    pd.DataFrame(records).to_csv(buffer, index=False)
    return buffer.getvalue()


def _html(table: Pivot) -> str:
    ncols = len(table.columns)
    per_metric = max(ncols // max(len(table.metrics), 1), 1)
    out = ['<table class="pivot">', "<thead>"]
    keys = "".join(f'<th rowspan="{2 if table.col_keys else 1}">{html.escape(key_name(k))}</th>'
                   for k in table.row_keys)
    if table.col_keys:
        spans = "".join(f'<th colspan="{per_metric}">{html.escape(span(table, m))}</th>' for m in table.metrics)
        out.append(f"<tr>{keys}{spans}</tr>")
        subs = "".join(f"<th>{html.escape(sub(table, table.columns[c][1]))}</th>" for c in range(ncols))
        out.append(f"<tr>{subs}</tr>")
    else:
        out.append(f"<tr>{keys}" + "".join(f"<th>{html.escape(table.titles.get(m, m))}</th>"
                                           for m, _ in table.columns) + "</tr>")
    out.append("</thead><tbody>")
    for r in range(len(table.rows)):
        kind = table.row_kind(r)
        cells = "".join(f"<th>{html.escape(k)}</th>" for k in key_cells(table, r))
        cells += "".join(f"<td>{_cell_text(table.cells.get((r, c)), 'html')}</td>" for c in range(ncols))
        out.append(f'<tr class="{kind}">{cells}</tr>')
    out.append(f"</tbody><caption>{html.escape(table.caption.replace('Marked:', 'Bold:'))}</caption></table>")
    return "\n".join(out)
