"""A device plugin that loses a GPU lowers allocatable under capacity (8 -> 7): the row and the
node page say "1 of 8 GPUs unhealthy since <first seen>" (shares in GPUs), the strip "1 unhealthy",
the per-node metric family carries it, and it clears when the GPU comes back. An
admin-advertised resource whose allocatable has not caught up is not called unhealthy."""

from __future__ import annotations

from tests.helpers import page

GPU = "nvidia.com/gpu"
D = "example.com/dongle"


def test_a_lost_gpu_reads_unhealthy_since_first_seen_and_clears_when_it_returns(client, cluster):
    cluster.node("gpu-1", {GPU: "8"}, allocatable={GPU: "7"})
    cluster.node("gpu-2", {GPU: "8"})
    grid = page(client, "/")
    [badge] = grid.select('tr[data-node="gpu-1"] [data-unhealthy]')
    assert (badge["data-unhealthy"], badge["data-count"]) == (GPU, "1")
    assert " ".join(badge.get_text().split()).startswith("1 of 8 GPUs unhealthy since")
    assert badge.get_text().endswith(" UTC")
    assert not grid.select('tr[data-node="gpu-2"] [data-unhealthy]')
    strip = grid.select_one(f'.strip li[data-resource="{GPU}"] [data-field="unhealthy"]')
    assert strip.get_text() == "1 unhealthy on 1 node"
    since = badge.get_text().split("since ", 1)[1]
    node = page(client, "/nodes/gpu-1").select_one(f'tr[data-resource="{GPU}"] [data-unhealthy]')
    assert node["data-count"] == "1" and node.get_text().endswith(f"since {since}")
    cluster.node("gpu-1", {GPU: "8"})  # the device plugin reports it healthy again
    grid = page(client, "/")
    assert not grid.select("[data-unhealthy]") and not grid.select('[data-field="unhealthy"]')


def test_unhealthy_shares_are_said_in_gpus_with_the_shares_beside(client, cluster):
    # 2 GPUs x 4 shares (MPS, renamed): one GPU lost takes its 4 shares with it
    labels = {f"{GPU}.replicas": "4", f"{GPU}.sharing-strategy": "mps", f"{GPU}.count": "2"}
    shared = f"{GPU}.shared"
    cluster.node("gpu-8", {shared: "8", GPU: "0"}, allocatable={shared: "4", GPU: "0"}, labels=labels)
    [badge] = page(client, "/").select(f'tr[data-node="gpu-8"] [data-unhealthy="{shared}"]')
    text = " ".join(badge.get_text().split())
    assert text.startswith("1 of 2 GPUs unhealthy (4 of 8 shares) since") and badge["data-devices"] == "1"
    node = page(client, "/nodes/gpu-8").select_one(f'tr[data-resource="{shared}"] [data-unhealthy]')
    assert " ".join(node.get_text().split()).startswith("1 of 2 GPUs unhealthy (4 of 8 shares)")


def test_the_per_node_family_carries_the_lost_capacity_only_where_there_is_some(cluster):
    from app.metrics.nodes import NodeFamilies

    cluster.node("gpu-1", {GPU: "8"}, allocatable={GPU: "6"})
    cluster.node("gpu-2", {GPU: "8"})
    text = NodeFamilies().text(cluster.store).decode()
    lines = [
        line for line in text.splitlines() if line.startswith("extres_node_extended_resource_unavailable{")
    ]
    assert lines == ['extres_node_extended_resource_unavailable{node="gpu-1",resource="nvidia.com/gpu"} 2.0']


def test_an_admin_advertised_resource_not_yet_allocatable_is_not_called_unhealthy(client, cluster):
    cluster.node("n1", {D: "4"}, allocatable={D: "2"})  # the kubelet has not copied capacity yet
    grid = page(client, "/")
    assert not grid.select("[data-unhealthy]") and not grid.select('[data-field="unhealthy"]')
