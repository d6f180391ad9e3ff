"""Adding, changing and removing extended resources, against the real kube-apiserver."""

from __future__ import annotations

import json

import pytest
from bs4 import BeautifulSoup
from kubernetes import client

from app.domain import changes
from app.kube.api.access import Identity
from app.kube.api.errors import Conflict, translate
from app.web.process import of as process_of
from tests.helpers import eventually
from tests.kube_helpers import create_node, create_pod, grid_cells, ready

D, F = "example.com/dongle", "acme.io/fpga"


def capacity(core, name):
    return core.read_node_status(name).status.capacity


def desired(core, name):
    annotations = core.read_node(name).metadata.annotations or {}
    return json.loads(annotations.get(changes.DESIRED_ANNOTATION, "{}"))


def events(core, name):
    return [
        e
        for e in core.list_namespaced_event("default", field_selector=f"involvedObject.name={name}").items
        if e.reason == "ExtendedResourceChanged"
    ]


def finished(web, location):
    """A bulk change's page once every node has an outcome (it runs in the background)."""

    def done():
        soup = BeautifulSoup(web.get(location).get_data(as_text=True), "html.parser")
        return soup if soup.select_one("#job")["data-done"] == "true" else None

    return eventually(done, timeout=60)


def text(resp):
    return BeautifulSoup(resp.get_data(as_text=True), "html.parser").get_text(" ", strip=True)


def test_add_a_resource_to_one_node(web, core, node):
    resp = web.post(f"/changes/nodes/{node}/resources", data={"resource": F, "quantity": "2", "expected": ""})
    assert resp.status_code == 303
    assert resp.headers["Location"].endswith(f"/nodes/{node}")
    assert capacity(core, node)[F] == "2"
    assert capacity(core, node)[D] == "4"
    assert desired(core, node) == {F: "2"}
    [event] = events(core, node)
    assert f"set {F} absent → 2" in event.message
    assert event.involved_object.kind == "Node"
    managers = {m.manager for m in core.read_node(node).metadata.managed_fields or []}
    assert "extres" in managers
    page = web.get(f"/nodes/{node}", follow_redirects=True)
    assert f"changed {F} absent → 2" in text(page)


def test_change_a_quantity(web, core, node):
    resp = web.post(
        f"/changes/nodes/{node}/resources", data={"resource": D, "quantity": "6", "expected": "4"}
    )
    assert resp.status_code == 303
    assert capacity(core, node)[D] == "6"
    assert desired(core, node) == {D: "6"}
    assert f"set {D} 4 → 6" in events(core, node)[0].message
    eventually(
        lambda: grid_cells(web.get(f"/?q={node}").get_data(as_text=True))[(node, D, "capacity")] == "6"
    )


def test_remove_shows_impact_then_removes(web, core, node, uid):
    create_pod(core, f"{uid}-user", node, {D: "1"})
    web.post(f"/changes/nodes/{node}/resources", data={"resource": D, "quantity": "4", "expected": "4"})
    assert desired(core, node) == {D: "4"}

    def confirmation():
        page = text(web.get(f"/changes/nodes/{node}/resources/remove?resource={D}"))
        assert f"default/{uid}-user" in page
        return page

    page = eventually(confirmation)
    assert "Running pods are not evicted" in page
    resp = web.post(f"/changes/nodes/{node}/resources/remove", data={"resource": D, "expected": "4"})
    assert resp.status_code == 303
    assert D not in capacity(core, node)
    assert desired(core, node) == {}
    assert any(f"remove {D} 4 → absent" in e.message for e in events(core, node))


def test_concurrent_change_is_refused_not_overwritten(web, core, node):
    # someone else changes the node after the page was loaded with 4
    core.patch_node_status(node, [{"op": "replace", "path": changes.capacity_path(D), "value": "5"}])
    resp = web.post(
        f"/changes/nodes/{node}/resources", data={"resource": D, "quantity": "8", "expected": "4"}
    )
    assert resp.status_code == 409
    assert "changed since you loaded it" in text(resp)
    assert "you saw 4, it is now 5" in text(resp)
    assert capacity(core, node)[D] == "5"
    assert events(core, node) == []
    # the typed values are kept, with what is there now as the expected value: Save again applies
    form = BeautifulSoup(resp.get_data(as_text=True), "html.parser").select_one("form.change")
    kept = {i["name"]: i.get("value", "") for i in form.select("input[name]") if i["name"] != "csrf_token"}
    assert kept == {"resource": D, "quantity": "8", "expected": "5"}
    assert web.post(f"/changes/nodes/{node}/resources", data=kept).status_code == 303
    assert capacity(core, node)[D] == "8"


def test_adding_a_name_the_node_advertises_is_a_change_from_its_value_never_a_conflict(web, core, node):
    """The node page's add form sends no expected value. Given a name the node already has, the
    answer is the form again, "currently 4 → 6", nothing written; saving it writes 6."""
    before = core.read_node(node).metadata.resource_version
    add = {"resource": D, "quantity": "6", "expected": ""}
    resp = web.post(f"/changes/nodes/{node}/resources", data=add)
    assert resp.status_code == 200 and "currently 4. Save to change it to 6" in text(resp)
    assert "changed since" not in text(resp)
    assert core.read_node(node).metadata.resource_version == before
    resp = web.post(f"/changes/nodes/{node}/resources", data={**add, "expected": "4"})
    assert resp.status_code == 303 and capacity(core, node)[D] == "6"


def test_failed_test_op_and_stale_resource_version_both_mean_changed(app, core, node):
    writer = process_of(app).local.cluster.writer_for(Identity())
    raw = core.read_node(node)
    stale = changes.set_patch(
        D, 9, raw_current="3", resource_version=raw.metadata.resource_version, annotations=None
    )
    with pytest.raises(Conflict) as failed_test:
        writer.patch(node, stale, dry_run=False)
    assert failed_test.value.status == 422
    absent_guard = changes.set_patch(F, 1, raw_current=None, resource_version="1", annotations=None)
    with pytest.raises(Conflict):
        writer.patch(node, absent_guard, dry_run=False)
    raw.metadata.resource_version = "1"
    with pytest.raises(client.ApiException) as stale_rv:
        core.replace_node_status(node, raw)
    assert stale_rv.value.status == 409
    assert isinstance(translate(stale_rv.value), Conflict)
    assert capacity(core, node)[D] == "4"
    assert F not in capacity(core, node)


BAD = [
    ({"resource": "dongle", "quantity": "1"}, "resource", "qualified name with a domain"),
    ({"resource": "kubernetes.io/dongle", "quantity": "1"}, "resource", "kubernetes.io"),
    ({"resource": "sub.kubernetes.io/dongle", "quantity": "1"}, "resource", "kubernetes.io"),
    ({"resource": "requests.example.com/dongle", "quantity": "1"}, "resource", "requests."),
    ({"resource": "example.com/dong le", "quantity": "1"}, "resource", "letters, digits"),
    ({"resource": "Example.com/dongle", "quantity": "1"}, "resource", "DNS subdomain"),
    ({"resource": "example.com/" + "d" * 64, "quantity": "1"}, "resource", "at most 63"),
    ({"resource": "cpu", "quantity": "1"}, "resource", "standard resource"),
    ({"resource": "hugepages-2Mi", "quantity": "1"}, "resource", "standard resource"),
    ({"resource": "nvidia.com/gpu", "quantity": "1"}, "resource", "device plugin"),
    ({"resource": "", "quantity": "1"}, "resource", "is required"),
    ({"resource": D, "quantity": "0.5", "expected": "4"}, "quantity", "whole number"),
    ({"resource": D, "quantity": "1500m", "expected": "4"}, "quantity", "whole number"),
    ({"resource": D, "quantity": "-1", "expected": "4"}, "quantity", "negative"),
    ({"resource": D, "quantity": "many", "expected": "4"}, "quantity", "not a whole number"),
    ({"resource": D, "quantity": "2Ki", "expected": "4"}, "quantity", "2Ki means 2048: type 2048"),
    ({"resource": D, "quantity": "1e9", "expected": "4"}, "quantity", "maximum"),
    ({"resource": D, "quantity": "", "expected": "4"}, "quantity", "required"),
    ({"resource": D, "quantity": "0", "expected": "4"}, "quantity", "remove it instead"),
    ({"resource": D, "quantity": "2", "expected": "half"}, "expected", "not a quantity"),
]


@pytest.mark.parametrize(
    ("form", "field", "message"), BAD, ids=[f"{b[1]}:{b[0]['resource'][:20]}:{b[0]['quantity']}" for b in BAD]
)
def test_bad_input_is_refused_and_changes_nothing(web, core, node, form, field, message):
    before = core.read_node(node)
    resp = web.post(f"/changes/nodes/{node}/resources", data=form)
    assert resp.status_code == 422
    soup = BeautifulSoup(resp.get_data(as_text=True), "html.parser")
    assert message in soup.select_one(f"#{field}-error").get_text()
    after = core.read_node(node)
    assert after.metadata.resource_version == before.metadata.resource_version
    assert after.status.capacity == before.status.capacity


def test_unknown_node_is_refused(web):
    resp = web.post("/changes/nodes/no-such-node/resources", data={"resource": D, "quantity": "1"})
    assert resp.status_code == 404
    assert "no node named 'no-such-node'" in text(resp)


def test_remove_of_a_device_plugins_resource_is_refused_and_of_an_absent_one_changes_nothing(web, core, node):
    before = core.read_node(node).metadata.resource_version
    resp = web.post(
        f"/changes/nodes/{node}/resources/remove", data={"resource": "nvidia.com/gpu", "expected": "1"}
    )
    assert resp.status_code == 422
    assert "device plugin" in text(resp)
    # absent, where the form saw 1: what it asks is already so (someone removed it meanwhile);
    # said as that, nothing sent
    resp = web.post(f"/changes/nodes/{node}/resources/remove", data={"resource": F, "expected": "1"})
    assert resp.status_code == 303
    assert "is already absent (changed to that since you loaded it); nothing changed" in text(
        web.get(resp.location)
    )
    assert core.read_node(node).metadata.resource_version == before


def _two_nodes(core, web, uid):
    a, b = f"{uid}-a", f"{uid}-b"
    create_node(core, a, {D: "1"}, labels={"group": uid})
    create_node(core, b, {}, labels={"group": uid})
    ready(core, a, b)  # kwok's own writes done: resourceVersions stay put unless the app writes
    eventually(lambda: all(web.get(f"/nodes/{n}").status_code == 200 for n in (a, b)))
    return a, b


def test_bulk_dry_run_changes_nothing(web, core, uid):
    a, b = _two_nodes(core, web, uid)
    before = {n: core.read_node(n).metadata.resource_version for n in (a, b)}
    resp = web.post(
        "/changes/bulk/preview", data={"action": "set", "resource": D, "quantity": "3", "nodes": [a, b]}
    )
    assert resp.status_code == 303  # the dry run runs in the background, like a change
    soup = finished(web, resp.headers["Location"])
    rows = {
        tr["data-node"]: tr.select_one(".result").get_text()
        for tr in soup.select("table.outcomes tr[data-node]")
    }
    assert rows == {a: "would change", b: "would change"}  # before and after in their own columns
    assert {n: core.read_node(n).metadata.resource_version for n in (a, b)} == before
    assert events(core, a) == [] and events(core, b) == []
    # the apply form carries what the preview read
    assert soup.select_one(f'input[name="expected-{a}"]')["value"] == "1"
    assert soup.select_one(f'input[name="expected-{b}"]')["value"] == ""


def test_bulk_apply_by_selector_reports_each_node(web, core, uid):
    a, b = _two_nodes(core, web, uid)
    preview = web.post(
        "/changes/bulk/preview",
        data={"action": "set", "resource": D, "quantity": "3", "selector": f"group={uid}"},
    )
    soup = finished(web, preview.headers["Location"])
    form = soup.select_one('form[action$="/bulk/apply"]')
    data: dict[str, list[str]] = {}
    for field in form.select("input[type=hidden]"):
        data.setdefault(field["name"], []).append(field["value"])
    # b changes between the preview and the apply: it must fail alone
    core.patch_node_status(b, [{"op": "add", "path": changes.capacity_path(D), "value": "7"}])
    resp = web.post("/changes/bulk/apply", data=data)
    assert resp.status_code == 303
    soup = finished(web, resp.headers["Location"])
    rows = {tr["data-node"]: tr["class"][0] for tr in soup.select("table.outcomes tr[data-node]")}
    assert rows == {a: "ok", b: "failed"}
    assert "changed since you loaded it" in soup.select_one(f'tr[data-node="{b}"] .result').get_text()
    assert capacity(core, a)[D] == "3"
    assert capacity(core, b)[D] == "7"


def test_a_bulk_change_runs_in_the_background_and_shows_its_progress(web, core, uid):
    names = [f"{uid}-{i:02d}" for i in range(40)]
    for n in names:
        create_node(core, n, {}, labels={"group": uid})
    eventually(lambda: "40 of " in web.get(f"/?q={uid}-").get_data(as_text=True))
    data = {"action": "set", "resource": F, "quantity": "1", "selector": f"group={uid}"}
    resp = web.post("/changes/bulk/apply", data={**data, **{f"expected-{n}": "" for n in names}})
    assert resp.status_code == 303
    first = BeautifulSoup(web.get(resp.headers["Location"]).get_data(as_text=True), "html.parser")
    job = first.select_one("#job")
    assert job.select_one("progress")["max"] == "40"
    if job["data-done"] == "false":  # still running: it polls, and the plain page refreshes
        assert job["hx-trigger"] == "every 1s"
        assert first.select_one('noscript meta[http-equiv="refresh"]') is not None
    soup = finished(web, resp.headers["Location"])
    assert soup.select_one('[data-field="finished"]').get_text() == "40"
    assert soup.select_one('[data-field="failed"]').get_text() == "0"
    assert soup.select_one("#job").get("hx-trigger") is None  # done: nothing polls
    assert all(capacity(core, n)[F] == "1" for n in names)


@pytest.mark.parametrize(
    ("form", "field", "message"),
    [
        (
            {"action": "set", "resource": D, "quantity": "2", "nodes": ["no-such-node"]},
            "nodes",
            "Unknown node",
        ),
        ({"action": "set", "resource": D, "quantity": "2"}, "nodes", "Choose at least one node"),
        (
            {"action": "set", "resource": D, "quantity": "2", "selector": "group in x"},
            "selector",
            "Label selector",
        ),
        (
            {"action": "set", "resource": D, "quantity": "2", "selector": "group=nothing-has-this"},
            "selector",
            "No node matches",
        ),
        (
            {"action": "set", "resource": "cpu", "quantity": "2", "selector": "group=x"},
            "resource",
            "standard resource",
        ),
        ({"action": "explode", "resource": D, "selector": "group=x"}, "action", "must be"),
    ],
)
def test_bulk_bad_input_changes_nothing(web, core, uid, form, field, message):
    a, b = _two_nodes(core, web, uid)
    before = {n: core.read_node(n).metadata.resource_version for n in (a, b)}
    for url in ("/changes/bulk/preview", "/changes/bulk/apply"):
        resp = web.post(url, data=form)
        assert resp.status_code == 422
        soup = BeautifulSoup(resp.get_data(as_text=True), "html.parser")
        assert message in soup.select_one(f"#{field}-error").get_text()
    assert {n: core.read_node(n).metadata.resource_version for n in (a, b)} == before


def test_drift_after_reregistration_is_shown_and_reapplied(web, core, node):
    web.post(f"/changes/nodes/{node}/resources", data={"resource": F, "quantity": "2", "expected": ""})
    # A kubelet that re-registers zeroes extended capacity (reconcileExtendedResource); do the same.
    core.patch_node_status(node, [{"op": "replace", "path": changes.capacity_path(F), "value": "0"}])

    def drift_badge():
        soup = BeautifulSoup(web.get(f"/?q={node}").get_data(as_text=True), "html.parser")
        badge = soup.select_one(f'tr[data-node="{node}"] .badge.drift')
        assert badge is not None, "no drift badge yet"
        return badge["data-drift"]

    assert eventually(drift_badge) == F
    page = BeautifulSoup(web.get(f"/nodes/{node}").get_data(as_text=True), "html.parser")
    assert "desired 2, now 0" in page.select_one(f'[data-drift="{F}"]').get_text()
    resp = web.post(f"/changes/nodes/{node}/reapply")
    assert resp.status_code == 303
    assert capacity(core, node)[F] == "2"
    results = BeautifulSoup(web.get(resp.headers["Location"]).get_data(as_text=True), "html.parser")
    row = results.select_one(f'table.outcomes tr[data-node="{node}"]')
    cells = [td.get_text(strip=True) for td in row.select("td")]
    assert cells[:4] == [F, "0", "2", "changed"]  # before and after in their columns, the result alone
    assert any(f"reapply {F} 0 → 2" in e.message for e in events(core, node))
    eventually(
        lambda: (
            not BeautifulSoup(web.get(f"/?q={node}").get_data(as_text=True), "html.parser").select(
                ".badge.drift"
            )
        )
    )


def test_reapply_all_restores_every_drifted_node(web, core, uid):
    a, b = _two_nodes(core, web, uid)
    for n, expected in ((a, "1"), (b, "")):
        web.post(f"/changes/nodes/{n}/resources", data={"resource": D, "quantity": "3", "expected": expected})
        core.patch_node_status(n, [{"op": "replace", "path": changes.capacity_path(D), "value": "0"}])

    def both_drifted():
        soup = BeautifulSoup(web.get(f"/?q={uid}").get_data(as_text=True), "html.parser")
        assert len(soup.select(".badge.drift")) == 2
        return soup

    eventually(both_drifted)
    # the overview leads to a dry-run preview first: nothing is written by it
    overview = BeautifulSoup(web.get(f"/?q={uid}").get_data(as_text=True), "html.parser")
    assert overview.select_one("form.drift")["method"] == "get"
    listing = web.get("/changes/reapply").get_data(as_text=True)
    assert a in listing and b in listing

    def finished(resp) -> BeautifulSoup:
        assert resp.status_code == 303  # to the job's page: dry runs and writes run in the background
        job = resp.headers["Location"]
        page = eventually(
            lambda: (h := web.get(job).get_data(as_text=True)) and 'data-done="true"' in h and h
        )
        return BeautifulSoup(page, "html.parser")

    preview = finished(web.post("/changes/reapply/preview"))
    assert "would change" in preview.select_one(f'table.outcomes tr[data-node="{a}"]').get_text()
    assert capacity(core, a)[D] == "0" and capacity(core, b)[D] == "0"
    nodes = [i["value"] for i in preview.select('form[action$="/changes/reapply"] input[name="nodes"]')]
    assert {a, b} <= set(nodes)
    rows = finished(web.post("/changes/reapply", data={"nodes": nodes}))
    done = {tr["data-node"] for tr in rows.select("table.outcomes tr.ok") if tr["data-node"] in (a, b)}
    assert done == {a, b}
    assert capacity(core, a)[D] == "3" and capacity(core, b)[D] == "3"
