"""Three control planes from kube-testenv (etcd and kube-apiserver each, every request audited):
this dashboard's own cluster ``a`` and two members read from kubeconfig files, ``b`` whose
account reads everything and ``c`` whose account may not list pods. Each is reached with a
service-account token of its own. The fleet page shows a and b side by side, c as "no access", a
fourth kubeconfig refused as "refused"; b stopped mid-test reads "unreachable since", its last
figures kept and left out of the totals, and restarted reads live again with what changed
meanwhile.
Each API server's audit log then shows that every request the dashboard sent it carried that
cluster's own account, and none was refused as unauthenticated: no token crossed clusters."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from bs4 import BeautifulSoup
from kubernetes import client

from app import create_app
from app.base import workers
from app.runtime import reads
from app.web.process import of as process_of
from extres_demo import testenv
from tests.helpers import browser
from tests.kube_helpers import create_node

D = "fleet.example.com/dongle"
READ_ALL = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}]
NO_PODS = [
    {"apiGroups": [""], "resources": ["nodes", "namespaces", "resourcequotas", "limitranges"],
     "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["resource.k8s.io", "node.k8s.io", "scheduling.k8s.io"], "resources": ["*"],
     "verbs": ["get", "list", "watch"]},
]  # fmt: skip


def admin(plane: testenv.ControlPlane) -> client.ApiClient:
    conf = client.Configuration()
    conf.host = plane.server
    conf.ssl_ca_cert = str(plane.state_dir / "certs" / "apiserver.crt")
    conf.api_key = {"authorization": "Bearer admin-token"}
    return client.ApiClient(conf)


def account(plane: testenv.ControlPlane, name: str, rules: list[dict[str, Any]]) -> str:
    """A service account ``name`` with ``rules`` cluster-wide; its token (TokenRequest)."""
    api = admin(plane)
    core, rbac = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api)
    core.create_namespaced_service_account("default", {"metadata": {"name": name}})
    rbac.create_cluster_role({"metadata": {"name": name}, "rules": rules})
    rbac.create_cluster_role_binding(
        {
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": "default"}],
        }
    )
    asked = core.create_namespaced_service_account_token(
        name, "default", {"spec": {"expirationSeconds": 3600}}
    )
    return str(asked.status.token)


def node(plane: testenv.ControlPlane, name: str, dongles: int) -> None:
    """A node advertising ``dongles`` (no kubelet here: its status is written as one would)."""
    create_node(client.CoreV1Api(admin(plane)), name, {D: str(dongles)})


def kubeconfig(plane: testenv.ControlPlane, token: str, host: str = "127.0.0.1") -> str:
    """``host``: "localhost" names the server by DNS: the dashboard pins it to the address it
    checked, and checks the certificate against the name its kubeconfig gives for TLS
    ("kubernetes": the test bed's self-signed certificate does not name localhost)."""
    ca = base64.b64encode((plane.state_dir / "certs" / "apiserver.crt").read_bytes()).decode()
    server = plane.server.replace("127.0.0.1", host)
    tls = {"tls-server-name": "kubernetes"} if host != "127.0.0.1" else {}
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": "x", "cluster": {"server": server, "certificate-authority-data": ca, **tls}}
            ],
            "users": [{"name": "x", "user": {"token": token}}],
            "contexts": [{"name": "x", "context": {"cluster": "x", "user": "x"}}],
            "current-context": "x",
        }
    )


def dashboard_of_a(
    plane: testenv.ControlPlane, token: str, tmp_path: Any, members: dict[str, str], **settings: Any
) -> Any:
    """A dashboard of cluster a (reached with ``token``), the ``members``' kubeconfigs in a folder
    (name: text), its history kept nowhere unless ``settings`` say otherwise."""
    local = tmp_path / "kubeconfig-a"
    local.write_text(kubeconfig(plane, token))
    config = {"kubeconfig": str(local), "in_cluster": "false", "cluster_name": "a", "clusters_loopback": True,
              "history_store": "off", "selector_evaluator": "in-process", **settings}  # fmt: skip
    if members:
        folder = tmp_path / "members"
        folder.mkdir()
        for name, text in members.items():
            (folder / name).write_text(text)
        config["clusters_dir"] = str(folder)
    return create_app(config)


def a_and_b(planes: dict[str, testenv.ControlPlane], a_rules: list[dict[str, Any]]) -> dict[str, str]:
    """The dashboard's accounts (``a_rules`` on a, reading everything on b) and a node each (a1
    with 4 dongles, b1 with 8); the accounts' tokens."""
    node(planes["a"], "a1", 4)
    node(planes["b"], "b1", 8)
    return {"a": account(planes["a"], "extres-a", a_rules), "b": account(planes["b"], "extres-b", READ_ALL)}


def audited(plane: testenv.ControlPlane) -> list[dict[str, Any]]:
    lines = (plane.state_dir / "audit.log").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def audited_planes(tmp_path_factory, names: str) -> Iterator[dict[str, testenv.ControlPlane]]:
    """A bare control plane per name (etcd and kube-apiserver), every request audited."""
    started = []
    try:
        for name in names:
            started.append(testenv.start(tmp_path_factory.mktemp(f"plane-{name}"), bare=True, audit=True))
        yield dict(zip(names, started, strict=True))
    finally:
        for plane in started:
            plane.stop(now=True)


@pytest.fixture
def planes(tmp_path_factory):
    yield from audited_planes(tmp_path_factory, "abc")


def page(web, path: str) -> BeautifulSoup:
    resp = web.get(path)
    assert resp.status_code == 200, resp.get_data(as_text=True)[:500]
    return BeautifulSoup(resp.get_data(as_text=True), "html.parser")


def figures(soup: BeautifulSoup, cluster: str) -> dict[str, str] | None:
    row = soup.select_one(f'tr[data-cluster="{cluster}"][data-resource="{D}"]')
    return (
        None
        if row is None
        else {td["data-field"]: td.get_text(strip=True) for td in row.select("td[data-field]")}
    )


def test_three_clusters_side_by_side_one_stopped_one_without_access_no_token_crossing(planes, tmp_path):
    tokens = {
        "a": account(planes["a"], "extres-a", READ_ALL),
        "b": account(planes["b"], "extres-b", READ_ALL),
        "c": account(planes["c"], "extres-c", NO_PODS),
    }
    node(planes["a"], "a1", 4)
    node(planes["b"], "b1", 8)
    node(planes["b"], "b2", 8)
    node(planes["c"], "c1", 2)
    app = dashboard_of_a(
        planes["a"],
        tokens["a"],
        tmp_path,
        {
            "b": kubeconfig(planes["b"], tokens["b"]),
            "c": kubeconfig(planes["c"], tokens["c"], host="localhost"),
            # refused as read: an exec plugin (never run here)
            "d": kubeconfig(planes["b"], tokens["b"]).replace('"user": {"token"', '"user": {"exec": {}, "x"'),
        },
    )
    fleet = process_of(app).fleet
    try:
        assert sorted(fleet.members) == ["b", "c"] and [r.cluster for r in fleet.refused] == ["d"]
        assert fleet.members["c"].member.pinned == "127.0.0.1"  # localhost, pinned; TLS checks the name
        fleet.start()
        assert workers.until(
            lambda: (
                reads.freshness(fleet.local).synced
                and reads.freshness(fleet.members["b"]).synced
                and reads.freshness(fleet.members["c"]).forbidden
            ),
            60,
        )
        web = app.test_client()
        soup = page(web, "/fleet/")
        states = {tr["data-cluster"]: tr["data-state"] for tr in soup.select("table.clusters tbody tr")}
        assert states == {"a": "live", "b": "live", "c": "no access", "d": "refused"}, soup.select_one(
            "table.clusters"
        ).get_text()
        assert figures(soup, "a")["allocatable"] == "4" and figures(soup, "b")["allocatable"] == "16"
        assert figures(soup, "c") is None  # no access: no row of zeros
        total = soup.select_one(f'tr[data-total="{D}"]')
        assert total.select_one('[data-field="allocatable"]').get_text(strip=True) == "20"
        b_page = page(web, "/c/b/")
        assert [tr["data-node"] for tr in b_page.select("#grid tbody tr[data-node]")] == ["b1", "b2"]

        planes["b"].down("apiserver")  # b stops answering mid-test

        def b_unreachable() -> bool:
            row = page(web, "/fleet/").select_one('table.clusters tr[data-cluster="b"]')
            return row is not None and row["data-state"] == "unreachable"

        assert workers.until(b_unreachable, 60, interval=0.5)
        soup = page(web, "/fleet/")
        said = soup.select_one('table.clusters tr[data-cluster="b"]').get_text()
        assert "unreachable since" in said and "figures from then" in said
        assert figures(soup, "b")["allocatable"] == "16"  # its last figures, kept
        assert soup.select_one(f'tr[data-cluster="b"][data-resource="{D}"]').has_attr("data-left-out")
        total = soup.select_one(f'tr[data-total="{D}"]')
        assert total.select_one('[data-field="allocatable"]').get_text(strip=True) == "4"  # a alone

        planes["b"].up("apiserver")  # b restarted: live again, and what changed meanwhile is read
        node(planes["b"], "b3", 8)

        def b_live_again() -> bool:
            soup = page(web, "/fleet/")
            row = soup.select_one('table.clusters tr[data-cluster="b"]')
            return (
                row is not None and row["data-state"] == "live" and figures(soup, "b")["allocatable"] == "24"
            )

        assert workers.until(b_live_again, 90, interval=0.5)
        total = page(web, "/fleet/").select_one(f'tr[data-total="{D}"]')
        assert total.select_one('[data-field="allocatable"]').get_text(strip=True) == "28"  # a and b again
    finally:
        fleet.stop()
    for name, plane in planes.items():
        events = audited(plane)
        users = {e.get("user", {}).get("username") for e in events}
        assert f"system:serviceaccount:default:extres-{name}" in users, name  # the dashboard was there
        # the test's own admin, the API server's own loopback client, and that cluster's account
        assert users <= {"admin", "system:apiserver", f"system:serviceaccount:default:extres-{name}"}, users
        refused = [e for e in events if e.get("responseStatus", {}).get("code") == 401]
        assert refused == [], (name, refused[:3])  # no foreign token was ever offered


REVIEWS = [
    {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
    {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
]


@pytest.fixture
def two_planes(tmp_path_factory):
    yield from audited_planes(tmp_path_factory, "ab")


def test_token_mode_signs_in_per_cluster_each_token_reaching_its_own_api_server_alone(two_planes, tmp_path):
    """Token mode over two control planes: ann signs in to a with a's token and to b with b's
    (each checked by a TokenReview of that cluster's own account); each page reads its own
    cluster. The API servers log every TokenReview's body: a's token was reviewed at a alone,
    b's at b alone, and neither API server saw the other's users or refused a token."""
    planes = two_planes
    dashboard = {name: account(planes[name], f"extres-{name}", READ_ALL + REVIEWS) for name in "ab"}
    ann = {name: account(planes[name], f"ann-{name}", READ_ALL) for name in "ab"}
    node(planes["a"], "a1", 4)
    node(planes["b"], "b1", 8)
    app = dashboard_of_a(
        planes["a"],
        dashboard["a"],
        tmp_path,
        {"b": kubeconfig(planes["b"], dashboard["b"])},
        auth_mode="token",
    )
    fleet = process_of(app).fleet
    try:
        fleet.start()
        assert workers.until(
            lambda: reads.freshness(fleet.local).synced and reads.freshness(fleet.members["b"]).synced, 60
        )
        web = browser(app)
        assert web.post("/login", data={"token": ann["a"], "next": "/"}).status_code == 303
        assert web.get("/c/b/").status_code == 302  # a's sign-in opens nothing on b
        assert web.post("/c/b/login", data={"token": ann["b"], "next": "/c/b/"}).status_code == 303
        a_page, b_page = page(web, "/"), page(web, "/c/b/")
        assert [tr["data-node"] for tr in a_page.select("#grid tbody tr[data-node]")] == ["a1"]
        assert [tr["data-node"] for tr in b_page.select("#grid tbody tr[data-node]")] == ["b1"]
        soup = page(web, "/fleet/")
        states = {tr["data-cluster"]: tr["data-state"] for tr in soup.select("table.clusters tbody tr")}
        assert states == {"a": "live", "b": "not shown"}
        assert figures(page(web, "/c/b/fleet/"), "b")["allocatable"] == "8"
    finally:
        fleet.stop()
    for name, other in (("a", "b"), ("b", "a")):
        log = (planes[name].state_dir / "audit.log").read_text()
        assert ann[name] in log and ann[other] not in log, name  # reviewed here; the other's never seen
        events = audited(planes[name])
        users = {e.get("user", {}).get("username") for e in events}
        assert f"system:serviceaccount:default:extres-{name}" in users, name
        assert not any(u and u.endswith(f"-{other}") for u in users), (name, users)
        refused = [e for e in events if e.get("responseStatus", {}).get("code") == 401]
        assert refused == [], (name, refused[:3])


def test_members_from_labelled_secrets_follow_them_and_no_other_secret_is_read(two_planes, tmp_path):
    """EXTRES_CLUSTERS_NAMESPACE: b's kubeconfig in a labelled Secret of a's namespace
    extres-clusters (the chart's Role: list Secrets there, nothing else) is a member; its
    kubeconfig changed is read again (b's runtime replaced), the Secret deleted ends b. a's audit
    log shows every Secret request the dashboard made was that labelled list."""
    planes = two_planes
    pods = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]
    dashboard = a_and_b(planes, NO_PODS + pods)
    core = client.CoreV1Api(admin(planes["a"]))
    core.create_namespace({"metadata": {"name": "extres-clusters"}})
    rbac = client.RbacAuthorizationV1Api(admin(planes["a"]))
    rbac.create_namespaced_role(
        "extres-clusters",
        {
            "metadata": {"name": "members"},
            "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}],
        },
    )
    rbac.create_namespaced_role_binding(
        "extres-clusters",
        {
            "metadata": {"name": "members"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "members"},
            "subjects": [{"kind": "ServiceAccount", "name": "extres-a", "namespace": "default"}],
        },
    )
    label = {"extres.dev/secret-type": "cluster"}

    def secret(name: str, data: dict[str, str], labels: dict[str, str]) -> dict[str, Any]:
        return {"metadata": {"name": name, "labels": labels}, "stringData": data}

    core.create_namespaced_secret(
        "extres-clusters",
        secret("member-b", {"name": "b", "kubeconfig": kubeconfig(planes["b"], dashboard["b"])}, label),
    )
    core.create_namespaced_secret("extres-clusters", secret("unrelated", {"password": "hunter2"}, {}))
    app = dashboard_of_a(planes["a"], dashboard["a"], tmp_path, {}, clusters_namespace="extres-clusters")
    fleet = process_of(app).fleet
    try:
        assert fleet.members == {}
        fleet.start()  # the Secrets are read once the local cluster is connected
        assert sorted(fleet.members) == ["b"] and fleet.refused == []
        first = fleet.members["b"]
        assert workers.until(lambda: reads.freshness(first).synced, 60)
        web = app.test_client()
        assert figures(page(web, "/fleet/"), "b")["allocatable"] == "8"
        changed = kubeconfig(planes["b"], dashboard["b"], host="localhost")
        core.patch_namespaced_secret("member-b", "extres-clusters", {"stringData": {"kubeconfig": changed}})
        fleet.sync()
        assert fleet.members["b"] is not first and fleet.members["b"].member.pinned == "127.0.0.1"
        assert workers.until(lambda: reads.freshness(fleet.members["b"]).synced, 60)
        assert figures(page(web, "/fleet/"), "b")["allocatable"] == "8"
        core.delete_namespaced_secret("member-b", "extres-clusters")
        fleet.sync()
        assert fleet.members == {}
        assert page(web, "/fleet/").select_one('table.clusters tr[data-cluster="b"]') is None
        assert web.get("/c/b/").status_code == 404
    finally:
        fleet.stop()
    asked = [
        e
        for e in audited(planes["a"])
        if e.get("objectRef", {}).get("resource") == "secrets"
        and e.get("user", {}).get("username") == "system:serviceaccount:default:extres-a"
    ]
    assert len(asked) >= 3  # at the start and at each sync
    for event in asked:
        assert event["verb"] == "list" and event["objectRef"]["namespace"] == "extres-clusters", event
        query = parse_qs(urlsplit(event["requestURI"]).query)
        assert query["labelSelector"] == ["extres.dev/secret-type=cluster"], event["requestURI"]
        assert event["responseStatus"]["code"] == 200


def test_a_members_capacity_history_is_kept_in_the_dashboards_own_cluster(two_planes, tmp_path, monkeypatch):
    """b's account may only read b. A GPU lost on b (8 -> 7, written on b's node status as a device
    plugin's kubelet would) is recorded in a's history store, named by b: b's history page shows
    it, a's does not, and a's ConfigMap holds it sealed with b's name."""
    from app.kube.api import capacity_log

    monkeypatch.setattr(capacity_log, "KEPT_SECONDS", 0.2)
    planes = two_planes
    history = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "update"]}]
    dashboard = a_and_b(planes, READ_ALL + history)
    a_core = client.CoreV1Api(admin(planes["a"]))
    for index in range(32):  # the day stores, as the chart makes them
        a_core.create_namespaced_config_map("default", {"metadata": {"name": f"extres-history-{index:02d}"}})
    app = dashboard_of_a(
        planes["a"],
        dashboard["a"],
        tmp_path,
        {"b": kubeconfig(planes["b"], dashboard["b"])},
        history_key="the fleet test's history key, 32 bytes or more",
        history_store="",
    )
    fleet = process_of(app).fleet
    try:
        fleet.start()
        assert workers.until(lambda: reads.freshness(fleet.members["b"]).synced, 60)
        b_core = client.CoreV1Api(admin(planes["b"]))
        path = f"/status/capacity/{D.replace('/', '~1')}"
        b_core.patch_node_status("b1", [{"op": "replace", "path": path, "value": "7"}])
        web = app.test_client()

        def rows(prefix: str) -> list[tuple[str, str]]:
            soup = page(web, f"{prefix}/history/")
            return [(tr["data-node"], tr.select_one('[data-field="change"]').get_text(" ", strip=True))
                    for tr in soup.select("table.history tbody tr")]  # fmt: skip

        assert workers.until(lambda: rows("/c/b") == [("b1", "8 → 7")], 30, interval=0.3), rows("/c/b")
        assert rows("") == []  # a's own history holds none of b's

        def stored() -> list[tuple[str, str, int, int]]:
            return [
                (r["cluster"], r["node"], r["before"], r["after"])
                for cm in a_core.list_namespaced_config_map("default").items
                if cm.metadata.name.startswith("extres-history-")
                for key, text in (cm.data or {}).items()
                if key != "day" and (r := json.loads(text))
            ]

        assert workers.until(lambda: stored() == [("b", "b1", 8, 7)], 20, interval=0.3), stored()
    finally:
        fleet.stop()
