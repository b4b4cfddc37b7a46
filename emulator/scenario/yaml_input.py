"""YAML as lbemu reads it: duplicate keys refused, ``1e9`` a number, every failure one line.

PyYAML follows YAML 1.1, where ``1e9`` (no dot, no exponent sign) is a string and
a repeated key silently keeps its last value; both turn a plausible scenario
into a wrong one. `load` reads YAML 1.2 floats and refuses repeated keys,
naming the dotted key and both lines; a syntax error names its line and column
and quotes the line.

>>> load("a: {b: 1e9}")
{'a': {'b': 1000000000.0}}
>>> load("run:\\n  jobs: 10\\n  jobs: 20\\n", "s.yaml")
Traceback (most recent call last):
...
emulator.errors.ScenarioError: run.jobs: repeated key in 's.yaml' at line 3 (first at line 2)
>>> load("a: 1\\n b: 2\\n", "s.yaml")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
emulator.errors.ScenarioError: scenario: 's.yaml' is not valid YAML at line 2, column 3: ...; line 2 reads ' b: 2'
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.reader import ReaderError

from ..errors import ScenarioError


class _Loader(yaml.SafeLoader):
    """SafeLoader that also reads YAML 1.2 floats such as ``1e9`` and ``-2E-3``."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def load(text: str, source: str = "scenario") -> Any:
    """Parse YAML ``text``; raise `ScenarioError` (one line) if it is not a usable document."""
    try:
        loader = _Loader(text)  # the reader refuses control characters here, before any parsing
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _refuse_repeated_keys(node, source)
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except ReaderError as exc:
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        raise ScenarioError(f"scenario: '{source}' is not valid YAML: it holds the control character "
                            f"{code:#04x} at offset {exc.position}") from None
    except yaml.YAMLError as exc:
        raise ScenarioError(f"scenario: '{source}' is not valid YAML{_where(exc, text)}") from None
    except (RecursionError, MemoryError):
        raise ScenarioError(f"scenario: '{source}' is nested too deeply to read") from None


def _where(exc: yaml.YAMLError, text: str) -> str:
    """Where the parser stopped, what it found there, and that line quoted: the user sees it without an editor.

    At the end of the file (an unclosed bracket, say) the line at the mark is empty, so
    the last line with text before it is quoted: that is where the unfinished part is.
    """
    mark = getattr(exc, "problem_mark", None)
    if mark is None:
        return ""
    problem = getattr(exc, "problem", None) or "cannot be read"
    context, start = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if context and start is not None and (start.line, start.column) != (mark.line, mark.column):
        problem += f" ({context} from line {start.line + 1}, column {start.column + 1})"
    elif context:
        problem += f" ({context})"
    lines = text.splitlines()
    quoted = min(mark.line, len(lines) - 1)
    while quoted > 0 and not lines[quoted].strip():
        quoted -= 1
    shown = lines[quoted] if lines else ""
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return f" at line {mark.line + 1}, column {mark.column + 1}: {problem}; line {quoted + 1} reads {shown!r}"


def _refuse_repeated_keys(root: Node, source: str) -> None:
    """Walk the node graph once (an alias is walked at its anchor only) looking for a repeated key."""
    seen: set[int] = set()
    todo: list[tuple[Node, str]] = [(root, "")]
    while todo:
        node, path = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            first: dict[str, int] = {}
            for key_node, value_node in node.value:
                key = key_node.value if isinstance(key_node, ScalarNode) else "?"
                dotted = f"{path}.{key}" if path else key
                line = key_node.start_mark.line + 1
                if isinstance(key_node, ScalarNode) and key in first and key != "<<":
                    raise ScenarioError(f"{dotted}: repeated key in '{source}' at line {line} "
                                        f"(first at line {first[key]})")
                first.setdefault(key, line)
                todo.append((value_node, dotted))
        elif isinstance(node, SequenceNode):
            todo.extend((item, f"{path}.{i}" if path else str(i)) for i, item in enumerate(node.value))
