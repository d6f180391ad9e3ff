"""A GPU a device plugin reports unhealthy, on the real API server and kube-scheduler. The test
plays the device plugin's and kubelet's part by hand: it writes the node's status (capacity 8,
allocatable 7), then allocatable 8 again when the GPU comes back. The scheduler places by
allocatable: an 8-GPU pod waits while one is lost and is bound once it returns; the dashboard
says "1 unhealthy" meanwhile and nothing once it is back, and its history keeps the return."""

from __future__ import annotations

from typing import Any

import pytest
from bs4 import BeautifulSoup

from tests.helpers import eventually
from tests.integration.test_history import history
from tests.kube_helpers import create_node, create_pod, ready

pytestmark = [pytest.mark.kube, pytest.mark.scheduler, pytest.mark.compat]
GPU = "nvidia.com/gpu"


def grid_row(web: Any, node: str) -> Any:
    page = BeautifulSoup(web.get(f"/?q={node}").get_data(as_text=True), "html.parser")
    return page.select_one(f'tr[data-node="{node}"]')


def test_a_lost_gpu_holds_an_8_gpu_pod_back_and_reads_unhealthy_until_it_returns(core, uid, web, scheduler):
    name = f"{uid}-g"
    create_node(core, name, {GPU: "8"}, labels={"group": uid}, allocatable={GPU: "7"})
    ready(core, name)
    create_pod(core, f"{uid}-p", None, {GPU: "8"}, nodeSelector={"group": uid})

    def unschedulable() -> str:
        pod = core.read_namespaced_pod(f"{uid}-p", "default")
        found = [
            c for c in pod.status.conditions or () if c.type == "PodScheduled" and c.reason == "Unschedulable"
        ]
        return found[0].message if found else ""

    said = eventually(unschedulable, timeout=30)
    assert f"Insufficient {GPU}" in said  # the scheduler counts allocatable (7), not capacity (8)
    row = eventually(
        lambda: (r := grid_row(web, name)) is not None and r.select_one("[data-unhealthy]") and r
    )
    badge = row.select_one("[data-unhealthy]")
    assert (badge["data-unhealthy"], badge["data-count"]) == (
        GPU,
        "1",
    ) and "unhealthy since" in badge.get_text()
    # the device plugin reports the GPU healthy again: the kubelet's allocatable is 8
    core.patch_node_status(name, {"status": {"allocatable": {GPU: "8"}}})
    bound = eventually(lambda: core.read_namespaced_pod(f"{uid}-p", "default").spec.node_name, timeout=30)
    assert bound == name
    assert eventually(lambda: not grid_row(web, name).select("[data-unhealthy]"))
    # the capacity history keeps the GPU's return: allocatable 7 -> 8 on that node
    kept = eventually(
        lambda: [
            r for r in history(web, f"node={name}") if (r["field"], r["change"]) == ("allocatable", "7 → 8")
        ],
        timeout=30,
    )
    assert kept[0]["resource"] == GPU and kept[0]["move"] == "1 GPU back"
