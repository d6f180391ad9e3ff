"""Where a number of pods of one shape would go, and what to add to which nodes for the rest."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from app.domain.fit import NodeFacts, PodShape, how_many


@dataclass(frozen=True)
class PlanStep:
    node: str
    pods: int  # pods of the shape this node would take
    add: Mapping[str, int]  # extended resource -> amount to add (empty: fits as it is)
    capacity: Mapping[str, int] = field(default_factory=dict)  # resource -> its capacity after adding


@dataclass(frozen=True)
class Plan:
    """Where ``wanted`` pods of one shape would go: nodes that fit as they are, then the rest
    spread over the nodes given more extended resources (``plan``)."""

    wanted: int
    steps: tuple[PlanStep, ...]
    placed: int  # how many of the wanted pods the steps place

    @property
    def adds(self) -> tuple[PlanStep, ...]:
        return tuple(s for s in self.steps if s.add)

    def changes(self) -> list[tuple[str, int, list[str]]]:
        """What the plan asks for, as changes a bulk form can make: (resource, capacity, nodes),
        each node given exactly the capacity its step says (nodes needing the same one grouped)."""
        groups: dict[tuple[str, int], list[str]] = {}
        for step in self.steps:
            for resource, capacity in step.capacity.items():
                groups.setdefault((resource, capacity), []).append(step.node)
        return [(r, c, nodes) for (r, c), nodes in sorted(groups.items())]


def plan(pod: PodShape, candidates: Iterable[NodeFacts], wanted: int, per_node: int | None = None) -> Plan:
    """Place ``wanted`` pods over ``candidates`` (least to add first): each node first takes what
    fits as things are; the rest are spread one pod a node at a time, round after round, over the
    nodes whose other resources leave room, so that no node is asked for more devices than a
    share (adding devices is only honest where the hardware is). ``per_node``: at most this many
    pods on one node."""
    extended = pod.extended
    unlimited = {r: 10**12 for r in extended}
    cap = per_node if per_node is not None and per_node > 0 else None
    nodes = list(candidates)
    left = wanted
    taken: dict[str, int] = {}
    for node in nodes:  # those that fit as they are come first
        if left <= 0 or not (n := min(left, how_many(pod, node), cap or left)):
            break
        taken[node.name] = n
        left -= n
    room: dict[str, int] = {}  # how many more each node could take, given the extended resources it lacks
    for node in nodes:
        if len(room) >= left:
            break  # the first round gives the first ``left`` open nodes one pod each: no more needed
        most = how_many(pod, node, unlimited)
        if cap is not None:
            most = min(most, cap)
        if most > taken.get(node.name, 0):
            room[node.name] = most
    open_nodes = [n for n in nodes if n.name in room]
    while left > 0 and open_nodes:  # one more pod on each node with room, in order, each round
        still = []
        for node in open_nodes:
            if left <= 0:
                break
            taken[node.name] = taken.get(node.name, 0) + 1
            left -= 1
            if taken[node.name] < room[node.name]:
                still.append(node)
        open_nodes = still
    steps = []
    for node in nodes:
        pods = taken.get(node.name, 0)
        if not pods:
            continue
        add = {r: v for r, want in extended.items() if (v := pods * want - node.free(r)) > 0}
        capacity = {r: node.capacity.get(r, 0) + v for r, v in add.items()}
        steps.append(PlanStep(node.name, pods, add, capacity))
    steps.sort(key=lambda s: (bool(s.add), s.node))
    return Plan(wanted, tuple(steps), wanted - max(0, left))
