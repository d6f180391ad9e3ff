"""Required anti-affinity of pods already running is named beside the advice, never weighed: on
the nodes a pending pod fits (hostname topology), and cluster-wide for a zone or wider."""

from __future__ import annotations

from urllib.parse import quote

from bs4 import BeautifulSoup

D = "example.com/dongle"
SHORT = f"0/2 nodes are available: 2 Insufficient {D}."


def anti(topology: str) -> dict:
    term = {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": topology}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def text(resp) -> str:
    return BeautifulSoup(resp.get_data(as_text=True), "html.parser").get_text(" ", strip=True)


def test_the_plan_names_pods_with_anti_affinity_on_the_nodes_it_fits(client, cluster):
    cluster.node("n1", {D: "4"})
    cluster.node("n2", {D: "4"})
    cluster.pod("db-0", "n1", {D: "1"}, affinity=anti("kubernetes.io/hostname"))
    page = text(client.get(f"/plan/?requests={quote(D + '=1')}"))
    assert "inter-pod anti-affinity of pods already on 1 of the 2 nodes it fits" in page
    assert "zone or a wider topology" not in page


def test_a_zone_wide_anti_affinity_is_named_on_the_pending_page_and_the_plan(client, cluster):
    cluster.node("n1", {D: "1"})
    cluster.pod("db-0", "n1", {D: "1"}, affinity=anti("topology.kubernetes.io/zone"))
    cluster.pod("waiting", None, {D: "2"}, message=SHORT)
    sentence = "1 running pod has required anti-affinity over a zone or a wider topology"
    assert sentence in text(client.get("/pending/"))
    assert sentence in text(client.get(f"/plan/?requests={quote(D + '=1')}"))


def test_nodes_that_declare_features_are_named_not_weighed(client, cluster):
    cluster.node("n1", {D: "1"})
    node = cluster.store.node("n1")
    from dataclasses import replace

    cluster.store.put_node(replace(node, declares_features=True, resource_version="99"))
    cluster.pod("waiting", None, {D: "2"}, message=SHORT)
    sentence = "1 node declares features (NodeDeclaredFeatures)"
    assert sentence in text(client.get("/pending/"))
    assert sentence in text(client.get(f"/plan/?requests={quote(D + '=1')}"))


def test_declared_features_are_read_from_the_node_status():
    from app.kube.projections import NodeView

    view = NodeView.from_json(
        {"metadata": {"name": "n"}, "status": {"declaredFeatures": ["InPlacePodVerticalScaling"]}}
    )
    assert view.declares_features
    assert not NodeView.from_json({"metadata": {"name": "n"}, "status": {}}).declares_features
