"""``--dist loadgroup`` keeps a module's ``xdist_group`` tests on one process, with pytest 9.2 too.

pytest-xdist (3.8) tells its scheduler a test's group by appending ``@<group>`` to the test's
id on the worker, through the attribute ``_nodeid``. pytest 9.2 keeps the id in a structured
``_id`` instead and ignores ``_nodeid``: the suffix is lost, every test is scheduled alone, and
each process runs the module fixtures of a group again (the quickstart run, the documentation
site build). `add_group_suffix` puts the suffix where pytest reads it when xdist's did not take;
with a pytest or xdist where it takes, it does nothing.
"""

from __future__ import annotations

import pytest


def group_of(item: pytest.Item) -> str | None:
    """The group xdist gives ``item``: its ``xdist_group`` names, sorted and joined by ``_``."""
    names = {str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
             for mark in item.iter_markers("xdist_group")}
    return "_".join(sorted(names)) if names else None


def add_group_suffix(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a ``--dist loadgroup`` worker, give each grouped test the id ``<id>@<group>`` if it lacks it."""
    if not getattr(config.option, "loadgroup", False):  # set on the workers of --dist loadgroup only
        return
    for item in items:
        group = group_of(item)
        if group is None or item.nodeid.endswith(f"@{group}") or not hasattr(item, "_id"):
            continue
        # The structured id parses the string form and keeps that string as the test's id.
        item._id = type(item._id).parse(f"{item.nodeid}@{group}")
