"""Which allocated GPUs sit idle (app.domain.gpu_usage): dcgm-exporter's series, as the test bed's
stand-in writes them, through Prometheus' text format and its query API's shape, joined with the
pods holding the GPUs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from app.domain.gpu_usage import DCGM, Holding, PodKey, Reading, idle, mappings_from, read
from extres_demo.dcgm_standin import Holder, families
from extres_demo.gpu_stack import MEMORY_MIB

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
BUSY, IDLE = {"run.ai/simulated-gpu-utilization": "80-100"}, {"run.ai/simulated-gpu-utilization": "0-2"}


def answers(nodes) -> tuple[list, list, list]:
    """The stand-in's three families as the query API would answer DCGM's queries (a constant
    series' mean over the window is its value)."""

    class Collector:
        def collect(self):
            return families(nodes)

    registry = CollectorRegistry()
    registry.register(Collector())
    text = generate_latest(registry).decode()
    out = {}
    for family in text_string_to_metric_families(text):
        out[family.name] = [
            {"metric": {k: v for k, v in s.labels.items() if k in DCGM.labels}, "value": [0, str(s.value)]}
            for s in family.samples
        ]
    return out["DCGM_FI_DEV_GPU_UTIL"], out["DCGM_FI_DEV_FB_USED"], out["DCGM_FI_DEV_FB_FREE"]


def reading(nodes, pods: dict[PodKey, str], limit: int = 1000) -> Reading:
    return read([answers(nodes)], [DCGM], pods.get, NOW, HOUR, limit)


NODES = {
    "n1": (8, [Holder("ml", "train", "main", 4, BUSY)]),
    "n2": (8, [Holder("ml", "notebook", "lab", 2, IDLE)]),
}
PODS = {("ml", "train"): "n1", ("ml", "notebook"): "n2"}


def test_busy_per_node_and_in_the_cluster_with_each_gpu_and_its_pod():
    r = reading(NODES, PODS)
    assert r.busy("n1", "nvidia.com/gpu") == pytest.approx(4 * 90 / 8)  # 4 held at 90 %, 4 free at 0
    assert r.busy("n2", "nvidia.com/mig-1g.10gb") == pytest.approx(2 * 1 / 8)  # the mapping covers MIG
    assert r.busy("n1", "example.com/dongle") is None
    assert r.cluster_busy("nvidia.com/gpu") == pytest.approx((4 * 90 + 2 * 1) / 16)
    first = r.devices["n1"][0]
    assert (first.index, first.pod, first.utilization) == ("0", ("ml", "train"), 90.0)
    assert first.memory_used is not None and first.memory_total == MEMORY_MIB
    assert [d.index for d in r.devices["n1"]] == [str(i) for i in range(8)]  # 10 would sort after 9
    assert r.pod_utilization(("ml", "notebook")) == 1.0
    assert r.pods_utilization([("ml", "train"), ("ml", "notebook")]) == pytest.approx((4 * 90 + 2) / 6)


def test_a_gpu_is_on_its_pods_node_whatever_hostname_says():
    util = [
        {"metric": {"Hostname": "made-up", "UUID": "g", "namespace": "a", "pod": "p"}, "value": [0, "90"]}
    ]
    r = read([(util, [], [])], [DCGM], {("a", "p"): "n1"}.get, NOW, HOUR, 10)
    assert r.busy("n1", "nvidia.com/gpu") == 90.0 and "made-up" not in r.devices


def test_only_the_idle_pod_is_listed_with_its_gpu_hours():
    r = reading(NODES, PODS)
    holdings = {
        ("ml", "train"): Holding("ml", "train", "n1", NOW - 3 * HOUR, "Job/train"),
        ("ml", "notebook"): Holding("ml", "notebook", "n2", NOW - timedelta(minutes=30), "StatefulSet/nb"),
    }
    found = idle(r, holdings.get, threshold=5, now=NOW)
    assert [(i.holding.pod, i.devices, i.utilization, round(i.device_hours, 3)) for i in found] == [
        ("notebook", 2, 1.0, 1.0)  # 2 GPUs x 30 minutes
    ]
    assert found[0].since == NOW - timedelta(minutes=30)  # held since its start, inside the window


def test_a_longer_held_pod_counts_the_whole_window_and_ranks_first_and_gone_pods_are_left_out():
    r = reading(
        {
            "n": (
                8,
                [
                    Holder("a", "new", "c", 1, IDLE),
                    Holder("a", "old", "c", 2, IDLE),
                    Holder("a", "gone", "c", 1, IDLE),
                ],
            )
        },
        {("a", "new"): "n", ("a", "old"): "n"},
    )
    holdings = {k: Holding("a", k[1], "n", NOW - 10 * HOUR) for k in [("a", "new"), ("a", "old")]}
    found = idle(r, holdings.get, 5, NOW)
    assert [(i.holding.pod, i.device_hours) for i in found] == [("old", 2.0), ("new", 1.0)]


@pytest.mark.parametrize(
    "sample",
    [
        {"metric": {"UUID": "x", "Hostname": "n"}, "value": [0, "NaN"]},
        {"metric": {"UUID": "x", "Hostname": "n"}, "value": [0, "+Inf"]},
        {"metric": {"UUID": "x", "Hostname": "n"}, "value": [0, "busy"]},
        {"metric": {"UUID": "x", "Hostname": "n"}, "value": "90"},
        {"metric": ["UUID"], "value": [0, "90"]},
        {"value": [0, "90"]},
        "90",
        None,
    ],
)
def test_an_answer_that_is_not_a_sample_is_left_out(sample):
    good = {"metric": {"UUID": "g", "Hostname": "n"}, "value": [0, "50"]}
    r = read([([sample, good], [sample], [])], [DCGM], lambda key: None, NOW, HOUR, 10)
    assert r.busy("n", "nvidia.com/gpu") == 50.0


def test_labels_that_are_not_text_name_nothing():
    util = [{"metric": {"UUID": 7, "Hostname": "n", "namespace": ["a"], "pod": "p"}, "value": [0, "3"]}]
    r = read([(util, [], [])], [DCGM], lambda key: "elsewhere", NOW, HOUR, 10)
    assert r.devices["n"][0].pod is None and r.devices["n"][0].uuid == ""


def test_past_the_limit_a_reading_is_cut_and_says_so():
    util = [{"metric": {"UUID": str(i), "Hostname": "n"}, "value": [0, "1"]} for i in range(5)]
    r = read([(util, [], [])], [DCGM], lambda key: None, NOW, HOUR, 3)
    assert r.cut and len(r.devices["n"]) == 3


def test_three_queries_per_mapping_each_reduced_to_the_labels_read():
    assert DCGM.utilization_query(HOUR) == (
        "max by (Hostname, UUID, gpu, modelName, namespace, pod) (avg_over_time(DCGM_FI_DEV_GPU_UTIL[60m]))"
    )
    assert DCGM.memory_query(DCGM.memory_used) == "max by (Hostname, UUID) (DCGM_FI_DEV_FB_USED)"
    assert DCGM.covers("nvidia.com/gpu") and not DCGM.covers("amd.com/gpu")


def test_an_operators_mapping_for_another_vendor():
    [amd] = mappings_from(
        [{"pattern": "amd.com/gpu", "utilization": "gpu_gfx_activity", "node_label": "hostname"}]
    )
    assert amd.covers("amd.com/gpu") and amd.node_label == "hostname" and amd.memory_used == ""


@pytest.mark.parametrize(
    ("documents", "message"),
    [
        ([{"pattern": "a/b"}], "pattern and utilization are required"),
        ([{"pattern": "a/b", "utilization": "u", "color": "red"}], "unknown key 'color'"),
        ([{"pattern": "a/b", "utilization": "u) or vector(1"}], "is not a metric or label name"),
        ([{"pattern": "a/b", "utilization": "u", "node_label": 3}], "every value is a string"),
        (["nvidia.com/*"], "an object"),
    ],
)
def test_a_wrong_mapping_is_refused_by_name(documents, message):
    with pytest.raises(ValueError, match=message):
        mappings_from(documents)
