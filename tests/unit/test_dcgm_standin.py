"""The test bed's stand-in for dcgm-exporter (extres_demo.dcgm_standin): dcgm-exporter's metric
names and labels, a series per GPU tied to the pod holding it, utilization from the pod's
annotation as run-ai/fake-gpu-operator's status exporter sets it."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from extres_demo.dcgm_standin import Holder, families, holders_from_pods, utilization
from extres_demo.gpu_stack import MEMORY_MIB, gpu_uuid


def test_the_annotation_gives_the_utilization_the_middle_of_a_range():
    key = "run.ai/simulated-gpu-utilization"
    assert utilization({key: "40"}) == 40 and utilization({key: "20-60"}) == 40
    assert utilization({}) == 100 and utilization({key: "junk"}) == 100


def test_each_gpu_is_a_series_with_dcgm_exporters_labels_tied_to_its_pod():
    busy = Holder("ml", "train-0", "main", 2, {"run.ai/simulated-gpu-utilization": "80-100"})
    idle = Holder("ml", "notebook-0", "lab", 1, {"run.ai/simulated-gpu-utilization": "0"})

    class Collector:
        def collect(self):
            return families({"n1": (4, [busy, idle])})

    registry = CollectorRegistry()
    registry.register(Collector())
    parsed = {f.name: f.samples for f in text_string_to_metric_families(generate_latest(registry).decode())}
    util = {s.labels["gpu"]: s for s in parsed["DCGM_FI_DEV_GPU_UTIL"]}
    assert {k: (s.labels["pod"], s.value) for k, s in util.items()} == {
        "0": ("train-0", 90.0), "1": ("train-0", 90.0), "2": ("notebook-0", 0.0), "3": ("", 0.0),
    }  # fmt: skip
    first = util["0"].labels
    assert (first["UUID"], first["device"], first["Hostname"], first["namespace"], first["container"]) == (
        gpu_uuid("n1", 0), "nvidia0", "n1", "ml", "main",
    )  # fmt: skip
    used = {s.labels["gpu"]: s.value for s in parsed["DCGM_FI_DEV_FB_USED"]}
    free = {s.labels["gpu"]: s.value for s in parsed["DCGM_FI_DEV_FB_FREE"]}
    assert all(used[g] + free[g] == MEMORY_MIB for g in used)


def test_running_pods_with_gpu_limits_are_the_holders():
    def pod(name: str, gpus: str | None, phase: str = "Running") -> dict:
        limits = {"limits": {"nvidia.com/gpu": gpus}} if gpus else {}
        return {
            "metadata": {"name": name, "namespace": "ns", "creationTimestamp": "2026-12-01T00:00:00Z"},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": limits}]},
            "status": {"phase": phase},
        }

    pods = [pod("a", "2"), pod("done", "1", "Succeeded"), pod("cpu", None)]
    assert holders_from_pods(pods) == {"n1": [Holder("ns", "a", "c", 2, {})]}
