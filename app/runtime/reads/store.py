"""Reads made from a runtime's store: one function per thing a page shows, each declaring the store
versions it depends on (``kept``) or made on every call where the store keeps it already."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from app.domain.gpu_sharing import Physical, physical
from app.domain.overview import Filters, Grid, build_grid, without_dra
from app.domain.queues import GatedPod, WaitingCounts, waiting_counts
from app.domain.room import Room, room, shared_tolerations
from app.domain.sick_devices import SickDevices, sick_devices
from app.domain.strip import Entry, strip, waiting
from app.domain.workloads import WorkloadRow, group
from app.kube.api.errors import KubeError
from app.kube.state.dra_rows import class_rows
from app.runtime.reads.kept import Handles, kept

T = TypeVar("T")

if TYPE_CHECKING:
    from app.domain.devices import SliceFacts
    from app.domain.diagnosis import ShapeIndex
    from app.domain.fit import NodeFacts, PodShape
    from app.domain.pod_affinity import InterPod, Labels, PodTerms
    from app.domain.queues import Position, QueuesReport, QuotaWait, Workload
    from app.domain.workloads_query import WorkloadsQuery
    from app.kube.state.devices import ClaimHolding
    from app.kube.state.dra_rows import ClassRow
    from app.kube.wire.dra import ClaimView
    from app.kube.wire.projections import NodeView, PodView, QuotaView


def summary(runtime: Handles, dra: bool) -> list[Entry]:
    """The strip (app.domain.strip) from the kept totals and the unschedulable pods, never every
    pod. ``dra``: the user may read DRA objects."""
    store = runtime.cluster.store
    asked = (pod.extended_requests for pod in store.objects.unschedulable_pods())
    return strip(store.overview_totals(), waiting(asked, store.devices.primaries()), dra)


@kept("rows_version", "pending_version", limit=4)
def known_names(runtime: Handles, dra: bool) -> list[str]:
    """The extended resource names a user may see: advertised, served by DRA devices (``dra``: if
    the user may read them), or asked for by a waiting pod (apart from the grids' memo, so that
    pending pods coming and going never crowd the grids out)."""
    return [s.resource for s in summary(runtime, dra)]


@kept("fit_version", "pending_version", limit=8)
def room_for(runtime: Handles, resources: tuple[str, ...]) -> dict[str, Room]:
    """What a job can use now of each of ``resources`` (app.domain.room), with the tolerations the
    pods asking for each carry alike, made again only when something placement depends on (or a
    waiting pod) moved."""
    store = runtime.cluster.store
    return room(store.node_facts(), list(resources), shared_tolerations(store.objects.asking_tolerations()))


@kept("rows_version", limit=1)
def physical_devices(runtime: Handles) -> dict[str, Physical]:
    """Per shared device (and each name its shares are advertised as), its physical count over
    the nodes (app.domain.gpu_sharing), made again only when a row changed."""
    rows = runtime.cluster.store.overview_rows()[0]
    if not any(row.sharing for row in rows):  # nothing to count
        return {}
    return physical([({r: u.allocatable for r, u in row.usage.items()}, row.sharing) for row in rows])


@kept("rows_version", "holders_version", limit=1)
def sick(runtime: Handles) -> list[SickDevices]:
    """Every device a device plugin reports unhealthy (app.domain.sick_devices), named where a pod
    on that node reports which."""
    store = runtime.cluster.store
    rows = store.overview_rows()[0]
    named: dict[tuple[str, str], list[str]] = {}
    for row in rows:
        if row.unhealthy_since:  # the pods of the nodes with some, only
            for pod in store.objects.pods_requesting_extended(row.name):
                for resource, device in pod.unhealthy_devices:
                    named.setdefault((row.name, resource), []).append(device)
    return sick_devices(rows, runtime.device_plugins.owns, named)


@kept("rows_version", limit=64)
def grid(runtime: Handles, filters: Filters, dra: bool) -> Grid:
    """The overview's grid for ``filters``; a user who may not read DRA objects (``dra``) gets it
    without the resources DRA devices serve, summed again over what is shown. With usage read,
    the resources it covers (GPUs) come first, on screen."""
    rows, totals = runtime.cluster.store.overview_rows()
    found = build_grid(rows, filters, totals) if dra else build_grid([without_dra(r) for r in rows], filters)
    if runtime.usage is not None:
        mappings = runtime.settings.mappings
        found.resources.sort(key=lambda r: not any(m.covers(r) for m in mappings))
    return found


@kept("rows_version", "holders_version", limit=8)
def workload_rows(runtime: Handles, by: str) -> list[WorkloadRow]:
    """Who holds the extended resources, grouped ``by`` workload or namespace."""
    store = runtime.cluster.store
    allocatable = {r: u.allocatable for r, u in store.overview_totals().by_resource.items()}
    return group(store.objects.holders(), allocatable, by)


@kept("rows_version", "holders_version", limit=64)
def workloads_chosen(runtime: Handles, query: WorkloadsQuery) -> list[WorkloadRow]:
    """The rows a query chooses, filtered and sorted once per query until the rows move."""
    return query.chosen(workload_rows(runtime, query.by))


# ---- reads of what the store keeps itself (made on every call: the store keeps them) -------
@dataclass(frozen=True)
class DeviceClasses:
    rows: list[ClassRow]
    incomplete: list[tuple[str, str]]  # (driver, pool) counted as incomplete
    unbound: list[SliceFacts]  # slices for several nodes


def claim(runtime: Handles, namespace: str, name: str) -> ClaimView | None:
    """A ResourceClaim as the cache holds it: the devices it holds and the shares it took."""
    return runtime.cluster.store.devices.read(lambda dra: dra.claims.get((namespace, name)))


def device_classes(runtime: Handles) -> DeviceClasses:
    """Every DeviceClass with what it serves and matches (the Devices page)."""
    return runtime.cluster.store.devices.read(
        lambda dra: DeviceClasses(class_rows(dra), list(dra.incomplete), list(dra.unbound))
    )


def queues(runtime: Handles) -> tuple[QueuesReport, bool]:
    """Kueue's queues over the nodes (the Queues page), and whether Kueue's objects are served."""
    store = runtime.cluster.store
    return store.queue_report(), store.queues.served()


def pod(runtime: Handles, namespace: str, name: str) -> PodView | None:
    return runtime.cluster.store.objects.pod(namespace, name)


def aliases(runtime: Handles) -> dict[str, tuple[str, ...]]:
    """Each DRA-served name shown as one resource -> its other names."""
    return runtime.cluster.store.devices.aliases()


def rows_version(runtime: Handles) -> tuple[int, int]:
    """What the overview's HTML is kept by (the store's identity and its rows' version)."""
    store = runtime.cluster.store
    return id(store), store.rows_version


def node_view(runtime: Handles, name: str) -> NodeView | None:
    return runtime.cluster.store.objects.node(name)


def node_labels(runtime: Handles) -> dict[str, Mapping[str, str]]:
    """Every node's labels, by name (what a bulk change's selector is matched against)."""
    return {n.name: n.labels for n in runtime.cluster.store.objects.node_list()}


def node_names(runtime: Handles) -> list[str]:
    return runtime.cluster.store.objects.node_names()


def drifted(runtime: Handles) -> list[str]:
    """The nodes whose capacity differs from what was set through the dashboard."""
    return [n.name for n in runtime.cluster.store.objects.drifted_nodes()]


def holders_on(runtime: Handles, node: str) -> list[PodView]:
    """The pods on ``node`` requesting extended resources."""
    return runtime.cluster.store.objects.pods_requesting_extended(node)


def unschedulable(runtime: Handles) -> list[PodView]:
    return runtime.cluster.store.objects.unschedulable_pods()


def gated(runtime: Handles) -> list[PodView]:
    return runtime.cluster.store.objects.gated_pods()


def waiting_for_quota(runtime: Handles) -> list[QuotaWait]:
    """Jobs Kueue holds for quota (no pod at all)."""
    return runtime.cluster.store.queues.waiting()


@kept("pending_version", "queues_version", limit=1)
def waiting_things(runtime: Handles) -> WaitingCounts:
    """What waits, each thing once: the navigation's badge and the Pending page's first line."""
    store = runtime.cluster.store
    gated = map(gated_pod, store.objects.gated_pods())
    quota = [q.workload for q in store.queues.waiting()]
    return waiting_counts(store.objects.unschedulable_count(), gated, quota)


def pending_count(runtime: Handles) -> int:
    """Everything that waits, each thing once, for the navigation badge (0 when there is no
    cluster to ask)."""
    try:
        return waiting_things(runtime).total
    except KubeError:
        return 0


def gated_pod(pod: PodView) -> GatedPod:
    """What ``waiting_counts`` reads of a gated pod."""
    return (pod.namespace, pod.name, (pod.owner.kind, pod.owner.name) if pod.owner else ("", ""), pod.gates)


def queues_served(runtime: Handles) -> bool:
    return runtime.cluster.store.queues.served()


def shaped(runtime: Handles, shape: PodShape, use: Callable[[ShapeIndex], T]) -> T:
    """What ``use`` takes from a pod shape's kept index, brought up to date with the store
    (app.domain.diagnosis.ShapeCache.read: a diagnosis, the headroom)."""
    return runtime.shapes.read(shape, runtime.cluster.store, use)


def neighbours(
    runtime: Handles, shape: PodShape, namespace: str, labels: Labels, terms: PodTerms
) -> tuple[InterPod | None, list[NodeFacts]]:
    """The pods around a planned shape that its affinity terms weigh (None: none matter), and
    every node's facts."""
    store = runtime.cluster.store
    return store.inter_pod(shape, namespace, labels, terms), store.node_facts()


@dataclass(frozen=True)
class Surroundings:
    """What the Pending and What-if pages say beside their cards: pods whose spread or affinity
    weighs on every placement, nodes declaring features, quotas, Kueue's queue positions."""

    wide: int  # pods repelling others from whole topologies
    featured: int  # nodes declaring features a pod may require
    quotas: list[QuotaView]
    positions: Mapping[tuple[str, str], Position]
    positions_state: str
    nodes: int


def surroundings(runtime: Handles) -> Surroundings:
    store = runtime.cluster.store
    o, q = store.objects, store.queues
    return Surroundings(
        o.wide_repelling(),
        o.declaring_features(),
        o.quota_list(),
        q.positions,
        q.positions_state,
        len(o.node_names()),
    )


def claims_holding(runtime: Handles, node: str, dra_class: str) -> list[ClaimHolding]:
    """The ResourceClaims holding ``dra_class``'s devices on ``node``."""
    return runtime.cluster.store.devices.claims_holding(node, dra_class)


def dra_class_for(runtime: Handles, resource: str) -> str | None:
    """The DeviceClass serving ``resource`` through DRA, if one does."""
    return runtime.cluster.store.devices.class_for(resource)


def admitted_for(runtime: Handles, namespace: str, owners: Iterable[tuple[str, str]]) -> Workload | None:
    """The admitted Kueue Workload standing for the first of ``owners`` in ``namespace``."""
    return runtime.cluster.store.queues.admitted_for(namespace, owners)
