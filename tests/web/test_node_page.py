"""The node page says why a node is left out (Ready, cordon, taints), shows a deleted pod as
Terminating, and after a write says that allocatable follows once the kubelet reports."""

from __future__ import annotations

import json

from bs4 import BeautifulSoup

from tests.helpers import browser

D = "example.com/dongle"


def page(client, url):
    return BeautifulSoup(client.get(url).get_data(as_text=True), "html.parser")


def test_the_node_says_ready_cordoned_and_tainted(client, cluster):
    taint = {"key": "dedicated", "value": "ml", "effect": "NoSchedule"}
    cluster.node("n1", {D: "2"}, taints=[taint], unschedulable=True, ready="False")
    state = page(client, "/nodes/n1").select_one(".node-state")
    assert state["data-ready"] == "False" and "not Ready: False (KubeletReady)" in state.get_text()
    assert "Cordoned" in state.get_text()
    assert [t["data-taint"] for t in state.select("[data-taint]")] == ["dedicated=ml:NoSchedule"]


def test_a_deleted_pod_still_counting_is_shown_terminating(client, cluster):
    cluster.node("n1", {D: "2"})
    cluster.pod("leaving", "n1", {D: "1"}, terminating=True)
    row = page(client, "/nodes/n1").select_one('tr[data-pod="default/leaving"]')
    assert row.select_one('[data-field="phase"]').get_text() == "Terminating"


def test_after_a_write_allocatable_is_said_to_follow_capacity(client, cluster):
    desired = {"extres.dev/desired-capacity": json.dumps({D: 5})}
    cluster.node("n1", {D: "5"}, allocatable={D: "3"}, annotations=desired)  # written, kubelet not yet
    row = page(client, "/nodes/n1").select_one(f'table.resources tr[data-resource="{D}"]')
    assert row.select_one("[data-follows]") is not None
    cluster.node("n1", {D: "5"}, annotations=desired)  # the kubelet caught up
    row = page(client, "/nodes/n1").select_one(f'table.resources tr[data-resource="{D}"]')
    assert row.select_one("[data-follows]") is None


def test_a_prefilled_form_says_what_it_changes_from_and_to(client, cluster):
    cluster.node("n1", {D: "2"})
    summary = page(client, f"/changes/nodes/n1/resources/new?resource={D}&quantity=3").select_one(
        "[data-change]"
    )
    assert summary["data-change"] == f"{D} 2 3" and "currently 2 → 3" in summary.get_text(" ", strip=True)
    fresh = page(client, "/changes/nodes/n1/resources/new?resource=acme.io/fpga&quantity=1")
    assert "currently not advertised → 1" in fresh.select_one("[data-change]").get_text(" ", strip=True)


def test_right_after_a_remove_only_the_actions_that_can_work_are_offered(client, cluster):
    cluster.node("n1", {}, allocatable={D: "3"})  # capacity removed, the kubelet not yet reported
    row = page(client, "/nodes/n1").select_one(f'table.resources tr[data-resource="{D}"]')
    assert row.select_one("[data-removed]") is not None
    assert not row.select('a[href*="remove"]')  # removing what is gone would fail its test
    assert row.select_one('input[name="expected"]')["value"] == ""  # adds it again: "absent"
    assert row.select_one("button").get_text() == f"Add again {D}"  # named, for a screen reader
    cluster.node("n1", {D: "3"})
    row = page(client, "/nodes/n1").select_one(f'table.resources tr[data-resource="{D}"]')
    assert row.select('a[href*="remove"]') and row.select_one("[data-removed]") is None


def test_the_node_page_refreshes_itself_and_an_unchanged_poll_is_204(client, cluster):
    cluster.node("n1", {D: "2"})
    head = {"HX-Request": "true", "HX-Target": "node"}
    url = page(client, "/nodes/n1").select_one("#node[data-poll]")["hx-get"]
    assert client.get(url, headers=head).status_code == 204  # the page's own token: a no-op
    cluster.node("n1", {D: "4"})
    changed = client.get(url, headers=head)
    assert changed.status_code == 200 and "<html" not in changed.get_data(as_text=True)  # the fragment
    fresh = BeautifulSoup(changed.get_data(as_text=True), "html.parser")
    assert fresh.select_one(f'tr[data-resource="{D}"] [data-field="capacity"]').get_text() == "4"


def test_adding_a_name_the_node_already_advertises_becomes_a_change_with_no_false_conflict(client, cluster):
    """The add form sends no expected value; the node has the resource: nothing is written (the
    fake cluster refuses any write), the form comes back as a change from the current value."""
    cluster.node("n1", {D: "2"})
    resp = client.post("/changes/nodes/n1/resources", data={"resource": D, "quantity": "3", "expected": ""})
    assert resp.status_code == 200
    html = BeautifulSoup(resp.get_data(as_text=True), "html.parser")
    assert "already advertises example.com/dongle: currently 2" in html.select_one("[data-notice]").get_text()
    assert html.select_one(".change-summary")["data-change"] == f"{D} 2 3"
    form = html.select_one("form.change")
    assert form.select_one("input[name=expected]")["value"] == "2"
    assert form.select_one("input[name=quantity]")["value"] == "3"
    assert "changed since" not in html.get_text()


def test_a_real_conflict_keeps_the_typed_values_with_what_is_there_now(client, cluster):
    cluster.node("n1", {D: "2"})
    # someone else makes it 5 after the page was read (the API server has it; the page saw 2)
    cluster.objects["n1"]["status"]["capacity"][D] = "5"
    resp = client.post("/changes/nodes/n1/resources", data={"resource": D, "quantity": "7", "expected": "2"})
    assert resp.status_code == 409
    html = BeautifulSoup(resp.get_data(as_text=True), "html.parser")
    assert "Your values are kept" in html.select_one(".flash.error").get_text()
    assert "you saw 2, it is now 5" in html.select_one("#expected-error").get_text()
    assert html.get_text().count("Nothing was changed") == 1  # said once
    form = html.select_one("form.change")
    assert form.select_one("input[name=quantity]")["value"] == "7"
    assert form.select_one("input[name=resource]")["value"] == D
    assert form.select_one("input[name=expected]")["value"] == "5"


def test_back_or_reload_of_a_remove_confirmation_after_the_remove_lands_on_the_node_page(client, cluster):
    cluster.node("n1", {"example.com/other": "1"})  # example.com/dongle already removed
    resp = client.get(f"/changes/nodes/n1/resources/remove?resource={D}")
    assert resp.status_code == 303 and resp.headers["Location"].endswith("/nodes/n1")
    page = BeautifulSoup(client.get("/nodes/n1").get_data(as_text=True), "html.parser")
    assert f"n1 does not advertise {D}: nothing is left to remove." in page.get_text()


def test_a_shared_change_link_on_a_read_only_dashboard_says_changes_are_off(make_app, cluster):
    from tests.helpers import browser

    cluster.node("n1", {D: "2"})
    web = browser(make_app(read_only=True))
    for method, url in (
        ("GET", "/changes/bulk?resource=x"),
        ("POST", "/changes/bulk/preview"),
        ("GET", "/changes/"),
    ):
        resp = web.open(url, method=method)
        assert resp.status_code == 403, url
        assert "Changes are turned off here" in resp.get_data(as_text=True), url


def test_a_node_page_with_nothing_to_change_says_why(make_app, cluster):
    cluster.node("n1", {D: "2"})
    read_only = page(browser(make_app(read_only=True)), "/nodes/n1").select_one("[data-no-changes]")
    assert "read-only here (EXTRES_READ_ONLY)" in read_only.get_text()
    cluster.access.denied.add(("patch", "nodes"))
    web = browser(make_app(read_only=False, auth_mode="impersonate", trusted_proxies=("127.0.0.1/32",)))
    viewer = web.get("/nodes/n1", headers={"X-Forwarded-User": "vic"}).get_data(as_text=True)
    said = BeautifulSoup(viewer, "html.parser").select_one("[data-no-changes]").get_text()
    assert "vic may view only" in said and "patch nodes/status" in said
