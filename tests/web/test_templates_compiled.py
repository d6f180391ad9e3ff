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


def test_the_templates_compile_once_every_pod_is_counted_not_while_the_lists_decode(app, monkeypatch):
    """Compiling while the first lists are decoded took their time (docs/performance.md): the
    worker's start runs the process's steps: the clusters start, the count is waited for, then
    the templates compile."""
    import threading

    import app.web as web
    from app.base import workers
    from app.kube.api.freshness import Freshness
    from app.web import process

    said: list[str] = []
    compiled = threading.Event()
    asked = []

    def freshness(runtime: object) -> Freshness:
        asked.append(runtime)
        counted = len(asked) > 3  # counting on the first three asks
        said.append("counted" if counted else "counting")
        return Freshness(synced=counted, stale=not counted, age_seconds=None, error=None)

    this = process.of(app)
    assert [s.name for s in this.steps] == ["clusters", "templates"]
    monkeypatch.setattr(this.fleet, "start", lambda: said.append("start"))
    monkeypatch.setattr(web.reads, "freshness", freshness)
    monkeypatch.setattr(workers.time, "sleep", lambda s: None)
    monkeypatch.setattr(web, "compile_templates", lambda app: (said.append("compile"), compiled.set()))
    web.on_worker_start(app)
    assert compiled.wait(10)
    assert said == ["start", "counting", "counting", "counting", "counted", "compile"]
    assert set(map(id, asked)) == {id(this.local)}  # the local cluster's count
