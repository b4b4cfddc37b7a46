"""Safe arithmetic in N, for ``d(N)`` and ``load(N)``.

Only numbers, the name ``N``, ``+ - * / **``, parentheses and the functions
``sqrt log log2 exp floor ceil min max`` are accepted; everything else is
refused when the expression is parsed, so nothing else is ever evaluated.

>>> evaluate("ceil(sqrt(N) * log(N))", 100)
47.0
>>> evaluate("1 - N**-0.5", 100)
0.9
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from functools import lru_cache

FUNCTIONS: dict[str, Callable[..., float]] = {
    "sqrt": math.sqrt,
    "log": math.log,
    "log2": math.log2,
    "exp": math.exp,
    "floor": math.floor,
    "ceil": math.ceil,
    "min": min,
    "max": max,
}
_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}


MAX_LENGTH = 200
"""Longest expression accepted, in characters: ``ceil(sqrt(N) * log(N))`` needs 22."""
MAX_DEPTH = 30
"""Deepest nesting of operations accepted: Python's own parser and evaluator recurse."""


class ExpressionError(ValueError):
    """An expression that is not allowed or cannot be evaluated."""


@lru_cache(maxsize=256)
def parse(text: str) -> ast.expr:
    """Parse and check an expression; raise `ExpressionError` if it is not allowed."""
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expected at most {MAX_LENGTH} characters, got {len(text)}")
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ExpressionError(f"not an arithmetic expression in N ({exc.msg})") from None
    except (RecursionError, MemoryError):
        raise ExpressionError(f"expected at most {MAX_DEPTH} nested operations, got more") from None
    depth = _depth(tree)
    if depth > MAX_DEPTH:
        raise ExpressionError(f"expected at most {MAX_DEPTH} nested operations, got {depth}")
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    for node in ast.walk(tree):
        allowed = (
            isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Call, ast.Name, ast.Constant, ast.Load))
            or type(node) in _BINARY
            or type(node) in _UNARY
        )
        if not allowed:
            raise ExpressionError(f"'{ast.unparse(node)}' is not allowed")
        if isinstance(node, ast.BinOp) and type(node.op) not in _BINARY:
            raise ExpressionError(f"operator in '{ast.unparse(node)}' is not allowed")
        if isinstance(node, ast.UnaryOp) and type(node.op) not in _UNARY:
            raise ExpressionError(f"operator in '{ast.unparse(node)}' is not allowed")
        if isinstance(node, ast.Constant) and (
            isinstance(node.value, bool) or not isinstance(node.value, (int, float))
        ):
            raise ExpressionError(f"'{ast.unparse(node)}' is not a number")
        if isinstance(node, ast.Name) and node.id != "N" and node.id not in FUNCTIONS:
            raise ExpressionError(f"unknown name '{node.id}' (only N and {', '.join(FUNCTIONS)})")
        if isinstance(node, ast.Name) and node.id in FUNCTIONS and id(node) not in called:
            raise ExpressionError(f"'{node.id}' is a function, not a value")
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
                raise ExpressionError(f"'{ast.unparse(node.func)}' is not an allowed function")
            if node.keywords or not node.args:
                raise ExpressionError(f"'{ast.unparse(node)}' takes positional arguments only")
    return tree


def _depth(tree: ast.expr) -> int:
    """The nesting depth of a syntax tree, without recursion."""
    deepest = 0
    todo: list[tuple[ast.AST, int]] = [(tree, 1)]
    while todo:
        node, depth = todo.pop()
        deepest = max(deepest, depth)
        todo.extend((child, depth + 1) for child in ast.iter_child_nodes(node)
                    if not isinstance(child, (ast.Load, ast.operator, ast.unaryop)))
    return deepest


def _eval(node: ast.expr, n: float) -> float:
    if isinstance(node, ast.Constant):
        return float(node.value)  # type: ignore[arg-type]  # parse() admits numbers only
    if isinstance(node, ast.Name):
        if node.id != "N":
            raise ExpressionError(f"'{node.id}' is a function, not a value")
        return n
    if isinstance(node, ast.UnaryOp):
        return float(_UNARY[type(node.op)](_eval(node.operand, n)))
    if isinstance(node, ast.BinOp):
        result = _BINARY[type(node.op)](_eval(node.left, n), _eval(node.right, n))
        if isinstance(result, complex):
            raise ExpressionError("gives a complex number")
        return float(result)
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    return float(FUNCTIONS[node.func.id](*(_eval(arg, n) for arg in node.args)))


def evaluate(text: str, n: float) -> float:
    """Evaluate an expression at ``N = n``; raise `ExpressionError` on any failure."""
    tree = parse(text)
    try:
        value = _eval(tree, float(n))
    except ExpressionError:
        raise
    except (ArithmeticError, ValueError, TypeError) as exc:
        raise ExpressionError(f"cannot be evaluated at N={n:g} ({exc})") from None
    if not math.isfinite(value):
        raise ExpressionError(f"is not finite at N={n:g}")
    return value
