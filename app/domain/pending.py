"""Why a pending pod cannot be scheduled, and what would make it fit.

Two sources, kept apart: the scheduler's own message (parsed tolerantly; its
format changed between Kubernetes versions) and this project's accounting
(allocatable minus requested on each node), which alone gives the shortfall
and the suggestion.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from app.domain.overview import NodeRow

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
    advertised_on: int  # nodes that advertise the resource (among the candidates)
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


@dataclass
class Diagnosis:
    kind: str  # "short" | "unadvertised" | "other"
    fits: list[ResourceFit] = field(default_factory=list)
    suggestions: list[Suggestion] = field(default_factory=list)
    candidates: int = 0  # nodes matching the pod's nodeSelector and not cordoned


def diagnose(
    requests: Mapping[str, int], node_selector: Mapping[str, str], rows: Iterable[NodeRow]
) -> Diagnosis:
    """Our own accounting for one pod's extended-resource requests, over the kept overview rows
    (one pass over the nodes; free amounts are read off the rows, nothing is summed again)."""
    wanted = sorted(requests.items())
    selector = list(node_selector.items())
    candidates = 0
    frees: dict[str, list[tuple[int, str]]] = {r: [] for r, _ in wanted}  # advertising nodes only
    complete: list[tuple[int, str, list[int], NodeRow]] = []  # (total short, node, frees, row)
    any_fits = False
    for row in rows:
        if row.unschedulable or (selector and any(row.labels.get(k) != v for k, v in selector)):
            continue
        candidates += 1
        node_frees: list[int] = []
        for resource, _ in wanted:
            free = row.free(resource)
            if free is None:
                break
            frees[resource].append((free, row.name))
            node_frees.append(free)
        else:
            short = sum(max(0, want - free) for (_, want), free in zip(wanted, node_frees, strict=True))
            any_fits = any_fits or short == 0
            complete.append((short, row.name, node_frees, row))

    fits: list[ResourceFit] = []
    for resource, want in wanted:
        advertising = frees[resource]
        if not advertising:
            fits.append(ResourceFit(resource, want, 0, 0, None, want, 0))
            continue
        max_free, most_free = min(advertising, key=lambda fn: (-fn[0], fn[1]))  # first max, by name
        shortfall = max(0, want - max_free)
        fit_with = sum(1 for free, _ in advertising if free + shortfall >= want)
        fits.append(ResourceFit(resource, want, len(advertising), max_free, most_free, shortfall, fit_with))

    diagnosis = Diagnosis(kind="other", fits=fits, candidates=candidates)
    if any(f.unadvertised for f in fits):
        diagnosis.kind = "unadvertised"
        return diagnosis
    if any_fits:
        return diagnosis  # some node has room for all of it: the reason is elsewhere (taints, cpu, ...)
    diagnosis.kind = "short"
    if complete:  # one node for all resources: the one needing the least added in total
        _, best_name, best_frees, best = min(complete, key=lambda c: (c[0], c[1]))
        for (resource, want), free in zip(wanted, best_frees, strict=True):
            if add := max(0, want - free):
                diagnosis.suggestions.append(
                    Suggestion(best_name, resource, add, best.usage[resource].capacity + add)
                )
    return diagnosis
