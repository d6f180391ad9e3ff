"""A remove or a decrease says, before anything is written, which pods ask for the resource on
each node and by how much they would over-commit what is left. The real writer sends its JSON
Patches to the web lane's API server stand-in (tests/web/apiserver.py)."""

from __future__ import annotations

from bs4 import BeautifulSoup

from tests.helpers import eventually

D = "example.com/dongle"


def soup(resp):
    return BeautifulSoup(resp.get_data(as_text=True), "html.parser")


def test_the_single_node_remove_names_the_pods_and_the_over_commitment(client, cluster):
    cluster.node("n1", {D: "4"})
    cluster.pod("a", "n1", {D: "2"})
    cluster.pod("b", "n1", {D: "1"})
    page = soup(client.get(f"/changes/nodes/n1/resources/remove?resource={D}"))
    block = page.select_one('[data-impact="n1"]')
    assert [h["data-holder"] for h in block.select("[data-holder]")] == ["default/a", "default/b"]
    assert block.select_one("[data-over-committed]")["data-over-committed"] == "3"
    button = page.select_one("form button[type=submit]")
    assert "primary" in button["class"] and "over-commit n1 by 3" in button.get_text()


def test_a_decrease_below_what_pods_ask_is_confirmed_first(client, cluster):
    cluster.node("n1", {D: "4"})
    cluster.pod("a", "n1", {D: "3"})
    # a decrease that still fits is written at once
    fits = {"resource": D, "quantity": "3", "expected": "4"}
    assert client.post("/changes/nodes/n1/resources", data=fits).status_code == 303
    assert [n for n, _, _ in cluster.apiserver.patches()] == ["n1"]
    form = {"resource": D, "quantity": "2", "expected": "3"}
    first = client.post("/changes/nodes/n1/resources", data=form)
    assert first.status_code == 200 and len(cluster.apiserver.patches()) == 1  # said first, nothing sent
    page = soup(first)
    assert page.select_one("[data-over-committed]")["data-over-committed"] == "1"
    sent = {
        i["name"]: i.get("value", "")
        for i in page.select("form.change input[name]")
        if i["name"] != "csrf_token"
    }
    assert sent == {"resource": D, "quantity": "2", "expected": "3", "confirm": "over-commit"}
    assert client.post("/changes/nodes/n1/resources", data=sent).status_code == 303
    (node, dry_run, ops) = cluster.apiserver.patches()[-1]
    assert (node, dry_run) == ("n1", False)
    assert {"op": "add", "path": "/status/capacity/example.com~1dongle", "value": "2"} in ops
    assert {"op": "test", "path": "/status/capacity/example.com~1dongle", "value": "3"} in ops
    assert cluster.store.objects.node("n1").capacity[D] == 2  # read back by the store


def test_a_bulk_remove_preview_names_the_pods_per_node_and_the_total_over_commitment(client, cluster):
    for name in ("n1", "n2", "n3"):
        cluster.node(name, {D: "4"})
    cluster.pod("a", "n1", {D: "3"})
    cluster.pod("b", "n2", {D: "1"})
    form = {"action": "remove", "resource": D, "nodes": ["n1", "n2", "n3"], "selector": ""}
    resp = client.post("/changes/bulk/preview", data=form)
    assert resp.status_code == 303

    def finished():
        page = soup(client.get(resp.headers["Location"]))
        assert page.select_one("#job")["data-done"] == "true"
        return page

    page = eventually(finished)
    rows = {
        tr["data-node"]: tr.select_one('[data-field="impact"]')
        for tr in page.select("table.outcomes tr[data-node]")
    }
    assert rows["n1"].select_one("[data-holder]")["data-holder"] == "default/a"
    assert rows["n1"].select_one("[data-over-committed]")["data-over-committed"] == "3"
    assert rows["n3"].get_text(strip=True) == "none"
    summary = page.select_one("[data-impact-summary]")
    assert summary["data-impact-summary"] == "4" and "2 pods on 3 nodes request" in summary.get_text(
        " ", strip=True
    )
    apply = page.select_one('form[action$="/bulk/apply"] button[type=submit]')
    assert "primary" in apply["class"] and "Apply to 3 nodes, 2 of them over-committed" in apply.get_text()


def test_a_bulk_preview_that_adds_a_resource_to_nodes_without_it_warns_before_apply(client, cluster):
    cluster.node("has", {D: "2"})
    cluster.node("bare1", {})
    cluster.node("bare2", {})
    form = {
        "action": "set",
        "resource": D,
        "quantity": "3",
        "nodes": ["has", "bare1", "bare2"],
        "selector": "",
    }
    resp = client.post("/changes/bulk/preview", data=form)

    def finished():
        page = soup(client.get(resp.headers["Location"]))
        assert page.select_one("#job")["data-done"] == "true"
        return page

    page = eventually(finished)
    warning = page.select_one("[data-new-devices]")
    assert warning["data-new-devices"] == "2"
    assert "2 nodes (bare1, bare2) have no example.com/dongle now" in warning.get_text(" ", strip=True)
    assert page.select_one('form[action$="/bulk/apply"]') is not None  # the choice stays the operator's
