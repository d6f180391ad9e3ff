"""Kueue's objects (kueue.x-k8s.io/v1beta2) as the cache reads them: Workloads, ClusterQueues and
LocalQueues, decoded with msgspec (only the fields used, every list and text bounded: a queue's
objects are anyone's who may create a Job) and projected to the views app/domain/queues.py
reads. Watched only where the API server serves the group (app/kube/api/cache.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

from app.domain.queues import Condition, Workload
from app.kube.wire.decoders import Meta

GROUP_VERSION = "kueue.x-k8s.io/v1beta2"
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
