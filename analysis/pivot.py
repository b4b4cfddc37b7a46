"""Building a comparison table: which cells, rows, columns, marks and theory rows, as data (a `Pivot`).

`pivot` arranges a summary (``summary.csv`` as a frame) into a `Pivot`;
`analysis.render` writes it out, and `analysis.tables.comparison_table` does
both.

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
metric is marked, and so is every value whose CI overlaps it; see
`analysis.cells.direction` for which metrics have a "best".

Theory. Given the scenario, a row follows each policy that has a reference at
that point (`analysis.references`), named after the approximation used, and a
last row gives the lower bound that holds for every policy. Theory values have
no interval: they show `THEORY_SIGNIFICANT` significant digits (an exact 1 reads
"1"), whatever the digits of the measured value beside them.

Paired differences. With ``diff=True`` (a run with ``compare_to``) the
``<metric>_diff`` columns, each policy minus the reference policy on the same
jobs, replace the metrics that have them. The marks then use the paired
intervals: overlapping paired intervals is a conservative stand-in for the
(unavailable) paired difference between two policies.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from emulator.errors import ScenarioError, suggestion
from emulator.experiment.output import expect_numbers
from emulator.measure.messages import KINDS

from .cells import Cell, direction, mark_best
from .references import bound, references
from .sweep import determines, fixed_settings, swept_keys, value_label, varying

FIFO_METRICS = ("mean_response", "messages_per_job")
BLOCKING_METRICS = ("blocked_fraction", "mean_queue_length", "messages_per_job")
KEY_COLUMNS = ("servers", "dispatchers", "discipline", "load", "arrivals", "service", "d")
"""Resolved parameter columns that may also serve as row or column keys."""
TITLES = {"mean_response": "mean response", "mean_wait": "mean wait", "p50_response": "median response",
          "p90_response": "p90 response", "p99_response": "p99 response", "prob_wait": "P(wait)",
          "mean_queue_length": "jobs per server", "messages_per_job": "messages/job",
          "messages_per_server_time": "messages/server/time", "blocked_fraction": "blocked fraction",
          "lost_per_job": "lost/job", "lost_fraction": "jobs lost"}

MEASURED, THEORY, BOUND = "measured", "theory", "bound"


@dataclass(frozen=True)
class Entry:
    """One row (or column) of the policy axis: a policy, its theory, or the common bound."""

    policy: str
    kind: str = MEASURED
    label: str = ""

    def __str__(self) -> str:
        return self.label or self.policy


THEORY_SIGNIFICANT = 4
"""Significant digits of a theory value: the formulas and ODEs are solved far closer than that."""


@dataclass(frozen=True)
class Value:
    """A theory value (exact, or an approximation computed to full precision)."""

    value: float

    def text(self) -> str:
        """`THEORY_SIGNIFICANT` significant digits, trailing zeros dropped; "≈ 0" below 1e-9.

        Examples
        --------
        >>> [Value(v).text() for v in (1.0, 10.0, 2.61289, 0.0123456, 19.9999, 0.0, 1e-127)]
        ['1', '10', '2.613', '0.01235', '20', '0', '≈ 0']
        """
        if self.value == 0:
            return "0"
        if abs(self.value) < 1e-9:
            return "≈ 0"
        text = f"{self.value:#.{THEORY_SIGNIFICANT}g}"
        if "e" in text:  # beyond 10^4 or below 10^-4: keep the exponent, as Python writes it
            return f"{self.value:.{THEORY_SIGNIFICANT}g}"
        return text.rstrip("0").rstrip(".")


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

    part: str = ""
    """What part of a larger table this is (`subset`), e.g. "mean response"; empty for a whole table."""

    def row_kind(self, i: int) -> str:
        for key, value in zip(self.row_keys, self.rows[i], strict=True):
            if key == "policy":
                return str(value.kind)
        return MEASURED

    def subset(self, columns: Sequence[int], part: str = "") -> Pivot:
        """The table with only the given data columns; theory rows left empty by it are dropped.

        Examples
        --------
        >>> t = Pivot(["policy"], [], ["a", "b"], rows=[(Entry("A"),), (Entry("A", THEORY),)],
        ...           columns=[("a", ()), ("b", ())], cells={(0, 0): Cell(1.0), (0, 1): Cell(2.0),
        ...                                                  (1, 0): Value(1.0)})
        >>> [len(t.subset([0]).rows), len(t.subset([1]).rows), t.subset([1]).metrics]
        [2, 1, ['b']]
        """
        keep = [r for r in range(len(self.rows)) if self.row_kind(r) == MEASURED
                or any((r, c) in self.cells for c in columns)]
        rows = {r: i for i, r in enumerate(keep)}
        cols = {c: j for j, c in enumerate(columns)}
        metrics = [m for m in self.metrics if any(self.columns[c][0] == m for c in columns)]
        cells = {(rows[r], cols[c]): cell for (r, c), cell in self.cells.items() if r in rows and c in cols}
        return Pivot(self.row_keys, self.col_keys, metrics, [self.rows[r] for r in keep],
                     [self.columns[c] for c in columns], cells, self.caption, self.name, self.titles, part)

    def by_metric(self) -> list[list[int]]:
        """The data columns of each metric, in order."""
        return [[c for c, (m, _) in enumerate(self.columns) if m == metric] for metric in self.metrics]


def split(table: Pivot, fits: Callable[[Pivot], bool]) -> list[Pivot]:
    """The table whole if it ``fits``; else one part per metric, a metric's columns in runs that fit.

    The runs of a metric are as even as the greedy count allows (7 columns that fit
    4 at a time make runs of 4 and 3, not 6 and 1). A single column always counts as fitting.
    """
    if fits(table):
        return [table]
    parts: list[Pivot] = []
    for metric, cols in zip(table.metrics, table.by_metric(), strict=True):
        title = table.titles.get(metric, metric)
        runs = _runs(table, cols, fits)
        for i, run in enumerate(runs):
            parts.append(table.subset(run, title if len(runs) == 1 else f"{title}, part {i + 1} of {len(runs)}"))
    return parts


def _runs(table: Pivot, cols: list[int], fits: Callable[[Pivot], bool]) -> list[list[int]]:
    if fits(table.subset(cols)):
        return [cols]
    greedy, start = 0, 0
    while start < len(cols):
        end = start + 1
        while end < len(cols) and fits(table.subset(cols[start:end + 1])):
            end += 1
        greedy, start = greedy + 1, end
    size, extra = divmod(len(cols), greedy)
    runs, start = [], 0
    for i in range(greedy):
        end = start + size + (i < extra)
        runs.append(cols[start:end])
        start = end
    if all(len(run) == 1 or fits(table.subset(run)) for run in runs):
        return runs
    return [[c] for c in cols]  # uneven widths defeated the even runs: one column each always fits


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


def metric_columns(summary: pd.DataFrame) -> list[str]:
    """The metric columns of a summary that a table can show (`emulator.measure.recorder.METRICS`, and differences)."""
    from emulator.measure.recorder import METRICS

    known = [*METRICS, *(f"{m}_diff" for m in METRICS)]
    return [m for m in known if m in summary.columns]


def _listed(metrics: Sequence[str]) -> str:
    """The metrics, with the per-kind columns of each prefix as one ``prefix<kind>`` entry: a list that fits a line."""
    prefixes = ("messages", "delivered", "lost")
    out: list[str] = []
    for metric in metrics:
        head, _, kind = metric.rpartition("_per_job_")
        entry = "{messages,delivered,lost}_per_job_<kind>" if head in prefixes and kind in KINDS else metric
        if entry not in out:
            out.append(entry)
    return ", ".join(out)


def check_metrics(summary: pd.DataFrame, metrics: Sequence[str], option: str = "--metric") -> None:
    """`ScenarioError` naming ``option`` unless each of ``metrics`` is a numeric column of ``summary``."""
    for metric in metrics:
        if metric not in summary.columns:
            choices = metric_columns(summary)
            # The misspelling and its nearest column first: the list of columns is long.
            raise ScenarioError(f"{option}: expected a metric column, got '{metric}'{suggestion(metric, choices)}; "
                                f"the columns: {_listed(choices)}")
        values = summary[metric]
        if pd.api.types.is_bool_dtype(values) or (not pd.api.types.is_numeric_dtype(values)
                                                  and pd.to_numeric(values, errors="coerce").notna().sum() == 0):
            # Not a metric at all (policy, a text parameter, precision_met): the option is wrong.
            raise ScenarioError(f"{option}: expected a numeric column of summary.csv, got '{metric}' "
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


def _theory(point: Any, entry: Entry) -> tuple[dict[str, float], str, dict[str, str]]:
    """Theory values by metric, the approximations' label, and why references that apply are omitted, by metric."""
    if entry.kind == BOUND:
        found = bound(point)
        return (found[1], found[0], {}) if found else ({}, "", {})
    policy = next((p for p in point.policies if p.label == entry.policy), None)
    if policy is None:
        return {}, "", {}
    refs = references(point, policy)
    given = {metric: ref for metric, ref in refs.items() if not ref.omitted}
    labels = sorted({ref.label for ref in given.values()})
    reasons = {metric: f"{entry.policy}: {ref.label}" for metric, ref in refs.items() if ref.omitted}
    return {metric: ref.value for metric, ref in given.items()}, "; ".join(labels), reasons


# -- building ------------------------------------------------------------------------------
def _combos(summary: pd.DataFrame, keys: Sequence[str]) -> list[tuple[Any, ...]]:
    """The combinations of ``keys`` in the summary, ordered key by key by first appearance."""
    if not keys:
        return [()]
    frame = summary[list(keys)].drop_duplicates()
    combos = [tuple(row) for row in frame.itertuples(index=False, name=None)]
    ranks = [{value_label(v): i for i, v in enumerate(dict.fromkeys(summary[k].map(value_label)))} for k in keys]
    return sorted(combos, key=lambda combo: [rank[value_label(v)] for rank, v in zip(ranks, combo, strict=True)])


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
    if not metrics:  # a table of policy names alone would pass for one
        raise ScenarioError(f"summary.csv: expected a metric column to tabulate ({', '.join(FIFO_METRICS)}), got "
                            f"none (name a column with --metric)")
    compare_to = getattr(scenario, "compare_to", None)
    if diff:
        paired = [f"{m}_diff" for m in metrics if f"{m}_diff" in summary.columns]
        if not paired:
            raise ScenarioError("--diff: expected paired differences in summary.csv (a scenario with compare_to, "
                                f"and a metric that has them), got none for {', '.join(metrics)}")
        metrics = [f"{m}_diff" if f"{m}_diff" in summary.columns else m for m in metrics]
    check_metrics(summary, metrics)
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
    omissions: set[str] = set()  # why theory that applies is not shown, for the caption
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
            found, label, reasons = _theory(points[int(match["point"].iloc[0])], entry)
            if metric in reasons:
                omissions.add(reasons[metric])
            if metric in found:
                cells[r, c] = Value(found[metric])
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
    table.caption = _caption(summary, table, bool(points), sorted(omissions))
    return table


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


def setting_parts(summary: pd.DataFrame, placed: Any = ()) -> list[str]:
    """What every row of a summary shares, as a caption says it.

    N, the load, the dispatchers (when more than one), the arrivals, the service law, the
    discipline, every other fixed setting (`analysis.sweep.fixed_settings`) and the
    replications; keys in ``placed`` (a table's rows and columns) are left to the table.
    """
    parts = []
    for column, text in (("servers", "N = {}"), ("load", "load = {}"), ("dispatchers", "{} dispatchers"),
                         ("arrivals", "{} arrivals"), ("service", "{} service"), ("discipline", "{} servers")):
        if column in summary and summary[column].nunique() == 1 and column not in placed \
                and not (column == "dispatchers" and summary[column].iloc[0] == 1):
            parts.append(text.format(value_label(summary[column].iloc[0])))
    parts += [part for part in fixed_settings(summary) if part.split(" = ")[0] not in placed]
    if "replications" in summary:
        low, high = int(summary["replications"].min()), int(summary["replications"].max())
        reps = f"{low}" if low == high else f"{low}–{high}"
        parts.append(f"{reps} replication{'s' if high != 1 else ''} per cell")
    return parts


def _caption(summary: pd.DataFrame, table: Pivot, theory: bool, omissions: Sequence[str] = ()) -> str:
    # From the rows themselves, never from the scenario's description: after --set that may no longer hold.
    parts = setting_parts(summary, {*table.row_keys, *table.col_keys})
    text = (f"{table.name}: " + ", ".join(parts)
            + ". Mean ± half-width of the 95% confidence interval (Student t over replications).")
    only = list(summary["discipline"].unique()) if "discipline" in summary else []
    if any(direction(m, str(only[0]) if len(only) == 1 else None) for m in table.metrics):
        text += (" Marked: the lowest value among the policies at each sweep point, and every value whose "
                 "interval overlaps it.")
    if any(m.endswith("_diff") for m in table.metrics):
        text += " Δ: paired difference against the reference policy on the same jobs."
    if theory and any(table.row_kind(r) != MEASURED for r in range(len(table.rows))):
        text += " Theory rows name the approximation used."
    if omissions:
        text += " No theory for " + "; ".join(omissions) + "."
    return text
