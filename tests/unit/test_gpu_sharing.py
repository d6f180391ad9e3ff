"""Shares told apart from GPUs (app/domain/gpu_sharing.py), from the labels NVIDIA's device plugin
and GPU feature discovery write (NVIDIA/k8s-device-plugin @1b826ac, internal/lm/resource.go) and
GKE's."""

from __future__ import annotations

from app.domain.gpu_sharing import physical, sharing

GPU = "nvidia.com/gpu"
SHARED = "nvidia.com/gpu.shared"


def labels(
    count: int, replicas: int, strategy: str, product: str = "NVIDIA-A100-SXM4-40GB"
) -> dict[str, str]:
    return {f"{GPU}.count": str(count), f"{GPU}.replicas": str(replicas),
            f"{GPU}.sharing-strategy": strategy, f"{GPU}.product": product}  # fmt: skip


def test_a_time_sliced_node_is_8_gpus_of_10_shares():
    found = sharing(labels(8, 10, "time-slicing", "NVIDIA-A100-SXM4-40GB-SHARED"), {GPU: 80}, {GPU: 80})
    [s] = found.values()
    assert (s.resource, s.device, s.physical, s.replicas, s.slots, s.strategy, s.disagree) == (
        GPU, GPU, 8, 10, 80, "time-slicing", "",
    )  # fmt: skip
    assert not s.refuses_over_one


def test_a_renamed_node_shares_under_dot_shared_and_keeps_the_label_keys():
    found = sharing(labels(4, 2, "mps"), {GPU: 0, SHARED: 8}, {GPU: 0, SHARED: 8})
    assert list(found) == [SHARED]
    s = found[SHARED]
    assert (s.device, s.physical, s.replicas, s.strategy) == (GPU, 4, 2, "mps") and s.refuses_over_one


def test_gke_says_shares_in_its_own_labels():
    gke = {
        "cloud.google.com/gke-gpu-sharing-strategy": "time-sharing",
        "cloud.google.com/gke-max-shared-clients-per-gpu": "4",
    }
    [s] = sharing(gke, {GPU: 8}, {GPU: 8}).values()
    assert (s.physical, s.replicas, s.strategy, s.refuses_over_one) == (2, 4, "time-sharing", True)


def test_labels_that_disagree_are_said_and_allocatable_wins():
    [s] = sharing(labels(8, 10, "time-slicing"), {GPU: 40}, {GPU: 40}).values()
    assert "8 devices x 10 = 80, the node has 40" in s.disagree and s.physical == 4  # 40 slots / 10
    [odd] = sharing(labels(8, 1, "none", "NVIDIA-A100-SHARED"), {GPU: 8}, {GPU: 8}).values()
    assert "says shared" in odd.disagree


def test_a_node_that_does_not_share_is_not_listed_and_odd_labels_do_not_crash():
    assert sharing(labels(8, 1, "none"), {GPU: 8}, {GPU: 8}) == {}
    assert sharing({}, {GPU: 8}, {GPU: 8}) == {}
    odd = {f"{GPU}.replicas": "\uff11\uff10", f"{GPU}.sharing-strategy": "mps"}
    [s] = sharing(odd, {GPU: 8}, {GPU: 8}).values()
    assert s.replicas == 1 and "no readable replicas" in s.disagree  # a full-width digit is no number


def test_physical_gpus_keep_whole_and_shared_apart():
    shared = sharing(labels(8, 10, "time-slicing"), {GPU: 80}, {GPU: 80})
    found = physical([({GPU: 80}, shared), ({GPU: 16}, {}), ({"example.com/dongle": 3}, {})])
    p = found[GPU]
    assert (p.whole, p.shared, p.slots, p.nodes, p.total) == (16, 8, 80, 1, 24)


def test_the_stand_in_plays_a_device_plugins_unhealthy_devices():
    from extres_demo import standin

    class Core:
        def __init__(self) -> None:
            self.sent: list[object] = []

        def patch_node_status(self, name: str, ops: object, field_manager: str) -> None:
            self.sent.append(ops)

    core = Core()
    node = {
        "metadata": {"name": "n", "annotations": {standin.UNHEALTHY: '{"nvidia.com/gpu.shared": 4}'}},
        "status": {"capacity": {"nvidia.com/gpu.shared": "8"}, "allocatable": {"nvidia.com/gpu.shared": "8"}},
    }
    assert standin.sync_node(core, node)  # type: ignore[arg-type]
    assert core.sent == [[{"op": "add", "path": "/status/allocatable/nvidia.com~1gpu.shared", "value": "4"}]]
    node["status"]["allocatable"] = {"nvidia.com/gpu.shared": "4"}  # type: ignore[index]
    assert not standin.sync_node(core, node)  # type: ignore[arg-type]  # as the plugin reports: nothing to do
