"""Extended resources served by DRA devices (KEP-5004): what the API publishes (classes, slices,
their devices), which DeviceClass serves a name, and which devices a node has.

* A DeviceClass with ``spec.extendedResourceName`` serves that name; every class also serves
  its implicit name ``deviceclass.resource.kubernetes.io/<class>``. When several classes give
  one name, the one created last serves it (two created in the same second: the first by name),
  as the scheduler picks; the others are listed as shadowed.
* A node's devices are those of the ResourceSlices in complete pools (the newest generation of
  a pool, with as many slices of it seen as ``resourceSliceCount`` says) that reach it: a slice
  for the node (``nodeName``), for every node (``allNodes``) or for the nodes its
  ``nodeSelector`` selects, or, with ``perDeviceNodeSelection``, each device by its own
  ``nodeName``, ``allNodes`` or ``nodeSelector``. A device several nodes reach counts on each of
  them, and once a claim holds it, as held on each (the scheduler gives it to one pod only).

* A DeviceTaintRule adds its taint to the devices its selector picks (``TaintRule``), as if
  their driver had published it.

How many of them a class counts and claims hold: ``app.domain.dra_usage``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal

from app.domain.counters import Counter
from app.domain.device_cel import Device, Unknown
from app.domain.fit import Term
from app.domain.names import DEVICE_CLASS_PREFIX
from app.domain.selector_answers import Answers
from app.domain.shares import Capacity

IMPLICIT_PREFIX = DEVICE_CLASS_PREFIX


@dataclass(frozen=True, slots=True)
class Reach:
    """The nodes a slice's (or a device's) devices are available to."""

    node: str = ""  # this node only
    all_nodes: bool = False
    terms: tuple[Term, ...] = ()  # a node selector: its terms ORed

    def reaches(self, name: str, labels: Mapping[str, str]) -> bool:
        if self.node:
            return self.node == name
        return self.all_nodes or any(t.matches(name, labels) for t in self.terms)


@dataclass(frozen=True, slots=True)
class DeviceFacts:
    name: str
    device: Device  # what selectors read
    taints: tuple[str, ...] = ()  # "key=value:Effect"
    shared: bool = False  # may be allocated to several claims at once (app.domain.shares)
    reach: Reach | None = None  # its own nodes (perDeviceNodeSelection); None: its slice's
    consumes: tuple[tuple[Counter, Decimal], ...] = ()  # ((counter set, counter), amount)
    capacities: tuple[Capacity, ...] = ()  # a shared device's: what each share may take
    rules: tuple[str, ...] = ()  # the DeviceTaintRules whose taints are among ``taints``

    @property
    def repels(self) -> bool:
        """A taint whose effect keeps the allocator from giving the device to a request that does
        not tolerate it (other effects, None among them, do not)."""
        return any(t.rpartition(":")[2] in ("NoSchedule", "NoExecute") for t in self.taints)


@dataclass(frozen=True, slots=True)
class SliceFacts:
    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    node: str  # "" for slices not bound to one node
    devices: tuple[DeviceFacts, ...] = ()
    reach: Reach | None = None  # for a slice not bound to one node: the nodes it reaches
    counters: tuple[tuple[Counter, Decimal], ...] = ()  # the counter sets it defines, flattened

    def reaching(self, name: str, labels: Mapping[str, str]) -> tuple[DeviceFacts, ...]:
        """Its devices available to node ``name`` (with ``labels``)."""
        if self.node:
            return self.devices if self.node == name else ()
        if self.reach is not None:
            return self.devices if self.reach.reaches(name, labels) else ()
        return tuple(d for d in self.devices if d.reach is not None and d.reach.reaches(name, labels))


@dataclass(frozen=True, slots=True)
class ClassFacts:
    name: str
    created: str  # RFC 3339
    extended_name: str = ""
    expressions: tuple[str, ...] = ()

    @property
    def implicit_name(self) -> str:
        return IMPLICIT_PREFIX + self.name


@dataclass(frozen=True)
class Serving:
    """Which class serves each extended resource name, and the classes a later one shadows."""

    by_name: Mapping[str, ClassFacts] = field(default_factory=dict)
    shadowed: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # a class's implicit name -> the extendedResourceName it also serves: one pool of devices
    # under two names, shown as one resource (the implicit name its alias)
    aliases: Mapping[str, str] = field(default_factory=dict)


def serving(classes: Iterable[ClassFacts]) -> Serving:
    by_name: dict[str, list[ClassFacts]] = {}
    for c in classes:
        by_name.setdefault(c.implicit_name, []).append(c)
        if c.extended_name:
            by_name.setdefault(c.extended_name, []).append(c)
    chosen, shadowed = {}, {}
    for name, found in by_name.items():
        # created last wins; among those created in the same second, the first by name
        found.sort(key=lambda c: c.name)
        found.sort(key=lambda c: c.created, reverse=True)
        chosen[name] = found[0]
        if len(found) > 1:
            shadowed[name] = tuple(c.name for c in found[1:])
    aliases = {
        c.implicit_name: c.extended_name
        for c in chosen.values()
        if c.extended_name and chosen.get(c.extended_name) is c and chosen.get(c.implicit_name) is c
    }
    return Serving(chosen, shadowed, aliases)


def complete(slices: Iterable[SliceFacts]) -> tuple[list[SliceFacts], list[tuple[str, str]]]:
    """The slices of complete pools (newest generation, every slice seen), and the (driver,
    pool) pairs left out as incomplete."""
    pools: dict[tuple[str, str], list[SliceFacts]] = {}
    for s in slices:
        pools.setdefault((s.driver, s.pool), []).append(s)
    kept, incomplete = [], []
    for key, found in sorted(pools.items()):
        newest = max(s.generation for s in found)
        current = [s for s in found if s.generation == newest]
        if len(current) == current[0].slice_count:
            kept.extend(current)
        else:
            incomplete.append(key)
    return kept, incomplete


def classes_matching(
    classes: Iterable[ClassFacts], device: Device, answers: Answers
) -> tuple[list[str], list[str]]:
    """The classes whose selectors match the device, and those that cannot be decided for it."""
    matched, unknown = [], []
    for c in classes:
        try:
            if answers.matches(c.expressions, device):
                matched.append(c.name)
        except Unknown:
            unknown.append(c.name)
    return matched, unknown


@dataclass(frozen=True, slots=True)
class TaintRule:
    """A DeviceTaintRule (KEP-5055, GA in 1.37): one taint on every device its selector picks, as
    if the driver had published it. A selector picks by driver, pool and device name, each when
    set (an empty selector: every device); a rule without a selector picks none."""

    name: str
    taint: str  # "key=value:Effect", as a device's own
    selects: bool = True  # it has a selector
    driver: str | None = None
    pool: str | None = None
    device: str | None = None

    def picks(self, driver: str, pool: str, device: str) -> bool:
        return (
            self.selects
            and self.driver in (None, driver)
            and self.pool in (None, pool)
            and self.device in (None, device)
        )


def tainted_by(s: SliceFacts, rules: Iterable[TaintRule]) -> SliceFacts:
    """The slice with each rule's taint added to the devices it picks (the rule named)."""
    rules = [r for r in rules if r.selects and r.driver in (None, s.driver) and r.pool in (None, s.pool)]
    if not rules:
        return s
    devices = []
    for d in s.devices:
        found = [r for r in rules if r.picks(s.driver, s.pool, d.name)]
        if found:
            d = replace(
                d,
                taints=d.taints + tuple(r.taint for r in found),
                rules=d.rules + tuple(r.name for r in found),
            )
        devices.append(d)
    return replace(s, devices=tuple(devices))
