"""One node as its page reads it: its view and row, what its pods request and limit, its pods,
its DRA devices, and its GPUs as HAMi registers them (one row per physical GPU, app.domain.hami)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.domain import hami
from app.domain.hami import GpuRow
from app.runtime.reads.kept import Handles

if TYPE_CHECKING:
    from app.domain.accounting import Amounts
    from app.domain.overview import NodeRow
    from app.kube.state.dra_index import DeviceRow
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
    dra = store.devices.read(lambda d: d.node_devices(name)) if devices else ([], set())
    requested = store.objects.requested_on(name)
    pods = store.objects.pods_requesting_extended(name)
    return NodeRead(view, row, requested, store.objects.limits_on(name), pods, dra, hami_gpus(view, pods))


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
