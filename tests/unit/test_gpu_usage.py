"""Which allocated GPUs sit idle (app.domain.gpu_usage): dcgm-exporter's series, as the test bed's
stand-in writes them, through Prometheus' text format and its query API's shape, joined with the
pods holding the GPUs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from app.domain.gpu_usage import PodKey, Reading, read
from app.domain.idle_pods import Holding, idle
from app.domain.usage_mapping import DCGM, SEPARATOR, UsageMapping, mappings_from
from extres_demo.dcgm_standin import Holder, families
from extres_demo.gpu_stack import MEMORY_MIB

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
BUSY, IDLE = {"run.ai/simulated-gpu-utilization": "80-100"}, {"run.ai/simulated-gpu-utilization": "0-2"}


def answers(nodes) -> tuple[list, list, list]:
    """The stand-in's three families as Prometheus answers DCGM's three queries (their labels
    joined into the one key; a constant series' mean over the window is its value)."""

    class Collector:
        def collect(self):
            return families(nodes)

    registry = CollectorRegistry()
    registry.register(Collector())
    text = generate_latest(registry).decode()
    by_name = {f.name: f.samples for f in text_string_to_metric_families(text)}

    def keyed(name: str, labels) -> list[tuple[str, float]]:
        return [(SEPARATOR.join(s.labels.get(k, "") for k in labels), s.value) for s in by_name[name]]

    memory = (DCGM.node_label, DCGM.device_label)
    return (
        keyed("DCGM_FI_DEV_GPU_UTIL", DCGM.labels),
        keyed("DCGM_FI_DEV_FB_USED", memory),
        keyed("DCGM_FI_DEV_FB_FREE", memory),
    )


def key(host="", uuid="", index="", namespace="", pod="", model="") -> str:
    return SEPARATOR.join((host, uuid, index, namespace, pod, model))


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
    # a resource's own nodes only: n2's MIG devices are not made by n1's busy GPUs
    assert r.cluster_busy("nvidia.com/mig-1g.10gb", ["n2"]) == pytest.approx(2 * 1 / 8)
    assert r.cluster_busy("nvidia.com/gpu", ["n1"]) == pytest.approx(4 * 90 / 8)
    assert r.cluster_busy("nvidia.com/gpu", ["elsewhere"]) is None
    first = r.devices_on("n1")[0]
    assert (first.index, first.pod, first.utilization) == ("0", ("ml", "train"), 90.0)
    assert first.memory_used is not None and first.memory_total == MEMORY_MIB
    assert [d.index for d in r.devices_on("n1")] == [str(i) for i in range(8)]  # 10 would sort after 9
    assert r.pod_utilization(("ml", "notebook")) == 1.0
    assert r.pods_utilization([("ml", "train"), ("ml", "notebook")]) == pytest.approx((4 * 90 + 2) / 6)


def test_a_gpu_is_on_its_pods_node_whatever_hostname_says():
    util = [(key("made-up", "g", "0", "a", "p"), 90.0)]
    r = read([(util, [], [])], [DCGM], {("a", "p"): "n1"}.get, NOW, HOUR, 10)
    assert r.busy("n1", "nvidia.com/gpu") == 90.0 and "made-up" not in r.nodes


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


def test_a_value_that_is_not_a_finite_number_is_left_out():
    util = [(key("n", "x"), float("nan")), (key("n", "y"), float("inf")), (key("n", "g"), 50.0)]
    memory = [(f"n{SEPARATOR}g", float("nan"))]
    r = read([(util, memory, [])], [DCGM], lambda k: None, NOW, HOUR, 10)
    assert r.busy("n", "nvidia.com/gpu") == 50.0 and r.devices_on("n")[0].memory_used is None


def test_a_model_name_may_hold_the_separator_and_a_short_key_names_less():
    util = [(key("n", "g", "0", "", "", "odd|model"), 5.0), ("n", 7.0)]
    devices = read([(util, [], [])], [DCGM], lambda k: None, NOW, HOUR, 10).devices_on("n")
    assert [(d.model, d.uuid, d.pod) for d in devices] == [("odd|model", "g", None), ("", "", None)]


def test_past_the_limit_a_reading_is_cut_and_says_so():
    util = [(key("n", str(i)), 1.0) for i in range(5)]
    r = read([(util, [], [])], [DCGM], lambda k: None, NOW, HOUR, 3)
    assert r.cut and len(r.devices_on("n")) == 3


def test_an_exporter_cannot_report_more_than_the_cluster_holds():
    """99,000 series for hosts the cluster does not have are left out, and a node is read up to
    its room (its GPUs' capacity and DRA devices), the rest cut."""
    strangers = [(key(f"ghost-{i}", f"g{i}"), 50.0) for i in range(99_000)]
    mine = [(key("n1", f"g{i}"), 10.0) for i in range(12)]
    r = read([(strangers + mine, [], [])], [DCGM], lambda k: None, NOW, HOUR, 200_000, {"n1": 8, "n2": 8})
    assert list(r.nodes) == ["n1"] and len(r.devices_on("n1")) == 8 and r.cut
    assert r.busy("n1", "nvidia.com/gpu") == 10.0


def test_three_queries_per_mapping_each_reduced_to_the_labels_read():
    plain = UsageMapping("nvidia.com/*", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED")
    assert plain.utilization_query(HOUR) == (
        'max by (extres_key) (label_join(avg_over_time(DCGM_FI_DEV_GPU_UTIL[60m]), "extres_key", "|", '
        '"Hostname", "UUID", "gpu", "namespace", "pod", "modelName"))'
    )
    assert plain.memory_query(plain.memory_used) == (
        'max by (extres_key) (label_join(DCGM_FI_DEV_FB_USED, "extres_key", "|", "Hostname", "UUID"))'
    )
    # dcgm-exporter's other spellings are read as its labels (tests/integration/test_prometheus.py
    # has Prometheus evaluate them)
    assert (
        'label_replace(avg_over_time(DCGM_FI_DEV_GPU_UTIL[60m]), "Hostname", "$1", "hostname", "(.+)")'
        in (DCGM.utilization_query(HOUR))
    )
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


def test_shares_of_one_gpu_count_once_in_busy_and_in_idle_gpu_hours():
    """dcgm-exporter's virtual-GPU mode (the stand-in's ``replicas``): two pods share GPU 0 of a
    node whose one GPU is shared 4 ways; each series carries GPU 0's UUID. Busy is over one GPU,
    and the two idle pods hold half a GPU each: one GPU-hour between them, not two."""
    nodes = {"n1": (4, [Holder("ml", "a", "main", 1, IDLE), Holder("ml", "b", "main", 1, IDLE)])}

    class Collector:
        def collect(self):
            return families(nodes, {"n1": 4})

    registry = CollectorRegistry()
    registry.register(Collector())
    samples = {f.name: f.samples for f in text_string_to_metric_families(generate_latest(registry).decode())}
    util = samples["DCGM_FI_DEV_GPU_UTIL"]
    assert [s.labels["vgpu"] for s in util] == ["0", "1"] and len({s.labels["UUID"] for s in util}) == 1
    keyed = [(SEPARATOR.join(s.labels.get(k, "") for k in DCGM.labels), s.value) for s in util]
    r = read([(keyed, [], [])], [DCGM], {("ml", "a"): "n1", ("ml", "b"): "n1"}.get, NOW, HOUR, 1000)
    busy = r.busy_of("n1", "nvidia.com/gpu")
    assert busy is not None and busy.devices == 1 and busy.percent == pytest.approx(1.0)
    holdings = {(n, p): Holding(n, p, "n1", NOW - 3 * HOUR, "") for n, p in (("ml", "a"), ("ml", "b"))}
    found = idle(r, holdings.get, threshold=5, now=NOW)
    assert sorted((i.holding.pod, i.devices, round(i.device_hours, 3)) for i in found) == [
        ("a", 0.5, 0.5),
        ("b", 0.5, 0.5),
    ]
