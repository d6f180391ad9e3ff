"""Why a pending pod's shape does not fit, by the scheduler's filters over this project's
accounting (allocatable minus requested on each node), and the least to add to make it fit; each
shape's per-node results are kept between views (``ShapeIndex``, ``ShapeCache``)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar

from sortedcontainers import SortedList

from app.domain.fit import Failure, NodeFacts, PodShape, failures, how_many
from app.domain.planner import Plan, plan
from app.domain.pod_affinity import InterPod
from app.domain.shape import ACROSS_NODES

DIAGNOSES_KEPT = 8  # per shape: the diagnoses for the last few replica counts asked


@dataclass(frozen=True)
class ResourceFit:
    resource: str
    requested: int
    advertised_on: int  # candidate nodes that advertise the resource
    max_free: int  # the most one pod may be given on any candidate node (its largest free amount)
    best_node: str | None  # where max_free is (first by name)
    shortfall: int  # how much more the best node needs (0: some node fits)
    fit_with_shortfall: int  # how many candidate nodes would fit with `shortfall` more
    per_device: bool = False  # shared devices on the best node: max_free counts devices with a share left

    @property
    def unadvertised(self) -> bool:
        return self.advertised_on == 0


@dataclass(frozen=True)
class Suggestion:
    node: str
    resource: str
    add: int
    new_capacity: int
    advertised: bool = True  # the node advertises it now (else it would be new there)

    @property
    def text(self) -> str:
        return f"add {self.add} {self.resource} to {self.node}"


@dataclass(frozen=True)
class Lowering:
    """The request the pod could make instead to fit now: ``to`` of ``resource``, on ``node``."""

    resource: str
    to: int
    node: str


@dataclass
class Diagnosis:
    kind: str  # "fits" | "short" | "unadvertised" | "other"
    fits: list[ResourceFit] = field(default_factory=list)
    suggestions: list[Suggestion] = field(default_factory=list)
    candidates: int = 0  # nodes where only extended resources stand in the way (or nothing)
    feasible: int = 0  # nodes where the pod fits now
    reasons: dict[str, int] = field(default_factory=dict)  # scheduler-style reason -> nodes
    why: list[str] = field(default_factory=list)  # when adding extended resources cannot help
    unmodelled: tuple[str, ...] = ()
    plan: Plan | None = None
    total: int = 0  # nodes in the cluster
    lowerings: list[Lowering] = field(default_factory=list)  # a smaller request that fits now


class ShapeIndex:
    """One pod shape's filter results on every node, kept between views: ``diagnose`` re-runs
    the filters only on nodes whose facts changed (the cache makes a new NodeFacts for a node
    only when something placement depends on changed there). What a diagnosis reads is kept as
    results come and go, so a one-node change costs O(log n): reason totals, the candidates in
    plan order (least to add, then name), per extended resource the candidates advertising it by
    free amount, and what keeps the other nodes out."""

    def __init__(self, pod: PodShape) -> None:
        self.pod = pod
        self.extended = sorted(pod.extended.items())
        self._per: dict[str, _Result] = {}
        # by how many pods of the shape are wanted, and at most how many a node may take
        self._made: dict[tuple[int, int | None], Diagnosis] = {}
        self.version: int | None = None  # the state of the nodes taken last
        self._reasons: dict[str, int] = {}  # over every node
        self._candidates: dict[str, _Result] = {}  # nodes only extended resources keep out (or none)
        self._order = SortedList()  # (short, name) of the candidates
        self._equipped = SortedList()  # (short, name) of those advertising every resource it asks
        self._advertising = [SortedList() for _ in self.extended]  # (-free, name) of the candidates
        self._feasible = 0  # candidates where the pod fits now
        self._repelled = 0  # of those, nodes holding pods with required anti-affinity (not modelled)
        self._others = 0  # nodes something else keeps out
        self._terms: dict[tuple[str, str], int] = {}  # what keeps them out, in the scheduler's terms

    def __len__(self) -> int:
        """The nodes whose results this index keeps."""
        return len(self._per)

    def _result(self, node: NodeFacts) -> _Result:
        fails = tuple(failures(self.pod, node))
        frees = tuple(node.usable(r) if r in node.allocatable else None for r, _ in self.extended)
        short = sum(max(0, want - (free or 0)) for (_, want), free in zip(self.extended, frees, strict=True))
        extended = self.pod.extended
        others = tuple(f for f in fails if f.resource not in extended)
        return _Result(node, fails, frees, short, others)

    def update(self, nodes: Sequence[NodeFacts], version: int | None = None) -> None:
        """Take every node's facts (``version``: the state they are from)."""
        changed = False
        per = self._per
        for node in nodes:
            entry = per.get(node.name)
            if entry is not None and entry.node is node:
                continue
            changed = self._put(node.name, node) or changed
        if len(per) != len(nodes):  # nodes went away
            names = {n.name for n in nodes}
            for name in [n for n in per if n not in names]:
                changed = self._put(name, None) or changed
        self._settle(changed, version)

    def apply(self, changed: Mapping[str, NodeFacts | None], version: int) -> None:
        """Take the facts of the nodes changed since ``self.version`` (None: gone)."""
        moved = False
        for name, node in changed.items():
            entry = self._per.get(name)
            if node is None or entry is None or entry.node is not node:
                moved = self._put(name, node) or moved
        self._settle(moved, version)

    def _put(self, name: str, node: NodeFacts | None) -> bool:
        """Re-run the filters on one node; whether its result changed."""
        entry = self._per.pop(name, None)
        self._count(entry, -1)
        if node is None:
            return entry is not None
        result = self._per[name] = self._result(node)
        self._count(result, +1)
        return entry is None or not entry.same_as(result)

    def _settle(self, changed: bool, version: int | None) -> None:
        if changed:
            self._made.clear()
        self.version = version

    def _count(self, result: _Result | None, sign: int) -> None:
        """Keep the totals over nodes as results come (+1) and go (-1)."""
        if result is None:
            return
        name = result.node.name
        for f in result.fails:
            _tally(self._reasons, f.reason, sign)
        if result.others:
            self._others += sign
            for f in result.others:
                _tally(self._terms, _terms(f), sign)
            return
        change = self._order.add if sign > 0 else self._order.remove
        change((result.short, name))
        if None not in result.frees:
            (self._equipped.add if sign > 0 else self._equipped.remove)((result.short, name))
        for free, advertising in zip(result.frees, self._advertising, strict=True):
            if free is not None:
                (advertising.add if sign > 0 else advertising.remove)((-free, name))
        if not result.fails:
            self._feasible += sign
            if result.node.repelling:
                self._repelled += sign
        if sign > 0:
            self._candidates[name] = result
        else:
            del self._candidates[name]

    def sync(self, source: FitSource) -> None:
        """Take what changed in ``source`` since this index last looked: only the nodes changed,
        when it still knows them, else every node's facts."""
        version, changed = source.fit_changes(self.version)
        if changed is not None:
            self.apply(changed, version)
        elif version != self.version:
            self.update(source.node_facts(), version)

    def headroom(self, nodes: Sequence[NodeFacts] | None = None) -> list[tuple[str, int]]:
        """Nodes where pods of this shape fit now, with how many more each takes (most first);
        ``nodes``: take these first (else the nodes as last taken)."""
        if nodes is not None:
            self.update(nodes)
        room = ((name, how_many(self.pod, r.node)) for name, r in self._candidates.items() if not r.fails)
        return sorted(room, key=lambda nr: (-nr[1], nr[0]))

    def diagnose(
        self,
        nodes: Sequence[NodeFacts],
        wanted: int = 1,
        version: int | None = None,
        per_node: int | None = None,
    ) -> Diagnosis:
        """``version``, when given, names the state of ``nodes``: the same version as last time
        means nothing changed, and the nodes are not looked at."""
        if version is None or version != self.version:
            self.update(nodes, version)
        return self.diagnosis(wanted, per_node)

    def diagnosis(self, wanted: int = 1, per_node: int | None = None) -> Diagnosis:
        """The diagnosis on the nodes taken so far, for ``wanted`` pods of the shape (the plan
        placing at most ``per_node`` on a node)."""
        key = (wanted, per_node)
        made = self._made.get(key)
        if made is None:
            if len(self._made) >= DIAGNOSES_KEPT:  # each replica count asked keeps one: bounded
                del self._made[next(iter(self._made))]
            made = self._made[key] = self._build(wanted, per_node)
        return made

    def advertising(self, resource: str) -> list[tuple[str, int]]:
        """The candidate nodes advertising ``resource`` with the amount free there, the most first."""
        for i, (name, _) in enumerate(self.extended):
            if name == resource:
                return [(node, -most) for most, node in self._advertising[i]]
        return []

    def node(self, name: str) -> NodeFacts | None:
        """A candidate node's facts, as last taken."""
        found = self._candidates.get(name)
        return found.node if found is not None else None

    def _lowerings(self) -> list[Lowering]:
        """For each extended resource the pod is short of: the most it could ask instead and fit
        now, where, when the node with the most free has every other extended resource it asks."""
        out = []
        for i, (resource, want) in enumerate(self.extended):
            if not self._advertising[i]:
                continue
            most, name = self._advertising[i][0]
            free, node = -most, self._candidates[name].node
            others_fit = all(node.usable(r) >= w for r, w in self.extended if r != resource)
            if 0 < free < want and others_fit:
                out.append(Lowering(resource, free, name))
        return out

    def _in_order(self) -> Iterator[NodeFacts]:
        """The candidates, least to add first (then by name)."""
        for _, name in self._order:
            yield self._candidates[name].node

    def _resource_fit(self, i: int) -> ResourceFit:
        resource, want = self.extended[i]
        advertising = self._advertising[i]
        if not advertising:
            return ResourceFit(resource, want, 0, 0, None, want, 0)
        most, best_node = advertising[0]  # the largest free amount, first by name
        max_free = -most
        shortfall = max(0, want - max_free)
        fit_with = advertising.bisect_left((shortfall - want + 1,))  # free + shortfall >= want
        shared = resource in self._candidates[best_node].node.spread
        return ResourceFit(resource, want, len(advertising), max_free, best_node, shortfall, fit_with, shared)

    def _build(self, wanted: int, per_node: int | None = None) -> Diagnosis:
        pod, extended = self.pod, self.pod.extended
        candidates = len(self._order)
        d = Diagnosis(
            kind="other",
            candidates=candidates,
            feasible=self._feasible,
            reasons=dict(self._reasons),
            unmodelled=pod.unmodelled + repelled(self._repelled, self._feasible),
            total=len(self._per),
        )
        d.fits = [self._resource_fit(i) for i in range(len(self.extended))]
        if self._feasible:
            d.kind = "fits"
        elif candidates and any(f.unadvertised for f in d.fits):
            d.kind = "unadvertised"
        elif candidates and extended:
            d.kind = "short"
            # the node needing the least added in total, of those that advertise every resource it
            # asks first: more devices where there are some, never a GPU where there is none
            first = (self._equipped or self._order)[0][1]
            best = self._candidates[first].node
            for resource, want in self.extended:
                if add := max(0, want - best.usable(resource)):
                    d.suggestions.append(
                        Suggestion(
                            best.name,
                            resource,
                            add,
                            best.capacity.get(resource, 0) + add,
                            resource in best.allocatable,
                        )
                    )
            d.lowerings = self._lowerings()
        if not candidates:
            d.why = _why(self._terms, len(self._per))
            if any(f.unadvertised for f in d.fits) and not self._others:
                d.kind = "unadvertised"
        if candidates and extended:
            d.plan = plan(pod, self._in_order(), wanted, per_node)
        return d


@dataclass(frozen=True, slots=True)
class _Result:
    node: NodeFacts
    fails: tuple[Failure, ...]
    frees: tuple[int | None, ...]  # free amount of each extended resource (None: not advertised)
    short: int  # total short of them
    others: tuple[Failure, ...]  # failures other than extended resources

    def same_as(self, other: _Result) -> bool:
        """Whether a diagnosis made with ``other`` still holds: the plan reads every fact of the
        node (capacity for targets, cpu and pods for how many fit), not just the filter results."""
        a, b = self.node, other.node
        return (
            self.fails == other.fails
            and self.frees == other.frees
            and (
                a is b
                or (
                    a.allocatable == b.allocatable
                    and a.requested == b.requested
                    and a.capacity == b.capacity
                    and list(a.host_ports) == list(b.host_ports)
                    and a.repelling == b.repelling
                    and a.blocked == b.blocked
                )
            )
        )


def repelled(nodes: int, of: int) -> tuple[str, ...]:
    """What to name when pods on nodes the shape fits have required anti-affinity: whether they
    keep it off depends on their selectors and its labels, which the model does not weigh."""
    if not nodes:
        return ()
    return (f"inter-pod anti-affinity of pods already on {nodes} of the {of} nodes it fits",)


def _tally(counts: dict[Any, int], key: object, sign: int) -> None:
    n = counts.get(key, 0) + sign
    if n:
        counts[key] = n
    else:
        counts.pop(key, None)


SHAPES_KEPT = 256  # shapes whose per-node index is kept, at most
NODE_RESULTS_KEPT = 64_000  # and per-node results over all of them, at most (~520 B each: ~33 MB)


class FitSource(Protocol):
    """Where node facts come from, with a version (the store)."""

    def fit_changes(self, since: int | None) -> tuple[int, dict[str, NodeFacts | None] | None]: ...
    def node_facts(self) -> list[NodeFacts]: ...


T = TypeVar("T")


class ShapeCache:
    """One ``ShapeIndex`` per pod shape, for the pending page and the planner alike. Any planner
    link makes a new shape, so what is kept is bounded twice: the least recently used shapes are
    dropped past ``limit`` shapes or past ``budget`` per-node results in all (the one in use may
    add a cluster's worth). A ShapeIndex is not thread-safe: ``read`` uses one under ``lock``."""

    def __init__(self, limit: int = SHAPES_KEPT, budget: int = NODE_RESULTS_KEPT) -> None:
        self.limit = limit
        self.budget = budget
        self.lock = threading.Lock()
        self._kept: OrderedDict[PodShape, ShapeIndex] = OrderedDict()

    def index(self, shape: PodShape) -> ShapeIndex:
        """The shape's index, made when new; call with ``lock`` held."""
        index = self._kept.pop(shape, None) or ShapeIndex(shape)
        self._kept[shape] = index
        total = sum(map(len, self._kept.values()))
        while len(self._kept) > 1 and (len(self._kept) > self.limit or total > self.budget):
            total -= len(self._kept.popitem(last=False)[1])
        return index

    def read(self, shape: PodShape, source: FitSource, use: Callable[[ShapeIndex], T]) -> T:
        """The one way to use a shape's index: under the lock, brought up to date with
        ``source``, what ``use`` takes from it (a diagnosis, headroom: data, never rendering,
        which happens after the lock is let go)."""
        with self.lock:
            index = self.index(shape)
            index.sync(source)
            return use(index)

    def indexes(self) -> list[ShapeIndex]:
        return list(self._kept.values())


def diagnose(pod: PodShape, nodes: Sequence[NodeFacts], wanted: int = 1) -> Diagnosis:
    """Why ``pod`` does not fit, by the scheduler's filters (app.domain.fit), and what would
    make ``wanted`` pods of its shape fit: a suggestion names only nodes that pass every other
    filter. (``ShapeIndex`` keeps the work between calls.)"""
    return ShapeIndex(pod).diagnose(nodes, wanted)


_PLUGIN_TERMS = {
    "NodeUnschedulable": ("is schedulable (not cordoned)", "are cordoned"),
    "NodeAffinity": (
        "matches the pod's node selector and affinity",
        "do not match its node selector and affinity",
    ),
    "NodePorts": ("has the pod's host ports free", "have its host ports taken"),
    "NodeName": ("is the node the pod names", "are not the node it names"),
    "InterPodAffinity": (
        "satisfies the pod's affinity and anti-affinity and the pods' already there",
        "fail the pod's affinity or anti-affinity, or their pods' anti-affinity",
    ),
    "PodTopologySpread": ("keeps the pod's topology spread", "would break its topology spread"),
}


def _terms(f: Failure) -> tuple[str, str]:
    """A failure in the scheduler's terms: what a node that passes does, what those that fail do."""
    if f.taint is not None:
        return (f"tolerates {f.taint}", f"have the taint {f.taint}, which the pod does not tolerate")
    if f.resource == "pods":
        return ("has room for one more pod", "are full (pods)")
    if f.resource:
        return (f"has enough {f.resource} free", f"have too little {f.resource} free")
    return _PLUGIN_TERMS.get(f.plugin, (f.reason, f.reason))


def _why(counts: Mapping[tuple[str, str], int], total: int) -> list[str]:
    """What keeps every node out, other than extended resources, from the nodes counted per term:
    "no node tolerates dedicated=ml:NoSchedule", "3 of 5 nodes have too little cpu free"."""
    return [
        f"no node {yes}" if n == total else f"{n} of {total} nodes {no}"
        for (yes, no), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


HOSTNAME = "kubernetes.io/hostname"


def among_neighbours(
    pod: PodShape, near: InterPod, nodes: Sequence[NodeFacts], wanted: int = 1, per_node: int | None = None
) -> tuple[list[tuple[str, int]], Diagnosis]:
    """Headroom and diagnosis of a pod whose place depends on the pods around it (inter-pod
    affinity, topology spread, placed pods' anti-affinity): an index of its own over the nodes
    with ``near``'s verdict in them, made for this question and not kept. A pod whose
    anti-affinity selects its own kind goes one to a node (hostname); a wider key is named."""
    left = tuple(u for u in pod.unmodelled if u not in ACROSS_NODES) + near.undecided
    wider = sorted({k for k in near.one_per if k != HOSTNAME})
    left += tuple(
        f"at most one pod of this shape per {k} (its own anti-affinity), not weighed over several"
        for k in wider
    )
    shape = replace(pod, unmodelled=left)
    if near.one_per:
        per_node = 1
    index = ShapeIndex(shape)
    room = index.headroom(near.applied(nodes))
    if near.one_per:
        room = [(name, min(n, 1)) for name, n in room]
    return room, index.diagnosis(wanted, per_node)
