"""The free a job can use (pure): "free 9" is arithmetic over every node; a job asks whether its
pods can start now. Per extended resource: the free on the nodes a pod asking for it may be
placed on (not cordoned, no NoSchedule or NoExecute taint it does not tolerate once admitted: a
NotReady or unreachable node carries one), each node left out named with why, the largest block
free on one node, and how many pods of a few sizes asking for that resource alone fit now, by the
fit model's rules (``app.domain.fit``: node selector aside, what kube-scheduler's
NodeUnschedulable, TaintToleration and NodeResourcesFit filters decide, the node's pod count
included).

GPU pools are tainted (``nvidia.com/gpu=present:NoSchedule``, ``sku=gpu:NoSchedule``) and the pods
asking for a GPU tolerate it, so the probe is not a plain pod: it carries what the
ExtendedResourceToleration admission plugin adds for the resource, and the tolerations every pod
that asks for it (running or waiting) carries alike (``shared_tolerations``); the page says which
it assumed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from app.domain.fit import (
    NOT_READY,
    UNREACHABLE,
    NodeFacts,
    PodShape,
    Toleration,
    admitted_tolerations,
    extended_resource_tolerations,
    how_many,
    untolerated,
)
from app.domain.gpu_sharing import GKE_STRATEGY, SHARED_SUFFIX, sharing

SIZES = (1, 2, 4, 8)  # pod sizes the strip says "fits now" for (those up to the largest node)
NAMED = 5  # excluded nodes named per reason, on hover (the rest counted)
DEFAULTS = admitted_tolerations(())  # every admitted pod has these: not worth saying


@dataclass(frozen=True)
class Room:
    resource: str
    free: int  # allocatable minus requested, summed over the nodes with some free
    schedulable: int  # of that, on nodes a plain pod may be placed on
    largest: int  # the most free on one such node (0: none)
    largest_node: str
    excluded: dict[str, list[str]] = field(default_factory=dict)  # why -> nodes with free left out
    excluded_count: dict[str, int] = field(default_factory=dict)  # why -> how many
    fits: tuple[tuple[int, int], ...] = ()  # (pod size, how many such pods fit now)
    assumed: tuple[Toleration, ...] = ()  # what the probe tolerates beyond the admission defaults


def shared_tolerations(
    pods: Iterable[tuple[Iterable[str], Iterable[Toleration]]],
) -> dict[str, tuple[Toleration, ...]]:
    """Per extended resource, the tolerations every pod asking for it carries (``pods``: each pod's
    extended request names and its tolerations), in the first such pod's order."""
    out: dict[str, tuple[Toleration, ...]] = {}
    for names, tolerations in pods:
        carried = tuple(tolerations)
        for name in set(names):
            have = out.get(name)
            out[name] = carried if have is None else tuple(t for t in have if t in carried)
    return out


def _why_excluded(node: NodeFacts, probe: PodShape) -> str:
    if node.unschedulable:
        return "cordoned"
    taint = untolerated(probe, node)
    if taint is None:
        return ""
    return "NotReady" if taint.key in (NOT_READY, UNREACHABLE) else f"tainted {taint}"


def _refuses_over_one(node: NodeFacts, resource: str) -> bool:
    device = resource.removesuffix(SHARED_SUFFIX)
    labels = node.labels
    if labels.get(f"{device}.sharing-strategy") != "mps" and GKE_STRATEGY not in labels:
        return False  # the labels that could say so are not there: skip reading the rest
    shared = sharing(labels, node.capacity, node.allocatable).get(resource)
    return shared is not None and shared.refuses_over_one


def room(
    facts: Iterable[NodeFacts],
    resources: Sequence[str],
    carried: Mapping[str, tuple[Toleration, ...]] | None = None,
    sizes: Sequence[int] = SIZES,
) -> dict[str, Room]:
    """Each of ``resources`` as a job can use it now, over ``facts`` (every node); ``carried``:
    per resource, the tolerations the pods asking for it share (``shared_tolerations``)."""
    nodes = list(facts)
    out = {}
    for resource in resources:
        assumed = extended_resource_tolerations([resource])
        assumed += tuple(
            t for t in (carried or {}).get(resource, ()) if t not in assumed and t not in DEFAULTS
        )
        tolerations = admitted_tolerations(assumed)
        probe = PodShape({resource: 1}, tolerations=tolerations)
        free = schedulable = largest = 0
        largest_node = ""
        excluded: dict[str, list[str]] = {}
        counts: dict[str, int] = {}
        usable: list[NodeFacts] = []
        for node in nodes:
            have = node.free(resource)
            if node.allocatable.get(resource, 0) <= 0 or have <= 0:
                continue
            free += have
            why = _why_excluded(node, probe)
            if why:
                counts[why] = counts.get(why, 0) + 1
                if len(named := excluded.setdefault(why, [])) < NAMED:
                    named.append(node.name)
                continue
            schedulable += have
            usable.append(node)
            if have > largest:
                largest, largest_node = have, node.name
        # under MPS and GKE's sharing a pod asking for more than one share is refused there
        one_share = {n.name for n in usable if _refuses_over_one(n, resource)}
        biggest = max((n.allocatable.get(resource, 0) for n in nodes), default=0)
        shapes = [
            (size, PodShape({resource: size}, tolerations=tolerations)) for size in sizes if size <= biggest
        ]
        fits = tuple(
            (size, sum(how_many(shape, node) for node in usable if size == 1 or node.name not in one_share))
            for size, shape in shapes
        )
        out[resource] = Room(
            resource, free, schedulable, largest, largest_node, excluded, counts, fits, assumed
        )
    return out
