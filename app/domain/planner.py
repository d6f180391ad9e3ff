"""Where a number of pods of one shape would go, and what to add to which nodes for the rest."""

from __future__ import annotations

import itertools
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
    """Where ``wanted`` pods of one shape would go: nodes that fit as they are, then nodes given
    more extended resources (greedy, largest room first)."""

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


def plan(pod: PodShape, candidates: Iterable[NodeFacts], wanted: int) -> Plan:
    """Place ``wanted`` pods (a greedy bin-pack over ``candidates``, least to add first): each
    node takes what fits as things are, then, given the extended resources it lacks, as many as
    its other resources allow, until every pod is placed."""
    extended = pod.extended
    unlimited = {r: 10**12 for r in extended}
    left = wanted
    steps: list[PlanStep] = []
    taken: dict[str, int] = {}
    seen: list[NodeFacts] = []
    rest = iter(candidates)
    for node in rest:  # least to add first: those that fit as they are come first
        seen.append(node)
        if left <= 0 or not (n := min(left, how_many(pod, node))):
            break
        taken[node.name] = n
        left -= n
    for node in itertools.chain(seen, rest):
        now = taken.get(node.name, 0)
        added = min(left, how_many(pod, node, unlimited) - now) if left > 0 else 0
        if now + max(0, added) <= 0:
            if left <= 0:
                break
            continue
        added = max(0, added)
        left -= added
        add = {r: v for r, want in extended.items() if (v := (now + added) * want - node.free(r)) > 0}
        capacity = {r: node.capacity.get(r, 0) + v for r, v in add.items()}
        steps.append(PlanStep(node.name, now + added, add, capacity))
    steps.sort(key=lambda s: (bool(s.add), s.node))
    return Plan(wanted, tuple(steps), wanted - max(0, left))
