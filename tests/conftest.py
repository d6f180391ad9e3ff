"""Shared fixtures: a real control plane (etcd, kube-apiserver, kube-scheduler,
kube-controller-manager) with kwok playing the kubelets.

It is started once per test session by demo/extres_demo/kube-testenv (which builds and
caches the binaries on first use; EXTRES_KUBE_VERSION picks the version). kwok
does not copy a patched capacity into allocatable as a kubelet does: tests that
need that call extres_demo.standin, and say so.
"""

from __future__ import annotations

import itertools
import os
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from kubernetes import client
from werkzeug.datastructures import Headers

from app import create_app
from app.kube.api.client import ClusterConfig, api_client, load_configuration
from app.web import security
from extres_demo import testenv

_counter = itertools.count()


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[testenv.ControlPlane]:
    plane = testenv.start(tmp_path_factory.mktemp("kube"))
    yield plane
    plane.stop()


@pytest.fixture(scope="session")
def scheduler(control_plane: testenv.ControlPlane) -> testenv.ControlPlane:
    """The real kube-scheduler, running against the session's control plane."""
    testenv.start_scheduler(control_plane)
    return control_plane


@pytest.fixture(scope="session")
def admin_api(control_plane: testenv.ControlPlane) -> Iterator[client.ApiClient]:
    api = api_client(load_configuration(ClusterConfig("false", str(control_plane.kubeconfig))))
    yield api
    api.close()


@pytest.fixture(scope="session")
def core(admin_api: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(admin_api)


@pytest.fixture(scope="module")
def chart_roles(admin_api: client.ApiClient) -> None:
    """The chart's ClusterRoles, with the test tokens' groups bound (extres-viewers,
    extres-editors): pages need them to read, forms to write. Per module, since the chart tests
    apply other value sets."""
    from tests.chart_helpers import IMPERSONATE, apply_rbac, render

    apply_rbac(admin_api, render(IMPERSONATE))


@pytest.fixture
def uid(request: pytest.FixtureRequest) -> str:
    """A short name unique to this test, for nodes and pods it creates."""
    base = "".join(ch if ch.isalnum() else "-" for ch in request.node.name.lower())[:30].strip("-")
    return f"{base}-{os.getpid() % 1000}-{next(_counter)}"


@pytest.fixture
def make_app(control_plane: testenv.ControlPlane) -> Iterator[Callable[..., Any]]:
    apps = []

    def factory(**overrides: Any) -> Any:
        # writes in service-account mode are an explicit opt-in: the tests that write opt in
        config = {
            "kubeconfig": str(control_plane.kubeconfig),
            "in_cluster": "false",
            "read_only": False,
            "history_key": "the tests' history key, at least 32 bytes",
            "plans_per_minute": 100_000,  # the agreement harness asks What-if hundreds of times a minute
            **overrides,
        }
        app = create_app(config)
        app.config["TESTING"] = True
        apps.append(app)
        if "kubeconfig" not in overrides:  # the session's control plane: ready (every pod counted)
            with app.app_context():  # before the test's first request, as a served replica is
                app.extensions["extres"].cluster.cache.wait_synced(30)
        return app

    yield factory
    for app in apps:
        app.extensions["extres"].close()


@pytest.fixture
def app(make_app: Callable[..., Any]) -> Any:
    app = make_app()
    with app.app_context():
        state = app.extensions["extres"]
        assert state.cluster.cache.wait_synced(30), "cache did not sync"
    return app


CSRF = "test-csrf-token"


class Browser(FlaskClient):
    """A test client that speaks HTTPS (the session cookie is Secure) and sends, with every form,
    the CSRF token the dashboard's own pages would carry for the identity the request presents."""

    def open(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("base_url", "https://localhost")
        data = kwargs.get("data")
        wants = kwargs.pop("csrf", True) and kwargs.get("method") == "POST"
        if wants and (data is None or isinstance(data, dict)) and "csrf_token" not in (data or {}):
            kwargs["data"] = {**(data or {}), "csrf_token": self.csrf_for(kwargs.get("headers"))}
        return super().open(*args, **kwargs)

    def csrf_for(self, headers: Any = None) -> str:
        settings = self.application.config["EXTRES"]
        with self.session_transaction(base_url="https://localhost") as session:
            token = self.application.extensions["extres_tokens"].token(dict(session))
            nonce = session.setdefault("csrf", CSRF)  # as a page of the dashboard would have set it
        try:
            who = security.identity_from(
                settings,
                security.networks(settings.trusted_proxies),
                Headers(headers or {}),
                "127.0.0.1",
                token,
            )
        except security.IdentityError:
            return "refused-identity"
        return security.csrf_for(self.application.secret_key, nonce, who)


def browser(app: Any) -> Browser:
    app.test_client_class = Browser
    client = app.test_client()
    with client.session_transaction(base_url="https://localhost") as session:
        session["csrf"] = CSRF
    return client


@pytest.fixture
def web(app: Any) -> Any:
    return browser(app)


def eventually(check: Callable[[], Any], timeout: float = 15.0, interval: float = 0.1) -> Any:
    """Call ``check`` until it returns a truthy value without failing an assertion or lookup."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = check()
            if result:
                return result
        except (AssertionError, LookupError):
            if time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(interval)


def wait_until_serving(proc: Any, url: str, timeout: float, interval: float = 0.1) -> None:
    """Until ``url`` answers 200; fails at once if ``proc`` (a Popen) has exited."""

    def up() -> bool:
        assert proc.poll() is None, f"{proc.args[0]} exited"
        try:
            with urllib.request.urlopen(url, timeout=3) as resp:
                return resp.status == 200
        except OSError as exc:
            raise AssertionError(str(exc)) from exc

    eventually(up, timeout=timeout, interval=interval)


def repo_root() -> Path:
    return Path(__file__).resolve().parent.parent
