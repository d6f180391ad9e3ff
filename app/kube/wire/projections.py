"""Slim views of decoded pods, nodes and quotas: only what accounting and the pages need.

The structs they are made from are in ``app.kube.wire.decoders``. A view keeps nothing of what it
was decoded from. Pods mostly repeat a few request shapes and selectors: equal dicts are shared
(``app.kube.wire.shared``), and what pods of one template share is computed once
(``app.kube.wire.pod_template``).
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from app.domain import hami, kai
from app.domain.accounting import PER_SOURCE, Amounts, counts_on_node
from app.domain.changes import DESIRED_ANNOTATION, Drift, drift, parse_desired
from app.domain.fit import PodShape, Taint
from app.domain.names import is_native_resource
from app.domain.pod_affinity import PodTerm
from app.domain.quantity import QuantityError, to_amount
from app.domain.shape import NONE, Placement, pod_shape
from app.kube.wire.decoders import (
    EMPTY_META,
    EMPTY_POD_SPEC,
    EMPTY_POD_STATUS,
    Node,
    OwnerRef,
    Pod,
    PodStatus,
    Quota,
)
from app.kube.wire.placement import taints
from app.kube.wire.pod_template import NO_AMOUNTS, amounts, pod_placement
from app.kube.wire.shared import EMPTY, shared

log = logging.getLogger(__name__)

ANNOTATION_PREFIX = "extres.dev/"
REQUESTS = "requests."


def _amounts(raw: Mapping[str, Any] | None) -> Amounts:
    out: Amounts = {}
    for name, value in (raw or {}).items():
        try:
            out[name] = to_amount(name, str(value))
        except QuantityError:
            log.warning("ignoring unparsable quantity %s=%r", name, value)
    return out


# ---- the views ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Owner:
    kind: str  # Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, ... or Pod (no owner)
    name: str


NO_OWNER = Owner("Pod", "")  # a bare pod
MAX_CONDITIONS = 16  # of a node, kept
DEFAULT_SCHEDULER = "default-scheduler"  # kube-scheduler's name, the API server's default
MAX_GATES, MAX_GATE = 16, 316  # scheduling gates kept, and characters of one (a qualified name)


@dataclass(slots=True)
class NodeView:
    name: str
    labels: dict[str, str]
    annotations: dict[str, str]  # only this project's own annotations, and HAMi's GPUs (app.domain.hami)
    capacity: Amounts
    allocatable: Amounts
    resource_version: str
    unschedulable: bool
    created: str
    desired: dict[str, int]  # the desired-state annotation, parsed
    taints: tuple[Taint, ...] = ()
    ready: str = ""  # the Ready condition's status ("True", "False", "Unknown"; "" when none)
    ready_reason: str = ""
    declares_features: bool = False  # NodeDeclaredFeatures: the scheduler may filter on them
    # every condition the node reports, (type, status, reason): Ready, the pressures,
    # NetworkUnavailable, and any a node problem detector adds (at most MAX_CONDITIONS)
    conditions: tuple[tuple[str, str, str], ...] = ()

    @property
    def key(self) -> tuple[str, str]:
        return ("", self.name)

    @property
    def drift(self) -> list[Drift]:
        return drift(self.desired, self.capacity)

    def same_row(self, other: NodeView) -> bool:
        """Whether ``other`` gives the same overview row and candidacy (a heartbeat changes neither)."""
        return (
            self.capacity == other.capacity
            and self.allocatable == other.allocatable
            and self.labels == other.labels
            and self.desired == other.desired
            and self.unschedulable == other.unschedulable  # cordoned: no longer a candidate
            and self.taints == other.taints
        )

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> NodeView:
        return cls.from_struct(msgspec.convert(obj, Node))

    @classmethod
    def from_struct(cls, node: Node) -> NodeView:
        meta = node.metadata or EMPTY_META
        spec, status = node.spec, node.status
        annotations = {
            k: v[: hami.MOST_TEXT + 1]
            for k, v in (meta.annotations or {}).items()
            if k.startswith(ANNOTATION_PREFIX) or k in hami.NODE_ANNOTATIONS
        }
        ready = next((c for c in (status.conditions if status else None) or () if c.type == "Ready"), None)
        return cls(
            name=meta.name or "",
            labels=meta.labels or {},
            annotations=annotations,
            capacity=_amounts(status.capacity if status else None),
            allocatable=_amounts(status.allocatable if status else None),
            resource_version=meta.resource_version or "",
            unschedulable=bool(spec and spec.unschedulable),
            created=meta.creation_timestamp or "",
            desired=parse_desired(annotations.get(DESIRED_ANNOTATION)),
            taints=taints(spec.taints if spec else None),
            ready=sys.intern(ready.status or "") if ready else "",
            ready_reason=sys.intern(ready.reason or "") if ready else "",
            declares_features=bool(status and status.declared_features),
            conditions=tuple(
                (
                    sys.intern((c.type or "")[:63]),
                    sys.intern((c.status or "")[:16]),
                    sys.intern((c.reason or "")[:128]),
                )
                for c in ((status.conditions if status else None) or ())[:MAX_CONDITIONS]
            ),
        )


@dataclass(slots=True)
class PodView:
    namespace: str
    name: str
    node_name: str
    phase: str
    requests: Amounts
    limits: Amounts
    created: str
    extended_requests: Amounts = field(default_factory=dict)  # the extended part of requests
    unschedulable: str | None = None  # the scheduler's message, when Unschedulable
    gates: tuple[str, ...] = ()  # an unbound pod's scheduling gates: no scheduler looks at it yet
    scheduler: str = DEFAULT_SCHEDULER  # spec.schedulerName: whose words ``unschedulable`` are
    node_selector: Mapping[str, Any] = field(default_factory=dict)
    placement: Placement = NONE  # tolerations, required node affinity, host ports (shared)
    owner: Owner | None = None  # the workload, kept only for pods with extended requests
    priority: int = 0  # spec.priority: who preemption may evict for whom
    terminating: bool = False  # deleted, its containers still stopping (it still counts)
    labels: Mapping[str, str] = field(default_factory=dict)  # for inter-pod affinity and spread (shared)
    # (resource, device ID) of each device allocated to it that the kubelet reports Unhealthy
    unhealthy_devices: tuple[tuple[str, str], ...] = ()
    hami: str = ""  # the GPU parts HAMi's scheduler gave it (hami.io/vgpu-devices-allocated), as written
    kai: Mapping[str, str] = field(default_factory=dict)  # KAI's fraction annotations (app.domain.kai)

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    @property
    def counts(self) -> bool:
        return counts_on_node(self.phase, self.node_name)

    @property
    def shape(self) -> PodShape:
        return pod_shape(self.requests, self.node_selector, self.placement)

    @property
    def anti_affinity(self) -> tuple[PodTerm, ...]:
        return self.placement.anti_affinity

    @property
    def extended_share(self) -> tuple[str, Amounts] | None:
        """What this pod adds to a node's extended requested amounts, if anything."""
        if self.extended_requests and self.counts:
            return (self.node_name, self.extended_requests)
        return None

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> PodView:
        return cls.from_struct(msgspec.convert(obj, Pod))

    @classmethod
    def from_struct(cls, pod: Pod, rule: str = PER_SOURCE) -> PodView:
        """``rule``: how this API server's version combines a resize's sources (accounting)."""
        meta = pod.metadata or EMPTY_META
        spec = pod.spec or EMPTY_POD_SPEC
        status = pod.status or EMPTY_POD_STATUS
        unschedulable = None
        gates: tuple[str, ...] = ()
        if not spec.node_name:
            for cond in status.conditions or ():
                if cond.type == "PodScheduled" and cond.status == "False" and cond.reason == "Unschedulable":
                    unschedulable = cond.message or ""
            named = (spec.scheduling_gates or ())[:MAX_GATES]
            gates = tuple(sys.intern((g.name or "")[:MAX_GATE]) for g in named)
        try:
            amounted = amounts(spec, status, rule)
        except QuantityError:
            log.warning("pod %s/%s has an unparsable quantity", meta.namespace or "", meta.name or "")
            amounted = NO_AMOUNTS
        selector = spec.node_selector
        extended = amounted.extended
        fraction = _kai(meta.annotations) if meta.annotations else EMPTY  # KAI's: asks no resource
        return cls(
            namespace=sys.intern(meta.namespace or ""),
            name=meta.name or "",
            node_name=sys.intern(spec.node_name or ""),
            phase=sys.intern(status.phase or "Pending"),
            requests=amounted.requests,
            limits=amounted.limits,
            created=meta.creation_timestamp or "",
            extended_requests=extended,
            unschedulable=unschedulable,
            gates=gates,
            scheduler=sys.intern(spec.scheduler_name or DEFAULT_SCHEDULER),
            owner=workload(meta.owner_references, meta.labels) if extended or fraction else None,
            node_selector=shared(selector) if selector else EMPTY,
            priority=spec.priority or 0,
            terminating=meta.deletion_timestamp is not None,
            labels=shared(meta.labels) if meta.labels else EMPTY,
            placement=pod_placement(spec),
            unhealthy_devices=unhealthy_devices(status) if status.container_statuses else (),
            hami=(meta.annotations or {}).get(hami.ALLOCATED, "")[: hami.MOST_TEXT + 1] if extended else "",
            kai=fraction,
        )


def _kai(annotations: Mapping[str, str]) -> Mapping[str, str]:
    """KAI's fraction annotations of a pod, if it has any (most have none: the shared empty map)."""
    found = {k: annotations[k][:64] for k in kai.ANNOTATIONS if k in annotations}
    return found or EMPTY


MAX_DEVICES = 64  # devices named per pod


def unhealthy_devices(status: PodStatus) -> tuple[tuple[str, str], ...]:
    """(resource, device ID) of each device the kubelet reports Unhealthy for the pod's
    containers (``allocatedResourcesStatus``), bounded."""
    found: list[tuple[str, str]] = []
    for c in [*(status.init_container_statuses or ()), *(status.container_statuses or ())][:MAX_DEVICES]:
        for r in (c.allocated_resources_status or ())[:MAX_DEVICES]:
            for d in (r.resources or ())[:MAX_DEVICES]:
                if d.health == "Unhealthy" and len(found) < MAX_DEVICES:
                    found.append((sys.intern(r.name[:253]), d.resource_id[:253]))
    return tuple(found)


def workload(refs: list[OwnerRef] | None, labels: Mapping[str, str] | None) -> Owner:
    """The workload a pod belongs to, from its controller reference. A ReplicaSet whose name is
    ``<deployment>-<pod-template-hash>`` (the pod carries the hash label) belongs to that
    Deployment, and a Job named ``<cronjob>-<minutes>`` to that CronJob: their controllers name
    them so, and no API call is needed."""
    ref = next((r for r in refs or () if r.controller), None) or next(iter(refs or ()), None)
    if ref is None:
        return NO_OWNER
    kind, name = ref.kind or "", ref.name or ""
    template_hash = (labels or {}).get("pod-template-hash")
    if kind == "ReplicaSet" and template_hash and name.endswith("-" + template_hash):
        kind, name = "Deployment", name[: -len(template_hash) - 1]
    elif kind == "Job" and (m := _SCHEDULED_JOB.match(name)):
        kind, name = "CronJob", m["cronjob"]
    return Owner(sys.intern(kind), sys.intern(name))


# The CronJob controller names each Job "<cronjob>-<scheduled time in minutes since 1970>"
# (8 digits since 1990); a Job of another origin named so would be taken for a CronJob's.
_SCHEDULED_JOB = re.compile(r"^(?P<cronjob>.+)-(?P<minutes>\d{8,10})$")


@dataclass(slots=True)
class QuotaView:
    """A ResourceQuota's ``requests.<extended resource>`` items: resource -> (hard, used)."""

    namespace: str
    name: str
    items: dict[str, tuple[int, int]]

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    @classmethod
    def from_struct(cls, quota: Quota) -> QuotaView:
        meta = quota.metadata or EMPTY_META
        status, spec = quota.status, quota.spec
        hard = _amounts((status.hard if status else None) or (spec.hard if spec else None))
        used = _amounts(status.used if status else None)
        items = {
            key[len(REQUESTS) :]: (value, used.get(key, 0))
            for key, value in hard.items()
            if key.startswith(REQUESTS) and not is_native_resource(key[len(REQUESTS) :])
        }
        return cls(meta.namespace or "", meta.name or "", items)
