"""The DRA index's rows as pages show them: every DeviceClass with what it serves and matches
(the Devices page), and a node's devices, each with the claims holding it (the node page). A
device several claims may share is one row with its shares (``app.domain.shares``): the claims
holding them and what they took of its capacities."""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.devices import ClassFacts, DeviceFacts, SliceFacts, classes_matching
from app.domain.dra_usage import DraUsage, class_usage
from app.domain.shares import DeviceShares, device_shares
from app.kube.state.dra_index import DraIndex
from app.kube.wire.dra import ClaimView


@dataclass(frozen=True)
class ClassRow:
    facts: ClassFacts
    serves: tuple[str, ...]  # the names this class serves
    shadowed: tuple[tuple[str, str], ...]  # (name, the class that serves it instead)
    usage: DraUsage  # over every complete pool
    errors: tuple[str, ...]  # selectors that do not compile
    unbound: int = 0  # of its devices, those in slices for several nodes


@dataclass(frozen=True)
class DeviceRow:
    """One device of a node, as its page lists it."""

    slice: SliceFacts
    device: DeviceFacts
    claim: ClaimView | None  # the claim holding it, if allocated (a shared device: the first)
    classes: list[str]  # the DeviceClasses that match it
    undecided: list[str]  # and those whose selectors cannot be evaluated for it
    claims: tuple[ClaimView, ...] = ()  # every claim holding it (a shared device: one a share)
    shares: DeviceShares | None = None  # a shared device: its shares and what they took


def class_rows(index: DraIndex) -> list[ClassRow]:
    """Every DeviceClass: the names it serves, what it matches over all complete pools (of it,
    the devices not bound to one node), and what keeps it from serving a name (a class created
    later)."""
    served, slices = index.serving(), index.bound()
    unbound, held, shares, answers = index.unbound, index.held(), index.shares(), index.answers
    rows = []
    for view in sorted(index.classes.values(), key=lambda v: v.facts.name):
        c = view.facts
        names = [n for n in (c.extended_name, c.implicit_name) if n]
        rows.append(
            ClassRow(
                c,
                tuple(n for n in names if served.by_name.get(n) is c),
                tuple(
                    (n, served.by_name[n].name)
                    for n in names
                    if n in served.by_name and served.by_name[n] is not c
                ),
                class_usage(c, slices + unbound, held, answers, shares=shares),
                tuple(e for x in c.expressions if (e := answers.compile_error(x))),
                class_usage(c, unbound, held, answers, shares=shares).capacity if unbound else 0,
            )
        )
    return rows


def node_devices(index: DraIndex, node: str) -> tuple[list[DeviceRow], set[str]]:
    """The node's devices from its ResourceSlices (each with the claims holding it and the classes
    that match it), and the pools counted as incomplete (``driver/pool``)."""
    shares = index.shares()
    classes = [v.facts for v in index.classes.values()]
    rows = []
    for s in index.node_slices(node):
        for d in s.devices:
            key = (s.driver, s.pool, d.name)
            matched, undecided = classes_matching(classes, d.device, index.answers)
            claims = tuple(index.holders(key))
            found = device_shares(d.capacities, shares.get(key, ())) if d.shared else None
            rows.append(DeviceRow(s, d, claims[0] if claims else None, matched, undecided, claims, found))
    return rows, {f"{d}/{p}" for d, p in index.incomplete}


@dataclass(frozen=True)
class SharedRow:
    """A device several claims may share, cluster-wide (the Devices page)."""

    node: str
    driver: str
    device: str
    shares: DeviceShares
    claims: int  # the claims holding a share of it


SHARED_SHOWN = 100  # the shared devices the Devices page lists: those with the fewest shares left


def shared_rows(index: DraIndex, most: int = SHARED_SHOWN) -> tuple[list[SharedRow], int]:
    """The shared devices of complete pools bound to a node, those with the fewest shares left
    first (then by node and name), at most ``most`` of them; and how many there are."""
    found = []
    shares = index.shares()
    for s in index.bound():
        for d in s.devices:
            if d.shared:
                key = (s.driver, s.pool, d.name)
                held = device_shares(d.capacities, shares.get(key, ()))
                found.append(SharedRow(s.node, s.driver, d.name, held, len(index.holders(key))))
    found.sort(key=lambda r: (r.shares.left is None, r.shares.left or 0, r.node, r.device))
    return found[:most], len(found)
