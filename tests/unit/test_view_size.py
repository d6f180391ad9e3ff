"""Views parse, read and render: each routed function in app/web stays within the budget
``scripts/view_sizes.py`` measures (and ``scripts/dev`` prints in every lint); anything longer
goes to a named helper or to app/domain."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from tests.helpers import repo_root

_spec = importlib.util.spec_from_file_location("view_sizes", repo_root() / "scripts" / "view_sizes.py")
assert _spec is not None and _spec.loader is not None
view_sizes = sys.modules["view_sizes"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(view_sizes)


def test_every_view_is_within_the_budget():
    found = view_sizes.views()
    assert len(found) > 30  # every routed function was found
    assert [v for v in found if v.over] == []


LONG = (
    'def index():\n    """Docstrings do not count."""\n'
    + "".join(f"    a{i} = {i}\n" for i in range(15))
    + "    return render_template('x.html',\n        a=1,\n    )\n"
)


def test_a_view_past_the_budget_is_named_with_its_size(tmp_path: Path):
    (tmp_path / "app" / "web").mkdir(parents=True)
    (tmp_path / "app" / "web" / "page.py").write_text(LONG + "\n\ndef helper():\n" + "    pass\n" * 30)
    (tmp_path / "app" / "web" / "routes.py").write_text("ROUTES = (R(page.index, page.bp, '/'),)\n")
    assert view_sizes.views(tmp_path) == [view_sizes.View("page:index", 18, 16)]
    assert view_sizes.views(tmp_path)[0].over
