"""The one exception users see for bad input."""


class ScenarioError(ValueError):
    """Bad input: a scenario key, a command-line option or a results folder.

    The message is one line that names the dotted key, what was expected and
    what was given, e.g. ``workload.load: expected a number > 0, got -1``.
    """


class RunError(RuntimeError):
    """A run that could not finish for a reason other than bad input.

    E.g. a worker process that was killed, or a results file that could not be
    written at the end. The message is one line saying what happened and what
    was kept; the CLI exits with status 1.
    """
