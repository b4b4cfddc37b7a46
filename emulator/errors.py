"""The one exception users see for bad input."""

from __future__ import annotations

import reprlib
from typing import Any

MAX_LENGTH = 400
"""Longest message of a `ScenarioError`, in characters: a value given can be huge (a YAML
anchor bomb expands to hundreds of megabytes), the line that reports it must not be."""

_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxtuple, _SHORT.maxdict = 2, 6, 6, 6
_SHORT.maxstring, _SHORT.maxother = 80, 80


class ScenarioError(ValueError):
    """Bad input: a scenario key, a command-line option or a results folder.

    The message is one line that names the dotted key, what was expected and
    what was given, e.g. ``workload.load: expected a number > 0, got -1``. It is
    kept to one line of at most `MAX_LENGTH` characters, however it was built.
    """

    def __init__(self, message: Any = "") -> None:
        text = " ".join(str(message).splitlines())
        if len(text) > MAX_LENGTH:
            text = f"{text[:MAX_LENGTH - 40]}... ({len(text) - MAX_LENGTH + 40} more characters)"
        super().__init__(text)


def show(value: Any) -> str:
    """``repr(value)``, shortened: nested and long values are cut with ``...`` before they are built."""
    return _SHORT.repr(value)


class RunError(RuntimeError):
    """A run that could not finish for a reason other than bad input.

    E.g. a worker process that was killed, or a results file that could not be
    written at the end. The message is one line saying what happened and what
    was kept; the CLI exits with status 1.
    """
