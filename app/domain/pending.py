"""Why a pending pod cannot be scheduled, and what would make it fit.

Two sources, kept apart: the scheduler's own message (parsed tolerantly; its
format changed between Kubernetes versions) and this project's accounting
(allocatable minus requested on each node), which alone gives the shortfall
and the suggestion.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from app.domain.fit import Failure, NodeFacts, PodShape, failures, how_many

_HEAD = re.compile(r"^\s*(?P<avail>\d+)/(?P<total>\d+) nodes are available(?::\s*(?P<rest>.*))?$", re.S)
_REASON_SPLIT = re.compile(r",\s+(?=\d+\s)")
_REASON = re.compile(r"^(?P<count>\d+)\s+(?P<text>.+?)\.?$", re.S)
_INSUFFICIENT = re.compile(r"^Insufficient (?P<resource>\S+)$")


@dataclass(frozen=True)
class SchedulerMessage:
    raw: str
    total_nodes: int | None = None
    reasons: tuple[tuple[int, str], ...] = ()  # (node count, reason), scheduling part only
    preemption: str | None = None  # the "preemption: ..." clause, when present

    @property
    def insufficient(self) -> dict[str, int]:
        """resource -> how many nodes the scheduler found short of it."""
        out: dict[str, int] = {}
        for count, text in self.reasons:
            if m := _INSUFFICIENT.match(text):
                out[m["resource"]] = out.get(m["resource"], 0) + count
        return out

    @property
    def other_reasons(self) -> list[tuple[int, str]]:
        return [(c, t) for c, t in self.reasons if not _INSUFFICIENT.match(t)]


def parse_scheduler_message(message: str) -> SchedulerMessage:
    """Parse ``0/N nodes are available: 3 Insufficient x, 1 node(s) didn't match ...``.

    Unknown shapes are kept whole in ``raw`` with no reasons, never guessed at.
    """
    text = (message or "").strip()
    main, _, preemption = text.partition(" preemption: ")
    m = _HEAD.match(main)
    if not m:
        return SchedulerMessage(raw=text)
    reasons: list[tuple[int, str]] = []
    rest = (m["rest"] or "").strip()
    if rest.endswith("."):
        rest = rest[:-1]
    for part in _REASON_SPLIT.split(rest) if rest else ():
        if r := _REASON.match(part.strip()):
            reasons.append((int(r["count"]), r["text"].strip().rstrip(".")))
    return SchedulerMessage(
        raw=text,
        total_nodes=int(m["total"]),
        reasons=tuple(reasons),
        preemption=preemption.strip().rstrip(".") or None,
    )


@dataclass(frozen=True)
class ResourceFit:
    resource: str
    requested: int
    advertised_on: int  # candidate nodes that advertise the resource
    max_free: int  # the largest free amount on any candidate node
    best_node: str | None  # where max_free is (first by name)
    shortfall: int  # how much more the best node needs (0: some node fits)
    fit_with_shortfall: int  # how many candidate nodes would fit with `shortfall` more

    @property
    def unadvertised(self) -> bool:
        return self.advertised_on == 0


@dataclass(frozen=True)
class Suggestion:
    node: str
    resource: str
    add: int
    new_capacity: int

    @property
    def text(self) -> str:
        return f"add {self.add} {self.resource} to {self.node}"


@dataclass(frozen=True)
class PlanStep:
    node: str
    pods: int  # pods of the shape this node would take
    add: Mapping[str, int]  # extended resource -> amount to add (empty: fits as it is)


@dataclass(frozen=True)
class Plan:
    """Where ``wanted`` pods of one shape would go: nodes that fit as they are, then nodes given
    more extended resources (greedy, largest room first)."""

    wanted: int
    steps: tuple[PlanStep, ...]
    placed: int  # how many of the wanted pods the steps place
    targets: Mapping[str, int]  # resource -> one capacity to set on every node that gets more

    @property
    def adds(self) -> tuple[PlanStep, ...]:
        return tuple(s for s in self.steps if s.add)

    def nodes_adding(self, resource: str) -> list[str]:
        return [s.node for s in self.steps if resource in s.add]


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


def diagnose(pod: PodShape, nodes: Sequence[NodeFacts], wanted: int = 1) -> Diagnosis:
    """Why ``pod`` does not fit, by the scheduler's filters (app.domain.fit), and what would
    make ``wanted`` pods of its shape fit: a suggestion names only nodes that pass every other
    filter."""
    extended = pod.extended
    reasons: dict[str, int] = {}
    feasible: list[NodeFacts] = []
    candidates: list[NodeFacts] = []
    others: list[list[Failure]] = []
    for node in nodes:
        fails = failures(pod, node)
        for f in fails:
            reasons[f.reason] = reasons.get(f.reason, 0) + 1
        if not fails:
            feasible.append(node)
            candidates.append(node)
        elif all(f.resource in extended for f in fails):
            candidates.append(node)
        else:
            others.append([f for f in fails if f.resource not in extended])
    d = Diagnosis(
        kind="other",
        candidates=len(candidates),
        feasible=len(feasible),
        reasons=reasons,
        unmodelled=pod.unmodelled,
        total=len(nodes),
    )
    d.fits = [_resource_fit(r, want, candidates) for r, want in sorted(extended.items())]
    if feasible:
        d.kind = "fits"
    elif candidates and any(f.unadvertised for f in d.fits):
        d.kind = "unadvertised"
    elif candidates and extended:
        d.kind = "short"
        best = min(candidates, key=lambda n: (_short_total(pod, n), n.name))
        for resource, want in sorted(extended.items()):
            if add := max(0, want - best.free(resource)):
                d.suggestions.append(
                    Suggestion(best.name, resource, add, best.capacity.get(resource, 0) + add)
                )
    if not candidates:
        d.why = _why(others, len(nodes))
        if any(f.unadvertised for f in d.fits) and not others:
            d.kind = "unadvertised"
    if candidates and extended:
        d.plan = plan(pod, candidates, wanted)
    return d


def _resource_fit(resource: str, want: int, candidates: Sequence[NodeFacts]) -> ResourceFit:
    advertising = [(n.free(resource), n.name) for n in candidates if resource in n.allocatable]
    if not advertising:
        return ResourceFit(resource, want, 0, 0, None, want, 0)
    max_free, most_free = min(advertising, key=lambda fn: (-fn[0], fn[1]))  # first max, by name
    shortfall = max(0, want - max_free)
    fit_with = sum(1 for free, _ in advertising if free + shortfall >= want)
    return ResourceFit(resource, want, len(advertising), max_free, most_free, shortfall, fit_with)


def _short_total(pod: PodShape, node: NodeFacts) -> int:
    return sum(max(0, want - node.free(r)) for r, want in pod.extended.items())


_PLUGIN_TERMS = {
    "NodeUnschedulable": ("is schedulable (not cordoned)", "are cordoned"),
    "NodeAffinity": (
        "matches the pod's node selector and affinity",
        "do not match its node selector and affinity",
    ),
    "NodePorts": ("has the pod's host ports free", "have its host ports taken"),
    "NodeName": ("is the node the pod names", "are not the node it names"),
}


def _why(others: Sequence[Sequence[Failure]], total: int) -> list[str]:
    """What keeps every node out, other than extended resources, in the scheduler's terms:
    "no node tolerates dedicated=ml:NoSchedule", "3 of 5 nodes have too little cpu free"."""
    counts: dict[tuple[str, str], int] = {}
    for fails in others:
        for f in fails:
            if f.taint is not None:
                terms = (f"tolerates {f.taint}", f"have the taint {f.taint}, which the pod does not tolerate")
            elif f.resource == "pods":
                terms = ("has room for one more pod", "are full (pods)")
            elif f.resource:
                terms = (f"has enough {f.resource} free", f"have too little {f.resource} free")
            else:
                terms = _PLUGIN_TERMS.get(f.plugin, (f.reason, f.reason))
            counts[terms] = counts.get(terms, 0) + 1
    return [
        f"no node {yes}" if n == total else f"{n} of {total} nodes {no}"
        for (yes, no), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def plan(pod: PodShape, candidates: Sequence[NodeFacts], wanted: int) -> Plan:
    """Place ``wanted`` pods: first where they fit as things are, then on the nodes where the
    other resources leave the most room, adding the extended resources they lack."""
    extended = pod.extended
    unlimited = {r: 10**12 for r in extended}
    steps: list[PlanStep] = []
    left = wanted
    taken: dict[str, int] = {}
    for node in candidates:
        if left <= 0:
            break
        if n := min(left, how_many(pod, node)):
            taken[node.name] = n
            left -= n
    room = sorted(
        ((how_many(pod, n, unlimited) - taken.get(n.name, 0), n) for n in candidates),
        key=lambda rn: (-rn[0], rn[1].name),
    )
    more: dict[str, int] = {}
    for extra, node in room:
        if left <= 0:
            break
        if extra > 0:
            more[node.name] = min(extra, left)
            left -= more[node.name]
    targets: dict[str, int] = {}
    for node in candidates:
        now, added = taken.get(node.name, 0), more.get(node.name, 0)
        if not now and not added:
            continue
        add = (
            {r: max(0, (now + added) * want - node.free(r)) for r, want in extended.items()} if added else {}
        )
        add = {r: v for r, v in add.items() if v}
        steps.append(PlanStep(node.name, now + added, add))
        for r, v in add.items():
            targets[r] = max(targets.get(r, 0), node.capacity.get(r, 0) + v)
    steps.sort(key=lambda s: (bool(s.add), s.node))
    return Plan(wanted, tuple(steps), wanted - max(0, left), targets)
