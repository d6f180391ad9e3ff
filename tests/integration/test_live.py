"""The shared watch-fed cache: live changes, relist on 410 Gone, stale when the API
server is down, no list call on the request path; /metrics and exports."""

from __future__ import annotations

import csv
import io
import os
import signal
import threading
import urllib.error
import urllib.request

import pytest
from bs4 import BeautifulSoup

from app.domain.overview import node_row
from app.domain.totals import Totals
from app.kube.api.cache import ClusterCache
from app.kube.api.client import ClusterConfig, api_client, load_configuration
from app.kube.api.watch_wire import EVENT
from app.web.process import of as process_of
from extres_demo import testenv
from tests.helpers import browser, eventually
from tests.kube_helpers import api_calls, create_node, create_pod, grid_cells, set_pod_phase
from tests.kube_helpers import ready as nodes_ready
from tests.serving import Server

D = "example.com/dongle"


def metrics_text(web) -> str:
    """What the metrics port serves (the dashboard's own routes serve no metrics)."""
    return process_of(web.application).local.metrics.exposition().decode()


def test_metrics_export_and_latency(web, core, uid):
    node = f"{uid}-n"
    create_node(core, node, {D: "4"})
    create_pod(core, f"{uid}-p", node, {D: "1"})
    line = f'extres_node_extended_resource_requested{{node="{node}",resource="{D}"}} 1.0'
    eventually(lambda: line in metrics_text(web))
    assert web.get("/metrics").status_code == 404
    web.get("/")
    text = metrics_text(web)
    assert f'extres_node_extended_resource_capacity{{node="{node}",resource="{D}"}} 4.0' in text
    assert 'extres_request_duration_seconds_count{endpoint="overview.index",method="GET"}' in text
    assert "extres_cache_synced 1.0" in text
    assert 'extres_watch_relists_total{kind="pods"} 1.0' in text
    # a refused write is counted as an API error
    core.patch_node_status(
        node, [{"op": "replace", "path": "/status/capacity/example.com~1dongle", "value": "5"}]
    )
    web.post(f"/changes/nodes/{node}/resources", data={"resource": D, "quantity": "6", "expected": "4"})
    assert 'extres_api_errors_total{error="Conflict",operation="set nodes/status"} 1.0' in metrics_text(web)

    expected = {
        "node": node,
        "resource": D,
        "capacity": 5,
        "allocatable": 4,
        "requested": 1,
        "free": 3,
        "allocated": None,  # only DRA-served resources have claims holding devices
        "source": "status",
        "device_plugin": False,
        "drift": False,
        "shares_per_device": None,  # not shared
        "physical_devices": None,
        "unavailable": 1,  # capacity 5 over allocatable 4, until the kubelet copies it
    }
    eventually(lambda: web.get(f"/export.json?q={node}").get_json()["nodes"] == [expected])
    assert web.get(f"/export.json?q={node}").get_json()["totals"][D]["capacity"] == 5
    rows = list(csv.DictReader(io.StringIO(web.get(f"/export.csv?q={node}").get_data(as_text=True))))
    assert [(r["node"], r["resource"], r["requested"]) for r in rows] == [(node, D, "1")]
    assert web.get("/export.json?selector=a+in+b").status_code == 422


def test_kept_rows_follow_every_change_and_ignore_heartbeats(app, web, core, uid):
    """The overview keeps one row per node and rebuilds only rows an event touched; after each
    change made through the API the kept rows equal rows computed afresh, and the page shows it.
    Updates the overview does not show (a node heartbeat, a pod's status) keep the memoised grid."""
    cache = process_of(app).local.cluster.cache
    store = cache.store
    node, other = f"{uid}-a", f"{uid}-b"

    def rows_match_fresh():
        rows, totals = store.overview_rows()
        kept = {r.name: r for r in rows}
        fresh = {
            n.name: node_row(
                n,
                store.objects.requested_on(n.name),
                store.devices.read(lambda d, n=n: d.usage(n.name, n.labels)),
            )
            for n in store.objects.node_list()
        }
        assert kept == fresh
        assert totals == Totals.of(r.usage for r in fresh.values())  # kept totals moved by differences
        return kept

    def requested_on_page(name):
        return grid_cells(web.get(f"/?q={uid}").get_data(as_text=True)).get((name, D, "requested"))

    create_node(core, node, {D: "4"})
    create_node(core, other, {D: "2"}, labels={"zone": "b"})
    create_pod(core, f"{uid}-p1", node, {D: "1"})
    create_pod(core, f"{uid}-p2", node, {D: "2"})
    eventually(lambda: requested_on_page(node) == "3")
    assert rows_match_fresh()[node].usage[D].free == 1

    # a heartbeat: the kubelet updates the node's conditions, nothing the overview shows
    nodes_ready(core, node, other)

    def kept_row():
        return next(r for r in store.overview_rows()[0] if r.name == node)

    row = kept_row()
    ready = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": uid}
    rv = core.read_node(node).metadata.resource_version
    core.patch_node_status(node, {"status": {"conditions": [ready]}})
    eventually(lambda: int(store.objects.node(node).resource_version) > int(rv))
    # a pod's phase changes, but it still counts against the node
    set_pod_phase(core, f"{uid}-p1", "Running")
    eventually(lambda: cache.store.objects.pod("default", f"{uid}-p1").phase == "Running")
    assert kept_row() is row  # not rebuilt (other tests' nodes may change theirs meanwhile)

    # a pod ends: its request no longer counts, and the cache (watching only pods that have not
    # ended, by a field selector) is told it left the selection and drops it
    set_pod_phase(core, f"{uid}-p2", "Succeeded")
    eventually(lambda: requested_on_page(node) == "1")
    assert cache.store.objects.pod("default", f"{uid}-p2") is None
    rows_match_fresh()
    # capacity changes, a label moves the node into a selector, a pod is deleted
    core.patch_node_status(
        node, [{"op": "replace", "path": "/status/capacity/example.com~1dongle", "value": "6"}]
    )
    core.patch_node(node, {"metadata": {"labels": {"zone": "b"}}})
    core.delete_namespaced_pod(f"{uid}-p1", "default", grace_period_seconds=0)

    def settled():
        cells = grid_cells(web.get(f"/?q={uid}&selector=zone%3Db").get_data(as_text=True))
        assert cells[(node, D, "capacity")] == "6"
        assert cells[(node, D, "requested")] == "0"
        assert cells[("*", D, "capacity")] == "8"
        return True

    eventually(settled)
    rows_match_fresh()
    # a node goes away: its row with it
    core.delete_node(other)
    eventually(lambda: requested_on_page(other) is None and other not in rows_match_fresh())


def test_large_tables_are_paginated_server_side(web, core, uid):
    names = [f"{uid}-{i:03d}" for i in range(105)]
    threads = [threading.Thread(target=create_node, args=(core, n, {D: "1"})) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    def first_page():
        soup = BeautifulSoup(web.get(f"/?q={uid}-").get_data(as_text=True), "html.parser")
        assert "105 of" in soup.select_one(".summary").get_text()
        return soup

    soup = eventually(first_page)
    assert len(soup.select("#grid tbody tr[data-node]")) == 100
    assert grid_cells(str(soup))[("*", D, "capacity")] == "105"  # totals cover every page
    second = BeautifulSoup(web.get(f"/?q={uid}-&page=2").get_data(as_text=True), "html.parser")
    assert [tr["data-node"] for tr in second.select("#grid tbody tr[data-node]")] == names[100:]


def test_page_views_make_no_list_call(app, web, core, uid):
    node = f"{uid}-n"
    create_node(core, node, {D: "2"})
    eventually(lambda: web.get(f"/nodes/{node}").status_code == 200)
    with api_calls(app) as calls:
        metrics_text(web)
        for path in ("/", f"/?q={uid}", f"/nodes/{node}", "/pending/", "/export.json"):
            assert web.get(path).status_code == 200
        web.get("/", headers={"HX-Request": "true", "HX-Target": "grid"})
    assert [c for c in calls if c[0] == "GET"] == []


def test_a_410_gone_leads_to_a_relist(control_plane, core, uid):
    """The API server ends a watch whose resourceVersion is too old with an ERROR event of
    code 410. kube-apiserver 1.20's watch cache would not produce one on demand here, so the
    first watch stream is replaced by exactly that event; the lists before and after are real
    (in pages: a streamed list's relist is in test_streamed_lists.py)."""
    api = api_client(load_configuration(ClusterConfig("false", str(control_plane.kubeconfig))))
    cache = ClusterCache(api, watch_timeout=30, streaming=False)
    real_events = cache._events
    gone_sent = []

    def events(kind, rv):
        if kind == "pods" and not gone_sent:
            gone_sent.append(rv)
            status = b'{"kind": "Status", "code": 410, "message": "too old resource version"}'
            yield EVENT.decode(b'{"type": "ERROR", "object": ' + status + b"}")
            return
        yield from real_events(kind, rv)

    cache._events = events
    cache.start()
    try:
        eventually(lambda: cache.status["pods"].relists >= 2, timeout=30)
        create_pod(core, f"{uid}-after", "nowhere", {})
        eventually(lambda: cache.store.objects.pod("default", f"{uid}-after") is not None)
    finally:
        cache.stop()
        api.close()


def test_down_api_server_gives_a_stale_banner_not_an_error(make_app, tmp_path):
    plane = testenv.start(tmp_path / "kube", bare=True)
    try:
        app = make_app(kubeconfig=str(plane.kubeconfig))
        web = browser(app)
        with api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig)))) as api:
            from kubernetes import client

            client.CoreV1Api(api).create_node(
                {"metadata": {"name": "survivor"}, "status": {"capacity": {D: "3"}, "allocatable": {D: "3"}}}
            )
        eventually(
            lambda: grid_cells(web.get("/").get_data(as_text=True))[("survivor", D, "capacity")] == "3"
        )
        # every kind listed first (under load the pods' list was still under way when the API
        # server went: the page then says it is counting, not stale)
        assert process_of(app).local.cluster.cache.wait_synced(30)
        assert 'class="banner stale"' not in web.get("/").get_data(as_text=True)
        os.kill(int((plane.state_dir / "apiserver.pid").read_text()), signal.SIGKILL)

        def stale():
            html = web.get("/").get_data(as_text=True)
            assert 'class="banner stale"' in html
            return html

        html = eventually(stale, timeout=30)
        assert "Stale: showing what was known" in html
        assert grid_cells(html)[("survivor", D, "capacity")] == "3"  # what is known is still shown
        assert web.get("/nodes/survivor").status_code == 200
        assert web.get("/readyz").status_code == 503
        fragment = web.get("/", headers={"HX-Request": "true", "HX-Target": "grid"}).get_data(as_text=True)
        assert 'data-stale="true"' in fragment
    finally:
        plane.stop()


def test_metrics_are_served_on_their_own_port(control_plane):
    """gunicorn serves the dashboard on one port and Prometheus metrics on another."""
    server = Server(control_plane)
    try:
        with urllib.request.urlopen(server.metrics_url, timeout=10) as resp:
            text = resp.read().decode()
        assert "extres_cache_synced" in text and "extres_request_duration_seconds" in text
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(server.url + "/metrics", timeout=10)
        refused.value.close()  # an error response holds its connection open until closed
        assert refused.value.code == 404
    finally:
        server.stop()
