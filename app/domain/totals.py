"""Cluster totals per extended resource (pure): each node's usage (app.domain.accounting's
``ResourceUsage``) summed by name, kept current as nodes' rows come and go, with the nodes
advertising each, those over-committed and the capacity not allocatable summed per node (the
sums alone would hide a node over by 2 beside one with 2 free)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from app.domain.accounting import ResourceUsage


@dataclass
class Totals:
    """Cluster totals per resource."""

    by_resource: dict[str, ResourceUsage] = field(default_factory=dict)
    nodes_with: dict[str, int] = field(default_factory=dict)  # nodes advertising each resource
    nodes_over: dict[str, int] = field(default_factory=dict)  # nodes where it is over-committed
    unavailable: dict[str, int] = field(default_factory=dict)  # capacity not allocatable, summed per node
    nodes_unavailable: dict[str, int] = field(default_factory=dict)  # nodes with some of it

    @classmethod
    def of(cls, usages: Iterable[Mapping[str, ResourceUsage]]) -> Totals:
        running = RunningTotals()
        for usage in usages:
            running.add(usage)
        return running.totals()


class _Sums:
    """One resource's sums over the nodes that have it, by name."""

    __slots__ = (
        "advertising",
        "allocatable",
        "capacity",
        "dra",
        "nodes",
        "over",
        "over_nodes",
        "requested",
        "unavailable",
        "unavailable_nodes",
        "used",
    )

    def __init__(self) -> None:
        self.capacity = self.allocatable = self.requested = 0
        self.advertising = 0  # nodes that advertise it
        self.nodes = 0  # nodes with it at all (advertised, requested or served)
        self.used = 0  # requested, or what claims hold where DRA serves it
        self.dra = 0  # nodes where DRA serves it
        self.over = 0  # over-commitment summed per node
        self.over_nodes = 0  # nodes over-committed
        self.unavailable = 0  # capacity not allocatable, summed per node
        self.unavailable_nodes = 0


class RunningTotals:
    """Totals kept current as per-node usages come and go: add a node's usage, subtract it
    (``sign=-1``) when it is replaced. Sums plain integers, by name: no object per node and
    resource."""

    def __init__(self) -> None:
        self._sums: dict[str, _Sums] = {}

    def add(self, usage: Mapping[str, ResourceUsage], sign: int = 1) -> None:
        for name, u in usage.items():
            s = self._sums.get(name)
            if s is None:
                s = self._sums[name] = _Sums()
            over = u.over
            s.capacity += sign * u.capacity
            s.allocatable += sign * u.allocatable
            s.requested += sign * u.requested
            s.advertising += sign * u.advertised
            s.nodes += sign
            s.used += sign * u.used
            s.dra += sign * (u.allocated is not None)
            s.over += sign * over
            s.over_nodes += sign * (over > 0)
            lost = u.unavailable
            s.unavailable += sign * lost
            s.unavailable_nodes += sign * (lost > 0)
            if not s.nodes:
                del self._sums[name]

    def totals(self) -> Totals:
        return Totals(
            {
                name: ResourceUsage(
                    s.capacity,
                    s.allocatable,
                    s.requested,
                    s.advertising > 0,
                    s.used if s.dra else None,
                    s.over or None,
                )
                for name, s in self._sums.items()
            },
            {name: s.advertising for name, s in self._sums.items() if s.advertising},
            {name: s.over_nodes for name, s in self._sums.items() if s.over_nodes},
            {name: s.unavailable for name, s in self._sums.items() if s.unavailable},
            {name: s.unavailable_nodes for name, s in self._sums.items() if s.unavailable_nodes},
        )
