"""Viewer and editor roles, identity modes and web security, against the real
kube-apiserver with RBAC on, using the ClusterRoles the Helm chart ships."""

from __future__ import annotations

import logging

import pytest
from bs4 import BeautifulSoup

from app.kube.api.access import Identity
from app.web.process import of as process_of
from tests.helpers import browser, eventually
from tests.kube_helpers import create_node, snapshot

pytestmark = pytest.mark.usefixtures("chart_roles")
D = "example.com/dongle"


@pytest.fixture
def node(core, uid):
    name = f"{uid}-n"
    create_node(core, name, {D: "4"}, labels={"group": uid})
    return name


def mutating_requests(node):
    """Every mutating route, with a valid form."""
    return [
        (f"/changes/nodes/{node}/resources", {"resource": D, "quantity": "5", "expected": "4"}),
        (f"/changes/nodes/{node}/resources/remove", {"resource": D, "expected": "4"}),
        (f"/changes/nodes/{node}/reapply", {}),
        ("/changes/reapply", {}),
        ("/changes/reapply/preview", {}),
        ("/changes/bulk/preview", {"action": "set", "resource": D, "quantity": "5", "nodes": [node]}),
        (
            "/changes/bulk/apply",
            {"action": "set", "resource": D, "quantity": "5", "nodes": [node], f"expected-{node}": "4"},
        ),
    ]


def client_for(make_app, **settings):
    return browser(make_app(**settings))


def set_capacity(web, node, quantity, headers):
    """The node page's Set form, from 4 to ``quantity``."""
    data = {"resource": D, "quantity": quantity, "expected": "4"}
    return web.post(f"/changes/nodes/{node}/resources", data=data, headers=headers)


def wait_for_node(web, node, **kw):
    eventually(lambda: web.get(f"/nodes/{node}", **kw).status_code == 200)


def test_token_mode_viewer_gets_403_everywhere_and_nothing_changes(make_app, core, node):
    web = client_for(make_app, auth_mode="token")
    viewer = {"Authorization": "Bearer viewer-token"}
    wait_for_node(web, node, headers=viewer)
    page = web.get(f"/nodes/{node}", headers=viewer).get_data(as_text=True)
    soup = BeautifulSoup(page, "html.parser")
    assert soup.select_one("#viewer-badge") is not None
    assert not [f for f in soup.select("form") if f.get("method") == "post" and "logout" not in f["action"]]
    before = snapshot(core, node)
    for url, data in mutating_requests(node):
        resp = web.post(url, data=data, headers=viewer)
        assert resp.status_code == 403, url
        assert "may view but not change" in resp.get_data(as_text=True)
    assert snapshot(core, node) == before


def test_token_mode_editor_may_change(make_app, core, node):
    web = client_for(make_app, auth_mode="token")
    editor = {"Authorization": "Bearer editor-token"}
    wait_for_node(web, node, headers=editor)
    html = web.get(f"/nodes/{node}", headers=editor).get_data(as_text=True)
    assert 'action="/changes/nodes/' in html
    assert set_capacity(web, node, "5", editor).status_code == 303
    assert core.read_node(node).status.capacity[D] == "5"


def test_writes_go_out_with_the_users_own_token(make_app, core, node):
    """The API server, not only the app, refuses a viewer's write: the patch carries her token."""
    app = make_app(auth_mode="token")
    with app.app_context():
        cluster = process_of(app).local.cluster
        assert cluster.cache.wait_synced(30)
        viewer = cluster.writer_for(Identity(token="viewer-token", mode="token"))
        outcome = viewer.set(node, D, 5, 4, "viewer")
        assert (outcome.ok, outcome.status) == (False, 403)
        assert "may not do it" in outcome.message and "cannot patch" not in outcome.message  # API text: log
        editor = cluster.writer_for(Identity(token="editor-token", mode="token"))
        assert editor.set(node, D, 5, 4, "editor").ok
    assert core.read_node(node).status.capacity[D] == "5"


def test_token_mode_login_page_keeps_token_in_session(make_app, node):
    web = client_for(make_app, auth_mode="token")
    resp = web.get("/")
    assert resp.status_code == 302 and "/login" in resp.headers["Location"]
    bad = web.post("/login", data={"token": "not-a-token", "next": "/"})
    assert bad.status_code == 401
    assert "did not accept" in bad.get_data(as_text=True)
    ok = web.post("/login", data={"token": "viewer-token", "next": "/"})
    assert ok.status_code == 303
    cookie = ok.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "Secure" in cookie and "SameSite=Strict" in cookie
    assert web.get("/").status_code == 200


def test_impersonation_from_a_trusted_proxy(make_app, core, node):
    web = client_for(make_app, auth_mode="impersonate", trusted_proxies=("127.0.0.1/32",))
    viewer = {"X-Forwarded-User": "alice", "X-Forwarded-Groups": "extres-viewers"}
    editor = {"X-Forwarded-User": "bob", "X-Forwarded-Groups": "staff, extres-editors"}
    wait_for_node(web, node, headers=viewer)
    before = snapshot(core, node)
    for url, data in mutating_requests(node):
        assert web.post(url, data=data, headers=viewer).status_code == 403, url
    assert snapshot(core, node) == before
    assert set_capacity(web, node, "6", editor).status_code == 303
    assert core.read_node(node).status.capacity[D] == "6"
    events = core.list_namespaced_event("default", field_selector=f"involvedObject.name={node}").items
    assert any(e.message.startswith("bob: set") for e in events)


def test_spoofed_identity_headers_from_an_untrusted_address_are_ignored(make_app, core, node, caplog):
    web = client_for(make_app, auth_mode="impersonate", trusted_proxies=("10.0.0.0/24",))
    spoof = {"X-Forwarded-User": "admin", "X-Forwarded-Groups": "extres-editors,system:masters"}
    before = snapshot(core, node)
    with caplog.at_level(logging.WARNING, logger="extres.security"):
        assert web.get("/", headers=spoof).status_code == 401
        resp = web.post(
            f"/changes/nodes/{node}/resources",
            data={"resource": D, "quantity": "9", "expected": "4"},
            headers=spoof,
        )
    assert resp.status_code == 401
    assert "ignored identity headers from untrusted address 127.0.0.1" in caplog.text
    assert snapshot(core, node) == before


def test_writes_without_csrf_token_are_refused(web, core, node):
    wait_for_node(web, node)
    before = snapshot(core, node)
    form = {"resource": D, "quantity": "7", "expected": "4"}
    assert web.post(f"/changes/nodes/{node}/resources", data=form, csrf=False).status_code == 400
    resp = web.post(f"/changes/nodes/{node}/resources", data={**form, "csrf_token": "forged"})
    assert resp.status_code == 400
    assert "CSRF" in resp.get_data(as_text=True)
    assert snapshot(core, node) == before
    # htmx sends the token as a header
    ok = web.post(
        f"/changes/nodes/{node}/resources", data=form, csrf=False, headers={"X-CSRF-Token": web.csrf_for()}
    )
    assert ok.status_code == 303


def test_read_only_mode_has_no_write_route_and_no_form(make_app, core, node):
    web = client_for(make_app, read_only=True)
    wait_for_node(web, node)
    assert "<form" not in web.get(f"/nodes/{node}").get_data(as_text=True).split("<main", 1)[1].replace(
        'role="search"', ""
    )
    before = snapshot(core, node)
    for url, data in mutating_requests(node):
        resp = web.post(url, data=data)  # no write route: every one says changes are off
        assert resp.status_code == 403 and "Changes are turned off here" in resp.get_data(as_text=True), url
    assert snapshot(core, node) == before


def test_oversized_requests_are_refused(web, core, node):
    before = snapshot(core, node)
    resp = web.post(f"/changes/nodes/{node}/resources", data={"resource": D, "quantity": "1" * 100_000})
    assert resp.status_code == 413
    assert snapshot(core, node) == before


def test_no_mutating_get(web, node):
    wait_for_node(web, node)
    for rule in web.application.url_map.iter_rules():
        if rule.endpoint.split(".")[0] in ("changes", "bulk", "reapply") and "GET" in rule.methods:
            assert rule.endpoint in (
                "changes.new",
                "changes.confirm_remove",
                "bulk.bulk",
                "bulk.results",
                "reapply.reapply_preview",  # lists the drifted nodes; its dry runs are a POST
            )
