"""Table cells: digits chosen from the confidence interval, and which values are best.

A cell shows ``mean ± half`` where ``half`` is the half-width of the 95% CI. The
half-width keeps two significant digits and the mean is rounded to the same
decimal place, so a cell never claims more precision than its interval:
``2.6141 ± 0.01234`` reads ``2.614 ± 0.012`` and ``1234.5 ± 123`` reads
``1230 ± 120``.

Best values. Each metric has a direction (`DIRECTION`): lower is better for
delays, waiting, queue lengths, messages and blocking; the rest (counts,
simulated time, occupancy of server pools, where more tasks held means fewer
blocked but is not a merit in itself) have none and mark nothing. Among the
cells that compete (the policies at the same sweep point), the best mean is
marked, and so is every cell whose interval overlaps the best one's,
``|mean - best| <= half + half_best``: such a difference is not resolved by the
runs, so both are marked (ties are honest).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SIGNIFICANT = 2
"""Significant digits kept of a CI half-width."""

LOWER = ("mean_response", "mean_wait", "p50_response", "p90_response", "p99_response", "prob_wait",
         "mean_queue_length", "messages_per_job", "messages_per_server_time", "blocked_fraction")
"""Metrics where lower is better (and ``messages_per_job_<kind>``, ``<metric>_diff``)."""


def direction(metric: str, discipline: str | None = None) -> int:
    """-1 if lower is better, +1 if higher is better, 0 if neither (nothing is marked).

    Parameters
    ----------
    metric : str
        A ``summary.csv`` column; ``<metric>_diff`` (a paired difference) has the
        direction of ``<metric>``.
    discipline : str, optional
        ``"pool"``: the mean queue length is the occupancy of a pool, which has no
        direction.

    Examples
    --------
    >>> direction("mean_response"), direction("messages_per_job_idle"), direction("sim_time")
    (-1, -1, 0)
    >>> direction("mean_response_diff"), direction("mean_queue_length", "pool")
    (-1, 0)
    """
    metric = metric.removesuffix("_diff")
    if metric == "mean_queue_length" and discipline == "pool":
        return 0
    if metric in LOWER or metric.startswith("messages_per_job_"):
        return -1
    return 0


def _finite(value: float | None) -> bool:
    return value is not None and isinstance(value, (int, float)) and math.isfinite(value)


def decimals(half: float) -> int:
    """Decimal places that keep `SIGNIFICANT` digits of a positive half-width (negative: tens...).

    Examples
    --------
    >>> decimals(0.01234), decimals(0.5), decimals(12.3), decimals(123.0), decimals(0.0995)
    (3, 2, 0, -1, 2)
    """
    places = SIGNIFICANT - 1 - math.floor(math.log10(half))
    # Rounding may carry into the next digit (0.0995 -> 0.10): keep two significant digits of that.
    if round(half, places) >= 10 ** (SIGNIFICANT - places):
        places -= 1
    return places


def fixed(value: float, places: int) -> str:
    """``value`` rounded to ``places`` decimals (negative: to tens, hundreds ...); no "-0".

    Examples
    --------
    >>> fixed(2.6141, 3), fixed(1234.5, -1), fixed(-0.0004, 2)
    ('2.614', '1230', '0.00')
    """
    rounded = round(value, places)
    text = f"{rounded:.{max(places, 0)}f}"
    if text.startswith("-") and float(text) == 0:
        text = text[1:]
    return text


@dataclass(frozen=True)
class Cell:
    """One measured value: mean, CI half-width (NaN if unknown) and whether it is marked best."""

    mean: float
    half: float = math.nan
    best: bool = False

    @property
    def places(self) -> int | None:
        """Decimal places chosen from the half-width; None without a positive one."""
        return decimals(self.half) if _finite(self.half) and self.half > 0 else None

    def parts(self) -> tuple[str, str]:
        """The mean and the half-width as text ('' when there is no interval).

        A zero half-width (a value every replication agrees on, such as SQ(2)'s 4
        messages per job) shows the mean alone with up to 4 significant digits;
        so does a missing one (a single replication). A missing mean is "–".

        Examples
        --------
        >>> Cell(2.6141, 0.01234).parts(), Cell(4.0, 0.0).parts(), Cell(math.nan).parts()
        (('2.614', '0.012'), ('4', ''), ('–', ''))
        """
        if not _finite(self.mean):
            return "–", ""
        places = self.places
        if places is None:
            return f"{self.mean:.4g}", ""
        return fixed(self.mean, places), fixed(self.half, places)

    def text(self, sep: str = " ± ") -> str:
        mean, half = self.parts()
        return f"{mean}{sep}{half}" if half else mean


def mark_best(cells: Sequence[Cell], sense: int) -> list[Cell]:
    """The cells with ``best`` set on the best one and on every one whose CI overlaps it.

    Parameters
    ----------
    cells : sequence of Cell
        Competing values (the policies at one sweep point, for one metric).
    sense : int
        -1 lower is better, +1 higher is better, 0 mark nothing.

    Returns
    -------
    list of Cell

    Examples
    --------
    >>> marked = mark_best([Cell(1.0, 0.1), Cell(1.15, 0.1), Cell(1.3, 0.1), Cell(math.nan)], -1)
    >>> [cell.best for cell in marked]
    [True, True, False, False]
    """
    values = [c.mean for c in cells]
    finite = [v for v in values if _finite(v)]
    if sense == 0 or not finite:
        return list(cells)
    best_value = min(finite) if sense < 0 else max(finite)
    best = next(c for c in cells if c.mean == best_value)
    reach = best.half if _finite(best.half) else 0.0
    out = []
    for cell in cells:
        own = cell.half if _finite(cell.half) else 0.0
        tie = _finite(cell.mean) and abs(cell.mean - best_value) <= own + reach
        out.append(Cell(cell.mean, cell.half, bool(tie)))
    return out
