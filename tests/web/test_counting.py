"""While the first list of pods arrives (nodes known, pods still counting): pages show capacity
and allocatable at once, requested and free as the bounds they are, and no decision on them (no
form, no plan, no over-commit claim, no pending list) until every pod is counted."""

from __future__ import annotations

import pytest

from app.kube.api.freshness import Freshness
from app.web.process import of as process_of
from tests.web.fake import LIVE
from tests.web.test_pages import SHORT, soup

D = "example.com/dongle"
COUNTING = Freshness(synced=False, stale=True, age_seconds=None, error=None, counting=2)


@pytest.fixture
def counting(cluster):
    cluster.node("n1", {D: "4"})
    cluster.node("n2", {D: "1"})
    cluster.pod("big", "n2", {D: "3"})  # over-committed, as far as counted
    cluster.pod("waiting", None, {D: "5"}, message=SHORT)
    cluster.fresh = COUNTING
    return cluster


def test_the_overview_shows_what_nodes_offer_and_requested_and_free_as_bounds(client, counting):
    page = soup(client.get("/"))
    banner = page.select_one("[data-counting]")
    assert banner is not None and "2 pods counted so far" in banner.get_text()
    n2 = page.select_one('tr[data-node="n2"]')
    assert n2.select_one('[data-field="capacity"]').get_text(strip=True) == "1"
    assert n2.select_one('[data-field="requested"]').get_text(strip=True) == "≥3"
    assert n2.select_one('[data-field="free"]').get_text(strip=True) == "≤-2"
    assert not page.select(".over, .full, [data-state=over], [data-field=over], [data-field=total-over]")
    strip = page.select_one(f'.strip li[data-resource="{D}"]')
    assert "≥" in strip.get_text() and not strip.select("[data-field=waiting]")
    assert page.select_one("#pending-badge").has_attr("hidden")
    assert not page.select("[data-not-synced]")


def test_no_decision_is_offered_or_taken_until_every_pod_is_counted(client, counting):
    node = soup(client.get("/nodes/n1"))
    assert node.select_one('[data-field="requested"]').get_text(strip=True) == "≥0"
    assert not node.select("form[method=post]") and node.select_one("#add") is None
    form = {"resource": D, "quantity": "5", "expected": "4"}
    refused = client.post("/changes/nodes/n1/resources", data=form)
    assert refused.status_code == 503  # the fake cluster's writer would fail the test if reached
    assert "once every pod is counted (2 so far); nothing was changed" in refused.get_data(as_text=True)
    assert client.get("/changes/bulk").status_code == 503
    for url, what in (
        ("/pending/", "Pending pods show"),
        ("/workloads/", "Workloads show"),
        ("/heat", "The heat map shows"),
        (f"/plan/?requests={D}%3D1", "The answer shows"),
    ):
        page = soup(client.get(url))
        said = page.select_one("[data-until-counted]")
        assert said is not None and said.get_text(" ", strip=True).startswith(what), url
        assert "2 pods so far" in said.get_text(), url
    assert "/pods/default/waiting" not in client.get("/pending/").get_data(as_text=True)
    assert not soup(client.get(f"/plan/?requests={D}%3D1")).select(".plan-result")


def test_once_every_pod_is_counted_the_same_pages_decide(client, counting):
    counting.fresh = LIVE
    page = soup(client.get("/"))
    assert not page.select("[data-counting], [data-bound]")
    assert page.select_one('tr[data-node="n2"] [data-field="free"]').get("class") == ["over"]
    assert soup(client.get("/nodes/n1")).select_one("#add") is not None
    assert "/pods/default/waiting" in client.get("/pending/").get_data(as_text=True)
    assert soup(client.get(f"/plan/?requests={D}%3D1")).select(".plan-result")


def test_a_node_missing_while_pods_count_is_missing_the_node_list_is_complete(client, counting):
    assert client.get("/nodes/nope").status_code == 404


def test_exports_and_metrics_wait_for_every_pod_never_part_of_them(app, client, counting):
    """An export or a scrape made while pods are counted would hold part of the requests: the
    exports answer 503, and /metrics leaves out the per-node and pending families."""
    for url in (
        "/export.csv",
        "/export.json",
        "/workloads/export.csv",
        "/workloads/export.json",
        "/idle/export.csv",
    ):
        refused = client.get(url)
        assert refused.status_code == 503, url
        assert "once every pod is counted (2 so far)" in refused.get_data(as_text=True), url
    text = process_of(app).local.metrics.exposition().decode()
    assert "extres_cache_complete 0.0" in text
    samples = [line for line in text.splitlines() if not line.startswith("#")]
    assert not [line for line in samples if line.startswith(("extres_node_", "extres_pending_pods"))]
    counting.fresh = LIVE
    assert client.get("/export.csv").status_code == 200
    text = process_of(app).local.metrics.exposition().decode()
    assert "extres_cache_complete 1.0" in text
    assert 'extres_node_extended_resource_requested{node="n2",resource="example.com/dongle"} 3.0' in text
    assert "extres_pending_pods" in text


def test_a_write_refused_while_pods_are_counted_leaves_an_audit_line(client, counting, caplog):
    import logging

    with caplog.at_level(logging.WARNING, logger="extres.audit"):
        resp = client.post(
            "/changes/nodes/n1/resources", data={"resource": D, "quantity": "5", "expected": "4"}
        )
    assert resp.status_code == 503
    [line] = [r.audit for r in caplog.records if r.name == "extres.audit"]
    assert (line["outcome"], line["reason"], line["status"]) == ("refused", "pods still being counted", 503)
    assert line["request_id"] == resp.headers["X-Request-Id"]
