"""The import rules are stated once, as import-linter contracts in pyproject.toml (the fast lane
runs ``lint-imports``): here, that those contracts catch what they forbid, on a copy of the
package's outline, and that docs/development.md's map is the one they write. Beside them, one rule
no import graph sees: a view never reaches into a store."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).parent / "lint-imports"


def outline(tmp: Path) -> Path:
    """app's packages and modules, every file empty, beside the project's pyproject.toml."""
    for path in (ROOT / "app").rglob("*.py"):
        if "__pycache__" not in path.parts:
            copy = tmp / path.relative_to(ROOT)
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_text("")
    shutil.copy(ROOT / "pyproject.toml", tmp / "pyproject.toml")
    return tmp


def lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT), "--no-cache"],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def kept_outline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The outline (with a stand-in ``kubernetes`` package), checked once to keep every contract."""
    tree = outline(tmp_path_factory.mktemp("outline"))
    (tree / "kubernetes").mkdir()
    (tree / "kubernetes" / "__init__.py").write_text("")
    baseline = lint(tree)
    assert baseline.returncode == 0, baseline.stdout[-2000:]  # the outline alone keeps them all
    return tree


@pytest.mark.parametrize(
    ("where", "line", "broken"),
    [
        ("app/domain/names.py", "import app.web.viewer", "app's packages, top to bottom"),
        ("app/stray.py", "", "app's packages, top to bottom"),  # a top-level module no layer places
        ("app/runtime/reads/store.py", "import app.runtime.cluster", "no circle"),  # with the line below
        ("app/web/viewer.py", "import kubernetes", "only app.kube imports the Kubernetes client"),
        ("app/kube/wire/reading.py", "import app.kube.api.raw", "app.kube's rooms"),
    ],
)
def test_the_contracts_catch_what_they_forbid(kept_outline, tmp_path, where, line, broken):
    tree = shutil.copytree(kept_outline, tmp_path / "tree")
    (tree / where).write_text(line + "\n")
    if where == "app/runtime/reads/store.py":
        (tree / "app/runtime/cluster.py").write_text("import app.runtime.reads.store\n")
    out = lint(tree)
    assert out.returncode != 0
    assert f"{broken}" in out.stdout.split("Broken contracts")[-1], out.stdout[-2000:]


def test_the_development_page_shows_the_layers_the_contract_states():
    run = subprocess.run([sys.executable, "scripts/layers_doc.py", "--check"], cwd=ROOT, capture_output=True)
    assert run.returncode == 0, run.stderr


def test_no_view_reaches_into_a_store_it_reads_through_the_read_model():
    """app/web reads what a page shows through app.runtime.reads (each read declaring what it
    depends on), never ``….store`` itself."""
    web = ROOT / "app" / "web"
    reached = [
        f"{path.name}:{node.lineno}"
        for path in sorted(web.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr == "store"
    ]
    assert reached == []
