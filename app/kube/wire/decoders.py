"""The wire shapes of the objects the cache reads: only the fields the views use.

Pods, nodes and quotas are decoded with msgspec into typed structs that declare only the fields
used here: everything else in the JSON (managedFields, env, probes, images, ...) is skipped by the
decoder without ever being built as Python objects. That keeps a page's transient memory near the
size of its bytes and the decoding faster than a full parse.

The decoded structs form trees, never cycles: they are kept out of the garbage collector's
tracking (``gc=False``); a page of 500 pods would otherwise set off collections that walk them
(~8% of a page's decoding and projection, measured on 5,000 real-sized pods).

Typing rule, checked against the API's schema by ``tests/schema/test_schema_decoding.py``: every
field the schema marks optional is ``X | None`` (the API server may send ``null`` for it), and a
part whose contents are not read is decoded as an empty struct (``Present``), never as
``msgspec.Raw | None``, which msgspec only decodes from ``null``. Field names are the API's
exactly (``hostIP``, not the camel-cased ``hostIp``); the same test compares them with the schema.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import msgspec

from app.kube.wire.placement import Affinity, PortJSON, Present, SpreadJSON, TaintJSON, TolerationJSON

T = TypeVar("T")


class OwnerRef(msgspec.Struct, gc=False):
    kind: str | None = None
    name: str | None = None
    controller: bool | None = None


class Meta(msgspec.Struct, gc=False, rename="camel"):
    name: str | None = None
    namespace: str | None = None
    resource_version: str | None = None
    creation_timestamp: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerRef] | None = None
    deletion_timestamp: str | None = None


class ListMeta(msgspec.Struct, gc=False, rename={"cont": "continue", "resource_version": "resourceVersion"}):
    cont: str | None = None
    resource_version: str | None = None


# A quantity is a string on the wire; the schema also allows a number.
Quantities = dict[str, str | int | float]


class Resources(msgspec.Struct, gc=False):
    requests: Quantities | None = None
    limits: Quantities | None = None


class Container(msgspec.Struct, gc=False, rename="camel"):
    name: str | None = None
    resources: Resources | None = None
    restart_policy: str | None = None
    ports: list[PortJSON] | None = None

    @property
    def amounts(self) -> tuple[Quantities | None, Quantities | None]:
        r = self.resources
        return (r.requests, r.limits) if r is not None else (None, None)


class Volume(msgspec.Struct, gc=False, rename="camel"):
    """A volume: its source is the one key besides ``name`` that is set; placement reads only
    whether it is a claim."""

    persistent_volume_claim: Present | None = None
    ephemeral: Present | None = None


class Gate(msgspec.Struct, gc=False):
    name: str | None = None


class PodSpec(msgspec.Struct, gc=False, rename="camel"):
    node_name: str | None = None
    node_selector: dict[str, str] | None = None
    containers: list[Container] | None = None  # may be null (a watch bookmark sends containers: null)
    init_containers: list[Container] | None = None
    overhead: Quantities | None = None
    tolerations: list[TolerationJSON] | None = None
    affinity: Affinity | None = None
    topology_spread_constraints: list[SpreadJSON] | None = None
    volumes: list[Volume] | None = None
    resources: Resources | None = None  # pod-level resources (1.32+)
    resource_claims: list[Present] | None = None  # DRA claims (resource.k8s.io)
    priority: int | None = None  # set by admission from the PriorityClass
    scheduler_name: str | None = None  # defaulted to "default-scheduler" by the API server
    scheduling_gates: list[Gate] | None = None  # the pod waits for each to be lifted (1.30+)


class Condition(msgspec.Struct, gc=False):
    type: str | None = None
    status: str | None = None
    reason: str | None = None
    message: str | None = None


class StatusResources(msgspec.Struct, gc=False):
    requests: Quantities | None = None


class ResourceHealth(msgspec.Struct, gc=False):
    resource_id: str = msgspec.field(default="", name="resourceID")
    health: str = ""


class ResourceStatus(msgspec.Struct, gc=False):
    """One resource's devices as the kubelet reports their health (KEP-4680, beta from 1.36)."""

    name: str = ""
    resources: list[ResourceHealth] | None = None


class ContainerStatus(msgspec.Struct, gc=False, rename="camel"):
    """What the kubelet reports of a container's resources during an in-place resize, and the
    health of the devices allocated to it."""

    name: str | None = None
    allocated_resources: Quantities | None = None
    resources: StatusResources | None = None
    allocated_resources_status: list[ResourceStatus] | None = None


class PodStatus(msgspec.Struct, gc=False, rename="camel"):
    phase: str | None = None
    conditions: list[Condition] | None = None  # may be null, as in a watch bookmark
    container_statuses: list[ContainerStatus] | None = None
    init_container_statuses: list[ContainerStatus] | None = None


class Pod(msgspec.Struct, gc=False):
    metadata: Meta | None = None
    spec: PodSpec | None = None
    status: PodStatus | None = None


class NodeSpec(msgspec.Struct, gc=False):
    unschedulable: bool | None = None
    taints: list[TaintJSON] | None = None


class NodeStatus(msgspec.Struct, gc=False, rename="camel"):
    capacity: Quantities | None = None
    allocatable: Quantities | None = None
    conditions: list[Condition] | None = None
    declared_features: list[str] | None = None  # NodeDeclaredFeatures (1.35+, alpha)


class Node(msgspec.Struct, gc=False):
    metadata: Meta | None = None
    spec: NodeSpec | None = None
    status: NodeStatus | None = None


class QuotaSpec(msgspec.Struct, gc=False):
    hard: Quantities | None = None


class QuotaStatus(msgspec.Struct, gc=False):
    hard: Quantities | None = None
    used: Quantities | None = None


class Quota(msgspec.Struct, gc=False):
    metadata: Meta | None = None
    spec: QuotaSpec | None = None
    status: QuotaStatus | None = None


class ObjectList(msgspec.Struct, Generic[T], gc=False):
    metadata: ListMeta | None = None
    items: list[T] | None = None


class RawList(msgspec.Struct, gc=False):
    """A list whose items are decoded one at a time by its reader (each kept, skipped or named)."""

    metadata: ListMeta | None = None
    items: list[msgspec.Raw] | None = None


RAW_LIST = msgspec.json.Decoder(RawList)


class Ident(msgspec.Struct, gc=False):
    """What names an object that could not be decoded whole (every part optional and untyped)."""

    metadata: Any = None


EMPTY_META = Meta()
EMPTY_POD_SPEC = PodSpec()
EMPTY_POD_STATUS = PodStatus()
