"""Pydantic's validation errors, told in one line: the dotted key, what was expected, what was given.

It reads pydantic-core's error types and the union tags it inserts into error
locations (a policy entry's name, the member of ``system.speeds``), so that
``policies.0.d`` rather than ``policies.0.sqd.d.constrained-int`` is named.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import show, suggestion
from ..policies import REGISTRY
from .schema import LawConfig, ScenarioSchema

# The member tags pydantic appends inside a plain union, e.g. d: int | str -> "d.constrained-int".
_MEMBER = re.compile(r"^((constrained-)?(int|float|str|bool)|function-(before|after|wrap|plain)\[.*)$")
_SPEEDS_TAGS = ("speeds-list", "speeds-law")  # the member tags of system.speeds


def _location(loc: tuple[Any, ...], members: bool = True) -> str:
    parts: list[str] = []
    for i, item in enumerate(loc):
        # Drop the union tag that pydantic inserts after a policy entry's index.
        if i >= 2 and loc[i - 2] == "policies" and isinstance(loc[i - 1], int) and item in REGISTRY:
            continue
        if (members and i >= 1 and isinstance(item, str) and _MEMBER.match(item)) or item in _SPEEDS_TAGS:
            continue
        parts.append(str(item))
    return ".".join(parts)


def _allowed_keys(loc: tuple[Any, ...]) -> list[str]:
    """The keys the model at ``loc`` (the parent of an unknown key) accepts."""
    model: Any = ScenarioSchema
    for i, item in enumerate(loc):
        if i >= 2 and loc[i - 2] == "policies" and isinstance(loc[i - 1], int) and item in REGISTRY:
            model = REGISTRY[item].Config
            continue
        if isinstance(item, int) or item in ("policies", "speeds"):  # the member's tag names its model
            continue
        if item == "speeds-law":
            model = LawConfig
            continue
        field = getattr(model, "model_fields", {}).get(item)
        annotation = getattr(field, "annotation", None)
        model = next((arg for arg in (annotation, *getattr(annotation, "__args__", ()))
                      if isinstance(arg, type) and issubclass(arg, BaseModel)), None)
        if model is None:
            return []
    return list(getattr(model, "model_fields", {}))


def format_error(exc: ValidationError) -> list[str]:
    """Every error, one line each: dotted key, what was expected, what was given.

    One line per key: a value that fails every member of a union (``d``: an integer
    or an expression) is one problem, not one per member.
    """
    errors = exc.errors()
    # A bad policy entry also makes the list look too short; report the entry.
    errors = [e for e in errors if e["type"] != "too_short"] or errors
    lines: dict[str, str] = {}
    for error in errors:
        key = _location(tuple(error["loc"]))
        if key not in lines:
            lines[key] = _line(error)
    return list(lines.values())


def _line(error: Any) -> str:
    """One error in one line."""
    kind, ctx, given = error["type"], error.get("ctx") or {}, error.get("input")
    loc = _location(tuple(error["loc"]), members=kind != "extra_forbidden")
    if kind == "shape":
        loc = f"{loc}.{ctx['key']}" if loc else str(ctx["key"])
        message = error["msg"].split(": ", 1)[1]
        return f"{loc}: {message}" + ("" if ctx.get("value") is None else f", got {show(ctx['value'])}")
    if kind == "extra_forbidden":
        allowed = _allowed_keys(tuple(error["loc"])[:-1])
        message = "unknown key" + suggestion(str(error["loc"][-1]), allowed) \
            + (f" (expected one of {', '.join(allowed)})" if allowed else "")
    elif kind == "missing":
        message = "expected a value, got nothing"
        given = None
    elif kind in ("union_tag_invalid", "union_tag_not_found"):
        field = ctx.get("discriminator", "name").strip("'")
        loc = f"{loc}.{field}"
        expected = ctx.get("expected_tags", ", ".join(REGISTRY))
        given = ctx.get("tag")
        if given is None:
            return f"{loc}: expected one of {expected}, got nothing"
        names = [name.strip(" '") for name in str(expected).split(",")]
        return f"{loc}: expected one of {expected}, got {show(given)}{suggestion(str(given), names)}"
    elif kind == "too_short":
        message = f"expected at least {ctx.get('min_length', 1)} item(s)"
    elif kind == "literal_error":
        message = f"expected one of {ctx.get('expected')}"
    elif kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        sign = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<",
                "less_than_equal": "<="}[kind]
        bound = next(iter(v for k, v in ctx.items() if k in ("gt", "ge", "lt", "le")))
        message = f"expected a number {sign} {bound}"
    elif kind == "value_error":
        message = str(ctx.get("error", error["msg"]))
        return f"{loc}: {message}"
    else:
        message = "expected " + error["msg"][0].lower() + error["msg"][1:]
        message = message.replace("expected input should be", "expected")
    return f"{loc}: {message}, got {show(given)}" if given is not None or kind != "missing" else f"{loc}: {message}"
