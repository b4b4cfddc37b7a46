"""What a figure is drawn from: the frames of `emulator.Results` or of a results folder, read alike.

Every figure function of `analysis.plots`, `analysis.response_tail` and
`analysis.occupancy_plots` takes either, so that ``results.plot("tradeoff")`` in
a notebook and ``lbemu plot DIR`` draw the same figure.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


CDF_COLUMNS = ("point", "policy", "response", "cdf")
"""The columns of response_cdf.csv a figure needs."""


@dataclass(frozen=True)
class Source:
    """The frames and scenario of one set of results.

    Attributes
    ----------
    summary : DataFrame
        ``summary.csv`` as a frame.
    scenario : emulator.Scenario or None
        The scenario, when known (``Results.scenario`` or the folder's ``scenario.yaml``).
    occupancy, response_cdf, warmup : DataFrame or None
        ``occupancy.csv``, ``response_cdf.csv`` and ``warmup.csv`` as frames, when there are any.
    """

    summary: pd.DataFrame
    scenario: Any = None
    occupancy: pd.DataFrame | None = None
    response_cdf: pd.DataFrame | None = None
    warmup: pd.DataFrame | None = None


def read_scenario(folder: str | Path) -> Any:
    """The resolved scenario of a results folder, or None if it has none that loads."""
    from emulator.errors import ScenarioError
    from emulator.scenario.reading import load_scenario

    path = Path(folder) / "scenario.yaml"
    if not path.is_file():
        return None
    try:
        return load_scenario(path)
    except (ScenarioError, OSError):
        return None


def source_of(results: Any) -> Source:
    """A `Source` from `emulator.Results`, a `Source`, or a results folder's path.

    Raises
    ------
    emulator.ScenarioError
        If a path is not a results folder (no readable ``summary.csv``).
    """
    if isinstance(results, Source):
        return results
    if hasattr(results, "summary"):
        return Source(results.summary, getattr(results, "scenario", None), _rows(getattr(results, "occupancy", None)),
                      _rows(getattr(results, "response_cdf", None)), _rows(getattr(results, "warmup", None)))
    if isinstance(results, (str, Path)):
        from emulator.experiment.output import read_summary

        return with_files(read_summary(results), results)
    from emulator.errors import ScenarioError

    raise ScenarioError(f"results: expected emulator.Results or a results folder, got {type(results).__name__}")


def with_files(summary: pd.DataFrame, folder: str | Path) -> Source:
    """A `Source` of ``summary`` with what the results folder ``folder`` holds beside it (each file if readable).

    A summary read from the file as it is gets back the ``load`` column that the file leaves out
    beside a swept ``workload.load`` (`emulator.experiment.output.with_load`).
    """
    import pandas as pd

    from emulator.experiment.output import with_load

    folder = Path(folder)
    occupancy = None
    if (folder / "occupancy.csv").is_file():
        try:
            occupancy = pd.read_csv(folder / "occupancy.csv")
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError):
            occupancy = None
    return Source(with_load(summary), read_scenario(folder), _rows(occupancy), read_response_cdf(folder),
                  read_warmup(folder))


def read_warmup(folder: Path) -> pd.DataFrame | None:
    """``warmup.csv`` of a results folder, or None if there is none (or it is not one)."""
    from emulator.experiment.warmup import FRAME_COLUMNS

    return _read_frame(Path(folder) / "warmup.csv", {"point", "policy", *FRAME_COLUMNS})


def read_response_cdf(folder: Path) -> pd.DataFrame | None:
    """``response_cdf.csv`` of a results folder, or None if there is none (or it is not one)."""
    return _read_frame(Path(folder) / "response_cdf.csv", set(CDF_COLUMNS))


def _read_frame(path: Path, columns: set[str]) -> pd.DataFrame | None:
    """The CSV file at ``path`` if it reads and has ``columns`` and a row; else None (a figure then has no data)."""
    import pandas as pd

    if not path.is_file():
        return None
    try:
        frame = pd.read_csv(path).copy()  # consolidated: columns are added to it
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError):
        return None
    if not columns <= set(frame.columns) or frame.empty:
        return None
    return frame


def _rows(frame: Any) -> Any:
    """None for a missing or empty frame: a figure of it has nothing to draw."""
    return frame if frame is not None and not frame.empty else None
