"""Views parse, read and render: each routed function in app/web is a few statements (its
render call's keyword arguments count as one); anything longer goes to a named helper or to
app/domain. The budget is the codebase's convention, checked so it holds."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import repo_root

MOST_STATEMENTS = 12


def _statements(body: list[ast.stmt]) -> int:
    """Statements, nested ones included; a docstring is not one."""
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    count = 0
    for node in body:
        count += 1
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                count += _statements([s for s in inner if isinstance(s, ast.stmt)])
                count += sum(_statements(h.body) for h in inner if isinstance(h, ast.ExceptHandler))
    return count


def _routed(fn: ast.FunctionDef) -> bool:
    return any(
        isinstance(d, ast.Call)
        and isinstance(d.func, ast.Attribute)
        and d.func.attr in ("get", "post", "route")
        for d in fn.decorator_list
    )


def test_every_view_is_a_few_statements():
    long = {}
    for path in sorted((repo_root() / "app" / "web").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            routed = isinstance(node, ast.FunctionDef) and _routed(node)
            if routed and (n := _statements(node.body)) > MOST_STATEMENTS:
                long[f"{Path(path).name}:{node.name}"] = n
    assert long == {}, long
