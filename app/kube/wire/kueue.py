"""Kueue's objects (kueue.x-k8s.io v1beta2, or v1beta1 where only that is served) as the cache
reads them: Workloads, ClusterQueues, LocalQueues and ResourceFlavors, decoded with msgspec (only
the fields used, every list and text bounded: a queue's objects are anyone's who may create a
Job) and projected to the views app/domain/queues.py reads. Watched only where the API server
serves the group (app/kube/api/cache.py). Also the visibility API's list of a ClusterQueue's
pending workloads (app/kube/api/queue_positions.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

from app.domain.queues import ClusterQueue, Condition, Position, Quota, Workload
from app.kube.wire.decoders import Meta

MAX_ITEMS = 64  # pod sets, flavors, resources, conditions of one object read
MAX_TEXT = 1024  # characters of a condition's message kept


class _Condition(msgspec.Struct):
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""


class _Assignment(msgspec.Struct, rename="camel"):
    name: str = ""
    flavors: dict[str, str] | None = None  # resource -> flavor
    resource_usage: dict[str, str] | None = None  # resource -> quantity


class _Admission(msgspec.Struct, rename="camel"):
    cluster_queue: str = ""
    pod_set_assignments: list[_Assignment] | None = None


class _Requests(msgspec.Struct):
    name: str = ""
    resources: dict[str, str] | None = None


class _WorkloadSpec(msgspec.Struct, rename="camel"):
    queue_name: str = ""


class _WorkloadStatus(msgspec.Struct, rename="camel"):
    conditions: list[_Condition] | None = None
    admission: _Admission | None = None
    resource_requests: list[_Requests] | None = None


class KueueWorkload(msgspec.Struct):
    metadata: Meta | None = None
    spec: _WorkloadSpec | None = None
    status: _WorkloadStatus | None = None


@dataclass(frozen=True)
class WorkloadView:
    workload: Workload
    resource_version: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return (self.workload.namespace, self.workload.name)

    @classmethod
    def from_struct(cls, obj: KueueWorkload) -> WorkloadView:
        meta, spec, status = (
            obj.metadata or Meta(),
            obj.spec or _WorkloadSpec(),
            obj.status or _WorkloadStatus(),
        )
        owners = [o for o in (meta.owner_references or ())[:MAX_ITEMS] if o.controller] or list(
            (meta.owner_references or ())[:1]
        )
        owner = (owners[0].kind or "", owners[0].name or "") if owners else ("", "")
        conditions = {
            c.type: Condition(c.status, c.reason[:MAX_TEXT], c.message[:MAX_TEXT])
            for c in (status.conditions or ())[:MAX_ITEMS]
        }
        usage: dict[tuple[str, str], str] = {}
        admission = status.admission
        for a in (admission.pod_set_assignments or ())[:MAX_ITEMS] if admission else ():
            flavors = a.flavors or {}
            for resource, quantity in list((a.resource_usage or {}).items())[:MAX_ITEMS]:
                flavor = flavors.get(resource, "")
                usage[(flavor, resource)] = quantity  # one pod set per flavor and resource, mostly
        requests: dict[str, str] = {}
        for r in (status.resource_requests or ())[:MAX_ITEMS]:
            for resource, quantity in list((r.resources or {}).items())[:MAX_ITEMS]:
                requests.setdefault(resource, quantity)
        workload = Workload(
            meta.namespace or "",
            meta.name or "",
            spec.queue_name[:253],
            owner,
            conditions,
            admission.cluster_queue[:253] if admission else "",
            usage,
            requests,
        )
        return cls(workload, meta.resource_version or "")


class _LocalQueueSpec(msgspec.Struct, rename="camel"):
    cluster_queue: str = ""


class KueueLocalQueue(msgspec.Struct):
    metadata: Meta | None = None
    spec: _LocalQueueSpec | None = None


@dataclass(frozen=True)
class LocalQueueView:
    namespace: str
    name: str
    cluster_queue: str
    resource_version: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    @classmethod
    def from_struct(cls, obj: KueueLocalQueue) -> LocalQueueView:
        meta, spec = obj.metadata or Meta(), obj.spec or _LocalQueueSpec()
        return cls(
            meta.namespace or "", meta.name or "", spec.cluster_queue[:253], meta.resource_version or ""
        )


@dataclass(frozen=True)
class QueueViews:
    """The Kueue objects held: what app/domain/queues.py is given."""

    workloads: list[Workload] = field(default_factory=list)
    cluster_queue_of: dict[tuple[str, str], str] = field(default_factory=dict)


Quantity = str | int | float  # Kueue writes quantities as the API does: int-or-string


class _Quota(msgspec.Struct, rename="camel"):
    name: str = ""
    nominal_quota: Quantity | None = None
    borrowing_limit: Quantity | None = None
    lending_limit: Quantity | None = None


class _FlavorQuotas(msgspec.Struct):
    name: str = ""
    resources: list[_Quota] | None = None


class _ResourceGroup(msgspec.Struct, rename="camel"):
    covered_resources: list[str] | None = None
    flavors: list[_FlavorQuotas] | None = None


class _ClusterQueueSpec(msgspec.Struct, rename="camel"):
    cohort_name: str = ""  # v1beta2
    cohort: str = ""  # v1beta1's name of it
    resource_groups: list[_ResourceGroup] | None = None


class _Used(msgspec.Struct):
    name: str = ""
    total: Quantity | None = None
    borrowed: Quantity | None = None


class _FlavorUsed(msgspec.Struct):
    name: str = ""
    resources: list[_Used] | None = None


class _ClusterQueueStatus(msgspec.Struct, rename="camel"):
    flavors_reservation: list[_FlavorUsed] | None = None
    flavors_usage: list[_FlavorUsed] | None = None
    pending_workloads: int | None = None
    admitted_workloads: int | None = None


class KueueClusterQueue(msgspec.Struct):
    metadata: Meta | None = None
    spec: _ClusterQueueSpec | None = None
    status: _ClusterQueueStatus | None = None


def _text(value: Quantity | None) -> str:
    return "" if value is None else str(value)[:64]


def _used(found: list[_FlavorUsed] | None, borrowed: bool = False) -> dict[tuple[str, str], str]:
    return {
        (f.name, r.name): _text(r.borrowed if borrowed else r.total)
        for f in (found or ())[:MAX_ITEMS]
        for r in (f.resources or ())[:MAX_ITEMS]
    }


@dataclass(frozen=True)
class ClusterQueueView:
    queue: ClusterQueue
    resource_version: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return ("", self.queue.name)

    @classmethod
    def from_struct(cls, obj: KueueClusterQueue) -> ClusterQueueView:
        meta, spec = obj.metadata or Meta(), obj.spec or _ClusterQueueSpec()
        status = obj.status or _ClusterQueueStatus()
        quotas = tuple(
            Quota(f.name, q.name, _text(q.nominal_quota), _text(q.borrowing_limit), _text(q.lending_limit))
            for g in (spec.resource_groups or ())[:MAX_ITEMS]
            for f in (g.flavors or ())[:MAX_ITEMS]
            for q in (f.resources or ())[:MAX_ITEMS]
        )
        queue = ClusterQueue(
            meta.name or "",
            (spec.cohort_name or spec.cohort)[:253],
            quotas,
            _used(status.flavors_reservation),
            _used(status.flavors_usage),
            status.pending_workloads,
            status.admitted_workloads,
            _used(status.flavors_reservation, borrowed=True),
        )
        return cls(queue, meta.resource_version or "")


class _FlavorSpec(msgspec.Struct, rename="camel"):
    node_labels: dict[str, str] | None = None


class KueueResourceFlavor(msgspec.Struct):
    metadata: Meta | None = None
    spec: _FlavorSpec | None = None


@dataclass(frozen=True)
class FlavorView:
    name: str
    node_labels: tuple[tuple[str, str], ...]
    resource_version: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return ("", self.name)

    @classmethod
    def from_struct(cls, obj: KueueResourceFlavor) -> FlavorView:
        meta, spec = obj.metadata or Meta(), obj.spec or _FlavorSpec()
        labels = tuple(sorted((spec.node_labels or {}).items()))[:MAX_ITEMS]
        return cls(meta.name or "", labels, meta.resource_version or "")


class _PendingWorkload(msgspec.Struct, rename="camel"):
    metadata: Meta | None = None
    position_in_cluster_queue: int = 0
    position_in_local_queue: int = 0


class PendingWorkloads(msgspec.Struct):
    """visibility.kueue.x-k8s.io's PendingWorkloadsSummary: a ClusterQueue's pending workloads."""

    items: list[_PendingWorkload] | None = None

    def positions(self, most: int) -> dict[tuple[str, str], Position]:
        """(namespace, name) -> where it stands, for the first ``most`` items."""
        found = {}
        for item in (self.items or ())[:most]:
            meta = item.metadata or Meta()
            key = ((meta.namespace or "")[:253], (meta.name or "")[:253])
            found[key] = Position(item.position_in_cluster_queue, item.position_in_local_queue)
        return found
