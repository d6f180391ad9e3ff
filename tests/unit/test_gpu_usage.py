"""Which allocated GPUs sit idle (app.domain.gpu_usage): dcgm-exporter's series, as the test bed's
stand-in writes them, joined with the pods holding the GPUs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from app.domain.gpu_usage import DCGM, Holding, Series, busy_by_node, idle
from extres_demo.dcgm_standin import Holder, families

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def scraped(nodes) -> list[Series]:
    """The stand-in's utilization series, through Prometheus' text format."""

    class Collector:
        def collect(self):
            return families(nodes)

    registry = CollectorRegistry()
    registry.register(Collector())
    text = generate_latest(registry).decode()
    [util] = [f for f in text_string_to_metric_families(text) if f.name == "DCGM_FI_DEV_GPU_UTIL"]
    return [Series(s.labels, s.value) for s in util.samples]


def test_only_the_idle_pod_is_listed_with_its_gpu_hours():
    series = scraped(
        {
            "n1": (8, [Holder("ml", "train", "main", 4, {"run.ai/simulated-gpu-utilization": "80-100"})]),
            "n2": (8, [Holder("ml", "notebook", "lab", 2, {"run.ai/simulated-gpu-utilization": "0-2"})]),
        }
    )
    holdings = [
        Holding("ml", "train", "n1", 4, NOW - 3 * HOUR, "Job/train"),
        Holding("ml", "notebook", "n2", 2, NOW - timedelta(minutes=30), "StatefulSet/notebook"),
        Holding("ml", "unseen", "n3", 1, NOW - HOUR),  # no series: not judged
    ]
    found = idle(holdings, series, DCGM, threshold=5, window=HOUR, now=NOW)
    assert [(i.holding.pod, i.utilization, round(i.device_hours, 3)) for i in found] == [
        ("notebook", 1.0, 1.0)
    ]
    assert found[0].since == NOW - timedelta(minutes=30)  # held since its start, inside the window


def test_a_longer_held_pod_counts_the_whole_window_and_ranks_first():
    series = [
        Series({"namespace": "a", "pod": "old", "UUID": "g0"}, 0.0),
        Series({"namespace": "a", "pod": "old", "UUID": "g1"}, 2.0),
        Series({"namespace": "a", "pod": "new", "UUID": "g2"}, 0.0),
    ]
    holdings = [Holding("a", "new", "n", 1, NOW - 10 * HOUR), Holding("a", "old", "n", 2, NOW - 10 * HOUR)]
    found = idle(holdings, series, DCGM, 5, HOUR, NOW)
    assert [(i.holding.pod, i.device_hours) for i in found] == [("old", 2.0), ("new", 1.0)]


def test_busy_per_node_follows_the_pod_then_the_hostname():
    series = [
        Series({"namespace": "a", "pod": "p", "Hostname": "made-up-host"}, 90.0),
        Series({"Hostname": "n2"}, 10.0),
        Series({"Hostname": "n2"}, 30.0),
    ]
    assert busy_by_node(series, DCGM, {("a", "p"): "n1"}) == {"n1": 90.0, "n2": 20.0}


def test_one_query_per_window():
    assert DCGM.utilization_query(HOUR) == "avg_over_time(DCGM_FI_DEV_GPU_UTIL[60m])"
    assert (
        DCGM.covers("nvidia.com/gpu")
        and DCGM.covers("nvidia.com/mig-1g.10gb")
        and not DCGM.covers("amd.com/gpu")
    )
