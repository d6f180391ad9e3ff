from dataclasses import dataclass, field

from app.domain.accounting import ResourceUsage
from app.domain.overview import Filters, build_grid, node_row
from app.domain.selectors import parse_selector
from app.domain.totals import RunningTotals, Totals

D = "example.com/dongle"
F = "acme.io/fpga"


@dataclass
class Node:
    name: str
    capacity: dict[str, int]
    labels: dict[str, str] = field(default_factory=dict)
    desired: dict[str, int] = field(default_factory=dict)
    unschedulable: bool = False

    @property
    def allocatable(self) -> dict[str, int]:
        return self.capacity


def rows():
    return [
        node_row(Node("a", {"cpu": 4000, D: 4}, {"zone": "x"}), {"cpu": 100, D: 1, "pods": 1}),
        node_row(Node("b", {D: 2, F: 1}, {"zone": "y"}, desired={D: 3}), {F: 1}),
        node_row(Node("c", {"cpu": 2000}), {}),
    ]


def test_a_row_holds_extended_resources_only_with_drift():
    a, b, c = rows()
    assert a.usage == {D: ResourceUsage(4, 4, 1, True)}
    assert a.drifted == frozenset()
    assert b.drifted == {D}
    assert c.usage == {}


def test_grid_without_filters_totals_every_row():
    grid = build_grid(rows(), Filters())
    assert [r.name for r in grid.rows] == ["a", "b", "c"]
    assert grid.resources == [F, D]
    assert grid.totals.by_resource[D] == ResourceUsage(6, 6, 1, True)
    assert grid.totals.nodes_with == {D: 2, F: 1}
    assert [r.name for r in grid.drifted_rows] == ["b"]
    assert grid.node_count == 3


def test_filters_narrow_rows_and_totals_but_not_the_resource_choices():
    by_label = build_grid(rows(), Filters(selector=parse_selector("zone=x")))
    assert [r.name for r in by_label.rows] == ["a"]
    assert by_label.totals.by_resource[D].capacity == 4
    assert by_label.all_resources == [F, D]

    by_resource = build_grid(rows(), Filters(resources=(F,)))
    assert [r.name for r in by_resource.rows] == ["b"]
    assert by_resource.rows[0].usage == {F: ResourceUsage(1, 1, 1, True)}
    assert set(by_resource.totals.by_resource) == {F}

    by_name = build_grid(rows(), Filters(q=" B "))
    assert [r.name for r in by_name.rows] == ["b"]
    assert by_name.drifted_rows == by_name.rows
    assert build_grid(rows(), Filters(q="zzz")).rows == []


def test_kept_totals_give_the_same_grid_as_summing():
    every_row = Totals.of(r.usage for r in rows())
    for filters in (
        Filters(),
        Filters(resources=(F,)),
        Filters(resources=(D, "other.io/x")),
        Filters(q="a"),
        Filters(selector=parse_selector("zone in (x,y)"), resources=(D,)),
    ):
        assert build_grid(rows(), filters, every_row) == build_grid(rows(), filters), filters


def test_running_totals_move_by_differences():
    running = RunningTotals()
    a, b, _ = rows()
    running.add(a.usage)
    running.add(b.usage)
    assert running.totals() == Totals.of([a.usage, b.usage])
    running.add(b.usage, -1)  # b's row is replaced by one without any extended resource
    assert running.totals() == Totals.of([a.usage])
    assert F not in running.totals().by_resource  # no node has it any more: not a column


def test_a_resource_undecided_on_other_nodes_is_no_column_of_a_filtered_grid():
    """A DeviceClass whose numbers cannot be decided on node u gives the unfiltered grid a column
    (its cells say why); a grid filtered to nodes without it shows no such column."""
    from dataclasses import replace

    g = "example.com/gpu"
    u = replace(node_row(Node("u", {}), {}), unknown={g: "selector too costly"})
    every = [*rows(), u]
    assert build_grid(every, Filters()).resources == [F, D, g]
    assert build_grid(every, Filters(q="a")).resources == [D]
    assert build_grid(every, Filters(q="u")).resources == [g]
    assert g in build_grid(every, Filters(q="a")).all_resources  # still a choice in the picker


class Query(dict):
    """A query string as the web layer hands it in (werkzeug's MultiDict has getlist too)."""

    def getlist(self, key: str) -> list[str]:
        return list(self.get(key, []))


def test_the_query_is_parsed_without_a_request_and_each_bad_field_named():
    from app.domain.overview_query import parse_query

    filters, errors = parse_query(
        Query(q=[" gpu "], resource=[D, D], free=[D], min=["2"], sort=[f"free:{D}"], order=["desc"])
    )
    assert (filters.q, filters.resources, filters.free_at_least) == ("gpu", (D,), (D, 2))
    assert (filters.sort, filters.descending, errors) == (("free", D), True, {})
    wide_three = "\uff13"  # a digit, but not ASCII
    _, errors = parse_query(Query(min=[wide_three], free=[D], sort=["usage:" + D], selector=["a in"]))
    assert set(errors) == {"min", "sort", "selector"}
    assert "is not a whole number" in errors["min"]
