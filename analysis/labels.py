"""How a table's keys, headers and rows read: short key names, column headers, LaTeX-safe text.

Shared by the renderers (`analysis.render`, `analysis.latex`).
"""

from __future__ import annotations

from typing import Any

from .pivot import Entry, Pivot
from .sweep import short_name, shown, value_label

KEY_NAMES = {"workload.load": "load", "load": "load", "system.servers": "N", "servers": "N",
             "network.loss": "loss", "system.failures": "failures"}


def key_name(key: str) -> str:
    """Short display name of a key: ``workload.load`` -> ``load``, ``system.servers`` -> ``N``.

    A policy parameter (``policies.2.period``) shows as its name (``period``).
    """
    if key.startswith("policies."):
        return key.rsplit(".", 1)[-1]
    return KEY_NAMES.get(key, short_name(key))


def header(table: Pivot, c: int, sep: str) -> str:
    metric, combo = table.columns[c]
    where = ", ".join(f"{key_name(k)}={shown(k, v)}" for k, v in zip(table.col_keys, combo, strict=True)
                      if not isinstance(v, Entry))
    entry = next((v for v in combo if isinstance(v, Entry)), None)
    if entry is not None:
        where = ", ".join(p for p in (str(entry), where) if p)
    title = table.titles.get(metric, metric)
    return f"{title}{sep}{where}" if where else title


def key_cells(table: Pivot, r: int) -> list[str]:
    """Row key values as they read (`analysis.sweep.shown`), blank where they repeat the row above
    (outer keys only)."""
    out = []
    same = r > 0
    for k, (key, value) in enumerate(zip(table.row_keys, table.rows[r], strict=True)):
        above = table.rows[r - 1][k] if r > 0 else None
        same = same and key != "policy" and value_label(above) == value_label(value)
        out.append("" if same else str(value) if isinstance(value, Entry) else shown(key, value))
    return out


def span(table: Pivot, metric: str) -> str:
    """Title over a metric's block of columns: ``mean response, load =`` when one key goes across."""
    title = table.titles.get(metric, metric)
    keys = [k for k in table.col_keys if k != "policy"]
    return f"{title}, {key_name(keys[0])} =" if len(table.col_keys) == 1 and keys else title


def sub(table: Pivot, combo: tuple[Any, ...]) -> str:
    """Header of one column under its metric's title: the value alone when one key goes across."""
    if len(table.col_keys) == 1:
        return str(combo[0]) if isinstance(combo[0], Entry) else shown(table.col_keys[0], combo[0])
    return ", ".join(str(v) if isinstance(v, Entry) else f"{key_name(k)}={shown(k, v)}"
                     for k, v in zip(table.col_keys, combo, strict=True))


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
               "[": "{[}", "]": "{]}", "<": r"\textless{}", ">": r"\textgreater{}"}
    out = "".join(special.get(ch, LATEX_SYMBOLS.get(ch, ch)) for ch in text)
    return out.encode("ascii", "replace").decode("ascii")  # anything else: '?' rather than a failed build
