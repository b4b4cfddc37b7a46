"""The result store: every finished task committed at once to SQLite in the results folder.

A run that is interrupted (Ctrl-C, ``kill -9``, a worker that dies) loses only
the tasks that were running; the same command resumes and recomputes no
finished task. The store remembers the scenario it belongs to and refuses a
changed one, naming what changed.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from .errors import ScenarioError

FILENAME = "store.sqlite"
# Keys that may change between runs in the same folder without invalidating stored tasks:
# the number of replications (stored ones are reused, more are added) and their precision target.
FREE_KEYS = ("name", "description", "replications", "precision")


def _comparable(scenario_dict: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in scenario_dict.items() if key not in FREE_KEYS}


def _flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(data, dict):
        flat: dict[str, Any] = {}
        for key, value in data.items():
            flat.update(_flatten(value, f"{prefix}{key}."))
        return flat
    if isinstance(data, list):
        flat = {}
        for i, value in enumerate(data):
            flat.update(_flatten(value, f"{prefix}{i}."))
        return flat
    return {prefix.rstrip("."): data}


def describe_change(old: dict[str, Any], new: dict[str, Any]) -> str:
    """The first few dotted keys whose values differ, as ``key: old -> new``."""
    a, b = _flatten(_comparable(old)), _flatten(_comparable(new))
    changed = [f"{key}: {a.get(key, '(none)')} -> {b.get(key, '(none)')}"
               for key in sorted(set(a) | set(b)) if a.get(key) != b.get(key)]
    more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
    return "; ".join(changed[:3]) + more


class Store:
    """Finished tasks of one scenario, keyed by (point, policy label, replication)."""

    def __init__(self, folder: Path, scenario_dict: dict[str, Any], force: bool = False) -> None:
        self.path = folder / FILENAME
        try:
            folder.mkdir(parents=True, exist_ok=True)
            # autocommit: each finished task is on disk when put() returns.
            self.db = sqlite3.connect(self.path, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            self.db.execute("CREATE TABLE IF NOT EXISTS tasks (point INTEGER, policy TEXT, replication INTEGER,"
                            " row TEXT, error TEXT, PRIMARY KEY (point, policy, replication))")
            stored = self.db.execute("SELECT value FROM meta WHERE key = 'scenario'").fetchone()
        except (OSError, sqlite3.Error) as exc:
            raise ScenarioError(f"--out: expected a results folder, '{folder}' is not usable ({exc})") from None
        current = json.dumps(_comparable(scenario_dict), sort_keys=True)
        if stored is not None and json.loads(stored[0]) != json.loads(current):
            if not force:
                change = describe_change(json.loads(stored[0]), scenario_dict)
                raise ScenarioError(f"--out: '{folder}' holds results of a different scenario ({change}); "
                                    "use another folder or --force to discard them")
            self.db.execute("DELETE FROM tasks")
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('scenario', ?)", (current,))

    def finished(self) -> dict[tuple[int, str, int], dict[str, Any]]:
        """Rows of the tasks that finished without error."""
        rows = self.db.execute("SELECT point, policy, replication, row FROM tasks WHERE error IS NULL")
        return {(p, label, r): json.loads(row) for p, label, r, row in rows}

    def put(self, key: tuple[int, str, int], row: dict[str, Any] | None, error: str | None = None) -> None:
        self.db.execute("INSERT OR REPLACE INTO tasks VALUES (?, ?, ?, ?, ?)",
                        (*key, None if row is None else json.dumps(row), error))

    def close(self) -> None:
        self.db.close()
