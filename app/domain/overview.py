"""The overview grid: which nodes and resources to show, with totals."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from app.domain.accounting import Amounts, ResourceUsage, Totals, extended_only, node_usage
from app.domain.changes import drift
from app.domain.selectors import Selector


class NodeLike(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def labels(self) -> Mapping[str, str]: ...
    @property
    def capacity(self) -> Amounts: ...
    @property
    def allocatable(self) -> Amounts: ...
    @property
    def desired(self) -> Mapping[str, int]: ...


@dataclass(frozen=True)
class Filters:
    q: str = ""  # substring of the node name
    resources: tuple[str, ...] = ()  # empty: every extended resource
    selector: Selector = field(default_factory=Selector)


@dataclass
class NodeRow:
    name: str
    labels: Mapping[str, str]
    usage: dict[str, ResourceUsage]
    drifted: frozenset[str] = frozenset()  # resources whose capacity left the desired state


@dataclass
class Grid:
    resources: list[str]
    rows: list[NodeRow]
    totals: Totals
    all_resources: list[str]
    node_count: int  # nodes in the cluster, before filtering

    @property
    def drifted_rows(self) -> list[NodeRow]:
        return [row for row in self.rows if row.drifted]


def build_grid(nodes: Iterable[NodeLike], requested: Callable[[str], Amounts], filters: Filters) -> Grid:
    q = filters.q.strip().lower()
    wanted = set(filters.resources)
    seen: set[str] = set()
    rows: list[NodeRow] = []
    count = 0
    for node in nodes:
        count += 1
        usage = node_usage(
            extended_only(node.capacity),
            extended_only(node.allocatable),
            extended_only(requested(node.name)),
        )
        seen.update(usage)
        if q and q not in node.name.lower():
            continue
        if filters.selector and not filters.selector.matches(node.labels):
            continue
        if wanted:
            usage = {k: v for k, v in usage.items() if k in wanted}
            if not usage:
                continue
        drifted = (
            frozenset(d.resource for d in drift(node.desired, node.capacity)) if node.desired else frozenset()
        )
        rows.append(NodeRow(node.name, node.labels, usage, drifted))
    resources = sorted(wanted) if wanted else sorted({r for row in rows for r in row.usage})
    totals = Totals()
    for row in rows:
        totals.add(row.usage)
    return Grid(resources, rows, totals, sorted(seen | wanted), count)
