"""The one exception users see for bad input."""

from __future__ import annotations

import os
import reprlib
import sysconfig
import traceback
from importlib.util import find_spec
from typing import Any

MAX_LENGTH = 400
"""Longest message of a `ScenarioError`, in characters: a value given can be huge (a YAML
anchor bomb expands to hundreds of megabytes), the line that reports it must not be."""

MAX_LINES = 20
"""Most errors one `ScenarioError` tells, one line each: a file with more mistakes names the first ones."""

_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxtuple, _SHORT.maxdict = 2, 6, 6, 6
_SHORT.maxstring, _SHORT.maxother = 80, 80


class ScenarioError(ValueError):
    """Bad input: a scenario key, a command-line option or a results folder.

    The message is one line that names the dotted key, what was expected and
    what was given, e.g. ``workload.load: expected a number > 0, got -1``. It is
    kept to one line of at most `MAX_LENGTH` characters, however it was built; an
    input with several mistakes (a scenario file's keys) gets one such line for
    each (``ScenarioError(first, second, ...)``), separated by newlines (at most `MAX_LINES`).
    """

    def __init__(self, message: Any = "", *more: Any) -> None:
        # Each argument is one mistake (a scenario file may hold several): each is kept to one
        # line of MAX_LENGTH, whatever text it quotes, and at most MAX_LINES are told.
        lines = [_one_line(str(line)) for line in (message, *more)]
        if len(lines) > MAX_LINES:
            lines = [*lines[:MAX_LINES - 1], f"... and {len(lines) - MAX_LINES + 1} more errors in the same input"]
        super().__init__("\n".join(lines))


def _one_line(text: str) -> str:
    text = " ".join(text.splitlines())
    if len(text) > MAX_LENGTH:
        text = f"{text[:MAX_LENGTH - 40]}... ({len(text) - MAX_LENGTH + 40} more characters)"
    return text


def suggestion(given: str, choices: Any) -> str:
    """`` (did you mean 'x'?)`` for the choice closest to a misspelt ``given``, else nothing.

    Examples
    --------
    >>> suggestion("servres", ["servers", "speeds"]), suggestion("zzz", ["servers"])
    (" (did you mean 'servers'?)", '')
    """
    import difflib

    close = difflib.get_close_matches(str(given), [str(choice) for choice in choices], n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def show(value: Any) -> str:
    """``repr(value)``, shortened: nested and long values are cut with ``...`` before they are built."""
    return _SHORT.repr(value)


class RunError(RuntimeError):
    """A run that could not finish for a reason other than bad input.

    E.g. a worker process that was killed, or a results file that could not be
    written at the end. The message is one line saying what happened and what
    was kept; the CLI exits with status 1.
    """


class PolicyError(RuntimeError):
    """A policy broke its contract during a run: it did not send a job, or sent one twice.

    The message is one line naming the policy, the job and what it did; the task fails.
    """


class StalledRun(RuntimeError):
    """A run whose simulated work stopped advancing: events without jobs moving, or a clock that stands.

    The message is one line saying what stopped, at what simulated time, and the
    scenario key most likely at fault where that can be told; the task fails
    instead of running forever.
    """


def describe(exc: BaseException) -> str:
    """One line: the exception's type and message, and where a policy's (or lbemu's) code raised it.

    The location is the innermost frame of a policy's own code (a user's module, not
    an installed library, or ``emulator/policies``) where one is on the stack, else
    the innermost outside SimPy (never SimPy's file, which only passes it on).
    `PolicyError` and `StalledRun` are lbemu's own diagnoses and say all in their
    message, without a location.
    """
    message = " ".join(str(exc).splitlines())
    if isinstance(exc, (PolicyError, StalledRun)):
        return f"{type(exc).__name__}: {message}"
    frames = traceback.extract_tb(_original(exc).__traceback__)
    ours = [frame for frame in frames if not _in(frame.filename, _SIMPY)]
    policy = [frame for frame in ours if _in(frame.filename, _POLICIES)
              or not any(_in(frame.filename, folder) for folder in (_PACKAGE, *_LIBRARIES))]
    chosen = policy or ours or frames
    at = f" (at {os.path.basename(chosen[-1].filename)}:{chosen[-1].lineno})" if chosen else ""
    return f"{type(exc).__name__}: {message}{at}"


def _original(exc: BaseException) -> BaseException:
    """The exception a SimPy process raised: SimPy raises a copy of it, with the original as its cause."""
    cause = exc.__cause__
    while cause is not None and type(cause) is type(exc) and cause.args == exc.args:
        exc, cause = cause, cause.__cause__
    return exc


def _in(filename: str, folder: str) -> bool:
    return os.path.abspath(filename).startswith(folder + os.sep)


_SIMPY = os.path.dirname(os.path.abspath(find_spec("simpy").origin))  # type: ignore[union-attr, arg-type]
_PACKAGE = os.path.dirname(os.path.abspath(__file__))  # emulator/
_POLICIES = os.path.join(_PACKAGE, "policies")
_LIBRARIES = {os.path.abspath(path) for key, path in sysconfig.get_paths().items() if "lib" in key}
