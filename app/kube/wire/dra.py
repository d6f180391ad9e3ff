"""DRA objects (resource.k8s.io/v1) as the cache reads them: DeviceClasses, ResourceSlices and
ResourceClaims, decoded with msgspec (only the fields used) and projected to slim views."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import msgspec

from app.domain.device_cel import Device, Version
from app.domain.devices import ClassFacts, DeviceFacts, Reach, SliceFacts, TaintRule
from app.domain.quantity import QuantityError, parse_quantity
from app.domain.shares import Capacity
from app.kube.wire.decoders import Meta
from app.kube.wire.placement import NodeSelector, node_selector_terms

GROUP_VERSION = "resource.k8s.io/v1"
MAX_DEVICES = 128  # per slice, as the API allows; more are not read
EXTENDED_CLAIM = "resource.kubernetes.io/extended-resource-claim"


class _CEL(msgspec.Struct):
    expression: str = ""


class _Selector(msgspec.Struct):
    cel: _CEL | None = None


class _ClassSpec(msgspec.Struct, rename="camel"):
    selectors: list[_Selector] | None = None
    extended_resource_name: str | None = None


class DeviceClass(msgspec.Struct):
    metadata: Meta | None = None
    spec: _ClassSpec | None = None


class _Attribute(msgspec.Struct, rename={"int_": "int", "bool_": "bool"}):
    int_: int | None = None
    bool_: bool | None = None
    string: str | None = None
    version: str | None = None


class _Policy(msgspec.Struct):
    default: str | int | float | None = None


class _Capacity(msgspec.Struct, rename="camel"):
    value: str | int | float = 0
    request_policy: _Policy | None = None


class _Taint(msgspec.Struct):
    key: str = ""
    value: str | None = None
    effect: str = ""


class _Counter(msgspec.Struct):
    value: str | int | float = 0


class _CounterUse(msgspec.Struct, rename="camel"):
    counter_set: str = ""
    counters: dict[str, _Counter] | None = None


class _CounterSet(msgspec.Struct):
    name: str = ""
    counters: dict[str, _Counter] | None = None


def _amount(value: str | int | float) -> Decimal:
    """An amount as Decimal; an unparsable one counts as more than any device has."""
    try:
        return parse_quantity(str(value))
    except QuantityError:
        return Decimal("Infinity")


def _capacities(capacity: dict[str, _Capacity] | None) -> tuple[Capacity, ...]:
    """A shareable device's capacities, with what a share asking for none takes of each."""
    return tuple(
        Capacity(
            name,
            _amount(c.value),
            None
            if c.request_policy is None or c.request_policy.default is None
            else _amount(c.request_policy.default),
        )
        for name, c in sorted((capacity or {}).items())
    )


def _amounts(
    set_name: str, counters: dict[str, _Counter] | None
) -> tuple[tuple[tuple[str, str], Decimal], ...]:
    """A counter set's amounts (or a device's use of one); an unparsable amount counts as more
    than any set has (its device never fits)."""
    return tuple(((set_name, name), _amount(c.value)) for name, c in sorted((counters or {}).items()))


class _Device(msgspec.Struct, rename="camel"):
    name: str = ""
    attributes: dict[str, _Attribute] | None = None
    capacity: dict[str, _Capacity] | None = None
    taints: list[_Taint] | None = None
    consumes_counters: list[_CounterUse] | None = None
    allow_multiple_allocations: bool | None = None
    node_name: str | None = None  # with the slice's perDeviceNodeSelection
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None


class _Pool(msgspec.Struct, rename="camel"):
    name: str = ""
    generation: int = 0
    resource_slice_count: int = 1


class _SliceSpec(msgspec.Struct, rename="camel"):
    driver: str = ""
    pool: _Pool | None = None
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    per_device_node_selection: bool | None = None
    devices: list[_Device] | None = None
    shared_counters: list[_CounterSet] | None = None


class ResourceSlice(msgspec.Struct):
    metadata: Meta | None = None
    spec: _SliceSpec | None = None


class _Result(
    msgspec.Struct,
    rename={"admin_access": "adminAccess", "share_id": "shareID", "consumed": "consumedCapacity"},
):
    driver: str = ""
    pool: str = ""
    device: str = ""
    admin_access: bool | None = None
    share_id: str | None = None  # a share of a device several claims may hold
    consumed: dict[str, str | int | float] | None = None  # what the share took of its capacities


class _DeviceAllocation(msgspec.Struct):
    results: list[_Result] | None = None


class _Allocation(msgspec.Struct):
    devices: _DeviceAllocation | None = None


class _Consumer(msgspec.Struct):
    resource: str = ""
    name: str = ""


class _ClaimStatus(msgspec.Struct, rename="camel"):
    allocation: _Allocation | None = None
    reserved_for: list[_Consumer] | None = None


class ResourceClaim(msgspec.Struct):
    metadata: Meta | None = None
    status: _ClaimStatus | None = None


@dataclass(frozen=True, slots=True)
class ClassView:
    facts: ClassFacts
    resource_version: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return ("", self.facts.name)

    @classmethod
    def from_struct(cls, obj: DeviceClass) -> ClassView:
        meta, spec = obj.metadata or Meta(), obj.spec or _ClassSpec()
        expressions = tuple(s.cel.expression for s in spec.selectors or () if s.cel is not None)
        facts = ClassFacts(
            meta.name or "", meta.creation_timestamp or "", spec.extended_resource_name or "", expressions
        )
        return cls(facts, meta.resource_version or "")


def _value(a: _Attribute) -> int | bool | str | Version:
    if a.bool_ is not None:
        return a.bool_
    if a.int_ is not None:
        return a.int_
    return a.string if a.string is not None else Version(a.version or "")


def _reach(node: str | None, selector: NodeSelector | None, all_nodes: bool | None) -> Reach:
    """The nodes a slice's or a device's devices are available to (one of the three is set)."""
    return Reach(node or "", bool(all_nodes), node_selector_terms(selector) if selector is not None else ())


@dataclass(frozen=True, slots=True)
class SliceView:
    facts: SliceFacts
    resource_version: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return ("", self.facts.name)

    @classmethod
    def from_struct(cls, obj: ResourceSlice) -> SliceView:
        meta, spec = obj.metadata or Meta(), obj.spec or _SliceSpec()
        pool = spec.pool or _Pool()
        devices = tuple(
            DeviceFacts(
                d.name,
                Device(
                    spec.driver,
                    tuple(sorted((k, _value(v)) for k, v in (d.attributes or {}).items())),
                    tuple(sorted((k, str(v.value)) for k, v in (d.capacity or {}).items())),
                ),
                tuple(
                    f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"
                    for t in d.taints or ()
                ),
                bool(d.allow_multiple_allocations),
                _reach(d.node_name, d.node_selector, d.all_nodes) if spec.per_device_node_selection else None,
                tuple(a for u in d.consumes_counters or () for a in _amounts(u.counter_set, u.counters)),
                _capacities(d.capacity) if d.allow_multiple_allocations else (),
            )
            for d in (spec.devices or ())[:MAX_DEVICES]
        )
        facts = SliceFacts(
            meta.name or "",
            spec.driver,
            pool.name,
            pool.generation,
            pool.resource_slice_count,
            spec.node_name or "",
            devices,
            None
            if spec.node_name or spec.per_device_node_selection
            else _reach(None, spec.node_selector, spec.all_nodes),
            tuple(a for cs in spec.shared_counters or () for a in _amounts(cs.name, cs.counters)),
        )
        return cls(facts, meta.resource_version or "")


@dataclass(frozen=True, slots=True)
class ClaimView:
    namespace: str
    name: str
    held: tuple[tuple[str, str, str], ...]  # (driver, pool, device) allocated, admin access left out
    pods: tuple[str, ...]  # the pods it is reserved for
    extended: bool  # made by the scheduler for a pod's extended resource requests
    resource_version: str = ""
    # of ``held``, the shares of devices several claims may hold: (device, what it took)
    shares: tuple[tuple[tuple[str, str, str], tuple[tuple[str, Decimal], ...]], ...] = ()

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    @classmethod
    def from_struct(cls, obj: ResourceClaim) -> ClaimView:
        meta, status = obj.metadata or Meta(), obj.status or _ClaimStatus()
        devices = status.allocation.devices if status.allocation else None
        results = [r for r in (devices.results if devices else None) or () if not r.admin_access]
        held = tuple((r.driver, r.pool, r.device) for r in results)
        shares = tuple(
            (
                (r.driver, r.pool, r.device),
                tuple((k, _amount(v)) for k, v in sorted((r.consumed or {}).items())),
            )
            for r in results
            if r.share_id
        )
        pods = tuple(c.name for c in status.reserved_for or () if c.resource == "pods")
        extended = (meta.annotations or {}).get(EXTENDED_CLAIM) == "true"
        return cls(
            meta.namespace or "", meta.name or "", held, pods, extended, meta.resource_version or "", shares
        )


class _TaintSelector(msgspec.Struct):
    driver: str | None = None
    pool: str | None = None
    device: str | None = None


class _TaintRuleSpec(msgspec.Struct, rename="camel"):
    device_selector: _TaintSelector | None = None
    taint: _Taint | None = None


class DeviceTaintRule(msgspec.Struct):
    metadata: Meta | None = None
    spec: _TaintRuleSpec | None = None


@dataclass(frozen=True, slots=True)
class TaintRuleView:
    rule: TaintRule
    resource_version: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return ("", self.rule.name)

    @classmethod
    def from_struct(cls, obj: DeviceTaintRule) -> TaintRuleView:
        meta, spec = obj.metadata or Meta(), obj.spec or _TaintRuleSpec()
        t, chosen = spec.taint or _Taint(), spec.device_selector
        taint = f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"
        picks = chosen or _TaintSelector()
        rule = TaintRule(meta.name or "", taint, chosen is not None, picks.driver, picks.pool, picks.device)
        return cls(rule, meta.resource_version or "")
