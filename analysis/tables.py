"""Comparison tables: policies against the swept keys, mean ± CI, best values marked, theory beside.

`pivot` arranges a summary (``summary.csv`` as a frame) into a `Pivot`; `render`
writes it as text, GitHub markdown, CSV, LaTeX (booktabs) or HTML;
`comparison_table` does both, and is what ``lbemu table`` and
``Results.table()`` print.

Layout. Rows and columns are swept keys or ``policy``. By default the policies
go down and the main swept key across (a swept load, else the numeric swept
key with the most values); any other swept key that varies becomes an outer
row key, so that each cell is one (sweep point, policy). Metrics sit side by
side, each with its own block of columns.

Metrics. The default follows the system: mean response and messages per job
for FIFO servers; with pools or a capacity, the blocked fraction and the
occupancy (``mean_queue_length``: jobs per server, tasks per pool) come first.

Cells. ``mean ± half-width of the 95% CI``, digits chosen from the CI
(`analysis.cells`). Among the policies at one sweep point the best value of a
metric is marked, and so is every value whose CI overlaps it (bold in markdown,
LaTeX and HTML, ``*`` in text, a ``best`` column in CSV); see
`analysis.cells.direction` for which metrics have a "best".

Theory. Given the scenario, a row follows each policy that has a reference at
that point (`analysis.references`), named after the approximation used, and a
last row gives the lower bound that holds for every policy. Theory values are
rounded like the measured value they stand beside.

Paired differences. With ``diff=True`` (a run with ``compare_to``) the
``<metric>_diff`` columns, each policy minus the reference policy on the same
jobs, replace the metrics that have them. The marks then use the paired
intervals: overlapping paired intervals is a conservative stand-in for the
(unavailable) paired difference between two policies.
"""

from __future__ import annotations

import html
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from emulator.errors import ScenarioError
from emulator.messages import KINDS
from emulator.output import expect_numbers

from .cells import Cell, direction, fixed
from .sweep import determines, short_name, swept_keys, value_label, varying

FORMATS = ("text", "markdown", "latex", "csv", "html")
FIFO_METRICS = ("mean_response", "messages_per_job")
BLOCKING_METRICS = ("blocked_fraction", "mean_queue_length", "messages_per_job")
KEY_COLUMNS = ("servers", "dispatchers", "discipline", "load", "arrivals", "service", "d")
"""Resolved parameter columns that may also serve as row or column keys."""
KEY_NAMES = {"workload.load": "load", "load": "load", "system.servers": "N", "servers": "N"}
TITLES = {"mean_response": "mean response", "mean_wait": "mean wait", "p50_response": "median response",
          "p90_response": "p90 response", "p99_response": "p99 response", "prob_wait": "P(wait)",
          "mean_queue_length": "jobs per server", "messages_per_job": "messages/job",
          "messages_per_server_time": "messages/server/time", "blocked_fraction": "blocked fraction"}

MEASURED, THEORY, BOUND = "measured", "theory", "bound"


@dataclass(frozen=True)
class Entry:
    """One row (or column) of the policy axis: a policy, its theory, or the common bound."""

    policy: str
    kind: str = MEASURED
    label: str = ""

    def __str__(self) -> str:
        return self.label or self.policy


@dataclass(frozen=True)
class Value:
    """A theory value: shown rounded like the measured cell ``like``."""

    value: float
    like: Cell | None = None

    def text(self) -> str:
        """Rounded like ``like``; else 3 significant digits, and "≈ 0" below 1e-9 (e.g. 1e-127 blocking)."""
        places = self.like.places if self.like is not None else None
        if places is not None:
            return fixed(self.value, places)
        if self.value == 0:
            return "0"
        return "≈ 0" if abs(self.value) < 1e-9 else f"{self.value:.3g}"


@dataclass
class Pivot:
    """A comparison table ready to render.

    Attributes
    ----------
    row_keys, col_keys : list of str
        Keys along the rows and the columns (``policy`` among them).
    metrics : list of str
    rows : list of tuple
        One tuple of key values per row, the policy slot holding an `Entry`.
    columns : list of (str, tuple)
        (metric, key values) per data column, metric-major.
    cells : dict
        (row index, column index) -> `Cell` (measured) or `Value` (theory).
    caption : str
        What the table shows: scenario, N, replications, CI level, the marks.
    name : str
        The scenario name (for the LaTeX label).
    """

    row_keys: list[str]
    col_keys: list[str]
    metrics: list[str]
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    columns: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)
    cells: dict[tuple[int, int], Cell | Value] = field(default_factory=dict)
    caption: str = ""
    name: str = "results"
    titles: dict[str, str] = field(default_factory=dict)

    def row_kind(self, i: int) -> str:
        for key, value in zip(self.row_keys, self.rows[i], strict=True):
            if key == "policy":
                return str(value.kind)
        return MEASURED


# -- choosing the layout -------------------------------------------------------------------
def main_key(summary: pd.DataFrame) -> str | None:
    """The swept key that goes across by default: a load, else the numeric one with most values."""
    keys = varying(summary, swept_keys(summary))
    if not keys:
        return None
    loads = [k for k in keys if k.endswith(".load")]
    if loads:
        return loads[0]
    numeric = [k for k in keys if pd.api.types.is_numeric_dtype(summary[k])]
    return max(numeric or keys, key=lambda k: summary[k].nunique())


def _keys(summary: pd.DataFrame, rows: Sequence[str] | None,
          cols: Sequence[str] | None) -> tuple[list[str], list[str]]:
    allowed = ["policy", *swept_keys(summary), *(c for c in KEY_COLUMNS if c in summary.columns)]
    for option, keys in (("--rows", rows or ()), ("--cols", cols or ())):
        for key in keys:
            if key not in allowed:
                named = ", ".join(k for k in allowed if k not in KEY_COLUMNS)
                raise ScenarioError(f"{option}: expected policy or a swept key ({named}), got '{key}'")
    if rows and cols and set(rows) & set(cols):
        raise ScenarioError(f"--rows/--cols: expected different keys, got '{sorted(set(rows) & set(cols))[0]}' in both")
    if cols is None:
        main = main_key(summary) if rows is None or main_key(summary) not in rows else None
        cols = [main] if main is not None else []
    cols = list(cols)
    rows = list(rows) if rows is not None else []
    placed = [*rows, *cols]
    extra = [k for k in varying(summary, swept_keys(summary))
             if k not in placed and not any(determines(summary, p, k) for p in placed if p != "policy")]
    # A key that a zip group ties to another extra key adds nothing either.
    extra = [k for i, k in enumerate(extra) if not any(determines(summary, e, k) for e in extra[:i])]
    rows = [*extra, *rows]
    if "policy" not in rows and "policy" not in cols:
        rows.append("policy")
    duplicated = summary.duplicated([*rows, *cols], keep=False)
    if duplicated.any():
        raise ScenarioError(f"--rows/--cols: expected keys that tell the summary rows apart, got "
                            f"{', '.join([*rows, *cols])} (add the key that varies with --rows)")
    return rows, cols


def default_metrics(summary: pd.DataFrame) -> list[str]:
    """Delay and messages for FIFO servers; blocking, occupancy and messages with pools or a capacity."""
    blocking = ("discipline" in summary and (summary["discipline"] == "pool").any()) or (
        "blocked_fraction" in summary and summary["blocked_fraction"].fillna(0).gt(0).any())
    metrics = list(BLOCKING_METRICS if blocking else FIFO_METRICS)
    if blocking and "discipline" in summary and not (summary["discipline"] == "pool").all():
        metrics.insert(0, "mean_response")
    return [m for m in metrics if m in summary.columns]


def _check_metrics(summary: pd.DataFrame, metrics: Sequence[str]) -> None:
    for metric in metrics:
        if metric not in summary.columns:
            raise ScenarioError(f"--metric: expected a column of summary.csv, got '{metric}'")
        values = summary[metric]
        if pd.api.types.is_bool_dtype(values) or (not pd.api.types.is_numeric_dtype(values)
                                                  and pd.to_numeric(values, errors="coerce").notna().sum() == 0):
            # Not a metric at all (policy, a text parameter, precision_met): the option is wrong.
            raise ScenarioError(f"--metric: expected a numeric column of summary.csv, got '{metric}' "
                                f"(values such as '{values.iloc[0]}')")
    expect_numbers(summary, [column for metric in metrics for column in (metric, f"{metric}_ci95")])


# -- theory ----------------------------------------------------------------------------------
def _points(scenario: Any) -> dict[int, Any]:
    if scenario is None:
        return {}
    try:
        return {point.index: point for point in scenario.points()}
    except ScenarioError:  # e.g. a trace file that moved: no theory, the table still works
        return {}


def _theory(point: Any, entry: Entry) -> tuple[dict[str, float], str]:
    from .references import bound, references

    if entry.kind == BOUND:
        found = bound(point)
        return (found[1], found[0]) if found else ({}, "")
    policy = next((p for p in point.policies if p.label == entry.policy), None)
    if policy is None:
        return {}, ""
    refs = references(point, policy)
    labels = sorted({ref.label for ref in refs.values()})
    return {metric: ref.value for metric, ref in refs.items()}, "; ".join(labels)


# -- building ------------------------------------------------------------------------------
def _combos(summary: pd.DataFrame, keys: Sequence[str]) -> list[tuple[Any, ...]]:
    """The combinations of ``keys`` in the summary, ordered key by key by first appearance."""
    if not keys:
        return [()]
    frame = summary[list(keys)].drop_duplicates()
    combos = [tuple(row) for row in frame.itertuples(index=False, name=None)]
    ranks = [{value_label(v): i for i, v in enumerate(dict.fromkeys(summary[k].map(value_label)))} for k in keys]
    return sorted(combos, key=lambda combo: [rank[value_label(v)] for rank, v in zip(ranks, combo, strict=True)])


def key_name(key: str) -> str:
    """Short display name of a key: ``workload.load`` -> ``load``, ``system.servers`` -> ``N``.

    A policy parameter (``policies.2.period``) shows as its name (``period``).
    """
    if key.startswith("policies."):
        return key.rsplit(".", 1)[-1]
    return KEY_NAMES.get(key, short_name(key))


def metric_title(metric: str, summary: pd.DataFrame, compare_to: str | None = None) -> str:
    base = metric.removesuffix("_diff")
    kind = base.removeprefix("messages_per_job_")
    title = f"{kind}/job" if kind in KINDS else TITLES.get(base, base)
    if base == "mean_queue_length" and "discipline" in summary and (summary["discipline"] == "pool").all():
        title = "tasks per pool"
    if metric.endswith("_diff"):
        title = f"Δ {title}" + (f" vs {compare_to}" if compare_to else "")
    return title


def pivot(summary: pd.DataFrame, metrics: Sequence[str] | None = None, *, rows: Sequence[str] | None = None,
          cols: Sequence[str] | None = None, diff: bool = False, scenario: Any = None,
          theory: bool = True) -> Pivot:
    """Arrange a summary into a comparison table (see the module docstring).

    Parameters
    ----------
    summary : DataFrame
        ``summary.csv`` as a frame.
    metrics : list of str, optional
        Metric columns; default `default_metrics`.
    rows, cols : list of str, optional
        Keys along the rows and the columns: ``policy``, swept keys, or resolved
        parameters (``load``, ``servers``, ...).
    diff : bool
        Show the paired differences against ``compare_to`` instead of the values.
    scenario : emulator.Scenario, optional
        The run's scenario; needed for the theory rows.
    theory : bool
        Add theory rows where a reference applies.

    Returns
    -------
    Pivot

    Raises
    ------
    emulator.ScenarioError
        A metric that is not a numeric column, a key that is not a swept key,
        ``diff`` without paired differences, or a summary that is not one.
    """
    if summary.empty or "policy" not in summary.columns:
        raise ScenarioError("summary.csv: expected rows with a 'policy' column, got none")
    summary = summary.reset_index(drop=True)
    summary["policy"] = summary["policy"].astype(str)
    metrics = list(metrics) if metrics else default_metrics(summary)
    compare_to = getattr(scenario, "compare_to", None)
    if diff:
        paired = [f"{m}_diff" for m in metrics if f"{m}_diff" in summary.columns]
        if not paired:
            raise ScenarioError("--diff: expected paired differences in summary.csv (a scenario with compare_to, "
                                f"and a metric that has them), got none for {', '.join(metrics)}")
        metrics = [f"{m}_diff" if f"{m}_diff" in summary.columns else m for m in metrics]
    _check_metrics(summary, metrics)
    row_keys, col_keys = _keys(summary, rows, cols)
    name = str(summary["scenario"].iloc[0]) if "scenario" in summary else "results"
    table = Pivot(row_keys, col_keys, metrics, name=name)
    table.titles = {m: metric_title(m, summary, compare_to) for m in metrics}
    points = _points(scenario) if theory and not diff else {}

    def entries(keys: Sequence[str]) -> list[tuple[Any, ...]]:
        combos = _combos(summary, keys)
        if "policy" not in keys:
            return combos
        at = list(keys).index("policy")
        out: list[tuple[Any, ...]] = []
        for i, combo in enumerate(combos):
            out.append((*combo[:at], Entry(combo[at]), *combo[at + 1:]))
            if points:
                out.append((*combo[:at], Entry(combo[at], THEORY), *combo[at + 1:]))
            last = i + 1 == len(combos) or combos[i + 1][:at] + combos[i + 1][at + 1:] != combo[:at] + combo[at + 1:]
            if points and last:
                out.append((*combo[:at], Entry("", BOUND), *combo[at + 1:]))
        return out

    candidate_rows = entries(row_keys)
    col_combos = entries(col_keys)
    index = {tuple(value_label(v) for v in row): i
             for i, row in enumerate(summary[[*row_keys, *col_keys]].itertuples(index=False, name=None))}
    keys = [*row_keys, *col_keys]
    cells: dict[tuple[int, int], Cell | Value] = {}
    found_labels: dict[tuple[int, int], set[str]] = {}
    theory_in_cols = "policy" in col_keys
    columns = [(metric, combo) for metric in metrics for combo in col_combos]
    for r, row in enumerate(candidate_rows):
        for c, (metric, combo) in enumerate(columns):
            values = dict(zip(keys, (*row, *combo), strict=True))
            entry = values.get("policy")
            kind = entry.kind if isinstance(entry, Entry) else MEASURED
            if isinstance(entry, Entry) and kind == MEASURED:
                values["policy"] = entry.policy
            if not isinstance(entry, Entry) or kind == MEASURED:
                at = index.get(tuple(value_label(values[k]) for k in keys))
                if at is not None:
                    half = summary.at[at, f"{metric}_ci95"] if f"{metric}_ci95" in summary else math.nan
                    cells[r, c] = Cell(float(summary.at[at, metric]), float(half))
                continue
            # Theory: the sweep point is that of any summary row with the same non-policy keys.
            match = summary
            for k in keys:
                if k != "policy":
                    match = match[match[k].map(value_label) == value_label(values[k])]
            if kind == THEORY:
                match = match[match["policy"] == entry.policy]
            if match.empty or int(match["point"].iloc[0]) not in points:
                continue
            found, label = _theory(points[int(match["point"].iloc[0])], entry)
            if metric in found:
                # Round like the measured value beside it (for the bound: the last policy's).
                cells[r, c] = Value(found[metric], _nearest(cells, r, c, "policy" in row_keys))
                found_labels.setdefault((r, c), set()).add(label)
    # Keep the theory rows (or columns) that have a value; name them after their approximation.
    by_row: dict[int, set[str]] = {}
    for (r, _), names in found_labels.items():
        by_row.setdefault(r, set()).update(names)
    rows_kept, row_map = _keep(candidate_rows, {} if theory_in_cols else by_row)
    combos_kept = _keep(col_combos, {})[0] if not theory_in_cols else None
    if theory_in_cols:
        by_combo: dict[int, set[str]] = {}
        for (_, c), names in found_labels.items():
            by_combo.setdefault(c % len(col_combos), set()).update(names)
        combos_kept, _ = _keep(col_combos, by_combo)
    assert combos_kept is not None
    kept_columns = [(metric, combo) for metric in metrics for combo in combos_kept]
    position = {(metric, _bare(combo)): j for j, (metric, combo) in enumerate(kept_columns)}
    table.rows = rows_kept
    table.columns = kept_columns
    table.cells = {}
    for (r, c), cell in cells.items():
        metric, combo = columns[c]
        j = position.get((metric, _bare(combo)))
        if r in row_map and j is not None:
            table.cells[row_map[r], j] = cell
    _mark(table, summary)
    table.caption = _caption(summary, table, scenario, bool(points))
    return table


def _nearest(cells: dict[tuple[int, int], Cell | Value], r: int, c: int, down: bool) -> Cell | None:
    """The closest measured cell before (r, c) along the policy axis: theory is rounded like it."""
    while (r if down else c) > 0:
        r, c = (r - 1, c) if down else (r, c - 1)
        cell = cells.get((r, c))
        if isinstance(cell, Cell):
            return cell
    return None


def _bare(combo: tuple[Any, ...]) -> tuple[Any, ...]:
    """A key combination with its policy entry reduced to (policy, kind), for matching."""
    return tuple((v.policy, v.kind) if isinstance(v, Entry) else value_label(v) for v in combo)


def _keep(entries: list[tuple[Any, ...]], labels: dict[int, set[str]]) -> tuple[list[tuple[Any, ...]], dict[int, int]]:
    """The entries without theory entries that have no value; theory entries named by their labels.

    Returns the kept entries and the map from old to new positions.
    """
    kept: list[tuple[Any, ...]] = []
    renumber: dict[int, int] = {}
    for i, combo in enumerate(entries):
        entry = next((v for v in combo if isinstance(v, Entry)), None)
        if entry is not None and entry.kind != MEASURED:
            if i not in labels:
                continue
            text = "; ".join(sorted(labels[i]))
            label = text if entry.kind == BOUND else f"{entry.policy}: {text}"
            combo = tuple(Entry(v.policy, v.kind, label) if isinstance(v, Entry) else v for v in combo)
        renumber[i] = len(kept)
        kept.append(combo)
    return kept, renumber


def _mark(table: Pivot, summary: pd.DataFrame) -> None:
    """Mark the best cells among those that differ only in the policy."""
    from .cells import mark_best

    discipline = str(summary["discipline"].iloc[0]) if "discipline" in summary else None
    groups: dict[tuple[Any, ...], list[tuple[int, int]]] = {}
    for (r, c), cell in table.cells.items():
        if not isinstance(cell, Cell):
            continue
        metric, combo = table.columns[c]
        values = dict(zip([*table.row_keys, *table.col_keys], (*table.rows[r], *combo), strict=True))
        values.pop("policy")
        # A swept discipline is one of the keys; otherwise every point has the same one.
        own = str(values.get("system.discipline", discipline))
        groups.setdefault((metric, own, *map(value_label, values.values())), []).append((r, c))
    for (metric, own, *_), where in groups.items():
        marked = mark_best([table.cells[rc] for rc in where], direction(metric, own))  # type: ignore[misc]
        for rc, cell in zip(where, marked, strict=True):
            table.cells[rc] = cell


def _caption(summary: pd.DataFrame, table: Pivot, scenario: Any, theory: bool) -> str:
    name = table.name
    description = getattr(scenario, "description", None)
    parts = [f"{name}: {description}" if description else name]
    if "servers" in summary and summary["servers"].nunique() == 1 and "servers" not in table.row_keys \
            and "system.servers" not in table.row_keys:
        parts.append(f"N = {int(summary['servers'].iloc[0])}")
    if "replications" in summary:
        low, high = int(summary["replications"].min()), int(summary["replications"].max())
        reps = f"{low}" if low == high else f"{low}–{high}"
        parts.append(f"{reps} replication{'s' if high != 1 else ''} per cell")
    text = ", ".join(parts) + ". Mean ± half-width of the 95% confidence interval (Student t over replications)."
    only = list(summary["discipline"].unique()) if "discipline" in summary else []
    if any(direction(m, str(only[0]) if len(only) == 1 else None) for m in table.metrics):
        text += (" Marked: the lowest value among the policies at each sweep point, and every value whose "
                 "interval overlaps it.")
    if any(m.endswith("_diff") for m in table.metrics):
        text += " Δ: paired difference against the reference policy on the same jobs."
    if theory and any(table.row_kind(r) != MEASURED for r in range(len(table.rows))):
        text += " Theory rows name the approximation used."
    return text


# -- rendering -----------------------------------------------------------------------------
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
    return {"text": _text, "markdown": _markdown, "csv": _csv, "latex": _latex, "html": _html}[format](table)


def _text(table: Pivot) -> str:
    from tabulate import tabulate

    headers = [key_name(k) for k in table.row_keys] + [_header(table, c, "\n") for c in range(len(table.columns))]
    body = [[*_key_cells(table, r), *(_cell_text(table.cells.get((r, c)), "text") for c in range(len(table.columns)))]
            for r in range(len(table.rows))]
    aligns = ["left"] * len(table.row_keys) + ["right"] * len(table.columns)
    text = tabulate(body, headers, tablefmt="simple", colalign=aligns, disable_numparse=True)
    return f"{text}\n\n{table.caption.replace('Marked:', '*:')}"


def _markdown(table: Pivot) -> str:
    from tabulate import tabulate

    headers = [key_name(k) for k in table.row_keys] + [_header(table, c, ", ") for c in range(len(table.columns))]
    body = []
    for r in range(len(table.rows)):
        keys = _key_cells(table, r)
        if table.row_kind(r) != MEASURED:
            keys = [f"_{k}_" if k else k for k in keys]
        body.append([*keys, *(_cell_text(table.cells.get((r, c)), "markdown") for c in range(len(table.columns)))])
    aligns = ["left"] * len(table.row_keys) + ["right"] * len(table.columns)
    text = tabulate(body, headers, tablefmt="github", colalign=aligns, disable_numparse=True)
    return f"{text}\n\n{table.caption.replace('Marked:', 'Bold:')}"


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
        subs = []
        for c in range(ncols):
            _, combo = table.columns[c]
            subs.append(latex_escape(_sub(table, combo)))
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


def comparison_table(summary: pd.DataFrame, metrics: Sequence[str] | None = None, format: str = "text",
                     **options: Any) -> str:
    """A summary as a comparison table (`pivot`, then `render`).

    Parameters
    ----------
    summary : DataFrame
        ``summary.csv`` as a frame.
    metrics : list of str, optional
        Metric columns; by default they follow the system (`default_metrics`).
    format : {"text", "markdown", "latex", "csv", "html"}
    **options
        ``rows``, ``cols``, ``diff``, ``scenario``, ``theory``: see `pivot`.

    Returns
    -------
    str
    """
    return render(pivot(summary, metrics, **options), format)
