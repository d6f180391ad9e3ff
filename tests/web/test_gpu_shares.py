"""Shares told apart on the pages: a time-sliced node reads "8 GPUs x 10 shares = 80 slots
(time-slicing)" (with a multiplication sign) on its row, a renamed node's "nvidia.com/gpu: 0"
reads "all shared", labels that disagree are flagged, the strip keeps physical GPUs and slots
apart, and a pending pod asking for 2 or more shares is warned. The labels are those NVIDIA's
device plugin and GPU feature discovery write (app/domain/gpu_sharing.py)."""

from __future__ import annotations

from tests.helpers import page

GPU = "nvidia.com/gpu"
SHARED = "nvidia.com/gpu.shared"


def plugin_labels(count: int, replicas: int, strategy: str) -> dict[str, str]:
    return {f"{GPU}.count": str(count), f"{GPU}.replicas": str(replicas), f"{GPU}.sharing-strategy": strategy,
            f"{GPU}.product": "NVIDIA-A100-SXM4-40GB" + ("-SHARED" if replicas > 1 else "")}  # fmt: skip


def test_shared_nodes_read_as_gpus_times_shares_and_the_strip_keeps_them_apart(client, cluster):
    cluster.node("sliced", {GPU: "80"}, labels=plugin_labels(8, 10, "time-slicing"))
    renamed = plugin_labels(4, 2, "mps")
    renamed[f"{GPU}.product"] = "NVIDIA-A100-SXM4-40GB"  # renamed: no -SHARED
    cluster.node("renamed", {GPU: "0", SHARED: "8"}, labels=renamed)
    cluster.node("whole", {GPU: "16"}, labels=plugin_labels(16, 1, "none"))
    cluster.node("liar", {GPU: "40"}, labels=plugin_labels(8, 10, "time-slicing"))
    grid = page(client, "/")
    sliced = grid.select_one('tr[data-node="sliced"] [data-shares]')
    assert sliced.get_text() == "8 GPUs \u00d7 10 shares = 80 slots (time-slicing)"
    shared = grid.select_one('tr[data-node="renamed"] [data-shares]')
    assert (
        shared["data-shares"] == SHARED and "all shared" in shared.get_text() and "(mps)" in shared.get_text()
    )
    assert not grid.select('tr[data-node="whole"] [data-shares]')
    assert grid.select_one('tr[data-node="liar"] [data-labels-disagree]')["data-labels-disagree"] == GPU
    assert grid.select_one('tr[data-node="liar"] [data-shares]')["data-physical"] == "4"  # allocatable wins
    physical = grid.select_one(f'.strip li[data-resource="{GPU}"] [data-physical]')
    # whole: 16 (whole) + 0 (renamed's nvidia.com/gpu); shared: 8 + 4 + 4 behind 80 + 8 + 40 slots
    assert physical.select_one('[data-field="physical"]').get_text() == "32"
    assert "16 whole, 16 shared as 128 slots on 3 nodes, 1 with labels that disagree" in physical.get_text()
    slots = grid.select_one(f'.strip li[data-resource="{GPU}"] [data-field="allocatable"]').get_text()
    assert slots == "136"  # the scheduler's number, slots and whole GPUs as the API has them


def test_a_pending_pod_asking_for_two_shares_is_warned(client, cluster):
    cluster.node("mps", {GPU: "0", SHARED: "8"}, labels=plugin_labels(4, 2, "mps"))
    message = f"0/1 nodes are available: 1 Insufficient {SHARED}."
    cluster.pod("two-shares", None, {SHARED: "9"}, message=message)
    card = page(client, "/pending/").select_one('article[data-pod="default/two-shares"]')
    warned = card.select_one("[data-shares-asked]")
    assert warned["data-shares-asked"] == SHARED and "refused at admission" in warned.get_text()


def test_the_node_page_and_the_metrics_tell_shares_from_devices(client, cluster):
    from app.metrics.nodes import NodeFamilies

    cluster.node("sliced", {GPU: "80"}, labels=plugin_labels(8, 10, "time-slicing"))
    cluster.node("whole", {GPU: "8"})
    badge = page(client, "/nodes/sliced").select_one(f'tr[data-resource="{GPU}"] [data-shares]')
    assert (badge["data-physical"], badge["data-replicas"]) == ("8", "10")
    text = NodeFamilies().text(cluster.store).decode()
    wanted = {
        'extres_node_extended_resource_shares_per_device{node="sliced",resource="nvidia.com/gpu"} 10.0',
        'extres_node_extended_resource_physical_devices{node="sliced",resource="nvidia.com/gpu"} 8.0',
    }
    assert wanted <= set(text.splitlines())
    assert 'physical_devices{node="whole"' not in text  # a node that does not share has no such sample


def test_the_exports_give_devices_behind_shares_apart_from_slots(client, cluster):
    import csv
    import io

    cluster.node("sliced", {GPU: "80"}, labels=plugin_labels(8, 10, "time-slicing"))
    cluster.node("whole", {GPU: "8"}, allocatable={GPU: "7"})
    rows = {
        r["node"]: r for r in csv.DictReader(io.StringIO(client.get("/export.csv").get_data(as_text=True)))
    }
    sliced = rows["sliced"]
    assert (sliced["allocatable"], sliced["shares_per_device"], sliced["physical_devices"]) == (
        "80",
        "10",
        "8",
    )
    assert (rows["whole"]["shares_per_device"], rows["whole"]["unavailable"]) == ("", "1")
    nodes = {r["node"]: r for r in client.get("/export.json").get_json()["nodes"]}
    assert nodes["sliced"]["physical_devices"] == 8 and nodes["whole"]["physical_devices"] is None
