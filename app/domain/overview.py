"""The overview grid: which nodes and resources to show, with totals.

A node's row (its extended resources' usage and drift) depends only on that
node and the pods bound to it, so the cache keeps rows and rebuilds only the
one an event touched; building the grid then only filters rows and sums.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol

from app.domain import columns
from app.domain.accounting import Amounts, ResourceUsage, extended_only, node_usage
from app.domain.changes import drift
from app.domain.dra_usage import DraUsage, dra_sharing, on_node
from app.domain.gpu_sharing import Sharing, sharing
from app.domain.selectors import Selector
from app.domain.totals import Totals


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
    @property
    def unschedulable(self) -> bool: ...  # cordoned


@dataclass(frozen=True)
class Filters:
    q: str = ""  # substring of the node name
    resources: tuple[str, ...] = ()  # empty: every extended resource
    selector: Selector = field(default_factory=Selector)
    free_at_least: tuple[str, int] | None = None  # (resource, N): nodes with N or more of it free
    sort: tuple[str, str] | None = None  # (field, resource), a number column; None: by node name
    descending: bool = False


def _sort_key(field_name: str, resource: str, descending: bool) -> Callable[[NodeRow], tuple[bool, int]]:
    """Rows by one resource's column (highest first when ``descending``); nodes that do not
    advertise it come last either way, and ties keep their order by name."""
    sign = -1 if descending else 1
    value = columns.number(field_name)

    def key(row: NodeRow) -> tuple[bool, int]:
        u = row.usage.get(resource)
        if u is None or not u.advertised:
            return (True, 0)
        return (False, sign * value(u))

    return key


@dataclass(slots=True)
class NodeRow:
    name: str
    labels: Mapping[str, str]
    usage: dict[str, ResourceUsage]  # extended resources only
    drifted: frozenset[str] = frozenset()  # resources whose capacity left the desired state
    unschedulable: bool = False  # cordoned
    both: frozenset[str] = frozenset()  # advertised in status and served by DRA: status wins
    unknown: Mapping[str, str] = field(default_factory=dict)  # DRA-served, not decidable: why
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # DRA: other names of a pool
    # resources with capacity above allocatable (usage's ``unavailable``: a device plugin's
    # unhealthy devices) -> when this dashboard first saw it so (UTC, ISO 8601, to the second)
    # (what this dashboard has seen, not the node's state: rows are equal whatever it says)
    unhealthy_since: Mapping[str, str] = field(default_factory=dict, compare=False)
    sharing: Mapping[str, Sharing] = field(default_factory=dict)  # resources advertised as shares

    def free(self, resource: str) -> int | None:
        """Allocatable minus requested, or None when the node does not advertise ``resource``."""
        u = self.usage.get(resource)
        return u.allocatable - u.requested if u is not None and u.advertised else None


def node_row(
    node: NodeLike, requested: Mapping[str, int], dra: Mapping[str, DraUsage] | None = None
) -> NodeRow:
    """One node's overview row, from the node, the sum of its counted pods' requests, and the
    extended resources DRA devices serve there. Where the node's allocatable also advertises a
    name, the scheduler uses that (a device plugin), and the row says both (``on_node``)."""
    usage = node_usage(
        extended_only(node.capacity), extended_only(node.allocatable), extended_only(requested)
    )
    drifted = (
        frozenset(d.resource for d in drift(node.desired, node.capacity)) if node.desired else frozenset()
    )
    here = on_node(node.allocatable, dra or {})
    for name in here.unknown:
        usage.pop(name, None)
    unknown = {k: why for k, why in here.unknown.items() if not _alias_here(k, here.unknown, dra)}
    aliases = {}
    for name, d in here.served.items():
        if _alias_here(name, here.served, dra):
            usage.pop(name, None)  # counted under the name it is an alias of
            continue
        asked = requested.get(name, 0) + sum(requested.get(a, 0) for a in d.aliases)
        usage[name] = ResourceUsage(d.capacity, d.allocatable, asked, True, d.allocated)
        if d.aliases:
            aliases[name] = d.aliases
    shared = (
        sharing(node.labels, extended_only(node.capacity), extended_only(node.allocatable))
        if node.labels
        else {}
    )
    shared = {**shared, **dra_sharing(here.served)}
    return NodeRow(
        node.name,
        node.labels,
        usage,
        drifted,
        node.unschedulable,
        here.both,
        unknown,
        aliases,
        sharing=shared,
    )


def _alias_here(name: str, present: Mapping[str, object], dra: Mapping[str, DraUsage] | None) -> bool:
    """Whether ``name`` is another name of devices shown here under their own name: a class's
    implicit name beside its extendedResourceName (one pool, never two)."""
    d = (dra or {}).get(name)
    return d is not None and bool(d.alias_of) and d.alias_of in present


@dataclass
class Grid:
    resources: list[str]
    rows: list[NodeRow]
    totals: Totals
    all_resources: list[str]
    node_count: int  # nodes in the cluster, before filtering
    drifted_rows: list[NodeRow]


def build_grid(rows: Iterable[NodeRow], filters: Filters, every_row: Totals | None = None) -> Grid:
    """Filter the rows of every node (in display order) and total what is left.

    ``every_row``, when the caller keeps it, is the totals of all rows: then a grid filtered by
    resource only (or not at all) needs no summing, and its resource choices no scan.
    """
    q = filters.q.strip().lower()
    wanted = set(filters.resources)
    seen: set[str] = set() if every_row is None else set(every_row.by_resource)
    kept: list[NodeRow] = []
    undecided: set[str] = set()  # of every row
    undecided_kept: set[str] = set()  # of the rows the filters keep
    count = 0
    for row in rows:
        count += 1
        if every_row is None:
            seen.update(row.usage)
        if row.unknown:  # DRA-served names whose numbers cannot be given: still columns
            seen.update(row.unknown)
            undecided.update(row.unknown)
        if q and q not in row.name.lower():
            continue
        if filters.selector and not filters.selector.matches(row.labels):
            continue
        if filters.free_at_least is not None:
            free = row.free(filters.free_at_least[0])
            if free is None or free < filters.free_at_least[1]:
                continue
        if wanted:
            usage = {k: v for k, v in row.usage.items() if k in wanted}
            if usage:
                kept.append(replace(row, usage=usage))
        else:
            kept.append(row)
            undecided_kept.update(row.unknown)
    if every_row is not None and len(kept) == count and not wanted:
        filtered = False  # the filters kept every row whole: the kept totals are theirs
    else:
        filtered = bool(q or filters.selector or filters.free_at_least or every_row is None)
    if filtered:  # sum over the rows kept
        totals = Totals.of(row.usage for row in kept)
        resources = sorted(wanted) if wanted else sorted(set(totals.by_resource) | undecided_kept)
    else:
        assert every_row is not None
        keep = wanted or set(every_row.by_resource) | undecided
        totals = Totals(
            {r: u for r, u in every_row.by_resource.items() if r in keep},
            {r: n for r, n in every_row.nodes_with.items() if r in keep},
            {r: n for r, n in every_row.nodes_over.items() if r in keep},
            {r: n for r, n in every_row.unavailable.items() if r in keep},
            {r: n for r, n in every_row.nodes_unavailable.items() if r in keep},
        )
        resources = sorted(keep)
    if filters.sort is not None:
        kept.sort(key=_sort_key(*filters.sort, filters.descending))
    drifted = [row for row in kept if row.drifted]
    return Grid(resources, kept, totals, sorted(seen | wanted), count, drifted)


def without_dra(row: NodeRow) -> NodeRow:
    """The row as a user who may not read DRA objects sees it: no resource DRA devices serve."""
    if not row.unknown and not row.both and all(u.allocated is None for u in row.usage.values()):
        return row
    usage = {k: u for k, u in row.usage.items() if u.allocated is None}
    return replace(row, usage=usage, unknown={}, both=frozenset())


HEAT_BANDS = ("0-19%", "20-39%", "40-59%", "60-79%", "80-99%", "full", "over-committed")


def heat_band(used: int, allocatable: int) -> int:
    """The heat map's band (an index of HEAT_BANDS) of ``used`` of ``allocatable``; ``used`` is
    requested, or for DRA-served resources what claims hold. More than allocatable is a band of
    its own, never counted as merely full."""
    if used > max(allocatable, 0):
        return 6
    if allocatable <= 0 or used >= allocatable:
        return 5
    return min(4, used * 5 // allocatable)
