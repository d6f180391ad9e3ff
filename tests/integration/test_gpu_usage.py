"""GPU usage end to end, with real parts: Debian's Prometheus scrapes the test bed's dcgm-exporter
stand-in (extres_demo.dcgm_exporter: dcgm-exporter's exact exposition, per-GPU series tied to
the pods holding them, utilization driven by the pod annotation run-ai/fake-gpu-operator reads;
a stand-in for the DCGM exporter, not DCGM), the app served by gunicorn reads that Prometheus,
and only the idle pod of a busy and an idle one is on the Idle page, with the GPU-hours its
GPUs and its age give.

The device plugin's status write on the two GPU nodes is the kubelet's part, played by hand (kwok
runs no device plugins), as extres_demo.gpu_stack says; kwok runs the pods."""

from __future__ import annotations

import csv
import io
import urllib.request
from datetime import datetime

import pytest
from bs4 import BeautifulSoup

from extres_demo import gpu_stack
from extres_demo.dcgm_exporter import DcgmExporter
from extres_demo.dcgm_standin import UTILIZATION_ANNOTATION, XID_ANNOTATION
from tests.helpers import eventually
from tests.kube_helpers import container, create_node, ready
from tests.prometheus import Prometheus
from tests.serving import Server

pytestmark = pytest.mark.kube
GPU = gpu_stack.GPU


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return resp.read().decode()


def gpu_pod(core, name: str, node: str, gpus: int, utilization: str, xid: str = "") -> None:
    annotations = {UTILIZATION_ANNOTATION: utilization, **({XID_ANNOTATION: xid} if xid else {})}
    body = {
        "metadata": {"name": name, "annotations": annotations},
        "spec": {"nodeName": node, "containers": [container(requests={GPU: str(gpus)})]},
    }
    core.create_namespaced_pod("default", body)


def test_only_the_idle_pod_is_on_the_idle_page_with_its_gpu_hours(
    control_plane, admin_api, core, uid, tmp_path
):
    nodes = [f"{uid}-gpu-a", f"{uid}-gpu-b"]
    for name in nodes:
        create_node(core, name, {})
    ready(core, *nodes)
    for name in nodes:
        gpu_stack.device_plugin(admin_api, name, 8)
    busy, idle = f"{uid}-train", f"{uid}-notebook"
    gpu_pod(core, busy, nodes[0], 4, "80-100", xid="79")  # its GPUs fell off the bus once
    gpu_pod(core, idle, nodes[1], 2, "0-2")
    eventually(
        lambda: all(core.read_namespaced_pod(p, "default").status.phase == "Running" for p in (busy, idle))
    )

    exporter = DcgmExporter(admin_api, refresh=1)
    prometheus = Prometheus(
        tmp_path, exporter.target
    )  # the exporter as the "extres" job: a target is a target
    server = None
    try:
        # dcgm-exporter's exposition, as Prometheus scraped it: one series per GPU, the holder's labels
        def scraped():
            got = prometheus.query(f'DCGM_FI_DEV_GPU_UTIL{{Hostname="{nodes[0]}"}}')
            assert len(got) == 8, got
            return got

        series = eventually(scraped, timeout=60, interval=0.5)
        held = [dict(labels) for labels, value in series.items() if dict(labels).get("pod") == busy]
        assert len(held) == 4 and {v for k, v in series.items() if dict(k).get("pod") == busy} == {90.0}
        assert {k for k in held[0]} >= {
            "gpu",
            "UUID",
            "device",
            "modelName",
            "Hostname",
            "namespace",
            "container",
        }

        server = Server(
            control_plane,
            EXTRES_PROMETHEUS_URL=prometheus.url,
            EXTRES_USAGE_REFRESH_SECONDS="10",
            EXTRES_USAGE_WINDOW_MINUTES="60",
        )

        def idle_rows():
            page = BeautifulSoup(get(f"{server.url}/idle/?q=&namespace=default"), "html.parser")
            rows = [
                r for r in page.select("table.idle tbody tr") if r["data-pod"].split("/")[1].startswith(uid)
            ]
            assert rows, page.select_one("#idle").get_text(" ", strip=True)[:300]
            return rows

        rows = eventually(idle_rows, timeout=90, interval=1)
        assert [r["data-pod"] for r in rows] == [f"default/{idle}"]  # the busy pod is not idle
        exported = list(csv.DictReader(io.StringIO(get(f"{server.url}/idle/export.csv?workload={uid}"))))
        [row] = exported
        created = core.read_namespaced_pod(idle, "default").metadata.creation_timestamp
        as_of, since = datetime.fromisoformat(row["as_of"]), datetime.fromisoformat(row["since"])
        assert since == created  # younger than the window: held idle since it was made
        assert (row["devices"], row["utilization"], row["node"]) == ("2", "1.0", nodes[1])
        expected = 2 * (as_of - created).total_seconds() / 3600
        assert float(row["device_hours"]) == pytest.approx(expected, abs=1e-4) and expected > 0

        # busy beside requested on the overview and each GPU on its node page
        overview = BeautifulSoup(get(f"{server.url}/?q={uid}"), "html.parser")
        busy_cell = overview.select_one(f'tr[data-node="{nodes[0]}"] .busy')
        assert busy_cell is not None and float(busy_cell["data-busy"]) == pytest.approx(45.0)  # 4 of 8 at 90
        node = BeautifulSoup(get(f"{server.url}/nodes/{nodes[0]}"), "html.parser")
        holders = [td.get_text() for td in node.select('#node-gpus [data-field="pod"]')]
        assert holders.count(f"default/{busy}") == 4 and len(holders) == 8
        # XID errors, as Prometheus answered the fourth query: on the busy pod's 4 GPUs, on its row
        assert [x["data-xid"] for x in node.select("#node-gpus [data-xid]")] == ["79"] * 4
        assert overview.select_one(f'tr[data-node="{nodes[0]}"] [data-xid-gpus]')["data-xid-gpus"] == "4"
        assert not overview.select(f'tr[data-node="{nodes[1]}"] [data-xid-gpus]')

        # the metric the chart's alert reads
        metrics = get(server.metrics_url)
        line = next(
            x
            for x in metrics.splitlines()
            if x.startswith('extres_idle_gpu_device_hours{namespace="default"}')
        )
        assert float(line.split()[-1]) > 0
        assert "extres_usage_age_seconds" in metrics
    finally:
        if server is not None:
            server.stop()
        prometheus.stop()
        exporter.stop()
        for name in (busy, idle):
            core.delete_namespaced_pod(name, "default", grace_period_seconds=0)
        for name in nodes:
            core.delete_node(name)
