"""A device the kubelet reports Unhealthy for a running pod (``allocatedResourcesStatus``,
KEP-4680, beta and on by default from Kubernetes 1.36), on the real API server. The test plays the
kubelet's part by hand: it writes the pod's container status with its devices' health, as the
kubelet does from its device plugin's report. The pod's panel names the device."""

from __future__ import annotations

from typing import Any

import pytest
from bs4 import BeautifulSoup

from app.kube.api.watch_wire import server_minor
from tests.helpers import eventually
from tests.kube_helpers import create_node, create_pod, ready

pytestmark = pytest.mark.kube
GPU = "nvidia.com/gpu"


def test_the_kubelets_unhealthy_device_report_is_named_on_the_pods_panel(admin_api, core, uid, web):
    if (server_minor(admin_api) or 99) < 36:
        pytest.skip("allocatedResourcesStatus is alpha and off before Kubernetes 1.36")
    node = f"{uid}-n"
    create_node(core, node, {GPU: "2"})
    ready(core, node)
    create_pod(core, f"{uid}-p", node, {GPU: "2"})
    running = eventually(
        lambda: (p := core.read_namespaced_pod(f"{uid}-p", "default")).status.container_statuses and p
    )
    devices = [{"resourceID": "GPU-a", "health": "Healthy"}, {"resourceID": "GPU-b", "health": "Unhealthy"}]
    statuses = [
        {"name": c.name, "image": c.image, "imageID": c.image_id or "", "ready": c.ready, "restartCount": 0,
         "state": {"running": {"startedAt": "2026-12-06T00:00:00Z"}},
         "allocatedResourcesStatus": [{"name": GPU, "resources": devices}]}
        for c in running.status.container_statuses
    ]  # fmt: skip
    core.patch_namespaced_pod_status(f"{uid}-p", "default", {"status": {"containerStatuses": statuses}})
    stored = core.read_namespaced_pod(f"{uid}-p", "default").status.container_statuses[0]
    assert [d.health for d in stored.allocated_resources_status[0].resources] == ["Healthy", "Unhealthy"]

    def named() -> Any:
        panel = BeautifulSoup(web.get(f"/pods/default/{uid}-p").get_data(as_text=True), "html.parser")
        return panel.select_one("[data-unhealthy-devices]")

    said = eventually(named, timeout=30)
    assert (
        said["data-unhealthy-devices"] == "1"
        and "GPU-b" in said.get_text()
        and "GPU-a" not in said.get_text()
    )
