"""Where a number of pods of one shape would go, and what to add to which nodes for the rest."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from app.domain.fit import NodeFacts, PodShape, how_many
from app.domain.ownership import Ownership


@dataclass(frozen=True)
class PlanStep:
    node: str
    pods: int  # pods of the shape this node would take
    add: Mapping[str, int]  # extended resource -> amount to add (empty: fits as it is)
    capacity: Mapping[str, int] = field(default_factory=dict)  # resource -> its capacity after adding
    has: Mapping[str, int] = field(default_factory=dict)  # resource -> allocatable now (devices there)
    held: Mapping[str, int] = field(default_factory=dict)  # resource -> requested now (devices held)


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

    def changes(self, ownership: Callable[[str, str], Ownership]) -> list[tuple[str, int, list[str]]]:
        """What the plan asks for, as changes a bulk form can make: (resource, capacity, nodes),
        each node given exactly the capacity its step says (nodes needing the same one grouped);
        only where this dashboard sets the amount on that node (``ownership``): devices a device
        plugin or a driver serves are not a number to set."""
        groups: dict[tuple[str, int], list[str]] = {}
        for step in self.steps:
            for resource, capacity in step.capacity.items():
                if ownership(resource, step.node).editable:
                    groups.setdefault((resource, capacity), []).append(step.node)
        return [(r, c, nodes) for (r, c), nodes in sorted(groups.items())]

    def device_backed(self, ownership: Callable[[str, str], Ownership]) -> list[Ownership]:
        """The owners of what the plan would add that this dashboard does not set, each once:
        the plan's read-only notice names them."""
        found: dict[str, Ownership] = {}
        for step in self.steps:
            for resource in step.add:
                if not (o := ownership(resource, step.node)).editable:
                    found.setdefault(f"{resource} {o.kind}", o)
        return list(found.values())


def plan(pod: PodShape, candidates: Iterable[NodeFacts], wanted: int, per_node: int | None = None) -> Plan:
    """Place ``wanted`` pods over ``candidates`` (least to add first): each node first takes what
    fits as things are; the rest are spread one pod a node at a time, round after round, over the
    nodes whose other resources leave room, so that no node is asked for more devices than a
    share (adding devices is only honest where the hardware is). ``per_node``: at most this many
    pods on one node. Nodes with none of a requested resource are asked only for what the nodes
    that have some cannot take."""
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
    # adding is honest only where the hardware is: the nodes that have some of every extended
    # resource the pod asks for take the rest first; the others only what those cannot take
    have = [n for n in nodes if all(n.allocatable.get(r, 0) > 0 for r in extended)]
    bare = [n for n in nodes if not all(n.allocatable.get(r, 0) > 0 for r in extended)]
    for tier in (have, bare):
        room: dict[str, int] = {}  # how many more each node could take, given what it lacks
        for node in tier:
            if len(room) >= left:
                break  # the first round gives the first ``left`` open nodes one pod each: enough
            most = how_many(pod, node, unlimited)
            if cap is not None:
                most = min(most, cap)
            if most > taken.get(node.name, 0):
                room[node.name] = most
        open_nodes = [n for n in tier if n.name in room]
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
        has = {r: node.allocatable.get(r, 0) for r in extended}
        held = {r: node.requested.get(r, 0) for r in extended}
        steps.append(PlanStep(node.name, pods, add, capacity, has, held))
    steps.sort(key=lambda s: (bool(s.add), s.node))
    return Plan(wanted, tuple(steps), wanted - max(0, left))
