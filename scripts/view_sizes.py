"""Each routed view's size in app/web: lines of its body (its docstring left out) and statements
(nested ones counted; a render call's keyword arguments are one). A view parses, reads and
renders; anything longer goes to a named helper or to app/domain.

    python scripts/view_sizes.py           # every view, longest first; fails past the budget
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MOST_LINES = 15
MOST_STATEMENTS = 12


@dataclass(frozen=True)
class View:
    where: str  # module:function
    lines: int
    statements: int

    @property
    def over(self) -> bool:
        return self.lines > MOST_LINES or self.statements > MOST_STATEMENTS


def _body(fn: ast.FunctionDef) -> list[ast.stmt]:
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    return body


def _statements(body: list[ast.stmt]) -> int:
    count = 0
    for node in body:
        count += 1
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                count += _statements([s for s in inner if isinstance(s, ast.stmt)])
        count += sum(_statements(h.body) for h in getattr(node, "handlers", ()))
    return count


def _routed(root: Path) -> set[tuple[str, str]]:
    """(module, function) of every view the route table (app/web/routes.py) names: each row's
    first argument, ``module.function``."""
    table = ast.parse((root / "app" / "web" / "routes.py").read_text())
    return {
        (call.args[0].value.id, call.args[0].attr)
        for call in ast.walk(table)
        if isinstance(call, ast.Call)
        and call.args
        and isinstance(call.args[0], ast.Attribute)
        and isinstance(call.args[0].value, ast.Name)
    }


def views(root: Path = ROOT) -> list[View]:
    """Every view under app/web the route table names, longest first."""
    routed, found = _routed(root), []
    for path in sorted((root / "app" / "web").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            named = isinstance(node, ast.FunctionDef) and (path.stem, node.name) in routed
            if named and (body := _body(node)):
                lines = (body[-1].end_lineno or body[-1].lineno) - body[0].lineno + 1
                found.append(View(f"{path.stem}:{node.name}", lines, _statements(body)))
    return sorted(found, key=lambda v: (-v.lines, v.where))


def main() -> int:
    found = views()
    over = [v for v in found if v.over]
    longest = found[0] if found else None
    print(
        f"views: {len(found)} routed functions in app/web; the longest {longest.where} "
        f"({longest.lines} lines, {longest.statements} statements); budget {MOST_LINES} lines, "
        f"{MOST_STATEMENTS} statements"
        if longest
        else "views: none"
    )
    for v in over:
        print(f"  over the budget: {v.where}: {v.lines} lines, {v.statements} statements")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
