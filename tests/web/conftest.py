"""The web lane: views, templates, fragments and headers over a fake cluster (tests/web/fake.py),
flaskr-style ``app`` and ``client`` fixtures; no control plane is started."""

from __future__ import annotations

from typing import Any

import pytest

from app import create_app
from tests.conftest import browser
from tests.web.fake import FakeCluster


@pytest.fixture
def cluster() -> FakeCluster:
    return FakeCluster()


@pytest.fixture
def make_app(cluster: FakeCluster) -> Any:
    def factory(**overrides: Any) -> Any:
        config = {"in_cluster": "false", "read_only": False, **overrides}
        app = create_app(config, cluster=cluster)
        app.config["TESTING"] = True
        return app

    return factory


@pytest.fixture
def app(make_app: Any) -> Any:
    return make_app()


@pytest.fixture
def client(app: Any) -> Any:
    """A browser-like test client: HTTPS, with the CSRF token a page of the dashboard carries."""
    return browser(app)
