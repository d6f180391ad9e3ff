"""/history: every change of extended capacity or allocatable on any node, whoever made it, kept
in day ConfigMaps through the real API server (kept across restarts and replicas). kwok runs the
nodes; extres_demo.standin copies capacity to allocatable, the kubelet's step kwok does not take."""

from __future__ import annotations

import json

import pytest
from bs4 import BeautifulSoup

from app.domain.capacity_log import Record
from app.kube.api.capacity_log import CapacityLog
from app.web.process import of as process_of
from tests.helpers import eventually
from tests.kube_helpers import create_node, kubelet_standin

pytestmark = pytest.mark.kube
D, F = "example.com/dongle", "acme.io/fpga"


@pytest.fixture(autouse=True)
def quick(monkeypatch):
    from app.kube.api import capacity_log

    monkeypatch.setattr(capacity_log, "KEPT_SECONDS", 0.2)


def history(web, query: str = "") -> list[dict[str, str]]:
    """The History page's rows: each cell's words, a device plugin's move ("1 GPU back") apart."""
    soup = BeautifulSoup(web.get(f"/history/?{query}").get_data(as_text=True), "html.parser")
    rows = []
    for tr in soup.select("table.history tbody tr"):
        moved = tr.select_one("[data-device-move]")
        move = moved.extract()["data-device-move"] if moved is not None else ""
        rows.append(
            {
                "node": tr["data-node"],
                "resource": tr["data-resource"],
                "field": tr["data-field-name"],
                "move": move,
                **{td["data-field"]: td.get_text(" ", strip=True) for td in tr.select("td[data-field]")},
            }
        )
    return rows


def patch_capacity(core, node: str, resource: str, value: str | None, manager: str) -> None:
    path = f"/status/capacity/{resource.replace('/', '~1')}"
    op = {"op": "remove", "path": path} if value is None else {"op": "add", "path": path, "value": value}
    core.patch_node_status(node, [op], field_manager=manager)


def test_a_change_by_anyone_is_recorded_with_its_field_manager_and_the_dashboards_with_its_user(
    web, core, uid
):
    """kwok's writes of a node's status leave it without ``managedFields`` (a kubelet keeps
    them), so who made a change made by hand may be named by none here; the dashboard's own writes
    name their user and manager either way."""
    a = f"{uid}-a"
    create_node(core, a, {D: "4"})
    eventually(lambda: web.get(f"/nodes/{a}").status_code == 200)
    patch_capacity(core, a, F, "2", "kubectl-patch")  # as `kubectl patch --subresource=status` would
    rows = eventually(lambda: history(web, f"node={a}") or None, timeout=20)
    assert [(r["field"], r["resource"], r["change"]) for r in rows] == [("capacity", F, "absent → 2")]
    assert rows[0]["who"] in ("kubectl-patch", "none named in the node's managedFields")
    kubelet_standin(core, a)  # allocatable follows, written by another manager
    rows = eventually(lambda: (h := history(web, f"node={a}")) and len(h) == 2 and h, timeout=20)
    assert rows[0]["field"] == "allocatable" and rows[0]["change"] == "absent → 2", rows
    # the dashboard's own write: one record (the write's and the watch's sightings merged), with its user
    assert web.post(
        f"/changes/nodes/{a}/resources", data={"resource": D, "quantity": "6", "expected": "4"}
    ).status_code in (200, 303)
    rows = eventually(
        lambda: [r for r in history(web, f"node={a}&resource={D}") if r["field"] == "capacity"] or None,
        timeout=20,
    )
    assert [(r["change"], r["who"]) for r in rows] == [
        ("4 → 6", "the dashboard's service account via extres")
    ]
    csv = web.get(f"/history/export.csv?node={a}").get_data(as_text=True).splitlines()
    assert csv[0] == "when,node,field,resource,before,after,manager,user" and len(csv) == 4


def test_the_history_outlives_the_app_and_two_replicas_write_a_change_once(app, core, uid):
    """Two CapacityLogs (two replicas) see the same change, one of them as its own write (with
    the user), and merge it into one record, which a third (the app after a restart) reads back;
    a record put into the ConfigMap by anyone else (no seal) is left out and counted."""
    from datetime import UTC, datetime

    cluster = process_of(app).local.cluster
    prefix = f"{uid[:40]}-h"
    store, keys, node = f"default/{prefix}", cluster.capacity_log.keys, f"{uid}-n"
    one, two = (CapacityLog(cluster.api, store, keys, timeout=5) for _ in range(2))
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    one._put(Record(now, node, "capacity", D, 1, 2, "extres", "", "77"))  # its watch saw it
    two.own(node, D, 1, 2, "ann", "77")  # the replica that made it knows who
    two.flush()
    one.flush()
    [cm] = [
        c
        for c in core.list_namespaced_config_map("default").items
        if c.metadata.name.startswith(f"{prefix}-")
    ]
    assert len(cm.data) == 2 and cm.data["day"] == now[:10]  # one change, one record, and the day
    forged = json.dumps({"when": now, "node": node, "seal": "0" * 32})
    core.patch_namespaced_config_map(cm.metadata.name, "default", {"data": {"forged": forged}})
    later = CapacityLog(cluster.api, store, keys, timeout=5)  # the app after a restart
    found = later.read()
    assert found.left_out == 1
    assert [(r.user, r.manager, r.before, r.after) for r in found.records] == [("ann", "extres", 1, 2)]
    # a process with another key (not the one that sealed them) writes: every entry stays
    other = CapacityLog(cluster.api, store, ("another key",), timeout=5)
    other.own(node, D, 2, 3, "bob", "78")
    other.flush()
    data = core.read_namespaced_config_map(cm.metadata.name, "default").data
    assert len(data) == 4 and data["forged"] == forged
    rotated = CapacityLog(cluster.api, store, ("another key", *keys), timeout=5)  # the old key kept
    assert sorted(r.user for r in rotated.read().records) == ["ann", "bob"]
    # a second dashboard without any key: records exist, and it says so (it reads none, writes none)
    keyless = CapacityLog(cluster.api, store, (), timeout=5)
    seen = keyless.read()
    assert (seen.records, seen.left_out, keyless.enabled, keyless.writes) == ([], 3, False, False)
    for log in (one, two, later, other, rotated, keyless):
        log.stop()
    core.delete_namespaced_config_map(cm.metadata.name, "default")


def test_a_change_made_just_before_a_graceful_stop_is_in_the_history(control_plane, admin_api, core, uid):
    """The app served as in the container (gunicorn): a change through the dashboard, SIGTERM at
    once (a rolling update, a drain), and its record is in the ConfigMap store when the process
    is gone: the worker writes what waits as it exits."""
    import http.cookiejar
    import re
    import urllib.parse
    import urllib.request

    from tests.serving import Server

    node, prefix = f"{uid}-g", f"{uid[:40]}-s"
    create_node(core, node, {D: "2"})
    server = Server(control_plane, EXTRES_HISTORY_STORE=f"default/{prefix}")
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    try:
        overview = f"{server.url}/?q={node}"  # in the full suite, past the first page of nodes
        eventually(lambda: node in opener.open(overview, timeout=10).read().decode(), timeout=30)
        form = opener.open(f"{server.url}/changes/nodes/{node}/resources/new?resource={D}", timeout=10).read()
        token = re.search(r'name="csrf_token" value="([^"]+)"', form.decode()).group(1)
        change = {"csrf_token": token, "resource": D, "quantity": "3", "expected": "2"}
        with opener.open(
            f"{server.url}/changes/nodes/{node}/resources",
            urllib.parse.urlencode(change).encode(),
            timeout=10,
        ) as resp:
            assert resp.status == 200
        server.stop()  # SIGTERM now, and wait for the exit
    finally:
        server.kill()
    assert core.read_node_status(node).status.capacity[D] == "3"
    later = CapacityLog(
        admin_api, f"default/{prefix}", ("the tests' history key, at least 32 bytes",), timeout=5
    )
    records = [r for r in later.read().records if r.node == node and r.field == "capacity"]
    assert [(r.before, r.after) for r in records] == [(2, 3)], records
    for cm in core.list_namespaced_config_map("default").items:
        if cm.metadata.name.startswith(f"{prefix}-"):
            core.delete_namespaced_config_map(cm.metadata.name, "default")
