"""Inter-pod anti-affinity of the pods already placed: weighed by What-if (which reads the pasted
pod's labels), named beside the advice on the pending page (a pending pod's labels are not kept
per shape)."""

from __future__ import annotations

import json
from urllib.parse import quote

from bs4 import BeautifulSoup

D = "example.com/dongle"
SHORT = f"0/2 nodes are available: 2 Insufficient {D}."
ZONE = "topology.kubernetes.io/zone"


def anti(topology: str) -> dict:
    term = {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": topology}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def text(resp) -> str:
    return BeautifulSoup(resp.get_data(as_text=True), "html.parser").get_text(" ", strip=True)


def room(client, manifest: dict) -> dict[str, int]:
    soup = BeautifulSoup(
        client.get(f"/plan/?manifest={quote(json.dumps(manifest))}").get_data(as_text=True), "html.parser"
    )
    return {
        tr["data-node"]: int(tr.select_one('[data-field="fits"]').get_text())
        for tr in soup.select("table.room tr[data-node]")
    }


def pod(labels: dict[str, str], **spec) -> dict:
    container = {"name": "c", "resources": {"requests": {D: "1"}, "limits": {D: "1"}}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": labels},
        "spec": {"containers": [container], **spec},
    }


def test_what_if_keeps_a_pod_off_the_domain_of_a_placed_pod_whose_anti_affinity_selects_it(client, cluster):
    cluster.node("n1", {D: "4"}, labels={ZONE: "a"})
    cluster.node("n2", {D: "4"}, labels={ZONE: "a"})
    cluster.node("n3", {D: "4"}, labels={ZONE: "b"})
    cluster.pod("db-0", "n1", {D: "1"}, labels={"app": "db"}, affinity=anti(ZONE))
    assert room(client, pod({"app": "db"})) == {"n3": 4}  # zone a is barred to app=db
    assert room(client, pod({"app": "web"})) == {"n1": 3, "n2": 4, "n3": 4}
    page = text(client.get(f"/plan/?manifest={quote(json.dumps(pod({'app': 'db'})))}"))
    assert "Not modelled" not in page and "zone or a wider topology" not in page


def test_what_if_places_a_pod_with_its_own_anti_affinity_one_to_a_node(client, cluster):
    cluster.node("n1", {D: "4"}, labels={"kubernetes.io/hostname": "n1"})
    cluster.node("n2", {D: "4"}, labels={"kubernetes.io/hostname": "n2"})
    cluster.pod("db-0", "n1", {D: "1"}, labels={"app": "db"})
    assert room(client, pod({"app": "db"}, affinity=anti("kubernetes.io/hostname"))) == {"n2": 1}


def test_the_pending_page_names_a_zone_wide_anti_affinity(client, cluster):
    cluster.node("n1", {D: "1"})
    cluster.pod("db-0", "n1", {D: "1"}, affinity=anti(ZONE))
    cluster.pod("waiting", None, {D: "2"}, message=SHORT)
    sentence = "1 running pod has required anti-affinity over a zone or a wider topology"
    assert sentence in text(client.get("/pending/"))


def test_nodes_that_declare_features_are_named_not_weighed(client, cluster):
    cluster.node("n1", {D: "1"})
    node = cluster.store.objects.node("n1")
    from dataclasses import replace

    cluster.store.put_node(replace(node, declares_features=True, resource_version="99"))
    cluster.pod("waiting", None, {D: "2"}, message=SHORT)
    sentence = "1 node declares features (NodeDeclaredFeatures)"
    assert sentence in text(client.get("/pending/"))
    assert sentence in text(client.get(f"/plan/?requests={quote(D + '=1')}"))


def test_declared_features_are_read_from_the_node_status():
    from app.kube.wire.projections import NodeView

    view = NodeView.from_json(
        {"metadata": {"name": "n"}, "status": {"declaredFeatures": ["InPlacePodVerticalScaling"]}}
    )
    assert view.declares_features
    assert not NodeView.from_json({"metadata": {"name": "n"}, "status": {}}).declares_features
