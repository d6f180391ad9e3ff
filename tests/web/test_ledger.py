"""The GPU-hours page (/gpu-hours/): what each team, namespace, queue or workload held since the
dashboard began counting, in physical GPUs, on a test clock; the exports say the page's numbers;
a bad grouping is named; nothing counted is "not known", never 0."""

from __future__ import annotations

import csv
import io

import pytest
from bs4 import BeautifulSoup

from tests import builders

GPU = "nvidia.com/gpu"
SLICED = {f"{GPU}.replicas": "4", f"{GPU}.count": "2", f"{GPU}.sharing-strategy": "time-slicing"}
HOUR = 3600.0


class Clock:
    now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def gpu_pods(cluster, clock):
    cluster.store.gpu_hours.clock = clock
    cluster.store.gpu_hours.since = clock.now
    cluster.store.apply_node(builders.node("whole", {GPU: "8"}))
    cluster.store.apply_node(builders.node("sliced", {GPU: "8"}, labels=SLICED))
    team = {"kueue.x-k8s.io/queue-name": "q"}
    cluster.store.apply_pod(
        builders.pod("a", "whole", {GPU: "2"}, labels={**team, "team": "team-a"}, owner=("Job", "train"))
    )
    cluster.store.apply_pod(
        builders.pod("b", "sliced", {GPU: "1"}, labels={**team, "team": "team-b"}, namespace="ml")
    )
    clock.now += 3 * HOUR


def test_the_page_and_its_exports_say_the_gpu_hours_of_each_team(make_app, cluster):
    app = make_app(team_label="team")
    clock = Clock()
    gpu_pods(cluster, clock)
    web = app.test_client()
    page = BeautifulSoup(web.get("/gpu-hours/").get_data(as_text=True), "html.parser")
    shown = {
        r["data-group"]: r.select_one('[data-field="hours"]')["data-value"]
        for r in page.select("tr[data-group]")
    }
    assert shown == {"team-a": "6.0000", "team-b": "0.7500"}  # 2 GPUs, and a quarter of one, for 3 h
    assert page.select_one("[data-ledger-total]")["data-ledger-total"] == "6.7500"
    assert "GPU-hours" in [a.get_text(strip=True) for a in page.select("nav[aria-label=Sections] a")]
    rows = list(csv.DictReader(io.StringIO(web.get("/gpu-hours/export.csv").get_data(as_text=True))))
    assert {(r["group"], float(r["gpu_hours"])) for r in rows} == {("team-a", 6.0), ("team-b", 0.75)}
    by_queue = web.get("/gpu-hours/export.json?by=workload").get_json()
    assert {r["group"]: r["gpu_hours"] for r in by_queue["rows"]} == {"default Job/train": 6.0, "ml": 0.75}


def test_a_bad_grouping_is_named_and_the_page_groups_by_team(client, cluster):
    clock = Clock()
    gpu_pods(cluster, clock)
    page = BeautifulSoup(client.get("/gpu-hours/?by=pods%3Cb%3E").get_data(as_text=True), "html.parser")
    assert (
        "Group by: 'pods<b>' is not one of team, namespace, queue, workload."
        in page.select_one("#by-error").get_text()
    )
    assert page.select("tr[data-group]")
    assert client.get("/gpu-hours/export.csv?by=x").status_code == 422


def test_nothing_counted_is_said_and_the_page_is_not_in_the_navigation(client, cluster):
    cluster.node("n1", {"example.com/dongle": "2"})
    page = BeautifulSoup(client.get("/gpu-hours/").get_data(as_text=True), "html.parser")
    assert page.select_one("[data-ledger-none]") is not None and not page.select("tr[data-group]")
    assert "GPU-hours" not in [a.get_text(strip=True) for a in page.select("nav[aria-label=Sections] a")]


def test_a_window_without_prometheus_is_refused_by_name_and_the_own_figures_shown(client, cluster):
    clock = Clock()
    gpu_pods(cluster, clock)
    page = BeautifulSoup(client.get("/gpu-hours/?window=last-week").get_data(as_text=True), "html.parser")
    said = page.select_one("#window-error").get_text()
    assert "GPU-hours over a window are kept by Prometheus, and none is set." in said
    assert (
        page.select("tr[data-group]")
        and "began counting" in page.select_one("[data-ledger-total]").get_text()
    )
    assert client.get("/gpu-hours/export.csv?window=last-week").status_code == 422
    bad = BeautifulSoup(client.get("/gpu-hours/?window=days&days=0").get_data(as_text=True), "html.parser")
    assert (
        "Days: '0' is not a whole number of days from 1 to 400." in bad.select_one("#days-error").get_text()
    )


def test_used_and_idle_where_usage_is_read_and_not_known_for_pods_the_exporter_does_not_name(
    make_app, cluster
):
    app = make_app(team_label="team", prometheus_url="http://127.0.0.1:1")
    clock = Clock()
    gpu_pods(cluster, clock)  # team-a: 2 GPUs, team-b: a quarter, for 3 h
    busy = {("default", "a"): 25.0}  # the exporter names a alone
    cluster.store.gpu_hours.busy(lambda pod: busy.get(pod))
    page = BeautifulSoup(app.test_client().get("/gpu-hours/").get_data(as_text=True), "html.parser")
    rows = {r["data-group"]: r for r in page.select("tr[data-group]")}
    assert rows["team-a"].select_one('[data-field="used"]').get_text(strip=True) == "1.50"  # 6 h x 25 %
    assert rows["team-a"].select_one('[data-field="idle"]').get_text(strip=True) == "4.50"
    assert rows["team-b"].select_one('[data-field="used"]').get_text(strip=True) == "not known"
    exported = {r["group"]: r for r in app.test_client().get("/gpu-hours/export.json").get_json()["rows"]}
    assert exported["team-a"]["used"] == 1.5 and exported["team-b"]["used"] == ""


def test_a_cost_column_where_prices_are_set_by_gpu_model_and_not_known_where_a_model_is_unpriced(
    make_app, cluster
):
    prices = '{"NVIDIA-A100-SXM4-40GB": 2.5}'
    app = make_app(team_label="team", gpu_prices=prices, gpu_price_currency="EUR")
    clock = Clock()
    cluster.store.gpu_hours.clock = clock
    a100 = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"}
    cluster.store.apply_node(builders.node("priced", {GPU: "8"}, labels=a100))
    cluster.store.apply_node(
        builders.node("unpriced", {GPU: "8"}, labels={"nvidia.com/gpu.product": "Tesla-T4"})
    )
    cluster.store.apply_pod(builders.pod("a", "priced", {GPU: "2"}, labels={"team": "team-a"}))
    cluster.store.apply_pod(builders.pod("b", "unpriced", {GPU: "1"}, labels={"team": "team-b"}))
    clock.now += 3 * HOUR
    page = BeautifulSoup(app.test_client().get("/gpu-hours/").get_data(as_text=True), "html.parser")
    cost = {
        r["data-group"]: r.select_one('[data-field="cost"]').get_text(strip=True)
        for r in page.select("tr[data-group]")
    }
    assert cost == {"team-a": "15.00", "team-b": "not known"}  # 6 GPU-hours x 2.50; a T4 has no price
    assert "Cost (EUR)" in page.select_one("thead").get_text()
    rows = {r["group"]: r for r in app.test_client().get("/gpu-hours/export.json").get_json()["rows"]}
    assert (rows["team-a"]["cost"], rows["team-a"]["currency"], rows["team-b"]["cost"]) == (15.0, "EUR", "")


def test_a_focus_shaped_csv_has_a_row_per_group_and_gpu_model_with_the_pages_gpu_hours(make_app, cluster):
    app = make_app(team_label="team", gpu_prices='{"NVIDIA-A100-SXM4-40GB": 2.5}', gpu_price_currency="EUR")
    clock = Clock()
    cluster.store.gpu_hours.clock = clock
    cluster.store.apply_node(
        builders.node("priced", {GPU: "8"}, labels={"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"})
    )
    cluster.store.apply_node(
        builders.node("unpriced", {GPU: "8"}, labels={"nvidia.com/gpu.product": "Tesla-T4"})
    )
    cluster.store.apply_pod(builders.pod("a", "priced", {GPU: "2"}, labels={"team": "team-a"}))
    cluster.store.apply_pod(builders.pod("b", "unpriced", {GPU: "1"}, labels={"team": "team-a"}))
    clock.now += 3 * HOUR
    text = app.test_client().get("/gpu-hours/focus.csv").get_data(as_text=True)
    found = list(csv.DictReader(io.StringIO(text)))
    assert [(r["ResourceName"], r["SkuId"], float(r["ConsumedQuantity"])) for r in found] == [
        ("team-a", "NVIDIA-A100-SXM4-40GB", 6.0),
        ("team-a", "Tesla-T4", 3.0),
    ]
    priced, unpriced = found
    assert (priced["BilledCost"], priced["BillingCurrency"], priced["ConsumedUnit"]) == (
        "15.0",
        "EUR",
        "GPU-Hours",
    )
    assert (unpriced["BilledCost"], unpriced["ListUnitPrice"]) == ("", "")  # not known, never 0
    assert priced["ChargeCategory"] == "Usage" and priced["ResourceType"] == "Team"
    page = BeautifulSoup(app.test_client().get("/gpu-hours/").get_data(as_text=True), "html.parser")
    total = float(page.select_one("[data-ledger-total]")["data-ledger-total"])
    assert sum(float(r["ConsumedQuantity"]) for r in found) == pytest.approx(total, abs=0.01)
