"""The grid's columns are data (app/domain/columns.py): adding one is one definition, and the
headers, cells, sort links and keys, totals, exports, compact view and colspans follow."""

from __future__ import annotations

import csv
import io

import pytest
from bs4 import BeautifulSoup

from app.domain import columns
from app.domain.columns import Column
from tests.kube_helpers import grid_cells

D = "example.com/dongle"


@pytest.fixture
def nodes(cluster):
    cluster.node("n1", {D: "4"})
    cluster.node("n2", {D: "6"})
    cluster.pod("a", "n1", {D: "3"})
    cluster.pod("b", "n2", {D: "1"})


@pytest.fixture
def spare(monkeypatch):
    """A column added as a newcomer would: twice the free amount (a number no other column has)."""
    added = Column("spare", "spare twice", lambda u: 2 * u.free)
    at = [c.field for c in columns.COLUMNS].index("free")
    monkeypatch.setattr(columns, "COLUMNS", (*columns.COLUMNS[:at], added, *columns.COLUMNS[at:]))


def test_a_column_added_as_data_is_in_the_header_cells_totals_sort_and_exports(client, nodes, spare):
    soup = BeautifulSoup(client.get("/").get_data(as_text=True), "html.parser")
    head = soup.select_one(f'#grid th.res[data-resource="{D}"]')
    assert head["colspan"] == "6"
    assert soup.select_one(f'a[aria-label^="spare twice of {D}"]').get_text() == "spare twice"
    cells = grid_cells(str(soup))
    assert (cells[("n1", D, "spare")], cells[("n2", D, "spare")], cells[("*", D, "spare")]) == (
        "2",
        "10",
        "12",
    )
    by_spare = BeautifulSoup(client.get(f"/?sort=spare:{D}&order=desc").get_data(as_text=True), "html.parser")
    assert [tr["data-node"] for tr in by_spare.select("#grid tbody tr[data-node]")] == ["n2", "n1"]
    rows = list(csv.DictReader(io.StringIO(client.get("/export.csv").get_data(as_text=True))))
    assert {r["node"]: r["spare"] for r in rows} == {"n1": "2", "n2": "10"}
    assert client.get("/export.json").get_json()["totals"][D]["spare"] == 12
    compact = BeautifulSoup(client.get("/?view=compact").get_data(as_text=True), "html.parser")
    assert compact.select_one(f'#grid th.res[data-resource="{D}"]')["colspan"] == "2"  # not a compact column
    assert not compact.select('td[data-field="spare"]')


def test_the_columns_as_they_are(client, nodes):
    soup = BeautifulSoup(client.get("/").get_data(as_text=True), "html.parser")
    fields = [td["data-field"] for td in soup.select('#grid tbody tr[data-node="n1"] td[data-field]')]
    assert fields == ["capacity", "allocatable", "requested", "free"]  # and the bar, not a number
    said = client.get(f"/?sort=usage:{D}").get_data(as_text=True)  # the bar is no sort key
    assert "use name, or one of capacity, allocatable, requested, free and a resource" in said
