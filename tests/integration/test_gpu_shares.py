"""Shares on the real API server and kube-scheduler. The test publishes the shapes NVIDIA's device
plugin and GPU feature discovery write (labels under the resource's name: count, replicas,
sharing-strategy; NVIDIA/k8s-device-plugin internal/lm/resource.go), for a resource of its own,
playing the plugin's part by writing the node's labels and status: a time-sliced node (1 GPU x 4
shares = 4 slots) and one whose labels disagree with its capacity (1 x 4 said, 2 advertised).
The dashboard reads the rows and the strip in GPUs and slots apart; the scheduler, which counts
slots, binds as many one-share pods as What-if says fit."""

from __future__ import annotations

from typing import Any

import pytest
from bs4 import BeautifulSoup

from tests.helpers import eventually
from tests.kube_helpers import create_node, create_pod, ready

pytestmark = [pytest.mark.kube, pytest.mark.scheduler]


def soup(web: Any, url: str) -> BeautifulSoup:
    return BeautifulSoup(web.get(url).get_data(as_text=True), "html.parser")


def test_time_sliced_gpus_read_as_gpus_and_slots_and_the_scheduler_counts_slots(core, uid, web, scheduler):
    resource = f"example.com/gpu{uid[-8:].replace('-', '')}"
    said = {
        f"{resource}.count": "1",
        f"{resource}.replicas": "4",
        f"{resource}.sharing-strategy": "time-slicing",
    }
    sliced, liar = f"{uid}-sliced", f"{uid}-liar"
    create_node(core, sliced, {resource: "4"}, labels={"group": uid, **said})
    create_node(core, liar, {resource: "2"}, labels={"group": uid, **said})
    ready(core, sliced, liar)

    def rows() -> BeautifulSoup | None:
        page = soup(web, f"/?q={uid}")
        return page if page.select_one(f'tr[data-node="{liar}"] [data-shares]') else None

    page = eventually(rows, timeout=30)
    shares = page.select_one(f'tr[data-node="{sliced}"] [data-shares]')
    assert shares.get_text() == "1 GPU \u00d7 4 shares = 4 slots (time-slicing)"
    assert (
        page.select_one(f'tr[data-node="{liar}"] [data-labels-disagree]')["data-labels-disagree"] == resource
    )
    assert page.select_one(f'tr[data-node="{liar}"] [data-shares]')["data-physical"] == "1"  # 2 slots / 4
    physical = soup(web, "/").select_one(f'.strip li[data-resource="{resource}"] [data-physical]')
    assert physical.select_one('[data-field="physical"]').get_text() == "2"
    assert "0 whole, 2 shared as 6 slots on 2 nodes" in physical.get_text()
    plan = soup(web, f"/plan/?requests={resource}%3D1&replicas=7")
    assert "Fits 6 more pods of this shape" in plan.get_text()  # What-if stays in slots
    for i in range(7):
        create_pod(core, f"{uid}-share-{i}", None, {resource: "1"})

    def placed() -> tuple[int, int] | None:
        pods = [core.read_namespaced_pod(f"{uid}-share-{i}", "default") for i in range(7)]
        bound = sum(1 for p in pods if p.spec.node_name)
        waiting = sum(1 for p in pods if any(c.reason == "Unschedulable" for c in p.status.conditions or ()))
        return (bound, waiting) if bound + waiting == 7 else None

    assert eventually(placed, timeout=30) == (6, 1)  # the scheduler counts slots, as the page says


def test_a_gke_shared_node_reads_as_gpus_times_clients(core, uid, web):
    """GKE keeps nvidia.com/gpu and labels the node with its sharing: 2 GPUs of 4 clients."""
    name = f"{uid}-gke"
    gke = {
        "cloud.google.com/gke-gpu-sharing-strategy": "time-sharing",
        "cloud.google.com/gke-max-shared-clients-per-gpu": "4",
    }
    create_node(core, name, {"nvidia.com/gpu": "8"}, labels=gke)
    badge = eventually(
        lambda: soup(web, f"/?q={name}").select_one(f'tr[data-node="{name}"] [data-shares]'), timeout=30
    )
    assert badge.get_text() == "2 GPUs \u00d7 4 shares = 8 slots (time-sharing)"
