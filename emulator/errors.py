"""The one exception users see for bad input."""


class ScenarioError(ValueError):
    """Bad input: a scenario key, a command-line option or a results folder.

    The message is one line that names the dotted key, what was expected and
    what was given, e.g. ``workload.load: expected a number > 0, got -1``.
    """
