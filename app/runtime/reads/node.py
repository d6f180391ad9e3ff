"""One node as its page reads it: its view and row, what its pods request and limit, its pods,
its DRA devices, and its GPUs as HAMi registers them (one row per physical GPU, app.domain.hami)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.domain import hami, kai
from app.domain.gpu_sharing import gpu_memory
from app.domain.hami import GpuRow
from app.domain.shares import DeviceShares
from app.kube.state.dra_rows import SharedRow, node_devices, shared_rows
from app.runtime.reads.kept import Handles

if TYPE_CHECKING:
    from app.domain.accounting import Amounts
    from app.domain.overview import NodeRow
    from app.kube.state.dra_rows import DeviceRow
    from app.kube.wire.projections import NodeView, PodView


@dataclass(frozen=True)
class NodeRead:
    node: NodeView
    row: NodeRow
    requested: Amounts
    limits: Amounts
    pods: list[PodView]
    devices: tuple[list[DeviceRow], set[str]]
    hami: HamiGpus | None = None  # None: HAMi registers no GPU here
    kai: list[kai.Group] = field(default_factory=list)  # the GPUs KAI shares here, a group each


@dataclass(frozen=True)
class HamiGpus:
    """A node's GPUs as HAMi registers them, one row per physical GPU with its pods."""

    rows: list[GpuRow]
    problem: str  # what of the node's register could not be read ("")
    unread: list[str]  # a pod's allocation that could not be read: "namespace/name: why"


def node(runtime: Handles, name: str, devices: bool) -> NodeRead | None:
    """One node as its page shows it (None when it is not there); ``devices``: the user may read
    its DRA devices."""
    store = runtime.cluster.store
    view, row = store.objects.node(name), store.overview_row(name)
    if view is None or row is None:  # never there, or gone since it was read a moment ago
        return None
    dra = store.devices.read(lambda d: node_devices(d, name)) if devices else ([], set())
    requested = store.objects.requested_on(name)
    pods = store.objects.pods_requesting_extended(name)
    groups = kai_groups(view, store.objects.gpu_group_pods(name))
    return NodeRead(
        view, row, requested, store.objects.limits_on(name), pods, dra, hami_gpus(view, pods), groups
    )


def hami_gpus(node: NodeView, pods: list[PodView]) -> HamiGpus | None:
    """The node's GPUs as HAMi registers them, with the parts its scheduler gave the pods there."""
    register = node.annotations.get(hami.REGISTER)
    if register is None:
        return None
    gpus, problem = hami.parse_register(register)
    given, unread = [], []
    for pod in pods:
        if pod.hami and pod.counts:
            shares, why = hami.parse_allocated(pod.hami)
            given.append((f"{pod.namespace}/{pod.name}", shares))
            if why:
                unread.append(f"{pod.namespace}/{pod.name}: {why}")
    cordon = hami.cordoned(node.annotations.get(hami.CORDON, ""))
    return HamiGpus(hami.rows(node.name, gpus, cordon, given), problem, unread)


def kai_groups(node: NodeView, pods: list[PodView]) -> list[kai.Group]:
    """The node's GPUs KAI shares: each group's reservation pod and fraction pods."""
    if not pods:
        return []
    found = (
        kai.KaiPod(f"{p.namespace}/{p.name}", p.namespace, p.labels, kai.asked(p.kai))
        for p in pods
        if p.counts
    )
    return kai.groups(node.name, found, gpu_memory(node.labels))


@dataclass(frozen=True)
class SharedGpus:
    """Every physical GPU HAMi or KAI shares, over the nodes (the Devices page)."""

    hami: list[GpuRow]
    kai: list[kai.Group]
    problems: list[str]  # a node's register or a pod's parts that could not all be read


def shared_gpus(runtime: Handles) -> SharedGpus:
    """One row per physical GPU HAMi or KAI shares, node by node (nodes without either: none)."""
    objects = runtime.cluster.store.objects
    rows: list[GpuRow] = []
    groups: list[kai.Group] = []
    problems: list[str] = []
    for view in objects.shared_gpu_nodes():
        found = hami_gpus(view, objects.pods_requesting_extended(view.name))
        if found is not None:
            rows += found.rows
            problems += [
                f"{view.name}: {p}" for p in ([found.problem] if found.problem else []) + found.unread
            ]
        groups += kai_groups(view, objects.gpu_group_pods(view.name))
    return SharedGpus(rows, groups, problems)


def shared_devices(runtime: Handles, node: str, dra_class: str) -> list[tuple[str, DeviceShares, int]]:
    """The devices of ``dra_class`` on ``node`` several claims may share: each with its shares and
    the claims holding them (Pending's words for a pod waiting for them)."""
    rows, _ = runtime.cluster.store.devices.read(lambda d: node_devices(d, node))
    return [
        (r.device.name, r.shares, len(r.claims))
        for r in rows
        if r.shares is not None and dra_class in r.classes
    ]


def shared_dra(runtime: Handles) -> tuple[list[SharedRow], int]:
    """The devices DRA lets several claims share, cluster-wide: the fewest shares left first (at
    most ``SHARED_SHOWN``), and how many there are."""
    return runtime.cluster.store.devices.read(shared_rows)
