"""The summary strip (pure): per extended resource, the cluster's totals, the nodes advertising
it and the pods waiting for it, each waiting pod counted once per pool it asks of (a DeviceClass's
implicit name and its extended resource name are one pool)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from app.domain.gpu_sharing import whole_gpus
from app.domain.totals import Totals


@dataclass(frozen=True)
class Entry:
    resource: str
    allocatable: int
    requested: int
    nodes: int  # advertising it
    waiting: int  # unschedulable pods asking for it
    over: int  # over-committed, summed per node (the sums alone would hide it)
    nodes_over: int
    unavailable: int = 0  # capacity not allocatable (a device plugin's unhealthy devices)
    nodes_unavailable: int = 0


def waiting(requests: Iterable[Iterable[str]], primary: Mapping[str, str]) -> dict[str, int]:
    """Per resource, the waiting pods asking for it (``requests``: each pod's extended request
    names; ``primary``: an alias's pool name)."""
    out: dict[str, int] = {}
    for names in requests:
        for resource in {primary.get(r, r) for r in names}:
            out[resource] = out.get(resource, 0) + 1
    return out


def strip(totals: Totals, waiting: Mapping[str, int], dra: bool) -> list[Entry]:
    """Every resource known from the totals or a waiting pod, by name; ``dra``: the reader may read
    DRA objects (else the resources DRA devices serve are left out)."""
    out = []
    for resource in sorted(set(totals.by_resource) | set(waiting)):
        u = totals.by_resource.get(resource)
        if not dra and u is not None and u.allocated is not None:
            continue
        out.append(
            Entry(
                resource,
                u.allocatable if u else 0,
                u.requested if u else 0,
                totals.nodes_with.get(resource, 0),
                waiting.get(resource, 0),
                u.over if u else 0,
                totals.nodes_over.get(resource, 0),
                totals.unavailable.get(resource, 0),
                totals.nodes_unavailable.get(resource, 0),
            )
        )
    return out


def shown_first(entries: list[Entry], chosen: Iterable[str], room: int) -> tuple[list[Entry], list[Entry]]:
    """The entries a first screen shows (at most ``room``) and the rest, in the order they ask
    for attention: the resources the reader chose; then over-committed or unhealthy ones (the most
    first); then those pods wait for (the most waiting first); then those advertised or held; last
    those nothing advertises, holds or waits for. Ties by name."""
    picked = set(chosen)

    def rank(e: Entry) -> tuple[int, int, str]:
        if e.resource in picked:
            return 0, 0, e.resource
        if e.over or e.unavailable:
            return 1, -(e.over + e.unavailable) * 1_000_000 - e.waiting, e.resource
        if e.waiting:
            return 2, -e.waiting, e.resource
        if e.allocatable or e.requested or e.nodes:
            return 3, 0, e.resource
        return 4, 0, e.resource

    ordered = sorted(entries, key=rank)
    first, rest = ordered[:room], ordered[room:]
    # an admin's first question is what a GPU job can get now: each kind of whole GPUs (a device
    # plugin's, DRA's) keeps a place on the first screen, taking the last place that is neither
    # the reader's choice nor a GPU
    for gpu in [e for e in rest if whole_gpus(e.resource) and (e.allocatable or e.waiting)]:
        out = next(
            (e for e in reversed(first) if e.resource not in picked and not whole_gpus(e.resource)), None
        )
        if out is None:
            break
        first = [*(e for e in first if e is not out), gpu]
        rest = sorted([out, *(e for e in rest if e is not gpu)], key=rank)
    return first, rest
