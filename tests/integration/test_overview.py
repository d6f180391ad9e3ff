"""The overview and node pages against the real kube-apiserver."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup
from kubernetes import client

from app.web.process import of as process_of
from tests.helpers import eventually
from tests.kube_helpers import container, create_node, create_pod, grid_cells, node_cells, set_pod_phase

D, F = "example.com/dongle", "acme.io/fpga"


@pytest.fixture
def small_cluster(core, uid):
    a, b, c = f"{uid}-a", f"{uid}-b", f"{uid}-c"
    create_node(core, a, {D: "4", F: "2"}, labels={"pool": "fpga", "zone": "z1"})
    create_node(core, b, {D: "2"}, labels={"pool": "plain", "zone": "z1"}, allocatable={D: "1"})
    create_node(core, c, {}, labels={"pool": "plain", "zone": "z2"})
    create_pod(core, f"{uid}-p1", a, {D: "2"})
    # containers ask 1, an init container 2: the pod counts max(1, 2) = 2
    create_pod(core, f"{uid}-p2", a, {D: "1"}, initContainers=[container("init", {D: "2"})])
    create_pod(core, f"{uid}-done", a, {D: "1"})
    set_pod_phase(core, f"{uid}-done", "Succeeded")  # terminated: not counted
    create_pod(core, f"{uid}-p4", b, {D: "1"})
    create_pod(core, f"{uid}-unbound", None, {D: "5"})  # not bound: not counted
    create_pod(core, f"{uid}-p6", a, {F: "1"})
    return a, b, c


def test_overview_shows_capacity_allocatable_requested_free_and_totals(web, small_cluster, uid):
    a, b, c = small_cluster

    def numbers():
        cells = grid_cells(web.get(f"/?q={uid}").get_data(as_text=True))
        assert cells[(a, D, "requested")] == "4"
        assert cells[(a, F, "requested")] == "1"
        assert cells[(b, D, "requested")] == "1"
        return cells

    cells = eventually(numbers)
    assert [cells[(a, D, f)] for f in ("capacity", "allocatable", "requested", "free")] == [
        "4",
        "4",
        "4",
        "0",
    ]
    assert [cells[(a, F, f)] for f in ("capacity", "allocatable", "requested", "free")] == [
        "2",
        "2",
        "1",
        "1",
    ]
    assert [cells[(b, D, f)] for f in ("capacity", "allocatable", "requested", "free")] == [
        "2",
        "1",
        "1",
        "0",
    ]
    assert cells[(b, F, "none")] == "—"
    assert cells[(c, D, "none")] == "—"
    assert [cells[("*", D, f)] for f in ("capacity", "allocatable", "requested", "free")] == [
        "6",
        "5",
        "5",
        "0",
    ]
    assert [cells[("*", F, f)] for f in ("capacity", "allocatable", "requested", "free")] == [
        "2",
        "2",
        "1",
        "1",
    ]


def test_standard_resources_are_not_in_the_grid(web, small_cluster, uid):
    html = web.get(f"/?q={uid}").get_data(as_text=True)
    heads = [th["data-resource"] for th in BeautifulSoup(html, "html.parser").select("th.res")]
    assert heads == [F, D]
    assert not any(r in ("cpu", "memory", "pods") for (_, r, _) in grid_cells(html))


def test_filter_by_resource_selector_and_name(web, small_cluster, uid):
    a, b, c = small_cluster
    eventually(lambda: grid_cells(web.get(f"/?q={uid}").get_data(as_text=True))[(a, D, "requested")] == "4")

    only_fpga = grid_cells(web.get(f"/?q={uid}&resource={F}").get_data(as_text=True))
    assert {node for node, _, _ in only_fpga} == {a, "*"}
    assert {res for _, res, _ in only_fpga} == {F}

    plain = grid_cells(web.get(f"/?q={uid}&selector=pool%3Dplain").get_data(as_text=True))
    assert {node for node, _, _ in plain} == {b, c, "*"}
    assert plain[("*", D, "capacity")] == "2"

    zone = grid_cells(web.get(f"/?q={uid}&selector=zone+in+(z1),pool!%3Dfpga").get_data(as_text=True))
    assert {node for node, _, _ in zone} == {b, "*"}

    by_name = grid_cells(web.get(f"/?q={uid}-B").get_data(as_text=True))  # case-insensitive substring
    assert {node for node, _, _ in by_name} == {b, "*"}


def test_bad_filters_get_a_message_next_to_the_field(web, small_cluster, uid):
    resp = web.get(f"/?q={uid}&selector=zone+in+z1")
    assert resp.status_code == 200
    soup = BeautifulSoup(resp.get_data(as_text=True), "html.parser")
    assert "Label selector" in soup.select_one("#selector-error").get_text()
    resp = web.get("/?resource=cpu")
    soup = BeautifulSoup(resp.get_data(as_text=True), "html.parser")
    assert "'cpu'" in soup.select_one("#resource-error").get_text()


def test_active_search_returns_only_the_grid_fragment(web, small_cluster, uid):
    a, _, _ = small_cluster
    resp = web.get(f"/?q={uid}-a", headers={"HX-Request": "true", "HX-Target": "grid"})
    html = resp.get_data(as_text=True)
    assert resp.status_code == 200
    assert "<html" not in html
    # the grid, and beside it only what it updates out of band (field errors, freshness)
    top = BeautifulSoup(html, "html.parser").find_all(recursive=False)
    assert [t["id"] for t in top if not t.has_attr("hx-swap-oob")] == ["grid"]
    assert "HX-Request" in resp.headers.get("Vary", "")
    assert {node for node, _, _ in grid_cells(html)} == {a, "*"}
    full = web.get(f"/?q={uid}-a")
    assert "<html" in full.get_data(as_text=True)
    assert "HX-Request" in full.headers.get("Vary", "")


def test_device_plugin_resources_are_marked(web, core, uid):
    create_node(core, f"{uid}-gpu", {"nvidia.com/gpu": "8", D: "1"})

    def badges():
        soup = BeautifulSoup(web.get(f"/?q={uid}").get_data(as_text=True), "html.parser")
        return {th["data-resource"]: bool(th.select(".badge.plugin")) for th in soup.select("th.res")}

    assert eventually(badges) == {D: False, "nvidia.com/gpu": True}


def test_page_follows_changes_made_through_the_api(web, core, uid):
    node = f"{uid}-n"
    create_node(core, node, {D: "3"})
    eventually(lambda: grid_cells(web.get(f"/?q={uid}").get_data(as_text=True))[(node, D, "free")] == "3")
    create_pod(core, f"{uid}-late", node, {D: "2"})
    eventually(lambda: grid_cells(web.get(f"/?q={uid}").get_data(as_text=True))[(node, D, "free")] == "1")
    core.delete_namespaced_pod(f"{uid}-late", "default", grace_period_seconds=0)
    eventually(lambda: grid_cells(web.get(f"/?q={uid}").get_data(as_text=True))[(node, D, "free")] == "3")


def test_node_page_shows_every_resource_limits_overhead_and_pods(web, core, admin_api, uid):
    node = f"{uid}-n"
    create_node(core, node, {D: "4"})
    client.NodeV1Api(admin_api).create_runtime_class(
        {
            "apiVersion": "node.k8s.io/v1",
            "kind": "RuntimeClass",
            "metadata": {"name": f"{uid}-rc"},
            "handler": "runc",
            "overhead": {"podFixed": {"cpu": "250m", "memory": "64Mi"}},
        }
    )
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{uid}-p"},
        "spec": {
            "nodeName": node,
            "runtimeClassName": f"{uid}-rc",
            "containers": [
                {
                    "name": "main",
                    "image": "registry.example/test:1",
                    "resources": {
                        "requests": {"cpu": "500m", "memory": "128Mi", D: "2"},
                        "limits": {"cpu": "1", "memory": "256Mi", D: "2"},
                    },
                }
            ],
        },
    }
    core.create_namespaced_pod("default", body)
    create_pod(core, f"{uid}-plain", node, {"cpu": "100m"})  # no extended request: not listed

    def page():
        cells = node_cells(web.get(f"/nodes/{node}").get_data(as_text=True))
        assert cells[(D, "requested")] == "2"
        assert cells[("cpu", "requested")] == "850m"  # 500m + 100m + 250m overhead
        return cells

    cells = eventually(page)
    assert cells[("cpu", "capacity")] == "4"
    assert cells[("cpu", "limits")] == "1.25"  # 1 + 250m overhead, in cores
    assert cells[("memory", "requested")] == "192Mi"
    assert cells[("pods", "requested")] == "2"  # each pod bound there takes one "pods"
    assert cells[(D, "limits")] == "2"
    assert cells[(D, "free")] == "2"
    soup = BeautifulSoup(web.get(f"/nodes/{node}").get_data(as_text=True), "html.parser")
    assert [tr["data-pod"] for tr in soup.select("#node-pods tr[data-pod]")] == [f"default/{uid}-p"]


def test_unknown_node_is_a_readable_404(web):
    resp = web.get("/nodes/no-such-node")
    assert resp.status_code == 404
    text = BeautifulSoup(resp.get_data(as_text=True), "html.parser").get_text()
    assert "There is no node named 'no-such-node'." in text


def test_health_endpoints(web):
    assert web.get("/healthz").status_code == 200
    assert eventually(lambda: web.get("/readyz").status_code == 200)


def test_an_unreadable_object_is_counted_on_readyz_named_in_a_banner_and_the_app_stays_ready(web, app):
    """One object the decoders could not read (as the watch would record it): the app stays
    ready and live, /readyz (open to anyone) counts it without naming it, and every page names it
    with the path that failed."""
    from app.kube.wire.reading import Unreadable

    cache = process_of(app).local.cluster.cache
    eventually(lambda: web.get("/readyz").status_code == 200)
    problem = Unreadable("pods", "prod", "db-0", "7", "Expected `str`, got `int` - at `$.spec.nodeName`")
    cache.unreadable.failed(problem)
    try:
        resp = web.get("/readyz")
        assert resp.status_code == 200
        assert resp.get_data(as_text=True).splitlines() == [
            "ok",
            "1 pod could not be read (left out; the log names them)",
        ]
        banner = BeautifulSoup(web.get("/").get_data(as_text=True), "html.parser").select("#freshness p")
        assert [p.get_text(" ", strip=True).split(":")[0] for p in banner] == ["1 pod could not be read"]
        assert "prod/db-0: Expected `str`, got `int` - at `$.spec.nodeName`" in banner[0].get_text()
    finally:
        cache.unreadable.read("pods", problem.key)
    assert web.get("/readyz").get_data(as_text=True) == "ok\n"
