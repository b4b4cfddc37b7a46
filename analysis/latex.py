"""A `Pivot` as LaTeX (booktabs) that fits the line width of a default ``article`` page.

Layouts (``layout``):

``auto`` (default)
    One table if it fits `LINEWIDTH`, else one table per metric, and a metric's
    columns split into even runs where one metric is still too wide. Each part's
    caption says which part it is and that the table was split.
``split``
    One table per metric (columns split as above where needed), always.
``single``
    One table, however wide (e.g. for a ``table*`` or a landscape page).
``resize``
    One table scaled to ``\\linewidth`` by ``\\resizebox`` (needs ``graphicx``);
    the caption says so.

Whether a table fits is estimated from the widths of Computer Modern's glyphs at
``\\small`` (`text_width`), with a margin; the tests compile every shipped
scenario's table and fail on an overfull box.

Cells. Each value spans four columns, ``r@{}l@{}r@{}l``: integer part, fraction,
``± integer part``, fraction; so the means and the half-widths line up on their
decimal points with no package beyond booktabs. With ``siunitx=True`` each value
is one siunitx ``S`` column instead (needs ``\\usepackage{siunitx}``), its
``table-format`` taken from the column's digits. Best values are bold, theory rows
italic, math is math (``$N = 10$``, ``$N \\to \\infty$``), the caption is above
the table.
"""

from __future__ import annotations

import re
from typing import Any

from emulator.errors import ScenarioError

from .cells import Cell
from .labels import header, key_cells, key_name, latex_escape, span, sub
from .pivot import MEASURED, THEORY, Entry, Pivot, Value, split

LAYOUTS = ("auto", "split", "single", "resize")
LINEWIDTH = 345.0
"""``\\linewidth`` of a default ``article`` page (10 pt, letter or A4), in pt."""
MARGIN = 0.97
"""Share of `LINEWIDTH` the estimate may fill: the glyph widths below are approximate."""
SCALE = 1.05
"""Correction of the glyph widths below: the estimates then run 0-6% over pdflatex's widths."""
BREAK = 90.0
"""Row keys wider than this (pt) break after commas, onto as many lines as keep each within it."""
TABCOLSEP = 4.0
"""``\\tabcolsep`` set in the table, pt."""

# Computer Modern at \small (9 pt): advance widths in pt, roughly (cmr9 digits are 4.6 pt).
_NARROW, _WIDE = set("ilj.,:;'!|()[]/` "), set("mwMW")
_MATH = re.compile(r"N = \d+|N=\d+|N → ∞|N·B|√N|->")


def _glyph(ch: str) -> float:
    if ch.isdigit():
        return 4.6
    if ch in _NARROW:
        return 2.6
    if ch in _WIDE:
        return 7.6
    if ch.isupper():
        return 6.8
    if ch in "±→≈×":
        return 7.2
    return 4.7


def text_width(text: str, bold: bool = False) -> float:
    """Estimated width in pt of ``text`` typeset at ``\\small`` (bold is about 10% wider)."""
    return sum(_glyph(ch) for ch in text) * (1.1 if bold else 1.0) * SCALE


def latex_text(text: str) -> str:
    """Text for pdflatex with its math as math: ``N = 10`` -> ``$N = 10$``, ``N → ∞`` -> ``$N \\to \\infty$``.

    Examples
    --------
    >>> latex_text("JIQ: mean field, N → ∞; N = 10, 95%")
    'JIQ: mean field, $N \\\\to \\\\infty$; $N = 10$, 95\\\\%'
    """
    out, at = [], 0
    for match in _MATH.finditer(text):
        out.append(latex_escape(text[at:match.start()]))
        math = match.group().replace("->", "→").replace("=", " = ").replace("  ", " ")
        math = math.replace("→", r"\to").replace("∞", r"\infty").replace("·", r" \cdot ").replace("√N", r"\sqrt{N}")
        out.append(f"${' '.join(math.split())}$")
        at = match.end()
    out.append(latex_escape(text[at:]))
    return "".join(out)


def _name(key: str) -> str:
    """A key's header: one-letter names (N, d) are variables, in math."""
    name = key_name(key)
    return f"${name}$" if len(name) == 1 and name.isalpha() else latex_text(name)


def _key_lines(table: Pivot, r: int) -> list[list[str]]:
    """Each row key's lines: a theory row drops its policy's name (it sits under it) and is indented;
    a long key breaks after commas (`_wrap`)."""
    out = []
    for key, text in zip(table.row_keys, key_cells(table, r), strict=True):
        entry = table.rows[r][table.row_keys.index(key)]
        indent = ""
        if key == "policy" and isinstance(entry, Entry) and entry.kind == THEORY:
            text, indent = text.removeprefix(f"{entry.policy}: "), "  "
        out.append([indent + line for line in _wrap(indent + text)])
    return out


def _wrap(text: str) -> list[str]:
    """``text`` in lines of whole comma-separated parts, each line within `BREAK` where a part allows.

    Examples
    --------
    >>> _wrap("M/M/N (Erlang C), lower bound")
    ['M/M/N (Erlang C),', 'lower bound']
    >>> _wrap("failures (up 200, down 5), hold")
    ['failures (up 200,', 'down 5), hold']
    """
    parts = text.split(", ")
    lines = [parts[0]]
    for part in parts[1:]:
        if text_width(f"{lines[-1]}, {part}") <= BREAK:
            lines[-1] += f", {part}"
        else:
            lines[-1] += ","
            lines.append(part)
    return lines


def _key_tex(lines: list[str], theory: bool) -> str:
    def one(line: str) -> str:
        indent = r"\quad " if line.startswith("  ") else ""
        body = latex_text(line.strip())
        return f"{indent}\\textit{{{body}}}" if theory and body else f"{indent}{body}"

    if len(lines) == 1:
        return one(lines[0])
    inner = r" \\ ".join(one(line if i == 0 else "  " + line.strip()) for i, line in enumerate(lines))
    return f"\\begin{{tabular}}[t]{{@{{}}l@{{}}}}{inner}\\end{{tabular}}"


# -- cells -----------------------------------------------------------------------------------
def _number(text: str) -> tuple[str, str]:
    """A number as (integer part, fraction with its point), e.g. "1.0305" -> ("1", ".0305")."""
    if "e" in text:  # 1.5e-05: the exponent goes with the fraction
        mantissa, exponent = text.split("e")
        whole, frac = _number(mantissa)
        return whole, f"{frac}\\times 10^{{{int(exponent)}}}"
    whole, point, frac = text.partition(".")
    return whole, f".{frac}" if point else ""


def _pieces(cell: Cell | Value | None) -> tuple[list[str], str]:
    """The four math pieces of a cell (mean and half, split at the point) and its style."""
    if cell is None:
        return ["", "", "", ""], ""
    if isinstance(cell, Value):
        text = cell.text()
        if text == "≈ 0":
            return [r"\approx 0", "", "", ""], "theory"
        return [*_number(text), "", ""], "theory"
    mean, half = cell.parts()
    if mean == "–":
        return ["--", "", "", ""], "missing"
    whole, frac = _number(mean)
    pieces = [whole, frac, "", ""]
    if half:
        hwhole, hfrac = _number(half)
        pieces[2:] = [f"{{}}\\pm {hwhole}", hfrac]
    return pieces, "best" if cell.best else ""


def _styled(piece: str, style: str, first: bool) -> str:
    if not piece or style == "missing":
        return piece
    if style == "theory":
        return f"$\\mathit{{{piece}}}$"
    if style == "best":
        # One \boldmath per cell (its first piece); the others' digits in \mathbf, the same bold glyphs.
        if first:
            return f"{{\\boldmath${piece}$}}"
        sign, _, number = piece.rpartition(" ")
        return f"${sign + ' ' if sign else ''}\\mathbf{{{number}}}$"
    return f"${piece}$"


def _aligned(cell: Cell | Value | None) -> list[str]:
    pieces, style = _pieces(cell)
    return [_styled(p, style, i == 0) for i, p in enumerate(pieces)]


def _sicell(cell: Cell | Value | None) -> str:
    """One siunitx S cell: the number (``1.0305 \\pm 0.0087``, bold by ``\\boldmath``), braced text otherwise.

    Theory values are upright here (siunitx sets numbers in math, where ``\\itshape`` does nothing);
    their row keys stay italic.
    """
    if cell is None:
        return ""
    if isinstance(cell, Value):
        text = cell.text()
        return "{$\\approx 0$}" if text == "≈ 0" else text
    mean, half = cell.parts()
    if mean == "–":
        return "{--}"
    body = f"{mean} \\pm {half}" if half else mean
    return f"\\boldmath {body}" if cell.best else body


def _siformat(table: Pivot, c: int) -> str:
    """A column's ``table-format``, e.g. ``2.4(1.4)``: the most digits before and after the point."""
    def digits(text: str) -> tuple[int, int]:
        whole, _, frac = text.lstrip("-").partition(".")
        return len(whole), len(frac)

    def spec(pairs: list[tuple[int, int]]) -> str:
        whole, frac = max(w for w, _ in pairs), max(f for _, f in pairs)
        return f"{whole}.{frac}" if frac else f"{whole}"

    means, halves = [(1, 0)], []
    for (_, col), cell in table.cells.items():
        if col != c:
            continue
        if isinstance(cell, Value) and "e" not in cell.text() and cell.text() != "≈ 0":
            means.append(digits(cell.text()))
        elif isinstance(cell, Cell) and cell.parts()[0] != "–":
            mean, half = cell.parts()
            means.append(digits(mean))
            if half:
                halves.append(digits(half))
    return spec(means) + (f"({spec(halves)})" if halves else "")


# -- width -----------------------------------------------------------------------------------
def width(table: Pivot) -> float:
    """Estimated natural width of the table's tabular, in pt.

    A value's four columns are each as wide as their widest piece, so a column is as wide as
    the longest integer part, plus the longest fraction, and so on, not as its widest cell.
    """
    columns = [[key_name(k)] for k in table.row_keys]
    for r in range(len(table.rows)):
        for k, lines in enumerate(_key_lines(table, r)):
            columns[k] += lines
    total = sum(max(text_width(t) for t in col) + 2 * TABCOLSEP for col in columns)
    blocks: dict[str, float] = {}
    for c, (metric, combo) in enumerate(table.columns):
        head = sub(table, combo) if table.col_keys else header(table, c, " ")
        pieces = [0.0] * 4
        for r in range(len(table.rows)):
            cell = table.cells.get((r, c))
            bold = isinstance(cell, Cell) and cell.best
            for i, piece in enumerate(_piece_texts(cell)):
                pieces[i] = max(pieces[i], text_width(piece, bold))
        blocks[metric] = blocks.get(metric, 0.0) + max(text_width(head), sum(pieces)) + 2 * TABCOLSEP
    if table.col_keys:
        for metric in blocks:
            blocks[metric] = max(blocks[metric], text_width(span(table, metric)) + 2 * TABCOLSEP)
    return total + sum(blocks.values())


def _piece_texts(cell: Cell | Value | None) -> list[str]:
    """The four pieces of a cell as they read (``["1", ".0305", " ± 0", ".0087"]``), for widths."""
    if cell is None:
        return []
    text = cell.text()
    if isinstance(cell, Value):
        return [text] if text == "≈ 0" else list(_number(text.replace("e", "×10")))
    mean, half = cell.parts()
    if not half:
        return list(_number(mean)) if mean != "–" else ["--"]
    hwhole, hfrac = _number(half)
    return [*_number(mean), f" ± {hwhole}", hfrac]


def fits(table: Pivot) -> bool:
    """Whether the estimated width stays within `MARGIN` of `LINEWIDTH`."""
    return width(table) <= MARGIN * LINEWIDTH


# -- writing ---------------------------------------------------------------------------------
def latex(table: Pivot, layout: str = "auto", siunitx: bool = False) -> str:
    """The table as one or more LaTeX ``table`` floats (see the module docstring).

    Raises
    ------
    emulator.ScenarioError
        An unknown layout.
    """
    if layout not in LAYOUTS:
        raise ScenarioError(f"--layout: expected one of {', '.join(LAYOUTS)}, got '{layout}'")
    if layout in ("single", "resize"):
        parts = [table]
    else:
        parts = split(table, fits) if layout == "auto" else split(table, lambda t: len(t.metrics) <= 1 and fits(t))
    label = "tab:" + "".join(ch if ch.isalnum() else "-" for ch in table.name)
    caption = latex_text(table.caption.replace("Marked:", "Bold:"))
    if len(parts) == 1:
        note = " Scaled to the line width." if layout == "resize" else ""
        return _float(parts[0], caption + note, label, siunitx, layout == "resize")
    how = "one per metric" if len(parts) == len(table.metrics) else "one per metric, and its columns in parts"
    out = []
    for i, part in enumerate(parts):
        title = part.part[:1].upper() + part.part[1:]
        head = f"{latex_text(title)} (table {i + 1} of {len(parts)}, split to fit the line width: {how})."
        out.append(_float(part, f"{head} {caption}", f"{label}-{i + 1}", siunitx, False))
    return "\n".join(out)


def _float(table: Pivot, caption: str, label: str, siunitx: bool, resize: bool) -> str:
    nkeys, ncols = len(table.row_keys), len(table.columns)
    per = 1 if siunitx else 4  # LaTeX columns per value
    if siunitx:
        spec = "".join(f"S[table-format={_siformat(table, c)}]" for c in range(ncols))
    else:
        spec = "r@{}l@{}r@{}l" * ncols
    metrics = table.metrics
    blocks = table.by_metric()
    lines = [r"\begin{table}[htbp]", r"\centering", r"\small", f"\\caption{{{caption}}}", f"\\label{{{label}}}",
             r"\smallskip",  # article leaves no space below a caption: it expects captions below
             r"\setlength{\tabcolsep}{4pt}"]
    if siunitx:
        lines.append(r"\sisetup{uncertainty-mode=separate, reset-math-version=false, "
                     r"reset-text-series=false, text-series-to-math=true}")
    if resize:
        lines.append(r"\resizebox{\linewidth}{!}{%")
    lines += [f"\\begin{{tabular}}{{{'l' * nkeys}{spec}}}", r"\toprule"]

    def head(text: str, span: int) -> str:
        return f"\\multicolumn{{{span}}}{{c}}{{{text}}}"

    if table.col_keys:
        spans = [head(latex_text(span(table, m)), per * len(cols)) for m, cols in zip(metrics, blocks, strict=True)]
        lines.append(" & " * nkeys + " & ".join(spans) + r" \\")
        rules, start = [], nkeys + 1
        for cols in blocks:
            rules.append(f"\\cmidrule(lr){{{start}-{start + per * len(cols) - 1}}}")
            start += per * len(cols)
        lines.append(" ".join(rules))
        subs = [head(latex_text(sub(table, combo)), per) for _, combo in table.columns]
    else:
        subs = [head(latex_text(table.titles.get(m, m)), per) for m, _ in table.columns]
    lines.append(" & ".join([*(_name(k) for k in table.row_keys), *subs]) + r" \\")
    lines.append(r"\midrule")
    for r in range(len(table.rows)):
        theory = table.row_kind(r) != MEASURED
        keys = [_key_tex(key, theory) for key in _key_lines(table, r)]
        if r > 0 and nkeys > 1 and keys[0]:
            lines.append(r"\addlinespace")
        values: list[Any] = []
        for c in range(ncols):
            cell = table.cells.get((r, c))
            values += [_sicell(cell)] if siunitx else _aligned(cell)
        lines.append(" & ".join([*keys, *values]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if resize:
        lines.append("}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"
