"""GPU usage on the pages: busy beside requested and free, each GPU on its node page, the pods'
utilization where they are named, the Idle page and its CSV; nothing at all without a Prometheus,
and pages that never wait on one (waiting, unavailable, stale, each said).

The source here answers the three DCGM queries from the test bed's dcgm-exporter stand-in over
the fake cluster's pods, in the query API's shape; a real Prometheus is in
tests/integration/test_gpu_usage.py."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from bs4 import BeautifulSoup

from app.domain.usage_mapping import DCGM, SEPARATOR
from app.usage.poller import UsageUnavailable
from app.web.process import of as process_of
from extres_demo.dcgm_standin import UTILIZATION_ANNOTATION, families, holders_from_pods
from tests.helpers import browser, page

GPU = "nvidia.com/gpu"
PROMETHEUS = {"prometheus_url": "http://prometheus.monitoring:9090"}


class StandInSource:
    """Answers each query with the stand-in's family it names, from the pods given."""

    def __init__(self) -> None:
        self.pods: list[dict[str, Any]] = []
        self.gpus: dict[str, int] = {}
        self.down: str = ""
        self.asked: list[str] = []

    def query(self, expr: str) -> list[tuple[str, float]]:
        self.asked.append(expr)
        if self.down:
            raise UsageUnavailable(self.down)
        holders = holders_from_pods(self.pods)
        nodes = {n: (count, holders.get(n, [])) for n, count in self.gpus.items()}
        labels = DCGM.labels if "avg_over_time" in expr else (DCGM.node_label, DCGM.device_label)
        for family in families(nodes):
            if f"({family.name}" in expr:  # label_join's key, as Prometheus would make it
                return [
                    (SEPARATOR.join(s.labels.get(k, "") for k in labels), s.value) for s in family.samples
                ]
        return []


@pytest.fixture
def source() -> StandInSource:
    return StandInSource()


@pytest.fixture
def usage_app(cluster, source):
    from app import create_app

    def factory(**overrides: Any) -> Any:
        app = create_app(
            {"in_cluster": "false", "read_only": False, **PROMETHEUS, **overrides},
            cluster=cluster,
            usage_source=source,
        )
        app.config["TESTING"] = True
        return app

    return factory


def gpu_pod(cluster, source, name, node, gpus, utilization, owner=None):
    annotations = {UTILIZATION_ANNOTATION: utilization}
    cluster.pod(name, node, {GPU: str(gpus)}, owner=owner, namespace="ml")
    source.pods.append(
        {
            "metadata": {"name": name, "namespace": "ml", "annotations": annotations},
            "spec": {
                "nodeName": node,
                "containers": [{"name": "main", "resources": {"limits": {GPU: str(gpus)}}}],
            },
            "status": {"phase": "Running"},
        }
    )


@pytest.fixture
def gpu_cluster(cluster, source):
    for node in ("gpu-1", "gpu-2"):
        cluster.node(node, {GPU: "8"})
        source.gpus[node] = 8
    gpu_pod(cluster, source, "train", "gpu-1", 4, "80-100", owner=("Job", "train"))
    gpu_pod(cluster, source, "notebook", "gpu-2", 2, "0-2", owner=("StatefulSet", "notebook"))
    return cluster


def polled(app):
    process_of(app).local.usage.poll()
    return app


def test_without_prometheus_no_page_shows_usage(client, gpu_cluster):
    overview = page(client, "/")
    assert not overview.select(".busy") and not overview.select("[data-usage]")
    assert not overview.select('nav a[href="/idle/"]')
    node = page(client, "/nodes/gpu-1")
    assert not node.select("#node-gpus") and "GPU usage" not in node.get_text()
    assert page(client, "/idle/").select_one('[data-usage="off"]') is not None


def test_busy_beside_requested_per_node_and_in_the_totals(usage_app, gpu_cluster, source):
    client = browser(polled(usage_app()))
    overview = page(client, "/")
    busy = {
        tr["data-node"]: tr.select_one(".bar .busy")["data-busy"] for tr in overview.select("tr[data-node]")
    }
    assert busy == {"gpu-1": "45.0", "gpu-2": "0.2"}  # 4 of 8 at 90 %; 2 of 8 at 1 % (0.25)
    assert overview.select_one("tr.totals .busy")["data-busy"] == "22.6"  # (4 x 90 + 2 x 1) / 16
    said = overview.select_one('tr[data-node="gpu-1"] .bar .busy')
    assert (
        said["data-devices"] == "8" and said.get_text() == "busy 45%, mean of 8 GPUs"
    )  # what it is the mean of
    assert overview.select_one("tr.totals .busy")["data-devices"] == "16"
    assert overview.select_one("[data-usage]")["data-usage"] == "fresh"
    assert overview.select_one('nav a[href="/idle/"]') is not None
    assert len(source.asked) == 4  # one refresh: four queries (XID the fourth), whatever was rendered since


def test_with_usage_read_the_gpu_columns_come_first(usage_app, gpu_cluster, source, client):
    gpu_cluster.node("fpga-1", {"acme.io/fpga": "2"})
    assert [th["data-resource"] for th in page(client, "/").select("#grid th.res")] == ["acme.io/fpga", GPU]
    with_usage = browser(polled(usage_app()))
    assert [th["data-resource"] for th in page(with_usage, "/").select("#grid th.res")] == [
        GPU,
        "acme.io/fpga",
    ]


def test_the_unhealthy_list_names_the_gpus_dcgm_reports_an_xid_on(usage_app, gpu_cluster, source):
    source.pods[0]["metadata"]["annotations"]["extres.test/xid"] = "79"  # the trainer's 4 GPUs on gpu-1
    gpu_cluster.node("gpu-1", {GPU: "8"}, allocatable={GPU: "7"})  # and its device plugin lost one
    client = browser(polled(usage_app()))
    [row] = page(client, "/unhealthy/").select("table.sick tbody tr")
    named = row.select("[data-xid-gpu]")
    assert len(named) == 4 and all("(XID 79)" in n.get_text() for n in named)


def test_an_xid_error_is_marked_on_the_gpu_and_on_its_nodes_row(usage_app, gpu_cluster, source):
    source.pods[0]["metadata"]["annotations"]["extres.test/xid"] = "79"  # the trainer's 4 GPUs on gpu-1
    client = browser(polled(usage_app()))
    row = page(client, "/").select_one('tr[data-node="gpu-1"] [data-xid-gpus]')
    assert row["data-xid-gpus"] == "4" and row.get_text() == "XID on 4 GPUs"
    assert not page(client, "/").select('tr[data-node="gpu-2"] [data-xid-gpus]')
    marked = page(client, "/nodes/gpu-1").select("#node-gpus [data-xid]")
    assert [m["data-xid"] for m in marked] == ["79"] * 4
    assert any("max_over_time(DCGM_FI_DEV_XID_ERRORS[60m])" in q for q in source.asked)


def test_a_row_marks_the_gpus_idle_pods_hold_and_the_nav_counts_them(usage_app, gpu_cluster, source):
    client = browser(polled(usage_app()))
    overview = page(client, "/")
    marked = {tr["data-node"]: tr.select_one("[data-held-idle]") for tr in overview.select("tr[data-node]")}
    assert marked["gpu-1"] is None  # the trainer's 4 are busy
    assert marked["gpu-2"]["data-held-idle"] == "2" and marked["gpu-2"].get_text() == "2 held idle"
    badge = overview.select_one("#idle-badge")
    assert badge.get_text() == "2" and not badge.has_attr("hidden")
    assert page(client, "/pending/").select_one("#idle-badge").get_text() == "2"  # every page's nav


def test_the_node_page_shows_each_gpu_with_its_pod_and_memory(usage_app, gpu_cluster, source):
    client = browser(polled(usage_app()))
    node = page(client, "/nodes/gpu-1")
    rows = node.select("#node-gpus tbody tr")
    assert len(rows) == 8
    held = [r.select_one('[data-field="pod"]').get_text() for r in rows]
    assert held == ["ml/train"] * 4 + ["none"] * 4
    assert rows[0].select_one('[data-field="utilization"]')["data-value"] == "90.0"
    assert "MiB of" in rows[0].select_one('[data-field="memory"]').get_text()
    pod = node.select_one('#node-pods tr[data-pod="ml/train"] [data-field="gpu-utilization"]')
    assert pod.get_text().strip() == "90.0 %"


def test_the_idle_page_lists_only_the_idle_pod_with_its_gpu_hours(usage_app, gpu_cluster, source):
    client = browser(polled(usage_app()))
    idle = page(client, "/idle/")
    rows = idle.select("table.idle tbody tr")
    assert [r["data-pod"] for r in rows] == ["ml/notebook"]
    # created days ago: held the whole one-hour window, 2 GPUs -> 2 GPU-hours
    assert rows[0].select_one('[data-field="device_hours"]')["data-value"] == "2.0000"
    assert "StatefulSet/notebook" in rows[0].get_text()
    exported = list(csv.DictReader(io.StringIO(client.get("/idle/export.csv").get_data(as_text=True))))
    assert [(r["pod"], r["devices"], r["device_hours"], r["owner"]) for r in exported] == [
        ("notebook", "2", "2.0", "StatefulSet/notebook")
    ]
    assert not page(client, "/idle/?namespace=other").select("table.idle")
    none = page(client, "/idle/?min_hours=3")
    assert not none.select("table.idle")
    said = none.select_one("[data-idle-none]").get_text(" ", strip=True)  # what was asked, in words
    assert said.startswith("No running pod matching these filters held its GPUs under")
    assert "for 3 GPU-hours or more over the last 1h" in said, said
    assert none.select_one("[data-idle-none] a")["href"] == "/idle/"  # and the way back to all
    assert page(client, "/idle/?workload=notebook").select("table.idle tbody tr")
    bad = page(client, "/idle/?min_hours=lots")
    assert "is not a number of GPU-hours" in bad.select_one("#min_hours-error").get_text()
    assert bad.select("table.idle tbody tr")  # shown without the bad filter
    assert client.get("/idle/export.csv?min_hours=lots").status_code == 422


def test_the_idle_threshold_and_window_are_the_operators(usage_app, gpu_cluster, source):
    client = browser(polled(usage_app(idle_threshold_percent=95, usage_window_minutes=30)))
    rows = page(client, "/idle/").select("table.idle tbody tr")
    hours = {r["data-pod"]: r.select_one('[data-field="device_hours"]')["data-value"] for r in rows}
    assert hours == {"ml/train": "2.0000", "ml/notebook": "1.0000"}  # 4 GPUs x 0.5 h; 2 x 0.5 h


def test_workloads_and_pending_holders_show_the_pods_gpu_utilization(usage_app, gpu_cluster, source):
    client = browser(polled(usage_app()))
    workloads = page(client, "/workloads/")
    cell = workloads.select_one('tr[data-workload="Job/train"] [data-field="gpu-utilization"]')
    assert cell.get_text().strip() == "90.0 %"
    gpu_cluster.pod(
        "waiting", None, {GPU: "8"}, namespace="ml", message=f"0/2 nodes are available: 2 Insufficient {GPU}."
    )
    pending = page(client, "/pending/")
    assert (
        pending.select_one('[data-holder="ml/train"] [data-gpu-utilization]')["data-gpu-utilization"]
        == "90.0"
    )


def test_pages_never_wait_and_say_what_is_known(usage_app, gpu_cluster, source):
    app = usage_app()
    client = browser(app)
    assert page(client, "/").select_one("[data-usage]")["data-usage"] == "waiting"
    source.down = "it cannot be reached: no connection could be made to it (refused, or no route)"
    polled(app)
    overview = page(client, "/")
    status = overview.select_one("[data-usage]")
    assert status["data-usage"] == "unavailable" and "cannot be reached" in status.get_text()
    assert not overview.select(".busy")
    assert page(client, "/idle/").select_one("[data-usage]")["data-usage"] == "unavailable"
    source.down = ""
    polled(app)
    source.down = "it did not answer within 5 s"
    polled(app)
    overview = page(client, "/")
    status = overview.select_one("[data-usage]")
    assert status["data-usage"] == "stale" and "did not answer" in status.get_text()
    assert overview.select(".busy")  # the last answer, marked stale
    node = page(client, "/nodes/gpu-1")
    assert node.select_one("[data-usage]")["data-usage"] == "stale" and node.select("#node-gpus tbody tr")


def test_the_idle_metrics_feed_the_alert(usage_app, gpu_cluster, source):
    app = polled(usage_app())
    text = process_of(app).local.metrics.exposition().decode()
    assert 'extres_idle_gpu_device_hours{namespace="ml"} 2.0' in text
    assert 'extres_idle_gpu_pods{namespace="ml"} 1.0' in text
    assert 'extres_usage_refresh_duration_seconds_count{outcome="ok"} 1.0' in text


def test_an_open_idle_page_follows_the_next_usage_read(usage_app, gpu_cluster, source):
    """The Idle GPUs list is a live region, as the overview and Pending are: its own poll brings
    what the next usage read says (the notebook got busy: it leaves the list)."""
    app = polled(usage_app())
    client = browser(app)
    region = page(client, "/idle/").select_one("#idle")
    assert region.has_attr("data-poll") and "every 5s" in region["hx-trigger"]
    assert [r["data-pod"] for r in region.select("table.idle tbody tr")] == ["ml/notebook"]
    notebook = next(p for p in source.pods if p["metadata"]["name"] == "notebook")
    notebook["metadata"]["annotations"][UTILIZATION_ANNOTATION] = "80-100"
    polled(app)
    answer = client.get(region["hx-get"], headers={"HX-Request": "true", "HX-Target": "idle"})
    assert answer.status_code == 200
    after = BeautifulSoup(answer.get_data(as_text=True), "html.parser")
    assert after.select_one("#idle") is not None and not after.select("table.idle tbody tr")
    assert after.select_one("#pending-badge[hx-swap-oob]") is not None  # what goes beside the region


def test_a_token_for_a_plain_http_prometheus_is_warned_of(usage_app, caplog, tmp_path):
    token = tmp_path / "token"
    token.write_text("t")
    usage_app(prometheus_token_file=str(token))
    assert "sent to http://prometheus.monitoring:9090 in the clear" in caplog.text
    caplog.clear()
    usage_app(prometheus_token_file=str(token), prometheus_url="https://prometheus.monitoring:9090")
    assert "in the clear" not in caplog.text


def test_only_the_state_of_usage_is_a_live_region_and_only_where_there_are_gpus(usage_app, gpu_cluster):
    """A screen reader hears the state when it changes (static/extres.js says [data-announce] when
    it differs from the last poll's), never the age that changes at every poll;
    a node with no GPU shows no usage at all."""
    gpu_cluster.node("cpu-only", {"example.com/dongle": "2"})
    client = browser(polled(usage_app()))
    for url in ("/", "/nodes/gpu-1", "/idle/"):
        status = page(client, url).select_one("[data-usage]")
        live = status.select("[role], [aria-live]") if status else []
        assert not status.has_attr("role") and live == [], url  # no part of it is a live region
        assert status["data-announce"] == "GPU usage is read again.", url  # said on a change of state
        assert "ago" in status.get_text()  # the age is shown, outside the live part
    node = page(client, "/nodes/cpu-only")
    assert not node.select("[data-usage]") and "GPU usage" not in node.get_text()


def test_a_stale_reading_says_so_wherever_gpu_figures_are_shown(usage_app, gpu_cluster, source):
    """Workloads, a pod's panel (and Pending, beside its holders) show GPU figures from the last
    reading: once Prometheus stops answering they say it is stale, as the overview does."""
    app = polled(usage_app())
    client = browser(app)
    assert not page(client, "/workloads/").select('[data-usage="stale"]')  # fresh: nothing said
    source.down = "it did not answer within 5 s"
    polled(app)
    workloads = page(client, "/workloads/")
    assert workloads.select_one('[data-usage="stale"]') is not None and "busy" in workloads.get_text()
    panel = page(client, "/pods/ml/train")
    assert panel.select_one('[data-field="gpu-utilization"] [data-usage="stale"]') is not None
