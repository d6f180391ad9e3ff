"""GPU-hours over a window, as Prometheus keeps them (Debian's Prometheus, the chart's rules): a
recorded history of extres_gpu_seconds_held_total is written into its store (promtool's
backfill, as a scrape every 15 s would have kept it): team-a's pod held 2 GPUs for 3 h, the
dashboard restarting after 1 h (a counter reset; the one scrape interval before it is lost);
team-b's held 1 share of a 4-way GPU for 4 h and another pod 1 GPU for 20 minutes. The page's
window and its CSV say team-a 6.00 (less that interval) and team-b 1.33 GPU-hours, with the part
of the window the dashboard reported in; a window with no report is "not known", never 0. (The
counters themselves are integrated from the watch's events: unit tests on a test clock,
tests/unit/test_gpu_hours.py.)"""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from app import create_app
from app.usage import ledger
from tests.prometheus import Prometheus
from tests.web.fake import FakeCluster

HOUR = 3600
STEP = 15  # a scrape every 15 s (Prometheus' usual interval)
# a restart loses what the old process counted after its last scrape: at most one interval of
# what was held then (2 GPUs here); everything else is counted through the counter reset
LOST = 2 * STEP / HOUR
LABELS = {
    "a": 'namespace="team-a",queue="q",owner_kind="Job",owner_name="train",team="team-a"',
    "b": 'namespace="team-b",queue="q",owner_kind="Job",owner_name="sim",team="team-b"',
    "c": 'namespace="team-b",queue="q",owner_kind="Job",owner_name="probe",team="team-b"',
}


def history(start: int, end: int) -> str:
    """OpenMetrics text of what the dashboard exported from ``start`` to ``end``."""
    series: dict[str, list[tuple[int, float]]] = {k: [] for k in LABELS}
    synced: list[int] = []
    restart = start + HOUR
    for t in range(start, end, STEP):
        synced.append(t)
        held_a = 2 * min(t - start, 3 * HOUR)
        series["a"].append(
            (t, held_a if t < restart else held_a - 2 * HOUR)
        )  # counted anew after the restart
        series["b"].append((t, 0.25 * min(t - start, 4 * HOUR)))
        c_from = start + 2 * HOUR
        if t >= c_from:
            series["c"].append((t, min(t - c_from, 20 * 60)))
    lines = ["# TYPE extres_gpu_seconds_held counter"]
    for key, points in series.items():
        lines += [f"extres_gpu_seconds_held_total{{{LABELS[key]}}} {v} {t}" for t, v in points]
    for what in ("used", "idle"):  # team-a's GPUs were half busy; the exporter named no other pod
        lines.append(f"# TYPE extres_gpu_seconds_{what} counter")
        lines += [f"extres_gpu_seconds_{what}_total{{{LABELS['a']}}} {v / 2} {t}" for t, v in series["a"]]
    lines.append("# TYPE extres_cache_synced gauge")
    lines += [f"extres_cache_synced 1 {t}" for t in synced]
    return "\n".join([*lines, "# EOF", ""])


@pytest.fixture
def prometheus(tmp_path: Path):
    end = int(time.time()) - 120
    start = end - 5 * HOUR
    (tmp_path / "history.om").write_text(history(start, end))
    promtool = shutil.which("promtool")
    assert promtool, "Debian's prometheus package is missing: scripts/dev setup installs it"
    subprocess.run(
        [
            promtool,
            "tsdb",
            "create-blocks-from",
            "openmetrics",
            str(tmp_path / "history.om"),
            str(tmp_path / "data"),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    server = Prometheus(tmp_path, "127.0.0.1:1")  # scrapes nothing that answers: the history is all it holds
    ledger._kept.clear()
    yield server, start, end
    server.stop()


def test_a_windows_gpu_hours_per_team_from_prometheus(prometheus):
    server, start, end = prometheus
    config = {"in_cluster": "false", "selector_evaluator": "in-process", "prometheus_url": server.url}
    app = create_app({**config, "gpu_prices": '{"*": 2}'}, cluster=FakeCluster())
    web = app.test_client()
    page = BeautifulSoup(web.get("/gpu-hours/?window=days&days=2").get_data(as_text=True), "html.parser")
    shown = {
        r["data-group"]: float(r.select_one('[data-field="hours"]')["data-value"])
        for r in page.select("tr[data-group]")
    }
    assert shown == {
        "team-a": pytest.approx(6.0 - LOST, abs=0.005),
        "team-b": pytest.approx(1 + 1 / 3, abs=0.005),
    }
    used = {
        r["data-group"]: r.select_one('[data-field="used"]').get_text(strip=True)
        for r in page.select("tr[data-group]")
    }
    assert used == {"team-a": f"{(6.0 - LOST) / 2:.2f}", "team-b": "not known"}
    cost = {
        r["data-group"]: r.select_one('[data-field="cost"]').get_text(strip=True)
        for r in page.select("tr[data-group]")
    }
    assert {g: float(c) for g, c in cost.items()} == pytest.approx(
        {g: h * 2 for g, h in shown.items()}, abs=0.006
    )
    now = datetime.now(UTC)
    window = now - (now.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=1))
    coverage = float(page.select_one("[data-coverage]")["data-coverage"])
    assert coverage == pytest.approx((end - start) / window.total_seconds(), abs=0.01)
    exported = csv.DictReader(
        io.StringIO(web.get("/gpu-hours/export.csv?window=days&days=2").get_data(as_text=True))
    )
    assert {r["group"]: float(r["gpu_hours"]) for r in exported} == pytest.approx(
        shown, abs=0.01
    )  # the page's
    by_workload = web.get("/gpu-hours/export.json?window=days&days=2&by=workload").get_json()["rows"]
    assert {r["group"]: r["gpu_hours"] for r in by_workload} == pytest.approx(
        {"team-a Job/train": 6.0 - LOST, "team-b Job/sim": 1.0, "team-b Job/probe": 1 / 3}, abs=0.005
    )


def test_a_window_with_no_report_is_not_known_and_an_unreachable_prometheus_is_said(prometheus):
    server, _, _ = prometheus
    app = create_app(
        {"in_cluster": "false", "selector_evaluator": "in-process", "prometheus_url": server.url},
        cluster=FakeCluster(),
    )
    page = BeautifulSoup(
        app.test_client().get("/gpu-hours/?window=last-month").get_data(as_text=True), "html.parser"
    )
    assert page.select_one("[data-ledger-uncovered]") is not None and not page.select("tr[data-group]")
    server.stop()
    ledger._kept.clear()
    page = BeautifulSoup(
        app.test_client().get("/gpu-hours/?window=yesterday").get_data(as_text=True), "html.parser"
    )
    assert (
        "Not known: Prometheus it cannot be reached"
        in page.select_one("[data-ledger-unavailable]").get_text()
    )
