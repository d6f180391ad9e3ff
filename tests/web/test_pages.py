"""Every page over a fake cluster: full pages and the fragments htmx swaps in, headers on every
response, bad arguments named, outages and unreadable objects shown, read-only where it must be."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup
from prometheus_client import generate_latest

from app.domain.capacity_log import Record
from app.kube.api.freshness import Freshness
from app.kube.wire.reading import Unreadable
from app.web.process import of as process_of
from tests.helpers import browser

D, GPU = "example.com/dongle", "nvidia.com/gpu"
SHORT = f"0/2 nodes are available: 2 Insufficient {D}. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."  # noqa: E501


@pytest.fixture
def two(cluster):
    cluster.node("n1", {D: "4", GPU: "2"}, labels={"zone": "a"})
    cluster.node("n2", {D: "2"}, labels={"zone": "b"})
    cluster.pod("reader", "n1", {D: "3"})
    cluster.pod("waiting", None, {D: "5"}, message=SHORT)


def soup(resp) -> BeautifulSoup:
    return BeautifulSoup(resp.get_data(as_text=True), "html.parser")


# (url, htmx target, the fragment's root id)
FRAGMENTS = [
    ("/", "grid", "grid"),
    ("/pending/", "pending-list", "pending-list"),
    ("/workloads/", "workloads", "workloads"),
    ("/changes/bulk", "node-choices", "node-choices"),
]


@pytest.mark.parametrize(("url", "target", "root"), FRAGMENTS)
def test_a_fragment_is_the_part_of_its_full_page_htmx_swaps(client, two, url, target, root):
    full = client.get(url)
    part = client.get(url, headers={"HX-Request": "true", "HX-Target": target})
    assert full.status_code == part.status_code == 200
    assert "<html" in full.get_data(as_text=True) and "<html" not in part.get_data(as_text=True)
    in_full, in_part = soup(full).find(id=root), soup(part).find(id=root)
    assert in_full is not None and in_part is not None
    # the same content, whichever way it was asked for
    assert in_part.get_text(" ", strip=True) == in_full.get_text(" ", strip=True)


PAGES = ["/", "/heat", "/nodes/n1", "/pending/", "/plan/", "/workloads/", "/history/", "/changes/bulk"]


@pytest.mark.parametrize("url", [*PAGES, "/nodes/missing", "/healthz", "/static/htmx.min.js"])
def test_security_headers_and_vary_on_every_response(client, two, url):
    resp = client.get(url)
    csp = resp.headers["Content-Security-Policy"]
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert resp.headers["X-Frame-Options"] == "DENY"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert resp.headers["Referrer-Policy"] == "same-origin"
    assert "HX-Request" in resp.headers["Vary"]  # a cached fragment is never served as the page
    if resp.mimetype == "text/html":
        html = resp.get_data(as_text=True)
        assert "<script>" not in html and "style=" not in html and " on" + "click=" not in html
    resp.close()  # a static file is streamed from its open file


@pytest.mark.parametrize("url", PAGES)
def test_every_page_renders_and_loads_htmx_from_this_server(client, two, url):
    resp = client.get(url)
    assert resp.status_code == 200, url
    scripts = [s["src"] for s in soup(resp).select("script[src]")]
    assert "/static/htmx.min.js" in scripts and all(s.startswith("/static/") for s in scripts)


def test_a_missing_node_is_404_and_an_unsynced_store_503(client, cluster, two):
    assert client.get("/nodes/nope").status_code == 404
    cluster.fresh = Freshness(synced=False, stale=True, age_seconds=None, error="connection refused")
    resp = client.get("/nodes/nope")
    assert resp.status_code == 503 and "not been loaded yet" in resp.get_data(as_text=True)


@pytest.mark.parametrize(
    ("url", "field", "message"),
    [
        (
            "/pending/?resource=dongle",
            "resource",
            "No such resource 'dongle'; did you mean example.com/dongle?",
        ),
        ("/workloads/?resource=dongle", "resource", "did you mean example.com/dongle?"),
        ("/pending/?resource=example.com/dongles", "resource", "did you mean example.com/dongle?"),
        (
            "/?free=example.com/dongles&min=1",
            "min",
            "Free at least: No such resource 'example.com/dongles'; did you mean",
        ),
        ("/?resource=example.com/gpu", "resource", "No such resource 'example.com/gpu'"),
        ("/plan/?requests=dongle", "requests", "is not name=quantity"),
        ("/plan/?requests=example.com/dongle%3D0.5", "requests", "0.5"),
        ("/plan/?requests=example.com/dongle%3D2Ki", "requests", "2Ki means 2048: type 2048 if you mean it"),
        ("/plan/?requests=example.com/dongle%3D1&replicas=%C2%B2", "replicas", "a whole number from 1"),
        ("/?free=example.com/dongle&min=%C2%B2", "min", "is not a whole number of 0 or more"),
        ("/plan/?requests=example.com/dongle%3D1&replicas=0", "replicas", "a whole number from 1"),
        ("/plan/?requests=example.com/dongle%3D1&tolerations=a:Sometimes", "tolerations", "Sometimes"),
    ],
)
def test_bad_arguments_are_named_at_their_field(client, two, url, field, message):
    resp = client.get(url)
    assert resp.status_code in (200, 422)
    error = soup(resp).select_one(f"#{field}-error")
    assert error is not None and message in error.get_text(), resp.get_data(as_text=True)[:2000]


@pytest.mark.parametrize(
    ("form", "field", "message"),
    [
        ({"action": "set", "resource": D, "quantity": "1500m", "nodes": "n1"}, "quantity", "whole"),
        ({"action": "set", "resource": "dongle", "quantity": "1", "nodes": "n1"}, "resource", "dongle"),
        ({"action": "set", "resource": GPU, "quantity": "1", "nodes": "n1"}, "resource", "device plugin"),
        ({"action": "set", "resource": D, "quantity": "2k", "nodes": "n1"}, "quantity", "2k means 2000"),
        ({"action": "set", "resource": D, "quantity": "1", "nodes": "ghost"}, "nodes", "Unknown node"),
        ({"action": "set", "resource": D, "quantity": "1"}, "nodes", "Choose at least one node"),
        ({"action": "set", "resource": D, "quantity": "1", "selector": "zone in (a"}, "selector", "Label"),
        ({"action": "set", "resource": D, "quantity": "1", "selector": "zone=c"}, "selector", "No node"),
        ({"action": "explode", "resource": D, "nodes": "n1"}, "action", "'set' or 'remove'"),
    ],
)
def test_bad_bulk_forms_are_named_and_nothing_is_written(client, two, form, field, message):
    """The fake cluster refuses any write: a form that got past validation would fail here."""
    resp = client.post("/changes/bulk/preview", data=form)
    assert resp.status_code == 422
    error = soup(resp).select_one(f"#{field}-error")
    assert error is not None and message in error.get_text()


@pytest.mark.parametrize(
    ("form", "field", "message"),
    [
        ({"resource": D, "quantity": "0.5"}, "quantity", "whole"),
        ({"resource": D, "quantity": "\uff13"}, "quantity", "type digits only, like 4"),  # a fullwidth 3
        ({"resource": D, "quantity": "2Ki"}, "quantity", "2Ki means 2048: type 2048 if you mean it"),
        ({"resource": D, "quantity": "1e3"}, "quantity", "1e3 means 1000"),
        ({"resource": D, "quantity": "1000m"}, "quantity", "1000m means 1"),
        ({"resource": "kubernetes.io/dongle", "quantity": "1"}, "resource", "kubernetes.io"),
        ({"resource": "requests.example.com/dongle", "quantity": "1"}, "resource", "requests."),
        ({"resource": "cpu", "quantity": "1"}, "resource", ""),
    ],
)
def test_bad_single_node_forms_are_named_and_nothing_is_written(client, two, form, field, message):
    resp = client.post("/changes/nodes/n1/resources", data=form)
    assert resp.status_code == 422
    error = soup(resp).select_one(f"#{field}-error")
    assert error is not None and message in error.get_text()


def test_a_stale_store_is_shown_as_such_with_its_age(client, cluster, two):
    cluster.fresh = Freshness(synced=True, stale=True, age_seconds=330.0, error="connection refused")
    resp = client.get("/")
    assert resp.status_code == 200
    age = soup(resp).select_one(".age")
    assert age["data-stale"] == "true" and age.get_text() == "data 5m old"
    assert [tr["data-node"] for tr in soup(resp).select("table.grid tbody tr")] == [
        "n1",
        "n2",
    ]  # what is known


def test_unreadable_objects_are_named_in_a_banner(client, cluster, two):
    cluster.fresh = Freshness(
        synced=True, stale=False, age_seconds=0.0, error=None, unreadable=(("pods", 1),)
    )
    cluster.unreadable = [
        Unreadable("pods", "default", "odd", "7", "Expected `object`, got `int` - at `$.spec`")
    ]
    text = client.get("/").get_data(as_text=True)
    assert "1 pod could not be read" in text


def test_a_viewer_sees_no_forms_and_device_plugin_resources_offer_none(make_app, cluster, two):
    from tests.helpers import browser

    editor = browser(make_app())
    node = soup(editor.get("/nodes/n1"))
    rows = {tr["data-resource"]: tr for tr in node.select("tr[data-resource]")}
    assert rows[D].select("a[href*='/changes/']") and not rows[GPU].select("a[href*='/changes/']")
    cluster.access.denied.add(("patch", "nodes"))
    viewer = browser(make_app())
    page = viewer.get("/nodes/n1").get_data(as_text=True)
    assert "/changes/" not in page.split("<main")[1]


def test_impersonated_users_who_may_not_list_pods_are_refused_by_name(make_app, cluster, two):
    from tests.helpers import browser

    cluster.access.denied.add(("list", "pods"))
    app = make_app(auth_mode="impersonate", trusted_proxies=("127.0.0.1/32",))
    resp = browser(app).get("/", headers={"X-Forwarded-User": "ann"})
    assert resp.status_code == 403 and "ann may not list pods" in resp.get_data(as_text=True)


def test_history_lists_every_change_with_absolute_times_a_day_range_and_csv(client, cluster, two):
    cluster.capacity_log.records = [
        Record("2026-12-01T10:00:00Z", "n1", "capacity", D, None, 4, "extres", "ann", "11"),
        Record("2026-12-02T09:30:05Z", "n1", "allocatable", D, None, 4, "kubelet", "", "12"),
        Record("2026-12-03T23:59:59Z", "n2", "capacity", D, 2, None, "kubectl-patch", "", "13"),
    ]
    page = soup(client.get("/history/"))
    rows = page.select("table.history tbody tr")
    assert [r.select_one("time")["datetime"] for r in rows] == [
        "2026-12-03T23:59:59Z",
        "2026-12-02T09:30:05Z",
        "2026-12-01T10:00:00Z",
    ]
    assert rows[0].select_one('[data-field="when"]').get_text(strip=True) == "2026-12-03 23:59:59"
    assert rows[0].select_one('[data-field="change"]').get_text(strip=True) == "2 → absent"
    assert rows[2].select_one('[data-field="who"]').get_text(" ", strip=True) == "ann via extres"
    ranged = soup(client.get("/history/?since=2026-12-02&until=2026-12-02"))
    assert [r["data-field-name"] for r in ranged.select("table.history tbody tr")] == ["allocatable"]
    bad = soup(client.get("/history/?since=yesterday"))
    assert "'yesterday' is not a date" in bad.select_one("#since-error").get_text()
    assert len(bad.select("table.history tbody tr")) == 3  # left out, the rest shown
    text = client.get("/history/export.csv?node=n2").get_data(as_text=True).splitlines()
    assert text == [
        "when,node,field,resource,before,after,manager,user",
        f"2026-12-03T23:59:59Z,n2,capacity,{D},2,,kubectl-patch,",
    ]


def test_a_device_plugins_drop_reads_as_gpus_lost_and_its_return_as_back(client, cluster):
    gpu = "nvidia.com/gpu"
    cluster.node("g1", {gpu: "8"})
    cluster.capacity_log.records = [
        Record("2026-12-01T10:00:00Z", "g1", "allocatable", gpu, 8, 6, "kubelet", "", "11"),
        Record("2026-12-01T11:00:00Z", "g1", "allocatable", gpu, 6, 7, "kubelet", "", "12"),
        Record("2026-12-01T12:00:00Z", "g1", "capacity", D, 4, 2, "kubectl-patch", "", "13"),  # an admin's
    ]
    rows = soup(client.get("/history/")).select("table.history tbody tr")
    moves = [r.select_one("[data-device-move]") for r in rows]  # newest first
    assert moves[0] is None  # an admin lowering a static resource is a change, not a loss
    assert (moves[1]["data-device-move"], moves[2]["data-device-move"]) == ("1 GPU back", "2 GPUs lost")
    assert "warn" in moves[2]["class"] and "warn" not in moves[1]["class"]


def test_without_a_history_key_the_history_page_says_so(client, cluster):
    cluster.capacity_log.enabled = cluster.capacity_log.writes = False
    page = soup(client.get("/history/"))
    assert "EXTRES_HISTORY_KEY is not set" in page.select_one('[data-history="no-key"]').get_text()
    cluster.capacity_log.left_out = 24  # another dashboard, with the key, recorded changes
    kept = soup(client.get("/history/")).select_one('[data-history="unreadable"]')
    assert kept["data-kept"] == "24" and "24 changes are kept" in kept.get_text()
    said = " ".join(kept.get_text(" ", strip=True).split())  # as shown: a line break is a space
    assert "set EXTRES_HISTORY_KEY to the key the recording dashboard uses" in said
    cluster.capacity_log.left_out = 0
    cluster.capacity_log.namespace = ""  # EXTRES_HISTORY_STORE=off: said as that instead
    assert soup(client.get("/history/")).select_one('[data-history="off"]') is not None


def test_metrics_read_the_store(app, cluster, two):
    text = process_of(app).local.metrics.exposition().decode()
    assert f'extres_node_extended_resource_requested{{node="n1",resource="{D}"}} 3.0' in text
    assert f'extres_pending_pods{{reason="insufficient",resource="{D}"}} 1.0' in text


@pytest.mark.parametrize(
    ("url", "current"),
    [("/", "Overview"), ("/heat", "Heat map"), ("/pending/", "Pending"), ("/plan/", "What if")],
)
def test_the_nav_marks_the_current_page_and_a_skip_link_leads_to_the_content(client, two, url, current):
    page = soup(client.get(url))
    marked = [a.get_text(" ", strip=True) for a in page.select('nav a[aria-current="page"]')]
    assert len(marked) == 1 and marked[0].startswith(current)
    skip = page.select_one("a.skip")
    target = "#nodes" if url == "/" else "#main"  # the overview's leads straight to its nodes
    assert skip is not None and skip["href"] == target and page.select_one(target) is not None
    assert page.body.find("a") is skip  # the first thing the keyboard reaches


def test_an_overview_with_no_resource_yet_skips_to_what_it_shows(client, cluster):
    """A fresh cluster: no grid, so the skip link leads to the content, never to a missing table
    (axe's skip-link rule, met on a member cluster's first page)."""
    cluster.node("bare", {})
    page = soup(client.get("/"))
    skip = page.select_one("a.skip")
    assert (
        skip["href"] == "#main" and page.select_one("#main") is not None and page.select_one("#nodes") is None
    )


def test_a_scrape_between_changes_rebuilds_nothing(app, cluster, two):
    """The node families are text kept per row: a scrape between changes formats nothing, a
    changed row is formatted alone; the pending family is built again only when pending pods move."""
    metrics = process_of(app).local.metrics
    [collector] = [c for c in metrics.registry._collector_to_names if type(c).__name__ == "ClusterCollector"]
    first = metrics.exposition()
    built, formatted = collector.built, metrics.nodes.formatted
    assert metrics.exposition() == first and collector.built == built  # nothing changed
    assert metrics.nodes.formatted == formatted
    cluster.node("n1", {D: "4", GPU: "2"}, labels={"zone": "a"})  # a heartbeat-like update: same row
    metrics.exposition()
    assert metrics.nodes.formatted == formatted
    cluster.node("n3", {D: "1"})  # a row comes: that row alone is formatted, the pending family kept
    assert b'node="n3"' in metrics.exposition() and metrics.nodes.formatted == formatted + 1
    assert collector.built == built
    cluster.pod("more", None, {D: "9"}, message=SHORT)  # a pending pod comes: the pending family
    pending = b'extres_pending_pods{reason="insufficient",resource="example.com/dongle"} 2.0'
    assert pending in metrics.exposition()
    assert collector.built == built + 1


def test_the_kept_node_text_is_what_prometheus_client_would_write(app, cluster, two):
    """The hand-kept text equals prometheus_client's own formatting of the same samples (the
    metrics bench's baseline)."""
    from prometheus_client import CollectorRegistry

    from bench.metrics_bench import Formatted

    cluster.node("n9", {D: "2"}, annotations={"extres.dev/desired-capacity": '{"example.com/dongle": 3}'})
    registry = CollectorRegistry()
    registry.register(Formatted(cluster.store))
    assert b'extres_node_extended_resource_drift{node="n9"' in generate_latest(registry)  # every family
    assert process_of(app).local.metrics.nodes.text(cluster.store) == generate_latest(registry)


@pytest.mark.parametrize("url", ["/", "/pending/", "/workloads/", "/history/", "/heat"])
def test_every_resource_field_offers_the_known_names(client, two, url):
    page = soup(client.get(url))
    known = [o["value"] for o in page.select("datalist#known-resources option")]
    assert "example.com/dongle" in known and known == sorted(known)
    fields = [i for i in page.select("input[list]") if i["list"] == "known-resources"]
    assert fields, "no resource picker on the page"


def test_an_unsynced_store_refused_by_rbac_names_the_right_and_invites_nothing(client, cluster):
    from app.kube.api.freshness import Freshness, missing_right

    cluster.fresh = Freshness(
        synced=False, stale=True, age_seconds=None, error=missing_right("nodes"), forbidden=True
    )
    text = soup(client.get("/")).get_text(" ", strip=True)
    assert "refuses the dashboard's reads" in text and "may not list and watch nodes" in text
    assert "ClusterRole extres-viewer grants it" in text
    assert "Advertise one" not in text and "No extended resources" not in text
    assert "Nothing is known of the cluster yet" in text
    # the nav never shows a count that is not known: no number, at load or after a poll
    for html in (client.get("/"), client.get("/", headers={"HX-Request": "true", "HX-Target": "grid"})):
        badge = soup(html).select_one("#pending-badge")
        assert badge.has_attr("hidden") and badge.get_text(strip=True) == "", badge


def test_errors_come_in_the_form_asked_for_and_refusals_are_timed_and_counted(make_app, two):
    """Refused (no identity from the proxy): /export.json answers as JSON, /export.csv as plain
    text, a page as the error page; the refusals are in the latency metric, and counted by
    status, though no view ran."""
    app = make_app(auth_mode="impersonate", trusted_proxies=("127.0.0.1/32",))
    web = browser(app)
    as_json = web.get("/export.json")
    assert as_json.status_code == 401 and as_json.headers["Content-Type"] == "application/json"
    assert as_json.get_json()["status"] == 401 and as_json.get_json()["message"]
    as_csv = web.get("/export.csv")
    assert as_csv.status_code == 401 and as_csv.headers["Content-Type"].startswith("text/plain")
    assert "<html" not in as_csv.get_data(as_text=True).lower()
    page = web.get("/")
    assert page.status_code == 401 and "<html" in page.get_data(as_text=True).lower()
    text = process_of(app).local.metrics.exposition().decode()
    assert 'extres_requests_refused_total{status="401"} 3.0' in text
    assert 'extres_request_duration_seconds_count{endpoint="overview.export_json",method="GET"} 1.0' in text
