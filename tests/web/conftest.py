"""The web lane: views, templates, fragments and headers over a fake cluster (tests/web/fake.py),
flaskr-style ``app`` and ``client`` fixtures; no control plane is started."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import jinja2
import jinja2.bccache
import pytest

from app import create_app
from app.web.process import of as process_of
from tests.helpers import browser
from tests.web.fake import FakeCluster


class _Compiled(jinja2.BytecodeCache):
    """Templates compiled once for every run of the lane, shared by every test's app: a template
    is the same in each; only the process that serves has one app anyway. Kept in memory and
    outside the checkout on disk (Jinja's own file cache: its entries are checked against their
    template's source, so an edited template is compiled again), so the workers of a run and the
    runs after it load what one compiled."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.disk = jinja2.FileSystemBytecodeCache(str(directory))
        self.kept: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if (code := self.kept.get(bucket.key)) is not None:
            bucket.bytecode_from_string(code)
            return
        self.disk.load_bytecode(bucket)
        if bucket.code is not None:
            self.kept[bucket.key] = bucket.bytecode_to_string()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.kept[bucket.key] = bucket.bytecode_to_string()
        self.disk.dump_bytecode(bucket)


COMPILED = _Compiled(
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "extres" / "test-templates"
)


@pytest.fixture
def cluster() -> FakeCluster:
    return FakeCluster()


@pytest.fixture
def make_app(cluster: FakeCluster) -> Any:
    apps = []

    def factory(**overrides: Any) -> Any:
        config = {"in_cluster": "false", "read_only": False, **overrides}
        app = create_app(config, cluster=cluster)
        app.config["TESTING"] = True
        app.jinja_env.bytecode_cache = COMPILED  # each test's app compiles no template again
        apps.append(app)
        return app

    yield factory
    for app in apps:  # what each runtime started (the selector evaluator's child) ends with it
        process_of(app).local.stop()


@pytest.fixture
def app(make_app: Any) -> Any:
    return make_app()


@pytest.fixture
def client(app: Any) -> Any:
    """A browser-like test client: HTTPS, with the CSRF token a page of the dashboard carries."""
    return browser(app)
