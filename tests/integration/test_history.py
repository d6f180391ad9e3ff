"""/history: the changes this app made, read back from its Events, filtered by node and resource."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from tests.conftest import eventually
from tests.kube_helpers import create_node

pytestmark = pytest.mark.kube
D, F = "example.com/dongle", "acme.io/fpga"


def history(web, query: str = "") -> list[dict[str, str]]:
    soup = BeautifulSoup(web.get(f"/history/?{query}").get_data(as_text=True), "html.parser")
    return [
        {
            "node": tr["data-node"],
            "resource": tr["data-resource"],
            **{td["data-field"]: td.get_text(strip=True) for td in tr.select("td[data-field]")},
        }
        for tr in soup.select("table.history tbody tr")
    ]


def test_changes_are_listed_with_who_what_and_when(web, core, uid, monkeypatch):
    from app.kube import history as kept

    monkeypatch.setattr(kept, "KEPT_SECONDS", 0.0)
    a, b = f"{uid}-a", f"{uid}-b"
    create_node(core, a, {D: "4"})
    create_node(core, b, {D: "1"})
    eventually(lambda: web.get(f"/nodes/{b}").status_code == 200)
    assert web.post(
        f"/changes/nodes/{a}/resources", data={"resource": D, "quantity": "6", "expected": "4"}
    ).status_code in (200, 303)
    assert web.post(f"/changes/nodes/{b}/resources", data={"resource": F, "quantity": "2"}).status_code in (
        200,
        303,
    )
    mine = eventually(lambda: [r for r in history(web, f"node={uid}") if r["node"] in (a, b)] or None)
    assert len(mine) == 2
    assert mine[0]["node"] == b  # newest first
    by_node = {r["node"]: r for r in mine}
    assert by_node[a]["change"] == "set: 4 → 6" and by_node[a]["resource"] == D
    assert by_node[b]["change"] == "set: absent → 2"
    assert by_node[a]["actor"] == "the dashboard's service account"
    assert [r["node"] for r in history(web, f"node={a}")] == [a]
    assert [r["node"] for r in history(web, f"node={uid}&resource={F}")] == [b]
    page = web.get("/history/").get_data(as_text=True)
    assert "--event-ttl" in page and "extres.audit" in page


def test_a_bad_resource_filter_is_named_and_ignored(web):
    resp = web.get("/history/?resource=dongle")
    assert resp.status_code == 200
    error = BeautifulSoup(resp.get_data(as_text=True), "html.parser").select_one("#resource-error")
    assert "qualified name" in error.get_text() and "Showing every resource" in error.get_text()


def forged_event(core, uid: str, name: str, node: str, message: str, annotations=None, **kw) -> None:
    body = {
        "metadata": {
            "name": f"{uid}-{name}",
            "namespace": "default",
            "labels": {"app.kubernetes.io/managed-by": "extres"},
            "annotations": annotations or {},
        },
        "involvedObject": {"apiVersion": "v1", "kind": "Node", "name": node},
        "reason": "ExtendedResourceChanged",
        "message": message,
        "type": "Normal",
        "source": {"component": "extres"},
        "reportingComponent": "extres",
        "reportingInstance": "forged",
        "firstTimestamp": "2099-01-01T00:00:00Z",
        "lastTimestamp": "2099-01-01T00:00:00Z",
        "count": 1,
    }
    core.create_namespaced_event("default", body, **kw)


def test_only_events_sealed_by_this_app_are_read_and_each_is_dated_by_the_api_server(
    web, core, uid, monkeypatch
):
    """Anyone who may create Events could write one that looks like a change, with this app's
    reporting component, field manager and label: without the app's seal it is left out (and
    counted); a real seal copied onto another message, or a real Event copied, does not add a
    change; a future date claimed in one is not believed."""
    from app.kube import history as kept

    monkeypatch.setattr(kept, "KEPT_SECONDS", 0.0)
    node = f"{uid}-n"
    create_node(core, node, {D: "1"})
    eventually(lambda: web.get(f"/nodes/{node}").status_code == 200)
    assert web.post(
        f"/changes/nodes/{node}/resources", data={"resource": D, "quantity": "2", "expected": "1"}
    ).status_code in (200, 303)
    rows = eventually(lambda: history(web, f"node={node}") or None)
    assert [r["change"] for r in rows] == ["set: 1 → 2"]
    [real] = [
        e
        for e in core.list_namespaced_event("default", field_selector=f"involvedObject.name={node}").items
        if e.reason == "ExtendedResourceChanged"
    ]
    seal = real.metadata.annotations["extres.dev/seal"]
    forged_event(core, uid, "by-hand", node, f"mallory: set {D} 1 -> 99")
    forged_event(core, uid, "as-extres", node, f"mallory: set {D} 1 -> 98", field_manager="extres")
    forged_event(core, uid, "stolen-seal", node, f"mallory: set {D} 1 -> 97", {"extres.dev/seal": seal})
    forged_event(core, uid, "copy", node, real.message, {"extres.dev/seal": seal})
    page = web.get(f"/history/?node={node}").get_data(as_text=True)
    assert [r["change"] for r in history(web, f"node={node}")] == ["set: 1 → 2"]
    assert "2099" not in page
    assert "were not written by it" in page


def test_a_flood_of_events_is_reported_as_an_incomplete_history(web, core, uid, monkeypatch):
    from app.kube import history as kept

    monkeypatch.setattr(kept, "KEPT_SECONDS", 0.0)
    monkeypatch.setattr(kept, "SCANNED", 20)
    monkeypatch.setattr(kept, "PAGE", 10)
    for i in range(25):
        forged_event(core, uid, f"flood-{i}", f"{uid}-n", f"mallory: set {D} 1 -> {i}")
    page = web.get("/history/").get_data(as_text=True)
    assert "Incomplete: the namespace holds more change Events than are read at a time" in page
