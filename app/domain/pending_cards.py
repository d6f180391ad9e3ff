"""The Pending page's cards, as data: one card per pending pod, the pods of one workload and shape
on one card ("nginx-deployment: 10 pending"); on each, who holds what the dashboard will not add
on the nodes the pod could otherwise use (lowest priority first, then oldest, with what
preemption could free); a gated pod with who lifts each gate; the jobs holding a queue's quota
that cannot run themselves. Pods are any objects with the attributes below (the cache's
projections): this module imports nothing that reads a cluster."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from app.domain import preemption

HELD_PODS = 8  # holders listed per node


class Pod(Protocol):
    @property
    def namespace(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def priority(self) -> int: ...
    @property
    def created(self) -> str: ...
    @property
    def requests(self) -> Mapping[str, int]: ...
    @property
    def shape(self) -> Hashable: ...
    @property
    def owner(self) -> Any: ...  # (kind, name) with .kind and .name, or None


P = TypeVar("P", bound=Pod)
C = TypeVar("C")


@dataclass(frozen=True)
class Held(Generic[P]):
    """Who holds a resource this dashboard will not add, on a node the pod could otherwise use."""

    resource: str
    node: str
    free: int
    holders: list[P]  # the lowest priority first, then the oldest
    preemptible: int  # held by pods of lower priority than the pending pod's
    wanted: int = 0  # what the pending pod asks for
    allocatable: int = 0  # the node's
    claims: list[Any] = field(default_factory=list)  # DRA: claims holding devices, not by request

    @property
    def unresolvable(self) -> bool:
        return preemption.unresolvable(self.wanted, self.allocatable)

    @property
    def preemption_helps(self) -> bool:
        return preemption.preemption_helps(self.wanted, self.allocatable, self.free, self.preemptible)


def held(
    pending: Pod,
    resource: str,
    node: str,
    free: int,
    allocatable: int,
    wanted: int,
    on_node: Iterable[P],
    claims: list[Any],
) -> Held[P]:
    """``resource`` on ``node`` as held by the pods there asking for it (``on_node``), the lowest
    priority first, then the oldest, with what preemption by ``pending`` could free."""
    holders = sorted((p for p in on_node if p.requests.get(resource)), key=lambda p: (p.priority, p.created))
    lower = preemption.preemptible(((p.priority, p.requests[resource]) for p in holders), pending.priority)
    return Held(resource, node, free, holders[:HELD_PODS], lower, wanted, allocatable, claims)


def grouped(shown: Sequence[P], card: Callable[[P], C], others: Callable[[C], list[P]]) -> list[C]:
    """A card per pod, made by ``card``; the later pods of one workload and shape go on the first
    one's card (``others``: its list of them). A pod of no workload has a card of its own."""
    out: list[C] = []
    cards: dict[tuple[object, ...], C] = {}
    for pod in shown:
        group = (pod.namespace, pod.owner, pod.shape) if pod.owner and pod.owner.name else None
        if group is not None and group in cards:
            others(cards[group]).append(pod)
            continue
        made = card(pod)
        if group is not None:
            cards[group] = made
        out.append(made)
    return out


Job = tuple[str, str, str]  # namespace, kind, name


def stuck(holding: Iterable[Job], unschedulable: Iterable[P]) -> dict[Job, P]:
    """Of the jobs holding quota (namespace, kind, name), those that cannot run themselves: each
    with one of its pods the scheduler cannot place."""
    wanted = set(holding)
    found: dict[Job, P] = {}
    if not wanted:
        return found
    for pod in unschedulable:
        if pod.owner and (key := (pod.namespace, pod.owner.kind, pod.owner.name)) in wanted:
            found.setdefault(key, pod)
    return found
