"""A node whose GPUs HAMi shares (its device plugin's register, its scheduler's allocations, written
here as HAMi's encoders write them: tests/unit/test_hami.py cites them): the node page has one row
per physical GPU with its pods, memory and cores given against its own, never "3 of 20 GPUs" for
20 vGPUs on 2 GPUs; a register that does not parse is said."""

from __future__ import annotations

import json

from bs4 import BeautifulSoup

from tests import builders

GPU = "nvidia.com/gpu"
A, B = "GPU-aaaaaaaa-0000-0000-0000-000000000001", "GPU-bbbbbbbb-0000-0000-0000-000000000002"
REGISTER = json.dumps(
    [
        {
            "id": A,
            "count": 10,
            "devmem": 40960,
            "devcore": 100,
            "type": "NVIDIA-A100",
            "mode": "hami-core",
            "health": True,
        },
        {
            "id": B,
            "index": 1,
            "count": 10,
            "devmem": 40960,
            "devcore": 100,
            "type": "NVIDIA-A100",
            "mode": "hami-core",
            "health": True,
        },
    ]
)


def hami_node(cluster, register: str = REGISTER) -> None:
    cluster.store.apply_node(
        builders.node(
            "h1",
            {GPU: "20"},
            annotations={"hami.io/node-nvidia-register": register, "hami.io/device-cordon": B},
        )
    )


def hami_pod(cluster, name: str, allocated: str) -> None:
    cluster.store.apply_pod(
        builders.pod(name, "h1", {GPU: "1"}, namespace="ml")
        | {
            "metadata": {
                "name": name,
                "namespace": "ml",
                "resourceVersion": "1",
                "annotations": {"hami.io/vgpu-devices-allocated": allocated},
            }
        }
    )


def test_one_row_per_physical_gpu_with_its_pods_memory_and_cores(client, cluster):
    hami_node(cluster)
    hami_pod(cluster, "infer", f"{A},NVIDIA,10240,25:;")
    hami_pod(cluster, "train", f"{A},NVIDIA,10240,25:;{B},NVIDIA,20480,50:;")
    page = BeautifulSoup(client.get("/nodes/h1").get_data(as_text=True), "html.parser")
    rows = {r["data-gpu"]: r for r in page.select("#node-hami tr[data-gpu]")}
    assert list(rows) == [A, B]  # two GPUs, whatever the 20 vGPUs advertised
    a, b = rows[A], rows[B]
    assert a.select_one('[data-field="cores"]').get_text(strip=True) == "50 % of 100 %"
    assert a.select_one('[data-field="memory"]').get_text(" ", strip=True) == "20 GiB of 40 GiB"
    assert a.select_one('[data-field="vgpus"]').get_text(strip=True) == "2 of 10"
    assert [x.get_text() for x in a.select('[data-field="pods"] a')] == ["ml/infer", "ml/train"]
    assert (
        "cordoned" in b.th.get_text()
        and b.select_one('[data-field="memory"]').get_text(" ", strip=True) == "20 GiB of 40 GiB"
    )


def test_a_register_that_does_not_parse_is_said_and_a_node_without_hami_has_no_section(client, cluster):
    hami_node(cluster, "GPU-1,2,3:")
    page = BeautifulSoup(client.get("/nodes/h1").get_data(as_text=True), "html.parser")
    assert "a GPU of 3 fields" in page.select_one("[data-hami-problem]").get_text()
    cluster.node("plain", {GPU: "2"})
    assert (
        BeautifulSoup(client.get("/nodes/plain").get_data(as_text=True), "html.parser").select_one(
            "#hami-gpus"
        )
        is None
    )


def test_kai_gpu_groups_one_row_per_gpu_with_its_reservation_pod_and_fractions(client, cluster):
    cluster.store.apply_node(builders.node("k1", {GPU: "4"}, labels={"nvidia.com/gpu.memory": "40960"}))
    group = {"runai-gpu-group": "g1"}
    cluster.store.apply_pod(
        builders.pod(
            "gpu-reservation-k1-abc", "k1", {GPU: "1"}, namespace="kai-resource-reservation", labels=group
        )
    )
    for name, said in (("a", {"gpu-fraction": "0.5"}), ("b", {"gpu-memory": "10240"})):
        pod = builders.pod(name, "k1", {"cpu": "1"}, namespace="ml", labels=group)
        pod["metadata"]["annotations"] = said
        cluster.store.apply_pod(pod)
    page = BeautifulSoup(client.get("/nodes/k1").get_data(as_text=True), "html.parser")
    [row] = page.select("#node-kai tr[data-group]")
    assert (
        row.select_one('[data-field="given"]').get_text(strip=True) == "0.75 of 1 GPU"
    )  # half, and 10 of 40 GiB
    assert " ".join(row.select_one('[data-field="pods"]').get_text().split()) == "ml/a (0.5), ml/b (0.25)"
    assert "gpu-reservation-k1-abc" in row.select_one('[data-field="reservation"]').get_text()


def test_the_devices_page_lists_every_shared_gpu_with_its_node(client, cluster):
    hami_node(cluster)
    hami_pod(cluster, "infer", f"{A},NVIDIA,10240,25:;")
    cluster.store.apply_node(builders.node("k1", {GPU: "4"}))
    reservation = builders.pod(
        "gpu-reservation-k1-abc", "k1", {GPU: "1"}, namespace="kai-resource-reservation"
    )
    reservation["metadata"]["labels"] = {"runai-gpu-group": "g1"}
    cluster.store.apply_pod(reservation)
    page = BeautifulSoup(client.get("/devices/").get_data(as_text=True), "html.parser")
    assert [r["data-gpu"] for r in page.select("#shared-hami tr[data-gpu]")] == [A, B]
    assert [a.get_text() for a in page.select("#shared-hami td[data-label=Node] a")] == ["h1", "h1"]
    [group] = page.select("#shared-kai tr[data-group]")
    assert (
        group["data-group"] == "g1" and group.select_one("td[data-label=Node]").get_text(strip=True) == "k1"
    )


def test_a_pending_pod_asking_hami_for_gpu_memory_is_told_whether_a_gpu_has_it(client, cluster):
    hami_node(cluster)
    hami_pod(cluster, "infer", f"{A},NVIDIA,30720,25:;")
    hami_pod(cluster, "train", f"{B},NVIDIA,30720,50:;")
    waiting = builders.pod(
        "big",
        None,
        {GPU: "1", "nvidia.com/gpumem": "20480"},
        namespace="ml",
        unschedulable="0/1 nodes are available",
    )
    cluster.store.apply_pod(waiting)
    page = BeautifulSoup(client.get("/pending/").get_data(as_text=True), "html.parser")
    note = page.select_one("[data-sharing-fit]").get_text(strip=True)
    assert note.startswith(
        "HAMi: no node has 1 GPU with 20 GiB free (the most memory free on one GPU: 10 GiB"
    )


def test_a_waiting_kai_fraction_is_told_whether_a_gpu_group_has_room(client, cluster):
    cluster.store.apply_node(builders.node("k1", {GPU: "4"}))
    group = {"runai-gpu-group": "g1"}
    reservation = builders.pod(
        "gpu-reservation-k1-abc", "k1", {GPU: "1"}, namespace="kai-resource-reservation"
    )
    reservation["metadata"]["labels"] = group
    cluster.store.apply_pod(reservation)
    held = builders.pod("a", "k1", {"cpu": "1"}, namespace="ml", labels=group)
    held["metadata"]["annotations"] = {"gpu-fraction": "0.75"}
    cluster.store.apply_pod(held)
    waiting = builders.pod(
        "b",
        None,
        {"cpu": "1"},
        namespace="ml",
        unschedulable="0/1 nodes are available",
        schedulerName="kai-scheduler",
    )
    waiting["metadata"]["annotations"] = {"gpu-fraction": "0.5"}
    cluster.store.apply_pod(waiting)
    page = BeautifulSoup(client.get("/pending/").get_data(as_text=True), "html.parser")
    note = page.select_one("[data-sharing-fit]")
    assert note is not None and note.get_text(strip=True).startswith(
        "KAI: no GPU group has 0.5 of its GPU left"
    )
