"""A pod whose allocated device the kubelet reports Unhealthy (``allocatedResourcesStatus``,
KEP-4680) is marked on its panel and among the holders on a Pending card."""

from __future__ import annotations

from tests import builders
from tests.helpers import page

GPU = "nvidia.com/gpu"


def sick_pod(cluster, name: str, node: str, gpus: int, unhealthy: list[str]) -> None:
    obj = builders.pod(name, node, {GPU: str(gpus)}, namespace="ml", rv=f"9{len(name)}")
    devices = [
        {"resourceID": f"GPU-{i}", "health": "Unhealthy" if f"GPU-{i}" in unhealthy else "Healthy"}
        for i in range(gpus)
    ]
    obj["status"]["containerStatuses"] = [
        {"name": "main", "allocatedResourcesStatus": [{"name": GPU, "resources": devices}]}
    ]
    cluster.store.apply_pod(obj)


def test_an_unhealthy_allocated_device_is_named_on_the_pods_panel_and_among_holders(client, cluster):
    cluster.node("n1", {GPU: "4"})
    sick_pod(cluster, "train", "n1", 4, ["GPU-2"])
    panel = page(client, "/pods/ml/train")
    said = panel.select_one("[data-unhealthy-devices]")
    assert said["data-unhealthy-devices"] == "1" and "GPU-2" in said.get_text() and GPU in said.get_text()
    cluster.pod("waits", None, {GPU: "2"}, message=f"0/1 nodes are available: 1 Insufficient {GPU}.")
    card = page(client, "/pending/").select_one('article[data-pod="default/waits"]')
    holder = card.select_one('[data-holder="ml/train"] [data-holder-unhealthy]')
    assert holder["data-holder-unhealthy"] == "1"


def test_a_healthy_pod_says_nothing(client, cluster):
    cluster.node("n1", {GPU: "4"})
    sick_pod(cluster, "fine", "n1", 2, [])
    assert not page(client, "/pods/ml/fine").select("[data-unhealthy-devices]")
