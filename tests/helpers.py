"""Helpers the tests share (not fixtures: those are in the conftest modules): waiting for a
condition or a served process, the checkout's root, the Flask test client that speaks HTTPS and
carries the CSRF token a dashboard page would, and a page it gets, parsed."""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bs4 import BeautifulSoup
from flask.testing import FlaskClient
from werkzeug.datastructures import Headers

from app.web import security
from app.web.process import of as process_of

CSRF = "test-csrf-token"


class Browser(FlaskClient):
    """A test client that speaks HTTPS (the session cookie is Secure) and sends, with every form,
    the CSRF token the dashboard's own pages would carry for the identity the request presents."""

    def open(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("base_url", "https://localhost")
        data = kwargs.get("data")
        wants = kwargs.pop("csrf", True) and kwargs.get("method") == "POST"
        if wants and (data is None or isinstance(data, dict)) and "csrf_token" not in (data or {}):
            member = _member(args[0]) if args and isinstance(args[0], str) else None
            kwargs["data"] = {**(data or {}), "csrf_token": self.csrf_for(kwargs.get("headers"), member)}
        return super().open(*args, **kwargs)

    def csrf_for(self, headers: Any = None, member: str | None = None) -> str:
        """The CSRF token of the session of the local cluster, or of ``member``'s (its own cookie)."""
        settings = self.application.config["EXTRES"]
        at = {"extres.cluster": member, "SCRIPT_NAME": f"/c/{member}"} if member else {}
        path = f"/c/{member}/" if member else "/"
        with self.session_transaction(path, base_url="https://localhost", environ_overrides=at) as session:
            token = process_of(self.application).sessions().token(dict(session), member)
            nonce = session.setdefault("csrf", CSRF)  # as a page of the dashboard would have set it
        try:
            who = security.identity_from(
                settings,
                security.networks(settings.trusted_proxies),
                Headers(headers or {}),
                "127.0.0.1",
                token,
                member is not None,
            )
        except security.IdentityError:
            return "refused-identity"
        return security.csrf_for(self.application.secret_key, nonce, who)


def _member(path: str) -> str | None:
    """The member cluster a test request's path is about (``/c/<name>/…``), else None."""
    return path.split("/")[2] if path.startswith("/c/") and path.count("/") > 2 else None


def browser(app: Any) -> Browser:
    app.test_client_class = Browser
    client = app.test_client()
    with client.session_transaction(base_url="https://localhost") as session:
        session["csrf"] = CSRF
    return client


def page(client: Any, url: str) -> BeautifulSoup:
    """The page at ``url``, answered 200 (else the start of what came instead), parsed."""
    response = client.get(url)
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


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


def started(app: Any, first_sync_wait: float = 3.0) -> Any:
    """``app``'s clusters started, as the served worker's process steps start them (its template
    step left to the pages asked): each runtime, the first page waiting up to ``first_sync_wait``
    seconds for the nodes, then the fleet (members from Secrets). Reading a runtime starts
    nothing; a test that serves no worker starts what it reads."""
    fleet = process_of(app).fleet
    for runtime in fleet.runtimes():
        runtime.start(first_sync_wait)
    fleet.start()
    return app


PAGE_ARGS = {"name": "n1", "namespace": "default", "key": "no-such-job", "rest": "set"}


def pages_of(app: Any) -> list[str]:
    """The address of every HTML page ``app`` registers (the route table's GET rows, not an export
    or a probe), its arguments filled from ``PAGE_ARGS``: a check of every page walks these, so a
    new page is in it without a list kept by hand."""
    from flask import url_for

    from app.web.routes import BY_ENDPOINT

    with app.test_request_context():
        return sorted(
            url_for(rule.endpoint, **{a: PAGE_ARGS[a] for a in rule.arguments})
            for rule in app.url_map.iter_rules()
            if (row := BY_ENDPOINT.get(rule.endpoint)) is not None
            and row.view is not None
            and row.method == "GET"
            and not row.open
            and not row.path.endswith((".csv", ".json"))
        )


def repo_root() -> Path:
    return Path(__file__).resolve().parent.parent


# a kubeconfig whose cluster cannot be reached (nothing listens on port 1): a server that loads all
# it loads for a cluster and keeps trying, for the tests and benches that need no cluster
UNREACHABLE = """apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: none, user: {token: none}}]
contexts: [{name: none, context: {cluster: none, user: none}}]
current-context: none
"""
