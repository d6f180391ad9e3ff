"""A state-machine property test: after any sequence of watch events (nodes come, change and go;
pods are bound, change and end; a relist), the totals the store keeps by differences equal the
totals summed afresh over its rows, and each row equals one rebuilt from the objects held."""

from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from app.domain.overview import node_row
from app.domain.totals import Totals
from app.kube.state.store import Store
from tests import builders

D, F = "example.com/dongle", "acme.io/fpga"
NODES = st.sampled_from(["a", "b", "c"])
PODS = st.sampled_from(["p1", "p2", "p3", "p4"])
AMOUNTS = st.dictionaries(st.sampled_from([D, F]), st.integers(0, 6), max_size=2)


def node(name: str, rv: int, capacity: dict[str, int], allocatable: dict[str, int]) -> dict:
    return builders.node(name, capacity, allocatable=allocatable, rv=rv)


def pod(name: str, rv: int, node_name: str, requests: dict[str, int], phase: str) -> dict:
    return builders.pod(name, node_name, requests, rv=rv, phase=phase, limits=requests)


class Events(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.store = Store()
        self.rv = 0
        self.nodes: dict[str, dict] = {}

    def _next(self) -> int:
        self.rv += 1
        return self.rv

    @rule(name=NODES, capacity=AMOUNTS, lower=st.integers(0, 2))
    def node_is_put(self, name: str, capacity: dict[str, int], lower: int) -> None:
        allocatable = {k: max(0, v - lower) for k, v in capacity.items()}  # the kubelet reserves some
        obj = node(name, self._next(), capacity, allocatable)
        self.nodes[name] = obj
        self.store.apply_node(obj)

    @rule(name=NODES)
    def node_goes(self, name: str) -> None:
        if name in self.nodes:
            self.store.apply_node(self.nodes.pop(name), deleted=True)

    @rule(
        name=PODS,
        node_name=NODES,
        requests=AMOUNTS,
        phase=st.sampled_from(["Running", "Pending", "Succeeded"]),
    )
    def pod_is_put(self, name: str, node_name: str, requests: dict[str, int], phase: str) -> None:
        self.store.apply_pod(pod(name, self._next(), node_name, requests, phase))

    @rule(name=PODS)
    def pod_goes(self, name: str) -> None:
        held = self.store.objects.pod("default", name)
        if held is not None:
            self.store.apply_pod(pod(name, self._next(), held.node_name or "a", {}, "Running"), deleted=True)

    @rule()
    def relist_of_nodes(self) -> None:
        self.store.replace("nodes", [self.store.objects.node(n) for n in self.store.objects.node_names()])

    @invariant()
    def kept_totals_equal_a_rebuild(self) -> None:
        rows, kept = self.store.overview_rows()
        assert kept == Totals.of(r.usage for r in rows)
        for row in rows:
            held = self.store.objects.node(row.name)
            assert held is not None
            fresh = node_row(held, self.store.objects.requested_on(row.name))
            assert row.usage == fresh.usage, row.name


TestEvents = pytest.mark.thorough(Events.TestCase)
TestEvents.settings = settings(max_examples=150, stateful_step_count=30, deadline=None)
