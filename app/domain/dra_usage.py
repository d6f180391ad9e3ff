"""How many devices of a DeviceClass a node has for an extended resource, and how many of them
claims hold (the devices and which class serves a name: ``app.domain.devices``).

* capacity: the node's devices every selector of the class matches (``device_cel``);
  allocatable: of them, all but the free ones a NoSchedule or NoExecute taint repels (the claim
  the scheduler makes for an extended resource request tolerates no taint);
  allocated: those devices named in claims' allocation results (admin access left out);
  the node's pods' requests of the name count as requested, as for any extended resource.
* Partitioned devices (``consumesCounters``, ``app.domain.counters``): of the free ones, as many
  count as allocatable as fit the counters the pool's held devices leave, together.
* A device several claims may share (``allowMultipleAllocations``, ``app.domain.shares``) counts
  as the shares that fit it (each taking its capacities' default, as the claim made for an
  extended resource request does), its shares as held; one that limits its shares by no
  capacity, or that also consumes counters, makes the class's numbers on that node unknown, as
  does a selector that cannot be evaluated (the expression is shown): never guessed.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from decimal import Decimal

from app.domain.counters import Consumes, Counter, TooMany, most_at_once
from app.domain.device_cel import Unknown
from app.domain.devices import ClassFacts, Serving, SliceFacts
from app.domain.gpu_sharing import Sharing
from app.domain.selector_answers import Answers
from app.domain.shares import device_shares


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
    # when some device is shared (app.domain.shares): what each untainted device can still give,
    # most first (a free unshared one: 1); a pod asking for k takes one on each of k devices
    lefts: tuple[int, ...] | None = None
    shared_devices: int = 0  # when every device is one several claims share: how many there are

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


Held = AbstractSet[tuple[str, str, str]]  # (driver, pool, device) allocated by some claim


Where = tuple[str, Mapping[str, str]]  # a node's name and labels


Shares = Mapping[
    tuple[str, str, str], Collection[Mapping[str, Decimal]]
]  # a shared device's shares: what each took


def class_usage(
    cls: ClassFacts,
    slices: Iterable[SliceFacts],
    held: Held,
    answers: Answers,
    where: Where | None = None,
    shares: Shares | None = None,
) -> DraUsage:
    """The devices a class matches in the given slices (those that reach the node ``where``, if
    given; ``answers``: the runtime's selector answers), and how many of them claims hold. A
    shared device (``app.domain.shares``) counts as the shares that fit it, its shares as held."""
    capacity = allocated = tainted = 0  # of the devices only one claim may hold
    slices = list(slices)
    partitioned: list[Consumes] = []  # the free, untainted matching devices that consume counters
    shares_held = shares_tainted = 0  # of the shared devices: the shares held, the free ones repelled
    shared_left: list[int] = []  # the untainted shared devices: the shares each has left
    shared = shared_count = 0  # shares the shared devices hold or fit, tainted or not; the devices
    for s in slices:
        for d in s.devices if where is None else s.reaching(*where):
            try:
                if not answers.matches(cls.expressions, d.device):
                    continue
            except Unknown as exc:
                return DraUsage(
                    unknown=f"DeviceClass {cls.name}: selector {exc.expression[:120]!r} {exc.why}"
                )
            key = (s.driver, s.pool, d.name)
            if d.shared:
                if d.consumes:
                    return DraUsage(
                        unknown=f"device {d.name} of {s.driver} is shared and consumes counters "
                        "(not modelled)"
                    )
                found = device_shares(d.capacities, (shares or {}).get(key, ()))
                if found.total is None or found.left is None:
                    return DraUsage(
                        unknown=f"device {d.name} of {s.driver}: any number of claims may share it "
                        "(no capacity limits its shares)"
                    )
                shared += found.total
                shared_count += 1
                shares_held += found.shares
                if d.repels:
                    shares_tainted += found.left
                else:
                    shared_left.append(found.left)
                continue
            capacity += 1
            if key in held:
                allocated += 1
            else:
                tainted += d.repels
                if d.consumes and not d.repels:
                    partitioned.append(_pooled(s, d.consumes))
    if not partitioned and shared == 0:
        return DraUsage(capacity, allocated, tainted=tainted)
    plain_free = capacity - allocated - tainted - len(partitioned)
    try:
        room = most_at_once(partitioned, _counters_left(slices, held)) if partitioned else 0
    except TooMany:
        return DraUsage(unknown=f"DeviceClass {cls.name}: too many partitioned devices to count")
    return DraUsage(
        capacity + shared,
        allocated + shares_held,
        tainted=tainted + shares_tainted,
        room=plain_free + room + sum(shared_left),
        lefts=tuple(sorted(shared_left + [1] * (plain_free + room), reverse=True)) if shared else None,
        shared_devices=shared_count if capacity == 0 else 0,
    )


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
    shares: Shares | None = None,
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
            cls.name, class_usage(cls, slices, held, answers, where, shares)
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


def dra_sharing(served: Mapping[str, DraUsage]) -> dict[str, Sharing]:
    """The DRA-served names whose devices are all shared alike (consumable capacity, the same
    shares on each): their physical devices behind the shares, as a device plugin's are."""
    out = {}
    for name, d in served.items():
        if d.shared_devices and not d.alias_of and d.capacity % d.shared_devices == 0:
            replicas = d.capacity // d.shared_devices
            out[name] = Sharing(name, name, d.capacity, replicas, d.shared_devices, "DRA shares")
    return out
