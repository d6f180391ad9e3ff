"""The planner looks at no more nodes than the plan needs: the same plan as the whole walk (the
reference below: every node's room computed, then round after round), for random clusters."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain.fit import NodeFacts, PodShape, how_many
from app.domain.planner import plan

D = "example.com/dongle"


def reference(pod: PodShape, nodes: list[NodeFacts], wanted: int, cap: int | None) -> dict[str, int]:
    taken: dict[str, int] = {}
    left = wanted
    for node in nodes:
        if left <= 0 or not (n := min(left, how_many(pod, node), cap or left)):
            break
        taken[node.name] = n
        left -= n
    for tier in (
        [n for n in nodes if n.allocatable.get(D, 0)],
        [n for n in nodes if not n.allocatable.get(D, 0)],
    ):
        room = {}
        for node in tier:
            most = how_many(pod, node, {D: 10**12})
            most = min(most, cap) if cap is not None else most
            if most > taken.get(node.name, 0):
                room[node.name] = most
        open_nodes = [n for n in tier if n.name in room]
        while left > 0 and open_nodes:
            still = []
            for node in open_nodes:
                if left <= 0:
                    break
                taken[node.name] = taken.get(node.name, 0) + 1
                left -= 1
                if taken[node.name] < room[node.name]:
                    still.append(node)
            open_nodes = still
    return taken


node_st = st.tuples(st.integers(0, 6), st.integers(0, 4), st.integers(0, 8))  # dongles, used, pods room


@settings(max_examples=300, deadline=None)
@given(
    st.lists(node_st, min_size=1, max_size=12),
    st.integers(1, 40),
    st.sampled_from([None, 1, 2, 3]),
    st.integers(1, 3),
)
def test_the_plan_is_the_whole_walks(specs, wanted, cap, ask):
    nodes = [
        NodeFacts(f"n{i:02d}", {}, {D: d, "pods": pods + 1}, {D: min(u, d), "pods": 1})
        for i, (d, u, pods) in enumerate(specs)
    ]
    pod = PodShape({D: ask})
    made = plan(pod, nodes, wanted, cap)
    assert {s.node: s.pods for s in made.steps} == reference(pod, nodes, wanted, cap)


def test_nodes_with_the_devices_come_before_nodes_without_any():
    """A GPU-less node is asked for GPUs only when the nodes that have some cannot take the rest."""
    gpu = "nvidia.com/gpu"
    bare = NodeFacts("a-bare", {}, {"pods": 10}, {"pods": 0})
    full = NodeFacts("b-full", {}, {gpu: 8, "pods": 10}, {gpu: 8, "pods": 1})
    made = plan(PodShape({gpu: 2}), [bare, full], 3)
    assert [(s.node, s.pods) for s in made.steps] == [("b-full", 3)]
    assert made.steps[0].has == {gpu: 8} and made.steps[0].held == {gpu: 8} and made.steps[0].add == {gpu: 6}
