"""Each page's query parsed in the domain, alone: a bad argument is named and left out, a good
one is kept as given."""

from __future__ import annotations

import pytest
from werkzeug.datastructures import MultiDict

from app.domain import history_query, pending_query, workloads_query
from app.domain.bulk_form import parse_bulk
from app.domain.changes import ChangeError
from app.domain.workloads import WorkloadRow

D = "example.com/dongle"


def test_history_names_a_bad_day_and_a_range_that_ends_before_it_begins():
    query, errors = history_query.parse({"since": "2026-12-05", "until": "2026-12-01", "node": " n1 "})
    assert query.args() == {"node": "n1", "since": "2026-12-05"} and "until" in errors
    query, errors = history_query.parse({"since": "yesterday", "resource": "dongle"})
    assert set(errors) == {"since", "resource"} and query.args() == {}


def test_workloads_names_each_bad_choice_and_orders_counts_most_first():
    query, errors = workloads_query.parse({"by": "team", "sort": "size", "order": "up"}, [D])
    assert set(errors) == {"by", "sort", "order"} and (query.by, query.sort) == ("workload", "requested")
    assert workloads_query.parse({"sort": "pods"}, [D])[0].order == "desc"
    assert workloads_query.parse({"sort": "namespace"}, [D])[0].order == "asc"
    query, errors = workloads_query.parse({"namespace": "ml", "resource": "example.com/dongel"}, [D])
    assert "did you mean example.com/dongle" in errors["resource"] and query.resource == ""
    rows = [WorkloadRow(D, "team-a", "Deployment", "web", 1, 1, 0.5, "", 1)]
    assert workloads_query.in_rows(query, rows, errors).namespace == "" and "namespace" in errors


def test_pending_keeps_a_known_resource_and_names_an_unknown_one():
    assert pending_query.parse({"resource": D, "namespace": "ml"}, [D])[0].args() == {
        "namespace": "ml",
        "resource": D,
    }
    assert "No such resource" in pending_query.parse({"resource": "acme.io/fpga"}, [D])[1]["resource"]


LABELS = {"n1": {"zone": "a"}, "n2": {"zone": "b"}, "n3": {"zone": "a"}}


def _bulk(read_only=lambda r, node: None, **form):
    return parse_bulk(MultiDict(form), LABELS, read_only, maximum=1000)


def test_the_bulk_form_targets_by_name_or_selector_never_both():
    change = _bulk(action="set", resource=D, quantity="2", selector="zone=a")
    assert (change.action, change.resource, change.count, change.targets) == ("set", D, 2, ("n1", "n3"))
    assert _bulk(action="remove", resource=D, nodes=["n2", "n2"]).targets == ("n2",)
    for form, field, said in (
        ({"nodes": ["n1"], "selector": "zone=a"}, "nodes", "not both"),
        ({"nodes": ["n1", "n9", "n8"]}, "nodes", "Unknown nodes: n8, n9"),
        ({"selector": "zone=c"}, "selector", "No node matches"),
        ({"selector": "zone in (a"}, "selector", "Label selector"),
        ({}, "nodes", "Choose at least one node"),
        ({"nodes": ["n1"], "action": "double"}, "action", "'set' or 'remove'"),
        ({"nodes": ["n1"], "quantity": "1500m"}, "quantity", "1500m"),
    ):
        with pytest.raises(ChangeError) as refused:
            _bulk(**{"action": "set", "resource": D, "quantity": "2", **form})
        assert said in refused.value.errors[field], (form, refused.value.errors)


def test_a_resource_something_else_serves_on_a_target_is_refused_naming_the_node():
    def read_only(resource, node):
        return "a device plugin" if node == "n3" else None

    with pytest.raises(ChangeError) as refused:
        _bulk(read_only, action="set", resource=D, quantity="2", selector="zone=a")
    assert "a device plugin on n3" in refused.value.errors["resource"]
