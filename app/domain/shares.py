"""Devices several claims share (DRA consumable capacity, KEP-5075: beta and on from 1.36).

A device with ``allowMultipleAllocations: true`` may be allocated to many claims at once; each
allocation is a share with its own ``shareID`` and the amounts it took of the device's
capacities (``consumedCapacity``). A share's request may ask an amount of a capacity; one that
asks none (as the claim the scheduler makes for a pod's extended resource request: it asks a
count of devices, nothing more) takes the capacity's ``requestPolicy.default``, or, without
one, all of it. A share fits while, for every capacity, what the device's shares took plus what
it takes stays within the capacity's value; a device that declares no capacity (or whose every
share takes nothing) has no limit. Several devices of one request are distinct devices: a pod
asking for ``k`` takes one share on each of ``k`` devices (kube-scheduler's allocator moves past a
device once it gave it to the request). Hand-written because it is the allocator's own rule
(``dynamic-resource-allocation/structured``: ``calculateConsumedCapacity``,
``CmpRequestOverCapacity``), a few lines of exact Decimal arithmetic.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True, slots=True)
class Capacity:
    """One capacity of a shareable device."""

    name: str
    value: Decimal
    default: Decimal | None = None  # requestPolicy.default: what a share asking for none takes

    @property
    def cost(self) -> Decimal:
        """What one share that asks for no amount takes of it."""
        return self.value if self.default is None else self.default


def left(capacities: Iterable[Capacity], taken: Mapping[str, Decimal]) -> int | None:
    """How many more shares asking for no amount fit the device, its shares having ``taken`` so
    much of each capacity; None: no limit (no capacity declared, or each share takes nothing)."""
    most: int | None = None
    for c in capacities:
        if c.cost <= 0:
            continue
        room = max(0, int((c.value - taken.get(c.name, Decimal(0))) // c.cost))
        most = room if most is None else min(most, room)
    return most


def taken(shares: Iterable[Mapping[str, Decimal]]) -> dict[str, Decimal]:
    """What a device's shares took together, per capacity."""
    out: dict[str, Decimal] = {}
    for share in shares:
        for name, amount in share.items():
            out[name] = out.get(name, Decimal(0)) + amount
    return out


def pods_fitting(lefts: Sequence[int], want: int) -> int:
    """How many pods each asking ``want`` devices fit devices with ``lefts`` shares left: each pod
    takes one share on each of ``want`` distinct devices, so ``k`` pods fit exactly when the
    devices can give ``k * want`` shares with at most ``k`` from any one (sum of min(left, k))."""
    if want <= 0:
        return 0
    lo, hi = 0, sum(lefts) // want
    while lo < hi:
        k = (lo + hi + 1) // 2
        if sum(min(n, k) for n in lefts) >= k * want:
            lo = k
        else:
            hi = k - 1
    return lo


@dataclass(frozen=True, slots=True)
class DeviceShares:
    """One shareable device as its page shows it: its shares, what they took of each capacity,
    and how many more shares asking for no amount fit."""

    capacities: tuple[Capacity, ...]
    shares: int  # allocations holding a share of it
    taken: Mapping[str, Decimal]
    total: int | None  # shares that fit it empty (None: no limit)
    left: int | None  # of them, still free (None: no limit)


def device_shares(capacities: Sequence[Capacity], shares: Collection[Mapping[str, Decimal]]) -> DeviceShares:
    took = taken(shares)
    return DeviceShares(tuple(capacities), len(shares), took, left(capacities, {}), left(capacities, took))


def waiting_words(node: str, want: int, devices: Sequence[tuple[str, DeviceShares, int]]) -> str:
    """Why a pod asking ``want`` of shared devices waits on ``node``, in the sharing's own words:
    each device (name, its shares, the claims holding them) with what it has left."""
    said = []
    for name, s, claims in devices:
        held = f"{s.shares} of {s.total} held" if s.total is not None else f"{s.shares} held"
        by = f" by {claims} claim{'s' if claims != 1 else ''}" if claims else ""
        if s.left == 0:
            said.append(f"no shares left on {name} ({held}{by})")
        else:
            said.append(f"{name} has {s.left} left ({held}{by})")
    usable = sum(1 for _, s, _ in devices if s.left is None or s.left > 0)
    return (
        f"Shared devices on {node}: a pod takes one share on each of the {want} devices it asks for, "
        f"and {usable} of {len(devices)} have a share left: " + "; ".join(said)
    )
