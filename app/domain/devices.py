"""Extended resources served by DRA devices (KEP-5004): which DeviceClass serves a name, which
devices a node has of it, and how many of them claims hold.

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
* capacity: the node's devices every selector of the class matches (``device_cel``);
  allocatable: of them, all but the free ones a NoSchedule or NoExecute taint repels (the claim
  the scheduler makes for an extended resource request tolerates no taint);
  allocated: those devices named in claims' allocation results (admin access left out);
  the node's pods' requests of the name count as requested, as for any extended resource.
* Partitioned devices (``consumesCounters``, ``app.domain.counters``): of the free ones, as many
  count as allocatable as fit the counters the pool's held devices leave, together.
* A device several claims may share (``allowMultipleAllocations``) is not counted as the
  scheduler counts it here: the class's numbers on that node are unknown, and so are they when a
  selector cannot be evaluated (the expression is shown), never guessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal

from app.domain.counters import Consumes, Counter, TooMany, most_at_once
from app.domain.device_cel import Device, Unknown
from app.domain.fit import Term
from app.domain.names import DEVICE_CLASS_PREFIX
from app.domain.selector_answers import Answers

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
    shared: bool = False  # may be allocated to several claims at once (not modelled)
    reach: Reach | None = None  # its own nodes (perDeviceNodeSelection); None: its slice's
    consumes: tuple[tuple[Counter, Decimal], ...] = ()  # ((counter set, counter), amount)

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


@dataclass(frozen=True, slots=True)
class DraUsage:
    """One DRA-served extended resource on one node."""

    capacity: int = 0  # devices the class matches
    allocated: int = 0  # of those, held by claims
    unknown: str = ""  # why the numbers cannot be given (a selector, a shared device)
    tainted: int = 0  # of those not held, the ones a NoSchedule or NoExecute taint keeps free
    alias_of: str = ""  # the same devices as this name's (a class's implicit name for them)
    aliases: tuple[str, ...] = ()  # other names of the same devices
    room: int | None = None  # partitioned devices: how many more fit the shared counters at once

    @property
    def allocatable(self) -> int:
        """The devices the scheduler may give a pod's extended resource request: the claim it
        makes for one carries no tolerations, so a tainted device is never among them; of
        partitioned devices, those held and as many more as the counters left allow."""
        if self.room is not None:
            return self.allocated + self.room
        return self.capacity - self.tainted

    @property
    def free(self) -> int:
        return self.allocatable - self.allocated


Held = frozenset[tuple[str, str, str]]  # (driver, pool, device) allocated by some claim


Where = tuple[str, Mapping[str, str]]  # a node's name and labels


def class_usage(
    cls: ClassFacts, slices: Iterable[SliceFacts], held: Held, answers: Answers, where: Where | None = None
) -> DraUsage:
    """The devices a class matches in the given slices (those that reach the node ``where``, if
    given; ``answers``: the runtime's selector answers), and how many of them claims hold."""
    capacity = allocated = tainted = 0
    slices = list(slices)
    partitioned: list[Consumes] = []  # the free, untainted matching devices that consume counters
    for s in slices:
        for d in s.devices if where is None else s.reaching(*where):
            try:
                if not answers.matches(cls.expressions, d.device):
                    continue
            except Unknown as exc:
                return DraUsage(
                    unknown=f"DeviceClass {cls.name}: selector {exc.expression[:120]!r} {exc.why}"
                )
            if d.shared:
                return DraUsage(
                    unknown=f"device {d.name} of {s.driver} may be allocated to several claims (not modelled)"
                )
            capacity += 1
            if (s.driver, s.pool, d.name) in held:
                allocated += 1
            else:
                tainted += d.repels
                if d.consumes and not d.repels:
                    partitioned.append(_pooled(s, d.consumes))
    if not partitioned:
        return DraUsage(capacity, allocated, tainted=tainted)
    unpartitioned = capacity - allocated - tainted - len(partitioned)
    try:
        room = most_at_once(partitioned, _counters_left(slices, held))
    except TooMany:
        return DraUsage(unknown=f"DeviceClass {cls.name}: too many partitioned devices to count")
    return DraUsage(capacity, allocated, tainted=tainted, room=unpartitioned + room)


def _pooled(s: SliceFacts, counters: Iterable[tuple[Counter, Decimal]]) -> dict[Counter, Decimal]:
    """Counter sets are named within their pool: the set's name qualified by driver and pool."""
    return {(f"{s.driver}/{s.pool}/{cs}", c): v for (cs, c), v in counters}


def _counters_left(slices: list[SliceFacts], held: Held) -> dict[Counter, Decimal]:
    """What the pools' counter sets have left once the devices claims hold (through any class)
    have consumed theirs."""
    left: dict[Counter, Decimal] = {}
    for s in slices:
        left.update(_pooled(s, s.counters))
    for s in slices:
        for d in s.devices:
            if d.consumes and (s.driver, s.pool, d.name) in held:
                for k, v in _pooled(s, d.consumes).items():
                    if k in left:
                        left[k] -= v
    return left


def node_usage(
    node_slices: Iterable[SliceFacts],
    served: Serving,
    held: Held,
    answers: Answers,
    where: Where | None = None,
) -> dict[str, DraUsage]:
    """Per extended resource name served by a class: the usage on one node, from the slices of
    complete pools that reach it (``where``: the node; None: every device given counts)."""
    slices = list(node_slices)
    out: dict[str, DraUsage] = {}
    by_class: dict[str, DraUsage] = {}  # each class's devices counted once, whatever its names
    aliases: dict[str, list[str]] = {}
    for alias, primary in served.aliases.items():
        aliases.setdefault(primary, []).append(alias)
    for name, cls in served.by_name.items():
        usage = by_class.get(cls.name) or by_class.setdefault(
            cls.name, class_usage(cls, slices, held, answers, where)
        )
        if usage.unknown or usage.capacity:
            out[name] = replace(
                usage, alias_of=served.aliases.get(name, ""), aliases=tuple(sorted(aliases.get(name, ())))
            )
    return out


@dataclass(frozen=True)
class OnNode:
    """The DRA-served names on one node, once its status has had its say."""

    served: Mapping[str, DraUsage]  # DRA serves these here, their numbers known
    both: frozenset[str]  # advertised in the node's allocatable too: the status serves them
    unknown: Mapping[str, str]  # DRA serves these here, their numbers not decidable: why


def on_node(allocatable: Mapping[str, int], dra: Mapping[str, DraUsage]) -> OnNode:
    """Where a node's allocatable advertises a name, the scheduler counts it there (a device
    plugin's) and DRA does not serve it; elsewhere DRA devices do. The one rule for the overview
    row and the fit model."""
    served, both, unknown = {}, set(), {}
    for name, usage in dra.items():
        if name in allocatable:
            both.add(name)
        elif usage.unknown:
            unknown[name] = usage.unknown
        else:
            served[name] = usage
    return OnNode(served, frozenset(both), unknown)


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
