"""The overview at scale: sort by any column, "free at least N of R", the per-resource summary strip;
bad arguments named, and the view shown without them."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from tests.conftest import eventually
from tests.kube_helpers import create_node, create_pod, kubelet_standin, own_resource

pytestmark = pytest.mark.kube


def order(web, query: str) -> list[str]:
    soup = BeautifulSoup(web.get(f"/?{query}").get_data(as_text=True), "html.parser")
    return [tr["data-node"] for tr in soup.select("table.grid tbody tr")]


@pytest.fixture
def three(web, core, uid):
    r = own_resource(uid, "o")
    a, b, c = f"{uid}-a", f"{uid}-b", f"{uid}-c"
    create_node(core, a, {r: "8"})
    create_node(core, b, {r: "4"})
    create_node(core, c, {})
    kubelet_standin(core, a, b, c)
    create_pod(core, f"{uid}-user", a, {r: "6"})
    create_pod(core, f"{uid}-waiting", None, {r: "9"})
    condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                 "message": f"0/2 nodes are available: 2 Insufficient {r}."}  # fmt: skip
    core.patch_namespaced_pod_status(f"{uid}-waiting", "default", {"status": {"conditions": [condition]}})
    eventually(lambda: order(web, f"q={uid}&sort=free:{r}&order=desc") == [b, a, c])
    return r, a, b, c


def test_sorting_by_any_column_keeps_unadvertising_nodes_last(web, uid, three):
    r, a, b, c = three
    assert order(web, f"q={uid}&sort=free:{r}&order=desc") == [b, a, c]  # 4 free, 2 free, none
    assert order(web, f"q={uid}&sort=free:{r}&order=asc") == [a, b, c]
    assert order(web, f"q={uid}&sort=requested:{r}&order=desc") == [a, b, c]
    assert order(web, f"q={uid}&sort=capacity:{r}&order=asc") == [b, a, c]
    assert order(web, f"q={uid}&sort=name") == [a, b, c]
    html = web.get(f"/?q={uid}&sort=free:{r}&order=desc").get_data(as_text=True)
    th = BeautifulSoup(html, "html.parser").select_one("th[aria-sort]")
    assert th["aria-sort"] == "descending" and "order=asc" in th.a["href"]  # click again: ascending


def test_free_at_least_n_of_a_resource(web, uid, three):
    r, a, b, _ = three
    assert order(web, f"q={uid}&free={r}&min=3") == [b]
    assert order(web, f"q={uid}&free={r}&min=2") == [a, b]
    assert order(web, f"q={uid}&free={r}&min=0&sort=free:{r}&order=desc") == [b, a]


def test_the_summary_strip_totals_each_resource(web, uid, three):
    r, *_ = three
    soup = BeautifulSoup(web.get("/").get_data(as_text=True), "html.parser")
    item = soup.select_one(f'ul.strip li[data-resource="{r}"]')
    fields = {s["data-field"]: s.get_text(strip=True) for s in item.select("[data-field]")}
    assert fields == {"requested": "6", "allocatable": "12", "nodes": "2", "waiting": "1 pending"}


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ("min=-1&free={r}", "min", "'-1' is not a whole number"),
        ("min=many&free={r}", "min", "'many' is not a whole number"),
        ("min=2", "min", "choose the resource"),
        ("min=2&free=dongle", "min", "qualified name"),
        ("sort=colour", "sort", "Sort by 'colour'"),
        ("sort=free:cpu", "sort", "Sort by 'free:cpu'"),
    ],
)
def test_bad_arguments_are_named_and_the_view_unfiltered(web, uid, three, query, field, message):
    r, a, b, c = three
    resp = web.get(f"/?q={uid}&" + query.format(r=r))
    assert resp.status_code == 200
    soup = BeautifulSoup(resp.get_data(as_text=True), "html.parser")
    assert message in soup.select_one(f"#{field}-error").get_text()
    assert [tr["data-node"] for tr in soup.select("table.grid tbody tr")] == [a, b, c]


def test_the_heat_map_colours_each_node_by_its_share(web, uid, three):
    r, a, b, _c = three
    soup = BeautifulSoup(web.get(f"/heat?q={uid}&of={r}").get_data(as_text=True), "html.parser")
    cells = {i["title"].split()[0]: (i["class"][0], i["title"].split()[1]) for i in soup.select(".heat i")}
    assert cells == {a: ("h3", "6/8"), b: ("h0", "0/4")}  # 75% and 0% requested; c advertises none
    assert all(i["role"] == "img" for i in soup.select(".heat i"))  # the title is its name
    counts = {s["data-band"]: s.get_text() for s in soup.select("#heat-counts [data-band]")}
    assert counts["0-19%"] == "1" and counts["60-79%"] == "1" and counts["full"] == "0"
    bad = BeautifulSoup(web.get(f"/heat?q={uid}&of=nope.example/x").get_data(as_text=True), "html.parser")
    assert "No node advertises 'nope.example/x'" in bad.select_one("#of-error").get_text()
