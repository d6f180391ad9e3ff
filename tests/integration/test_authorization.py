"""Authorization that holds, against the real kube-apiserver with the chart's own RBAC: each
attack request goes in, a refusal and an unchanged cluster come out."""

from __future__ import annotations

import http.client
import json
import logging

import pytest
from bs4 import BeautifulSoup
from kubernetes import client

from app import create_app
from app.serving import gunicorn_options
from app.settings.config import Settings
from app.web.process import of as process_of
from app.web.security import safe_next
from tests.helpers import browser, eventually, started
from tests.kube_helpers import create_node, create_pod, snapshot
from tests.serving import Server

pytestmark = pytest.mark.usefixtures("chart_roles")
D = "example.com/dongle"
TRUSTED = ("127.0.0.1/32",)


@pytest.fixture
def node(core, uid):
    name = f"{uid}-n"
    create_node(core, name, {D: "4"})
    return name


def writes(node):
    return [
        (f"/changes/nodes/{node}/resources", {"resource": D, "quantity": "5", "expected": "4"}),
        (f"/changes/nodes/{node}/resources/remove", {"resource": D, "expected": "4"}),
        (f"/changes/nodes/{node}/reapply", {}),
        ("/changes/reapply", {"nodes": [node]}),
        ("/changes/bulk/apply", {"action": "set", "resource": D, "quantity": "5", "nodes": [node]}),
    ]


def test_a_token_the_api_server_refuses_is_nobody(make_app, core, node):
    """1. `Bearer garbage` used to count as signed in."""
    web = browser(make_app(auth_mode="token"))
    eventually(
        lambda: web.get(f"/nodes/{node}", headers={"Authorization": "Bearer viewer-token"}).status_code == 200
    )
    garbage = {"Authorization": "Bearer garbage"}
    before = snapshot(core, node)
    for path in ("/", "/pending/", "/export.json", "/export.csv", f"/nodes/{node}"):
        resp = web.get(path, headers=garbage)
        assert resp.status_code == 401, path
        body = resp.get_data(as_text=True)
        assert node not in body and "pending-badge" not in body, path
    for url, data in writes(node):
        assert web.post(url, data=data, headers=garbage).status_code == 401, url
    assert snapshot(core, node) == before
    # a refused token is remembered briefly, a good one is still good
    assert web.get("/", headers=garbage).status_code == 401
    assert web.get("/", headers={"Authorization": "Bearer viewer-token"}).status_code == 200


def test_default_service_account_install_changes_nothing(control_plane, core, node):
    """2. Writes as the service account serve anyone who reaches the dashboard: off by default."""
    assert Settings.from_env({}).read_only is True
    app = started(create_app({"kubeconfig": str(control_plane.kubeconfig), "in_cluster": "false"}))
    try:
        web = browser(app)
        eventually(lambda: web.get(f"/nodes/{node}").status_code == 200)
        before = snapshot(core, node)
        for url, data in writes(node):
            resp = web.post(url, data=data)  # no write route: every one says changes are off
            assert resp.status_code == 403 and "Changes are turned off here" in resp.get_data(as_text=True), (
                url
            )
        assert snapshot(core, node) == before
        assert 'action="/changes' not in web.get(f"/nodes/{node}").get_data(as_text=True)
    finally:
        process_of(app).local.stop()


def test_never_acts_as_a_system_user_or_group(make_app, core, node):
    """3. Even from the trusted proxy, system: identities are refused before any API call."""
    web = browser(make_app(auth_mode="impersonate", trusted_proxies=TRUSTED))
    before = snapshot(core, node)
    for headers in (
        {"X-Forwarded-User": "system:admin"},
        {"X-Forwarded-User": "bob", "X-Forwarded-Groups": "extres-editors,system:masters"},
    ):
        assert web.get("/", headers=headers).status_code == 400
        resp = web.post(f"/changes/nodes/{node}/resources", data=writes(node)[0][1], headers=headers)
        assert resp.status_code == 400
    assert snapshot(core, node) == before


def test_reads_follow_the_users_own_rbac(make_app, core, node):
    """4. A header user with no rights used to see every node, pod and quota."""
    web = browser(make_app(auth_mode="impersonate", trusted_proxies=TRUSTED))
    mallory = {"X-Forwarded-User": "mallory"}
    alice = {"X-Forwarded-User": "alice", "X-Forwarded-Groups": "extres-viewers"}
    eventually(lambda: web.get(f"/nodes/{node}", headers=alice).status_code == 200)
    for path in ("/", "/pending/", "/export.json", f"/nodes/{node}", "/changes/bulk"):
        resp = web.get(path, headers=mallory)
        assert resp.status_code == 403, path
        body = resp.get_data(as_text=True)
        assert node not in body and "pending-badge" not in body, path
        assert "mallory may not list nodes" in body
    assert web.get("/export.json", headers=alice).status_code == 200
    # a pod's panel reads the pod and its Events: the chart's viewer role grants both
    create_pod(core, f"{node}-p", node, {D: "1"})
    panel = f"/pods/default/{node}-p"
    eventually(lambda: web.get(panel, headers=alice).status_code == 200)
    assert "could not be read" not in web.get(panel, headers=alice).get_data(as_text=True)
    assert web.get(panel, headers=mallory).status_code == 403


def test_a_session_whose_token_is_refused_now_is_dropped(make_app, core, admin_api, uid):
    """4. A token whose ServiceAccount was deleted used to keep working."""
    name = f"sa-{uid}"[:50]
    core.create_namespaced_service_account("default", {"metadata": {"name": name}})
    rbac = client.RbacAuthorizationV1Api(admin_api)
    rbac.create_cluster_role_binding(
        {
            "metadata": {"name": name},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "extres-viewer",
            },
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": "default"}],
        }
    )
    token = core.create_namespaced_service_account_token(
        name, "default", {"spec": {"audiences": [], "expirationSeconds": 3600}}
    ).status.token
    app = make_app(auth_mode="token")
    web = browser(app)
    assert web.post("/login", data={"token": token, "next": "/"}).status_code == 303
    assert web.get("/").status_code == 200
    process_of(app).local.cluster.access.accepted_ttl = 0.0  # ask the API server on every request
    core.delete_namespaced_service_account(name, "default")
    resp = eventually(lambda: (r := web.get("/")).status_code == 302 and r)
    assert "/login" in resp.headers["Location"]
    with web.session_transaction(base_url="https://localhost") as session:
        assert "token" not in session
    rbac.delete_cluster_role_binding(name)


@pytest.mark.parametrize(
    "target",
    [
        "/%09/evil.example",
        "/\t/evil.example",
        "//evil.example",
        "/\\evil.example",
        "https://evil.example/",
        "/%2F/evil.example",
        "/%5Cevil.example",
        " /x",
        "/x\n/y",
        "javascript:alert(1)",
    ],
)
def test_sign_in_goes_only_to_a_path_on_this_site(make_app, target):
    """5. `next=/%09/evil.example` used to yield `Location: //evil.example`."""
    assert safe_next(target) == "/"
    web = browser(make_app(auth_mode="token"))
    form = BeautifulSoup(
        web.get("/login", query_string={"next": target}).get_data(as_text=True), "html.parser"
    )
    assert form.select_one('input[name="next"]')["value"] == "/"
    resp = web.post("/login", data={"token": "viewer-token", "next": target})
    assert resp.status_code == 303
    assert resp.headers["Location"] == "/"


def test_sign_in_keeps_a_path_on_this_site(make_app):
    web = browser(make_app(auth_mode="token"))
    resp = web.post("/login", data={"token": "viewer-token", "next": "/pending/?resource=a.io%2Fb"})
    assert resp.headers["Location"] == "/pending/?resource=a.io%2Fb"


def raw_get(server, headers):
    """A GET with headers exactly as given (repeats included), through gunicorn."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.putrequest("GET", "/")
    for name, value in headers:
        conn.putheader(name, value)
    conn.endheaders()
    resp = conn.getresponse()
    body = resp.read().decode()
    conn.close()
    return resp.status, body


def test_an_identity_header_sent_twice_is_refused(control_plane, make_app, core, node):
    """6. Duplicate X-Forwarded-Groups headers used to be merged (WSGI joins them into one)."""
    server = Server(control_plane, EXTRES_AUTH_MODE="impersonate", EXTRES_TRUSTED_PROXIES="127.0.0.1/32")
    try:
        alice = [("X-Forwarded-User", "alice"), ("X-Forwarded-Groups", "extres-viewers")]
        assert eventually(lambda: raw_get(server, alice)[0] == 200)
        status, body = raw_get(server, [*alice, ("X-Forwarded-Groups", "extres-editors")])
        assert status == 400 and "more than once" in body
        status, _ = raw_get(server, [*alice, ("X-Forwarded-User", "bob")])
        assert status == 400
    finally:
        server.stop()
    # a server that merged two user headers into one value: refused too
    web = browser(make_app(auth_mode="impersonate", trusted_proxies=TRUSTED))
    before = snapshot(core, node)
    merged = {"X-Forwarded-User": "alice,bob", "X-Forwarded-Groups": "extres-editors"}
    assert web.get("/", headers=merged).status_code == 400
    data = {**writes(node)[0][1], "csrf_token": "x"}
    assert web.post(f"/changes/nodes/{node}/resources", data=data, headers=merged).status_code == 400
    assert snapshot(core, node) == before


def test_csrf_is_bound_to_the_identity_and_the_origin(make_app, core, node):
    """7. A CSRF token from another identity, another site's Origin: refused, nothing changed."""
    web = browser(make_app(auth_mode="token"))
    editor = {"Authorization": "Bearer editor-token"}
    eventually(lambda: web.get(f"/nodes/{node}", headers=editor).status_code == 200)
    before = snapshot(core, node)
    form = writes(node)[0][1]
    viewers_token = web.csrf_for({"Authorization": "Bearer viewer-token"})
    resp = web.post(
        f"/changes/nodes/{node}/resources", data={**form, "csrf_token": viewers_token}, headers=editor
    )
    assert resp.status_code == 400
    for hostile in ({"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"}):
        resp = web.post(f"/changes/nodes/{node}/resources", data=form, headers={**editor, **hostile})
        assert resp.status_code == 403
        assert "another site" in resp.get_data(as_text=True)
    assert snapshot(core, node) == before
    same = {**editor, "Origin": "https://localhost", "Sec-Fetch-Site": "same-origin"}
    assert web.post(f"/changes/nodes/{node}/resources", data=form, headers=same).status_code == 303
    cookie = (
        web.get("/login").headers.get("Set-Cookie", "")
        or web.post("/login", data={"token": "viewer-token", "next": "/"}).headers["Set-Cookie"]
    )
    assert cookie.startswith("__Host-extres_session=") and "Secure" in cookie and "Path=/" in cookie
    assert "Domain" not in cookie


def test_reapply_checks_the_annotation_like_a_form(web, core, node):
    """8. A desired-state annotation with `cpu: 999` used to be written back as it was."""
    desired = json.dumps({"cpu": "999", D: "99999999", "acme.io/fpga": "2"})
    core.patch_node(node, {"metadata": {"annotations": {"extres.dev/desired-capacity": desired}}})
    eventually(
        lambda: getattr(process_of(web.application).local.cluster.store.objects.node(node), "desired", None)
    )
    before = snapshot(core, node)
    job = web.post("/changes/reapply/preview").headers["Location"]  # dry runs, as a job
    page = eventually(lambda: (h := web.get(job).get_data(as_text=True)) and 'data-done="true"' in h and h)
    rows = BeautifulSoup(page, "html.parser").select(f'table.outcomes tr[data-node="{node}"]')
    text = " ".join(r.get_text(" ", strip=True) for r in rows)
    assert "cpu=999, which is refused" in text and f"{D}=99999999, which is refused" in text
    assert snapshot(core, node) == before  # the preview is a dry run
    resp = web.post(f"/changes/nodes/{node}/reapply")
    assert resp.status_code == 303
    after = core.read_node(node).status.capacity
    assert after["cpu"] == before[1]["cpu"] and after[D] == "4"
    assert after["acme.io/fpga"] == "2"  # the valid entry is re-applied


def test_nothing_leaks_to_unknown_users_and_odd_queries_do_not_fail(make_app, node, caplog):
    """9. The pending badge, /metrics, query keys reaching url_for, and the rest of the list."""
    web = browser(make_app(auth_mode="impersonate", trusted_proxies=TRUSTED))
    alice = {"X-Forwarded-User": "alice", "X-Forwarded-Groups": "extres-viewers"}
    unknown = web.get("/")
    assert unknown.status_code == 401
    html = unknown.get_data(as_text=True)
    assert "pending-badge" not in html and "Pending" not in html and node not in html
    assert web.get("/metrics", headers=alice).status_code == 404  # served on its own port only
    for query in ("endpoint=x", "endpoint=x&page=2", "_external=1", "_scheme=javascript", "_anchor=x"):
        resp = web.get(f"/?{query}", headers=alice)
        assert resp.status_code == 200, query
        assert "javascript" not in resp.get_data(as_text=True).split("<main", 1)[1]
    page = web.get("/", headers=alice)
    assert '"historyCacheSize": 0' in page.get_data(as_text=True)
    assert page.headers["Strict-Transport-Security"].startswith("max-age=")
    assert gunicorn_options(Settings())["control_socket_disable"] is True
    # refused writes are audited with the person and the client address
    with caplog.at_level(logging.INFO, logger="extres.audit"):
        web.post(f"/changes/nodes/{node}/resources", data=writes(node)[0][1], headers=alice)
    [line] = [r.audit for r in caplog.records if r.name == "extres.audit"]
    assert (line["outcome"], line["user"], line["client"], line["status"]) == (
        "refused",
        "alice",
        "127.0.0.1",
        403,
    )
