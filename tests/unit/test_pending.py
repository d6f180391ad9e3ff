from dataclasses import dataclass, field

import pytest

from app.domain.overview import node_row
from app.domain.pending import diagnose, parse_scheduler_message

D, F = "example.com/dongle", "acme.io/fpga"

# Real messages, as kube-scheduler wrote them in several versions.
MESSAGES = [
    # 1.16-1.21 (v1.20 is what the tests run)
    ("0/3 nodes are available: 3 Insufficient example.com/dongle.", 3, {D: 3}, [], None),
    (
        "0/4 nodes are available: 1 Insufficient cpu, 3 Insufficient example.com/dongle.",
        4,
        {"cpu": 1, D: 3},
        [],
        None,
    ),
    (
        "0/5 nodes are available: 2 node(s) didn't match node selector, 3 Insufficient example.com/dongle.",
        5,
        {D: 3},
        [(2, "node(s) didn't match node selector")],
        None,
    ),
    (
        "0/4 nodes are available: 4 node(s) had taint {node.kubernetes.io/not-ready: }, "
        "that the pod didn't tolerate.",
        4,
        {},
        [(4, "node(s) had taint {node.kubernetes.io/not-ready: }, that the pod didn't tolerate")],
        None,
    ),
    (
        "0/3 nodes are available: 1 Insufficient example.com/dongle, 1 node(s) had taint {a: b}, "
        "that the pod didn't tolerate, 1 node(s) were unschedulable.",
        3,
        {D: 1},
        [(1, "node(s) had taint {a: b}, that the pod didn't tolerate"), (1, "node(s) were unschedulable")],
        None,
    ),
    # 1.22-1.26: a preemption clause follows
    (
        "0/3 nodes are available: 3 Insufficient example.com/dongle. preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod.",
        3,
        {D: 3},
        [],
        "0/3 nodes are available: 3 No preemption victims found for incoming pod",
    ),
    # 1.27+: untolerated taint wording, and a doubled full stop at the end
    (
        "0/4 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
        "3 Insufficient example.com/dongle. preemption: 0/4 nodes are available: 1 Preemption is not helpful "
        "for scheduling, 3 No preemption victims found for incoming pod..",
        4,
        {D: 3},
        [(1, "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }")],
        "0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found "
        "for incoming pod",
    ),
    (
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu, 2 Insufficient memory.",
        2,
        {"nvidia.com/gpu": 2, "memory": 2},
        [],
        None,
    ),
]


@pytest.mark.parametrize(("message", "total", "insufficient", "others", "preemption"), MESSAGES)
def test_parse_real_scheduler_messages(message, total, insufficient, others, preemption):
    parsed = parse_scheduler_message(message)
    assert parsed.total_nodes == total
    assert parsed.insufficient == insufficient
    assert parsed.other_reasons == others
    assert parsed.preemption == preemption


@pytest.mark.parametrize("message", ["no nodes available to schedule pods", "", "something new entirely"])
def test_unknown_messages_are_kept_not_guessed(message):
    parsed = parse_scheduler_message(message)
    assert parsed.total_nodes is None
    assert parsed.reasons == ()
    assert parsed.raw == message


@dataclass
class N:
    name: str
    capacity: dict
    allocatable: dict = None
    labels: dict = field(default_factory=dict)
    desired: dict = field(default_factory=dict)
    unschedulable: bool = False

    def __post_init__(self):
        if self.allocatable is None:
            self.allocatable = dict(self.capacity)


def rows(nodes, table):
    """The kept overview rows of ``nodes`` with the requested amounts in ``table``."""
    return [node_row(n, table.get(n.name, {})) for n in nodes]


def test_short_resource_gives_shortfall_and_suggestion():
    nodes = [N("a", {D: 3}), N("b", {D: 3}), N("c", {D: 1}), N("d", {})]
    d = diagnose({D: 3}, {}, rows(nodes, {"a": {D: 1}, "b": {D: 2}}))
    assert d.kind == "short"
    [fit] = d.fits
    assert (fit.max_free, fit.best_node, fit.shortfall, fit.advertised_on) == (2, "a", 1, 3)
    assert fit.fit_with_shortfall == 1
    [s] = d.suggestions
    assert (s.node, s.resource, s.add, s.new_capacity) == ("a", D, 1, 4)
    assert s.text == f"add 1 {D} to a"


def test_unadvertised_resource_is_called_so():
    d = diagnose({"example.com/qubit": 1}, {}, rows([N("a", {D: 3})], {}))
    assert d.kind == "unadvertised"
    assert d.fits[0].unadvertised
    assert d.suggestions == []


def test_resource_that_fits_is_not_the_reason():
    d = diagnose({D: 1}, {}, rows([N("a", {D: 3})], {}))
    assert d.kind == "other"
    assert d.suggestions == []


def test_node_selector_limits_the_candidates():
    nodes = [N("a", {D: 5}, labels={"pool": "x"}), N("b", {D: 1}, labels={"pool": "y"})]
    d = diagnose({D: 2}, {"pool": "y"}, rows(nodes, {}))
    assert d.kind == "short"
    assert d.candidates == 1
    assert d.suggestions[0].node == "b"
    assert diagnose({D: 2}, {"pool": "z"}, rows(nodes, {})).kind == "unadvertised"


def test_several_resources_must_fit_on_one_node():
    nodes = [N("a", {D: 1, F: 0}), N("b", {D: 0, F: 1})]
    d = diagnose({D: 1, F: 1}, {}, rows(nodes, {}))
    assert d.kind == "short"  # each fits somewhere, never both on one node
    assert [(s.node, s.resource, s.add) for s in d.suggestions] == [("a", F, 1)]


def test_cordoned_nodes_are_not_candidates():
    nodes = [N("a", {D: 4}, unschedulable=True), N("b", {D: 1})]
    d = diagnose({D: 2}, {}, rows(nodes, {}))
    assert d.suggestions[0].node == "b"
