"""Every template compiles when the worker starts (``compile_templates``), so the first request
renders from compiled templates; one that does not compile fails here, not on a page."""

from __future__ import annotations

from pathlib import Path

from app.web import compile_templates


def test_every_template_is_compiled_at_start(app):
    compile_templates(app)
    loaded = {name for (_, name) in app.jinja_env.cache}
    shipped = {
        p.relative_to(Path(app.template_folder)).as_posix() for p in Path(app.template_folder).rglob("*.html")
    }
    assert shipped and shipped <= loaded
