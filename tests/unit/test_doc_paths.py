"""Every module the README, the docs and the docstrings name exists: a backticked path under
``app/`` is a file or a folder, a backticked dotted name under ``app.`` is a module or a name in
one. A module that moves takes its mentions along, or this fails."""

from __future__ import annotations

import importlib
import re

from tests.helpers import repo_root

ROOT = repo_root()
PATH = re.compile(r"`(app/[A-Za-z0-9_./]+?)/?`")
DOTTED = re.compile(r"`(app(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`")
IN_THE_WHEEL = {"app/templates", "app/static"}  # where the wheel puts templates/ and static/


def texts() -> dict[str, str]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "app").rglob("*.py"))]
    return {str(f.relative_to(ROOT)): f.read_text() for f in files}


def resolves(dotted: str) -> bool:
    """A module, or a name (a class, a function, a constant, an attribute of one) in a module."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


def test_every_app_path_and_module_named_in_the_docs_and_docstrings_exists():
    missing, seen = [], 0
    for where, text in texts().items():
        for path in set(PATH.findall(text)) - IN_THE_WHEEL:
            seen += 1
            if not (ROOT / path).exists():
                missing.append(f"{where}: {path}")
        for dotted in set(DOTTED.findall(text)):
            seen += 1
            if not resolves(dotted):
                missing.append(f"{where}: {dotted}")
    assert seen > 40 and missing == []


def test_a_moved_module_is_caught():
    assert not resolves("app.domain.no_such_module") and not resolves("app.base.audit.no_such_name")
    assert resolves("app.base.audit.record") and resolves("app.web.surface.Page")
    assert not (ROOT / "app/no_such.py").exists() and PATH.findall("`app/web/`") == ["app/web"]
