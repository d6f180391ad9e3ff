"""Who holds the extended resources: requested amounts grouped by namespace or by workload.

Pure: fed (namespace, owner kind, owner name, node, created, extended requests) per counted
pod, and the cluster's allocatable total per resource."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

SORT_KEYS = ("resource", "namespace", "workload", "pods", "requested", "share", "oldest")
GROUPINGS = ("workload", "namespace")


@dataclass(frozen=True)
class Holder:
    """One counted pod's claim, as the grouping needs it."""

    namespace: str
    kind: str
    name: str
    node: str
    created: str  # RFC 3339: sorts as time
    requests: Mapping[str, int]
    pod: str = ""  # the pod's own name


@dataclass
class WorkloadRow:
    resource: str
    namespace: str
    kind: str  # "" when grouped by namespace
    name: str
    pods: int = 0
    requested: int = 0
    share: float = 0.0  # of the resource's allocatable total in the cluster
    oldest: str = ""  # the oldest pod's creation time
    nodes: set[str] = field(default_factory=set)
    members: list[tuple[str, str, int]] = field(default_factory=list)  # (pod, node, requested)

    @property
    def pod_keys(self) -> list[tuple[str, str]]:
        """Its pods' (namespace, name)."""
        return [(self.namespace, pod) for pod, _, _ in self.members]

    @property
    def workload(self) -> str:
        return f"{self.kind}/{self.name}" if self.kind else ""


def group(
    holders: Iterable[Holder], allocatable: Mapping[str, int], by: str = "workload"
) -> list[WorkloadRow]:
    """One row per resource and namespace (and workload, when ``by`` is "workload")."""
    rows: dict[tuple[str, str, str, str], WorkloadRow] = {}
    for h in holders:
        # a pod without an owner is its own workload: listed one by one
        kind, name = (h.kind, h.name or h.pod or "(unnamed pod)") if by == "workload" else ("", "")
        for resource, amount in h.requests.items():
            key = (resource, h.namespace, kind, name)
            row = rows.get(key)
            if row is None:
                row = rows[key] = WorkloadRow(resource, h.namespace, kind, name, oldest=h.created)
            row.pods += 1
            row.requested += amount
            row.members.append((h.pod, h.node, amount))
            row.oldest = min(row.oldest, h.created) if h.created else row.oldest
            if h.node:
                row.nodes.add(h.node)
    for row in rows.values():
        total = allocatable.get(row.resource, 0)
        row.share = row.requested / total if total else 0.0
    return list(rows.values())


def sort_rows(rows: list[WorkloadRow], key: str, descending: bool) -> list[WorkloadRow]:
    """Sorted by one column (then by resource, namespace, workload); ``key`` from SORT_KEYS."""
    column = {
        "resource": lambda r: r.resource,
        "namespace": lambda r: r.namespace,
        "workload": lambda r: r.workload,
        "pods": lambda r: r.pods,
        "requested": lambda r: r.requested,
        "share": lambda r: r.share,
        "oldest": lambda r: r.oldest,
    }[key]
    rows = sorted(rows, key=lambda r: (r.resource, r.namespace, r.workload))
    return sorted(rows, key=column, reverse=descending)
