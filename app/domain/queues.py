"""Jobs that wait for a queue's quota rather than for nodes (Kueue): what Kueue says a Workload
lacks, and who holds that quota. Pure: the views come from app/kube/wire/kueue.py.

Kueue words a Workload's QuotaReserved=False condition as "couldn't assign flavors to pod set
<name>: <reasons>", the reasons joined by ", " (sigs.k8s.io/kueue v0.17,
pkg/scheduler/flavorassigner: ``fitsResourceQuota``, ``Status.Message``):

* "insufficient unused quota for <resource> in flavor <flavor>, <quantity> more needed": the
  quota exists, others use it (waiting or preemption may free it);
* "insufficient quota for <resource> in flavor <flavor>, previously considered podsets requests
  (<a>) + current podset request (<b>) > maximum capacity (<c>)": it can never fit there.

Anything else Kueue says is quoted as it is."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from app.domain.names import is_requested_as_extended
from app.domain.quantity import QuantityError, to_amount

MAX_MESSAGE = 2048  # characters of Kueue's message read

_UNUSED = re.compile(
    r"insufficient unused quota for (?P<resource>\S+) in flavor (?P<flavor>\S+), (?P<more>\S+) more needed"
)
_NEVER = re.compile(
    r"insufficient quota for (?P<resource>\S+) in flavor (?P<flavor>\S+), previously considered podsets "
    r"requests \((?P<before>[^)]*)\) \+ current podset request \((?P<asked>[^)]*)\) > maximum capacity "
    r"\((?P<most>[^)]*)\)"
)


@dataclass(frozen=True)
class Shortfall:
    resource: str
    flavor: str
    more: str  # Kueue's quantity, as it wrote it ("" when it can never fit)
    never: str = ""  # the maximum capacity, when the request can never fit in this queue


def shortfalls(message: str) -> list[Shortfall]:
    """What Kueue's message says the Workload lacks, per resource and flavor (none when its words
    are not these)."""
    text = message[:MAX_MESSAGE]
    found = [Shortfall(m["resource"], m["flavor"], m["more"]) for m in _UNUSED.finditer(text)]
    found += [Shortfall(m["resource"], m["flavor"], "", m["most"]) for m in _NEVER.finditer(text)]
    return found


@dataclass(frozen=True)
class Condition:
    status: str
    reason: str
    message: str


@dataclass(frozen=True)
class Workload:
    """What the page reads of a Kueue Workload."""

    namespace: str
    name: str
    queue: str  # its LocalQueue
    owner: tuple[str, str]  # (kind, name) of the job it stands for, ("", "") when none
    conditions: Mapping[str, Condition]
    cluster_queue: str = ""  # where it is admitted (status.admission), "" when not
    usage: Mapping[tuple[str, str], str] = field(default_factory=dict)  # (flavor, resource) -> quantity
    requests: Mapping[str, str] = field(default_factory=dict)  # resource -> quantity, its pod sets

    def state(self, kind: str) -> str:
        found = self.conditions.get(kind)
        return found.status if found is not None else ""

    @property
    def holds_quota(self) -> bool:
        """Counted against its ClusterQueue's quota as Kueue counts it: admitted there
        (``status.admission``), its reservation not withdrawn, not finished (Kueue releases a
        finished Job's quota and keeps its admission for the record), not evicted."""
        return (
            bool(self.cluster_queue)
            and self.state("QuotaReserved") != "False"
            and self.state("Finished") != "True"
            and self.state("Evicted") != "True"
        )

    @property
    def waiting_for_quota(self) -> bool:
        """No quota reserved for it yet, and not finished."""
        return self.state("QuotaReserved") != "True" and self.state("Finished") != "True"


@dataclass(frozen=True)
class Holder:
    namespace: str
    name: str
    owner: tuple[str, str]
    amount: str  # of the resource, in the flavor
    cluster_queue: str = ""  # where it is admitted: the waiting one's own, or another of its cohort


@dataclass(frozen=True)
class Position:
    """Where a waiting Workload stands, as Kueue's visibility API says (0: next)."""

    in_cluster_queue: int
    in_local_queue: int


@dataclass(frozen=True)
class QuotaWait:
    workload: Workload
    cluster_queue: str  # through its LocalQueue ("" when the LocalQueue is not known)
    reason: Condition
    lacks: list[Shortfall]
    holders: dict[tuple[str, str], list[Holder]]  # (flavor, resource) -> admitted workloads using it


def waiting(
    workloads: Iterable[Workload],
    cluster_queue_of: Mapping[tuple[str, str], str],
    cohort_of: Mapping[str, str] | None = None,
    max_holders: int = 5,
) -> list[QuotaWait]:
    """Each Workload waiting for quota, what it lacks in Kueue's words, and the admitted
    Workloads that use that resource in that flavor: those of its ClusterQueue, then those of the
    other ClusterQueues of its cohort (they may hold what it could borrow), each by namespace and
    name. ``cluster_queue_of``: (namespace, LocalQueue) -> its ClusterQueue; ``cohort_of``:
    ClusterQueue -> its cohort ("" or absent: none)."""
    cohorts = cohort_of or {}
    every: Sequence[Workload] = list(workloads)
    using: dict[tuple[str, str, str], list[Holder]] = {}  # (queue, flavor, resource) -> admitted users
    for a in every:
        if a.holds_quota:
            for (flavor, resource), amount in a.usage.items():
                using.setdefault((a.cluster_queue, flavor, resource), []).append(
                    Holder(a.namespace, a.name, a.owner, amount, a.cluster_queue)
                )
    for found in using.values():
        found.sort(key=_by_name)
    members: dict[str, list[str]] = {}  # cohort -> its ClusterQueues, by name
    for queue, cohort in sorted(cohorts.items()):
        if cohort:
            members.setdefault(cohort, []).append(queue)
    out = []
    for w in sorted((w for w in every if w.waiting_for_quota), key=lambda w: (w.namespace, w.name)):
        reason = w.conditions.get("QuotaReserved") or Condition("", "", "")
        cq = cluster_queue_of.get((w.namespace, w.queue), "")
        lacks = shortfalls(reason.message)
        others = [q for q in members.get(cohorts.get(cq, ""), ()) if q != cq]
        holders = {
            (s.flavor, s.resource): [
                h for q in (cq, *others) for h in using.get((q, s.flavor, s.resource), ())
            ][:max_holders]
            for s in lacks
        }
        out.append(QuotaWait(w, cq, reason, lacks, holders))
    return out


def _by_name(h: Holder) -> tuple[str, str]:
    return (h.namespace, h.name)


@dataclass(frozen=True)
class Quota:
    flavor: str
    resource: str
    nominal: str
    borrowing_limit: str = ""  # "" when none is set
    lending_limit: str = ""


@dataclass(frozen=True)
class ClusterQueue:
    name: str
    cohort: str
    quotas: tuple[Quota, ...]
    reserved: Mapping[tuple[str, str], str]  # (flavor, resource) -> quantity (status.flavorsReservation)
    used: Mapping[tuple[str, str], str]  # likewise, by admitted workloads (status.flavorsUsage)
    pending: int | None = None  # None: Kueue has not reported it (no status yet)
    admitted: int | None = None
    borrowed: Mapping[tuple[str, str], str] = field(default_factory=dict)  # of the reserved, from its cohort


# ---- the Queues page ------------------------------------------------------------------------
@dataclass(frozen=True)
class QuotaRow:
    flavor: str
    resource: str
    nominal: str
    borrowing_limit: str
    lending_limit: str
    reserved: str  # "" when Kueue has not reported it
    used: str
    borrowed: str = ""  # of the reserved, borrowed from the cohort


@dataclass(frozen=True)
class QueueSummary:
    name: str
    cohort: str
    pending: int | None  # None: not reported
    admitted: int | None
    rows: list[QuotaRow]
    workloads: list[Workload]  # its admitted ones


@dataclass(frozen=True)
class FlavorCapacity:
    """One flavor's nominal quotas for one extended resource, over every ClusterQueue, beside what
    the nodes its labels select have allocatable."""

    flavor: str
    resource: str
    labels: tuple[tuple[str, str], ...]
    nominal: int
    capacity: int
    missing: bool = False  # no ResourceFlavor of that name: it selects no node

    @property
    def over(self) -> int:
        """Quota past the nodes' capacity: admitted work that will sit Pending (0 when none, and
        for a missing flavor, which admits nothing)."""
        return 0 if self.missing else max(0, self.nominal - self.capacity)


@dataclass(frozen=True)
class QueuesReport:
    queues: list[QueueSummary]
    capacity: list[FlavorCapacity]
    unqueued: dict[str, int]  # extended resource -> allocatable on nodes no flavor with quota for it selects


Node = tuple[Mapping[str, str], Mapping[str, int]]  # its labels, its allocatable (app units)


def _selects(labels: Sequence[tuple[str, str]], node: Mapping[str, str]) -> bool:
    return all(node.get(k) == v for k, v in labels)


def _amount(resource: str, text: str) -> int:
    try:
        return to_amount(resource, text) if text else 0
    except QuantityError:
        return 0


def report(
    queues: Iterable[ClusterQueue],
    flavors: Mapping[str, tuple[tuple[str, str], ...]],
    workloads: Iterable[Workload],
    nodes: Sequence[Node],
) -> QueuesReport:
    """Per ClusterQueue its quotas with reservation and use, its workloads; per flavor and
    extended resource the nominal quota of every queue beside the allocatable of the nodes the
    flavor selects; and what nodes no such flavor selects have (no queue can hand it out)."""
    admitted: dict[str, list[Workload]] = {}
    for w in workloads:
        if w.holds_quota:
            admitted.setdefault(w.cluster_queue, []).append(w)
    summaries = []
    nominal: dict[tuple[str, str], int] = {}
    for q in sorted(queues, key=lambda q: q.name):
        rows = [
            QuotaRow(
                x.flavor, x.resource, x.nominal, x.borrowing_limit, x.lending_limit,
                q.reserved.get((x.flavor, x.resource), ""), q.used.get((x.flavor, x.resource), ""),
                q.borrowed.get((x.flavor, x.resource), ""),
            )
            for x in q.quotas
        ]  # fmt: skip
        for x in q.quotas:
            if is_requested_as_extended(x.resource):  # counts, compared with the nodes'
                key = (x.flavor, x.resource)
                nominal[key] = nominal.get(key, 0) + _amount(x.resource, x.nominal)
        summaries.append(
            QueueSummary(q.name, q.cohort, q.pending, q.admitted, rows, admitted.get(q.name, []))
        )
    capacity = []
    covered: dict[str, list[tuple[tuple[str, str], ...]]] = {}
    for (flavor, resource), total in sorted(nominal.items()):
        if flavor not in flavors:  # named by a queue, never made: Kueue admits nothing in it
            capacity.append(FlavorCapacity(flavor, resource, (), total, 0, missing=True))
            covered.setdefault(resource, [])
            continue
        labels = flavors[flavor]
        have = sum(alloc.get(resource, 0) for node_labels, alloc in nodes if _selects(labels, node_labels))
        capacity.append(FlavorCapacity(flavor, resource, labels, total, have))
        covered.setdefault(resource, []).append(labels)
    unqueued: dict[str, int] = {}
    for resource, selectors in covered.items():
        left = sum(
            alloc.get(resource, 0)
            for node_labels, alloc in nodes
            if not any(_selects(labels, node_labels) for labels in selectors)
        )
        if left:
            unqueued[resource] = left
    return QueuesReport(summaries, capacity, unqueued)


# ---- what waits, each thing once ------------------------------------------------------------
KUEUE_ADMISSION_GATE = "kueue.x-k8s.io/admission"


@dataclass(frozen=True)
class WaitingCounts:
    """What waits, each thing counted once (the navigation's badge is their sum): pods the scheduler
    could not place, jobs Kueue holds for quota, and gated pods that are not such a job's (a pod
    Kueue gates until its Workload is admitted is counted with that Workload)."""

    unschedulable: int
    quota: int
    gated: int
    gated_for_quota: int = 0  # gated pods counted with the job waiting for quota they stand for

    @property
    def total(self) -> int:
        return self.unschedulable + self.quota + self.gated


GatedPod = tuple[str, str, tuple[str, str], tuple[str, ...]]  # namespace, name, (owner kind, name), gates


def waiting_counts(unschedulable: int, gated: Iterable[GatedPod], quota: Iterable[Workload]) -> WaitingCounts:
    """``gated``: each gated pod; ``quota``: the Workloads waiting for quota. A gated pod stands for
    a waiting Workload when Kueue's admission gate is among its gates and the Workload, in its
    namespace, is owned by the pod itself (Kueue's pod integration) or by the pod's owner."""
    waits = list(quota)
    owners = {(w.namespace, *w.owner) for w in waits if w.owner[1]}
    apart = with_job = 0
    for namespace, name, (kind, owner), gates in gated:
        if KUEUE_ADMISSION_GATE in gates and (
            (namespace, "Pod", name) in owners or (owner and (namespace, kind, owner) in owners)
        ):
            with_job += 1
        else:
            apart += 1
    return WaitingCounts(unschedulable, len(waits), apart, with_job)
