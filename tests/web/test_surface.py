"""The HTTP surface, walked from its declaration (app.web.surface): every route the app registers,
in every mode, has its row, with the method it takes; the nav is drawn from the rows; no GET
changes anything; no write is taken without the form's CSRF token, nor from a user without the
role in any of the three auth modes; every answer carries the security headers; a route's
fragment is a part of its page. A new route without a row fails the first test; with one, it
is in all the others."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup
from flask.testing import FlaskClient
from werkzeug.routing import Rule

from app.web.routes import BY_ENDPOINT, NAV, ROUTES
from tests.helpers import browser

MODES = {
    "writable": {"read_only": False},
    "read-only": {"read_only": True},
    "token": {"auth_mode": "token"},
    "proxy headers": {"auth_mode": "impersonate", "trusted_proxies": "127.0.0.1/32"},
}
ARGS = {"name": "n1", "namespace": "default", "key": "no-such-job", "filename": "extres.css", "rest": "set"}


def rules(app) -> list[Rule]:
    return list(app.url_map.iter_rules())


def url(app, rule: Rule) -> str:
    with app.test_request_context():
        from flask import url_for

        return url_for(rule.endpoint, **{a: ARGS[a] for a in rule.arguments})


@pytest.mark.parametrize("mode", MODES)
def test_every_route_the_app_registers_has_its_row(make_app, mode):
    app = make_app(**MODES[mode])
    for rule in rules(app):
        row = BY_ENDPOINT.get(rule.endpoint)
        assert row is not None, f"{rule.endpoint} ({rule.rule}) has no row in app.web.surface"
        assert row.method in rule.methods, (rule.endpoint, rule.methods)


def test_every_row_is_a_route_of_some_mode(make_app):
    seen = {r.endpoint for mode in MODES.values() for r in rules(make_app(**mode))}
    assert {r.endpoint for r in ROUTES} - seen == set()


def test_the_nav_is_drawn_from_the_rows(client, cluster):
    cluster.node("n1", {"example.com/dongle": "2"})
    page = BeautifulSoup(client.get("/").get_data(as_text=True), "html.parser")
    labels = [a.find(string=True, recursive=False).strip() for a in page.select("nav[aria-label=Sections] a")]
    unconditional = [r.nav for r in NAV if not r.shown_if]
    assert [label for label in labels if label in unconditional] == unconditional
    assert set(labels) <= {r.nav for r in NAV}
    assert page.select_one('nav a[aria-current="page"]').get_text(strip=True) == "Overview"


def test_no_get_changes_anything_and_no_write_is_taken_without_the_forms_token(make_app, cluster):
    from tests.web.apiserver import ApiServerStandIn

    cluster.node("n1", {"example.com/dongle": "2"})
    cluster.apiserver = ApiServerStandIn(cluster.objects)  # records any write that reaches it
    app = make_app(read_only=False)
    web = browser(app)
    for rule in rules(app):
        row = BY_ENDPOINT[rule.endpoint]
        if row.method == "GET":
            web.get(url(app, rule)).close()
    assert cluster.apiserver.patches() == []  # every GET of every route: nothing written
    bare = FlaskClient(app)  # a plain client: no CSRF token in its forms (a Browser adds one)
    refused = {}
    for rule in rules(app):
        row = BY_ENDPOINT[rule.endpoint]
        if row.writes:
            form = {"resource": "example.com/dongle", "quantity": "3", "expected": "2", "nodes": "n1"}
            refused[rule.endpoint] = bare.post(
                url(app, rule), data=form, base_url="https://localhost"
            ).status_code
    assert refused and all(status in (400, 403) for status in refused.values()), refused
    assert cluster.apiserver.patches() == []


def test_a_routes_fragment_is_a_part_of_its_page(client, cluster):
    cluster.node("n1", {"example.com/dongle": "2"})
    cluster.pod("p", "n1", {"example.com/dongle": "1"})
    asked = 0
    for row in ROUTES:
        if not row.fragment or row.endpoint in ("bulk.results", "idle.index"):  # a job's key; usage
            continue
        path = {
            "nodes.detail": "/nodes/n1",
            "pods.detail": "/pods/default/p",
            "bulk.bulk": "/changes/bulk",
        }.get(row.endpoint)
        if path is None:
            with client.application.test_request_context():
                from flask import url_for

                path = url_for(row.endpoint)
        page = BeautifulSoup(client.get(path).get_data(as_text=True), "html.parser")
        part = client.get(path, headers={"HX-Request": "true", "HX-Target": row.fragment})
        fragment = BeautifulSoup(part.get_data(as_text=True), "html.parser")
        assert page.find(id=row.fragment) is not None, row.endpoint
        assert fragment.find(id=row.fragment) is not None and fragment.find("html") is None, row.endpoint
        asked += 1
    assert asked >= 6


HEADERS = ("Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options", "Referrer-Policy")


@pytest.mark.parametrize("mode", MODES)
def test_every_routes_answer_carries_the_security_headers_in_every_mode(make_app, cluster, mode):
    """Whatever the route answers (a page, a redirect to sign in, a refusal, a 404 for a name it
    does not know, a file), in every mode."""
    cluster.node("n1", {"example.com/dongle": "2"})
    app = make_app(**MODES[mode])
    web = browser(app)
    missing = {}
    for rule in rules(app):
        row = BY_ENDPOINT[rule.endpoint]
        asked = web.open(url(app, rule), method=row.method, headers={"X-Forwarded-User": "ann"})
        lacking = [h for h in HEADERS if h not in asked.headers]
        if lacking:
            missing[rule.endpoint] = (asked.status_code, lacking)
        asked.close()
    assert missing == {}


# the three ways a user is known, each with a user who may read but not patch nodes/status
AUTH_MODES = {
    "service account": ({"read_only": False}, {}),
    "token": ({"auth_mode": "token"}, {}),
    "proxy headers": (
        {"auth_mode": "impersonate", "trusted_proxies": "127.0.0.1/32"},
        {"X-Forwarded-User": "viewer"},
    ),
}


@pytest.mark.parametrize("mode", AUTH_MODES)
def test_no_write_route_is_taken_from_a_user_without_the_role_in_any_auth_mode(make_app, cluster, mode):
    from tests.web.apiserver import ApiServerStandIn

    cluster.node("n1", {"example.com/dongle": "2"})
    cluster.apiserver = ApiServerStandIn(cluster.objects)  # records any write that reaches it
    cluster.access.denied.add(("patch", "nodes"))  # the viewer role: reads, no node status patch
    settings, headers = AUTH_MODES[mode]
    app = make_app(**settings)
    web = browser(app)
    if mode == "token":
        assert web.post("/login", data={"token": "viewer-token", "next": "/"}).status_code == 303
    form = {"resource": "example.com/dongle", "quantity": "3", "expected": "2", "nodes": "n1", "node": "n1"}
    answered = {}
    for rule in rules(app):
        if BY_ENDPOINT[rule.endpoint].writes:
            answer = web.post(url(app, rule), data=form, headers=headers)
            answered[rule.endpoint] = answer.status_code
            answer.close()
    writes = {r.endpoint for r in ROUTES if r.writes}
    assert set(answered) == writes  # every write route was asked
    assert set(answered.values()) == {403}, answered
    assert cluster.apiserver.patches() == []


@pytest.mark.parametrize("mode", MODES)
def test_the_app_registers_the_pages_the_table_names_for_its_mode_and_no_other(make_app, mode):
    from app.web import routes

    app = make_app(**MODES[mode])
    writes, token = app.config["EXTRES_WRITES"], MODES[mode].get("auth_mode") == "token"
    assert set(app.blueprints) == {p.name for p in routes.registered(writes, token)}


def test_only_the_open_rows_answer_someone_not_signed_in(make_app, cluster):
    """Token mode, nobody signed in: each page answers as its row's ``open`` says, an open one as
    itself, any other by sending to the sign-in: flipping the column on a row changes what its
    route answers. (The one open POST, the sign-in itself, answers a form without a token 401.)"""
    cluster.node("n1", {"example.com/dongle": "2"})
    app = make_app(auth_mode="token")
    web = browser(app)
    answered = {}
    for rule in rules(app):
        if BY_ENDPOINT[rule.endpoint].method != "GET":
            continue
        asked = web.get(url(app, rule))
        to_sign_in = asked.status_code in (302, 303, 401) and "/login" in asked.headers.get(
            "Location", "/login"
        )
        answered[rule.endpoint] = not to_sign_in
        asked.close()
    opened = {r.endpoint for r in ROUTES if r.open and r.method == "GET"}
    assert {e for e, answers in answered.items() if answers} == opened


def test_a_row_that_writes_is_for_editors_or_the_table_does_not_load():
    from app.web import history
    from app.web.surface import Route

    with pytest.raises(ValueError, match=r"history\.index: a route that writes is for editors"):
        Route(history.index, history.bp, "/", writes=True)


def test_the_write_guards_run_where_a_row_says_editors(make_app, cluster, monkeypatch):
    """The guards attach by the ``editors`` column, not by blueprint: marking History's row so
    refuses it to a user who may not patch nodes/status, as a form is; unmarked, it is shown."""
    from dataclasses import replace

    from app.web import history
    from app.web.surface import ROW

    cluster.node("n1", {"example.com/dongle": "2"})
    cluster.access.denied.add(("patch", "nodes"))  # the viewer role
    app = make_app(auth_mode="impersonate", trusted_proxies="127.0.0.1/32")
    web = browser(app)
    viewer = {"X-Forwarded-User": "viewer"}
    assert web.get("/history/", headers=viewer).status_code == 200
    monkeypatch.setattr(history.index, ROW, replace(getattr(history.index, ROW), editors=True))
    refused = web.get("/history/", headers=viewer)
    assert refused.status_code == 403 and "may view but not change" in refused.get_data(as_text=True)
