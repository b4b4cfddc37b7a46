"""The result store: every finished task committed at once to SQLite in the results folder.

A run that is interrupted (Ctrl-C, ``kill -9``, a worker that dies) loses only
the tasks that were running; the same command resumes and recomputes no
finished task. The store remembers the scenario it belongs to and refuses a
changed one, naming what changed.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import RunError, ScenarioError, show

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


SCHEMA = {
    "meta": "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)",
    "tasks": "CREATE TABLE tasks (point INTEGER, policy TEXT, replication INTEGER, row TEXT, error TEXT, "
             "PRIMARY KEY (point, policy, replication))",
}
"""The store's tables, as SQLite keeps their statements in ``sqlite_master``."""
OURS = {*SCHEMA, *(f"sqlite_autoindex_{table}_1" for table in SCHEMA)}


class _Damaged(Exception):
    """The store file is not a sound lbemu store; the message says what it is."""


def _wal(db: sqlite3.Connection, timeout: float = 30.0) -> None:
    """Switch ``db`` to write-ahead logging, waiting while another connection holds a lock.

    SQLite does not call the busy handler for a journal mode change, so two runs that
    create one store at once would see "database is locked" at once; the other one's
    transaction is short, so waiting for it is all that is needed.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


class Store:
    """Finished tasks of one scenario, keyed by (point, policy label, replication).

    A store file that is damaged (e.g. truncated) or is not an lbemu store (another
    program's database) is refused, saying so; with ``force`` that file is deleted
    and made afresh. Nothing else in the folder is touched.
    """

    def __init__(self, folder: Path, scenario_dict: dict[str, Any], force: bool = False,
                 canonical: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> None:
        self.path = folder / FILENAME
        # A stored scenario as the running version would write it (keys added since take
        # their defaults), so that a folder made by an earlier version still resumes.
        self.canonical = canonical
        current = _comparable(json.loads(json.dumps(scenario_dict, sort_keys=True)))
        missing = [path for path in (folder, *folder.parents) if not path.exists()]  # deepest first
        try:
            folder.mkdir(parents=True, exist_ok=True)
            try:
                stored = self._open(current, force)
            except _Damaged as exc:
                if not force:
                    raise ScenarioError(
                        f"--out: expected a results folder, its store '{self.path}' {exc}; move that file "
                        "away to keep it, or use --force to start afresh (discards the stored results)") from None
                self._delete()
                stored = self._open(current, force)
        except (OSError, sqlite3.Error, _Damaged) as exc:  # locked, read-only, cannot be created
            for path in missing:  # leave no empty folders behind
                try:
                    path.rmdir()
                except OSError:
                    pass
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            # The reason first: a long path would push it past the end of the line.
            raise ScenarioError(f"--out: expected a results folder lbemu can use ({reason}), "
                                f"got {show(str(folder))}") from None
        if stored is not None:
            change = describe_change(stored, scenario_dict)
            raise ScenarioError(f"--out: '{folder}' holds results of a different scenario ({change}); "
                                "use another folder or --force to discard them")

    def _open(self, current: dict[str, Any], force: bool) -> dict[str, Any] | None:
        """Connect, check the file and claim it for the scenario ``current``, in one transaction.

        Returns the stored scenario if it differs from ``current`` and ``force`` is
        off (then nothing is changed and the store is closed), else None.
        """
        self.rows: dict[tuple[int, str, int], dict[str, Any]] = {}
        # autocommit: each finished task is on disk when put() returns.
        self.db = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        try:
            _wal(self.db)
            # One write transaction from the check to the claim: of two runs that create the
            # store at the same moment, the second waits and then sees the first one's scenario.
            self.db.execute("BEGIN IMMEDIATE")
            stored = self._check()
            if stored is not None and self.canonical is not None:
                stored = _comparable(self.canonical(stored))
            if stored is not None and stored != current:
                if not force:
                    self.db.execute("ROLLBACK")
                    self.db.close()
                    return stored
                self.db.execute("DELETE FROM tasks")
                self.rows = {}
            for sql in SCHEMA.values():
                self.db.execute(sql.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1))
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('scenario', ?)",
                            (json.dumps(current, sort_keys=True),))
            self.db.execute("COMMIT")
        except sqlite3.OperationalError:  # locked, read-only, cannot be opened: not the file's fault
            self.db.close()
            raise
        except sqlite3.DatabaseError as exc:  # "file is not a database", "database disk image is malformed"
            self.db.close()
            raise _Damaged(f"is damaged ({exc})") from None
        except BaseException:
            self.db.close()
            raise
        return None

    def _check(self) -> dict[str, Any] | None:
        """The stored scenario, None for a new store; `_Damaged` if the file is not a sound store."""
        problems = [row[0] for row in self.db.execute("PRAGMA quick_check") if row[0] != "ok"]
        if problems:
            raise _Damaged(f"is damaged ({problems[0]})")
        tables = dict(self.db.execute("SELECT name, sql FROM sqlite_master").fetchall())
        if not tables:
            return None
        if set(tables) != OURS or any(tables[name] != sql for name, sql in SCHEMA.items()):
            other = sorted(set(tables) - OURS)
            what = f"tables {', '.join(other[:5])}" if other else "tables of another layout"
            raise _Damaged(f"is not an lbemu result store (it has {what})")
        stored = self.db.execute("SELECT value FROM meta WHERE key = 'scenario'").fetchone()
        if stored is None and self.db.execute("SELECT COUNT(*) FROM tasks").fetchone()[0] == 0:
            return None  # made, but not claimed yet: as good as new
        scenario = _decode(stored[0] if stored is not None else None)
        if scenario is None:
            raise _Damaged("is damaged (its scenario is missing or unreadable)")
        self.rows = self._read_rows()  # every stored row must be readable too
        return scenario

    def _delete(self) -> None:
        """Remove the store file and SQLite's companion files of it, nothing else."""
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    def finished(self) -> dict[tuple[int, str, int], dict[str, Any]]:
        """Rows of the tasks that finished without error (as read and checked when opened)."""
        return dict(self.rows)

    def _read_rows(self) -> dict[tuple[int, str, int], dict[str, Any]]:
        rows = {}
        for p, label, r, text in self.db.execute(
                "SELECT point, policy, replication, row FROM tasks WHERE error IS NULL"):
            row = _decode(text)
            if row is None or not isinstance(p, int) or not isinstance(r, int):
                raise _Damaged(f"is damaged (the stored result of point {p}, {label}, replication {r} "
                               "is unreadable)")
            rows[p, label, r] = row
        return rows

    def put(self, key: tuple[int, str, int], row: dict[str, Any] | None, error: str | None = None) -> None:
        try:
            self.db.execute("INSERT OR REPLACE INTO tasks VALUES (?, ?, ?, ?, ?)",
                            (*key, None if row is None else json.dumps(row), error))
        except sqlite3.Error as exc:  # e.g. a full disk, or the file damaged during the run
            raise RunError(f"cannot store a finished task in '{self.path}' ({exc})") from None

    def close(self) -> None:
        self.db.close()


def _decode(text: Any) -> dict[str, Any] | None:
    """A stored JSON object, or None if ``text`` is not one (a damaged page reads as garbage)."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):  # ValueError: json.JSONDecodeError and bad UTF-8
        return None
    return value if isinstance(value, dict) else None
