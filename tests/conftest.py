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
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client

from app import create_app
from app.kube.api.client import ClusterConfig, api_client, load_configuration
from app.web.process import of as process_of
from extres_demo import testenv
from tests import route_builders
from tests.helpers import browser, started

route_builders.install()

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
        app = started(create_app(config))
        app.config["TESTING"] = True
        apps.append(app)
        if "kubeconfig" not in overrides:  # the session's control plane: ready (every pod counted)
            with app.app_context():  # before the test's first request, as a served replica is
                process_of(app).local.cluster.cache.wait_synced(30)
        return app

    yield factory
    for app in apps:
        process_of(app).local.stop()


@pytest.fixture
def app(make_app: Callable[..., Any]) -> Any:
    app = make_app()
    with app.app_context():
        state = process_of(app).local
        assert state.cluster.cache.wait_synced(30), "cache did not sync"
    return app


@pytest.fixture
def web(app: Any) -> Any:
    return browser(app)
