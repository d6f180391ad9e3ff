"""A real Prometheus scrapes the app served by gunicorn: its values match the cluster, the
shipped alert rules load and pass promtool's own tests, and every query in the Grafana
dashboard and the rules names metrics the app really exports."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from datetime import timedelta

import pytest

from tests.chart_helpers import CHART
from tests.helpers import eventually, repo_root
from tests.kube_helpers import create_node, create_pod, kubelet_standin, own_resource
from tests.prometheus import ALERTS, Prometheus
from tests.serving import Server

pytestmark = pytest.mark.kube
DASHBOARD = CHART / "files" / "extres-dashboard.json"
METRIC = re.compile(r"\b(extres_[a-z_]+)\b")
SUFFIX = re.compile(r"_(total|bucket|sum|count)$")
USAGE_FAMILIES = ("extres_idle_gpu_", "extres_usage_")


def promtool(*args: str) -> str:
    tool = shutil.which("promtool")
    assert tool, "Debian's prometheus package is missing: scripts/dev setup installs it"
    result = subprocess.run([tool, *args], capture_output=True, text=True, cwd=repo_root())
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_alert_rules_check_and_pass_their_unit_tests():
    assert "SUCCESS: 9 rules found" in promtool("check", "rules", str(ALERTS))
    assert "SUCCESS" in promtool("test", "rules", "tests/prometheus/alerts_test.yaml")


def dashboard_queries() -> list[str]:
    board = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in board["panels"] for t in p["targets"]]
    exprs += [v["definition"] for v in board["templating"]["list"] if v.get("definition")]
    return exprs


def test_prometheus_scrapes_what_the_cluster_holds(control_plane, core, uid, tmp_path):
    dongle = own_resource(uid)
    busy, idle = f"{uid}-busy", f"{uid}-idle"
    create_node(core, busy, {dongle: "4"})
    create_node(core, idle, {dongle: "2"})
    kubelet_standin(core, busy, idle)
    create_pod(core, f"{uid}-user", busy, {dongle: "3"})
    # a pod no node can take, with the condition the scheduler writes
    create_pod(core, f"{uid}-waiting", None, {dongle: "9"})
    message = f"0/2 nodes are available: 2 Insufficient {dongle}."
    condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}
    core.patch_namespaced_pod_status(f"{uid}-waiting", "default", {"status": {"conditions": [condition]}})

    server = Server(control_plane)
    prometheus = Prometheus(tmp_path, f"127.0.0.1:{server.metrics_port}")
    try:
        sel = f'resource="{dongle}"'

        def scraped():
            got = prometheus.query(f"extres_node_extended_resource_capacity{{{sel}}}")
            assert got == {
                (
                    ("__name__", "extres_node_extended_resource_capacity"),
                    ("node", busy),
                    ("resource", dongle),
                ): 4.0,
                (
                    ("__name__", "extres_node_extended_resource_capacity"),
                    ("node", idle),
                    ("resource", dongle),
                ): 2.0,
            }
            return got

        eventually(scraped, timeout=60, interval=0.5)
        # requested is exported wherever the resource is advertised: 0 on the idle node
        assert prometheus.query(f"sum by (node) (extres_node_extended_resource_requested{{{sel}}})") == {
            (("node", busy),): 3.0,
            (("node", idle),): 0.0,
        }
        assert prometheus.query(f"extres_pending_pods{{{sel}}}") == {
            (("__name__", "extres_pending_pods"), ("reason", "insufficient"), ("resource", dongle)): 1.0
        }
        assert prometheus.query("extres_cache_synced") == {(("__name__", "extres_cache_synced"),): 1.0}
        assert prometheus.query('up{job="extres"}') == {(("__name__", "up"),): 1.0}

        # the free-per-node expression the alert uses (its "or" also covers a requested series
        # missing, as older versions left it where nothing was requested): busy has 1 free, idle 2
        alloc = f"max by (node, resource) (extres_node_extended_resource_allocatable{{{sel}}})"
        used = f"max by (node, resource) (extres_node_extended_resource_requested{{{sel}}})"
        free = f"{alloc} - on (node, resource) ({used} or {alloc} * 0)"
        assert prometheus.query(free) == {
            (("node", busy), ("resource", dongle)): 1.0,
            (("node", idle), ("resource", dongle)): 2.0,
        }

        # the rules load and are healthy; every metric the rules and the dashboard name is exported,
        # and every dashboard query is one Prometheus accepts
        groups = prometheus.api("rules")["groups"]
        rules = [r for g in groups for r in g["rules"]]
        assert sorted(r["name"] for r in rules) == [
            "ExtresCacheStale",
            "ExtresCapacityDrift",
            "ExtresDevicesUnhealthy",
            "ExtresExtendedResourceFullyAllocated",
            "ExtresIdleGPUs",
            "ExtresPodsPendingForExtendedResource",
            "ExtresQueueQuotaAboveCapacity",
            "ExtresSignOutListStale",
            "extres:gpus_held:rate5m",  # GPU-hours per team, kept by Prometheus
        ]
        eventually(
            lambda: all(r["health"] == "ok" for g in prometheus.api("rules")["groups"] for r in g["rules"])
        )
        # what the scrapes carried, with or without samples yet (a family's HELP and TYPE)
        exported = set(prometheus.api("metadata")) | set(prometheus.api("label/__name__/values"))
        wanted = set(METRIC.findall(ALERTS.read_text()))
        for expr in dashboard_queries():
            wanted |= set(METRIC.findall(expr))
            if not expr.startswith("label_values("):
                prometheus.api("query", query=expr.replace("$resource", ".*"))
        # metadata names families: a counter's or a histogram's series carry a suffix
        # GPU usage's families exist only with a Prometheus to read from: test_gpu_usage.py has them;
        # Kueue's only where Kueue is: test_kueue.py has them
        wanted = {m for m in wanted if not m.startswith((*USAGE_FAMILIES, "extres_kueue_"))}
        missing = {m for m in wanted if m not in exported and SUFFIX.sub("", m) not in exported}
        assert not missing, f"named but not exported: {sorted(missing)}"
        assert "extres_request_duration_seconds_bucket" in exported
    finally:
        prometheus.stop()
        server.stop()


def test_dcgm_exporters_other_spellings_are_read_by_prometheus_as_its_labels(tmp_path):
    """Newer dcgm-exporter releases write ``hostname``; a Prometheus that keeps its own target
    labels renames the exporter's ``namespace`` and ``pod`` to ``exported_*`` (and sets the
    exporter pod's own). Prometheus' engine (promtool) evaluates the usage query on both shapes."""
    import yaml

    from app.domain.usage_mapping import DCGM

    series = [
        {"series": 'DCGM_FI_DEV_GPU_UTIL{hostname="n1", UUID="g0", gpu="0", exported_namespace="ml", '
                   'exported_pod="train-0", namespace="gpu-operator", pod="dcgm-x", modelName="H100"}',
         "values": "40x5"},
        {"series": 'DCGM_FI_DEV_GPU_UTIL{Hostname="n2", UUID="g1", gpu="1", namespace="ml", pod="train-1", '
                   'modelName="H100"}', "values": "60x5"},
    ]  # fmt: skip
    tests = {
        "rule_files": [],
        "evaluation_interval": "1m",
        "tests": [{
            "interval": "1m", "input_series": series,
            "promql_expr_test": [{
                "expr": DCGM.utilization_query(timedelta(minutes=5)), "eval_time": "5m",
                "exp_samples": [
                    {"labels": '{extres_key="n1|g0|0|ml|train-0|H100"}', "value": 40},
                    {"labels": '{extres_key="n2|g1|1|ml|train-1|H100"}', "value": 60},
                ],
            }],
        }],
    }  # fmt: skip
    (tmp_path / "usage_test.yaml").write_text(yaml.safe_dump(tests))
    assert "SUCCESS" in promtool("test", "rules", str(tmp_path / "usage_test.yaml"))
