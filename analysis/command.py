"""The ``python -m analysis.<module> DIR [--figure PNG]`` commands: one parser, one loader, one line on bad input.

`analysis.faults` and `analysis.sparse_feedback` each print a table of a
results folder and write a figure. They read the folder as ``lbemu table``
does (`emulator.experiment.output.read_summary`), so that a missing or empty
folder, a file given as the folder or a damaged summary.csv is refused alike;
what a module needs beyond that (a swept ``network.loss``, a JSQ row) it checks
itself and refuses with `emulator.ScenarioError`. Every refusal is one line on
stderr, ``python -m analysis.<module>: error: <what>``, with exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from emulator.errors import ScenarioError

if TYPE_CHECKING:
    import pandas as pd

Output = Callable[["pd.DataFrame", Path], str]
"""What a command makes of a summary: writes the figure to the path given and returns the table's text."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse prints the usage and exits 2 on bad options; keep it to one line.
        raise ScenarioError(f"options: {message}")


def main(argv: Sequence[str] | None, module: str, doc: str, figure: str, output: Output) -> int:
    """Run ``python -m analysis.<module> DIR [--figure PNG]``: print the table, write the figure.

    Parameters
    ----------
    argv : sequence of str or None
        The arguments (default ``sys.argv[1:]``).
    module : str
        The module's name under `analysis` (``faults``), for the usage and the error line.
    doc : str
        The module's docstring: its first line describes the command.
    figure : str
        The figure's file name in the folder when ``--figure`` is not given.
    output : callable
        ``output(summary, path)`` writes the figure to ``path`` and returns the table to print.

    Returns
    -------
    int
        0 on success, 2 on bad input (one line on stderr, naming what was expected).
    """
    prog = f"python -m analysis.{module}"
    parser = _Parser(prog=prog, description=doc.split("\n", 1)[0])
    parser.add_argument("folder", type=Path, help="a results folder (summary.csv)")
    parser.add_argument("--figure", type=Path, help=f"where to write the figure (default: FOLDER/{figure})")
    try:
        args = parser.parse_args(argv)
        summary = read(args.folder)
        path = args.figure or args.folder / figure
        try:
            text = output(summary, path)
        except OSError as exc:
            raise ScenarioError(f"--figure: expected a file that can be written, cannot write "
                                f"'{exc.filename or path}' ({exc.strerror or exc})") from None
    except ScenarioError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    print(text.rstrip("\n"))
    print(f"wrote {path}")
    return 0


def read(folder: Path) -> pd.DataFrame:
    """The summary of a results folder, checked as ``lbemu table`` checks it (`ScenarioError` if it is not one)."""
    from emulator.experiment.output import read_summary

    summary: pd.DataFrame = read_summary(folder)
    return summary


def expect_columns(summary: pd.DataFrame, what: str, numbers: Sequence[str], text: Sequence[str] = (),
                   keys: Sequence[str] = ()) -> None:
    """`ScenarioError` unless ``summary`` has rows and the columns a table and its figure read, with usable values.

    ``what`` names what needs them in the message, e.g. ``the faults table``.
    ``text`` and ``keys`` (among ``numbers``) name a row, a policy or a sweep
    point: each needs a value in every row, or rows would drop out of their
    groups unseen. The columns ``numbers`` hold numbers, and so do their
    intervals (``<column>_ci95``) where the summary has them. NaN counts as a
    number: each command says what it makes of a missing value. No number may
    be infinite and no interval negative: lbemu writes neither, and a figure
    cannot place them.
    """
    from emulator.experiment.output import expect_finite, expect_numbers, expect_values

    missing = [column for column in (*text, *numbers) if column not in summary.columns]
    if missing:
        raise ScenarioError(f"summary.csv: expected a column '{missing[0]}' for {what}, got none")
    if summary.empty:
        raise ScenarioError(f"summary.csv: expected a row per sweep point and policy for {what}, got none")
    intervals = [f"{column}_ci95" for column in numbers if f"{column}_ci95" in summary.columns]
    columns = list(dict.fromkeys((*numbers, *intervals)))
    expect_numbers(summary, columns)
    expect_values(summary, (*text, *keys), f" for {what}")
    expect_finite(summary, columns, f" for {what}")
