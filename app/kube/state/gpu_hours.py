"""The store's GPU-seconds ledger (app.domain.gpu_ledger): told, under the store's lock, of every pod
that starts or stops holding GPUs (a bind, a completion, a deletion, a resize), with the time the
cache saw it; a relist closes the holds of the pods it no longer has. Read by the metrics."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Mapping

from app.domain import hami, kai
from app.domain.gpu_ledger import Account, Ledger, gpus_of
from app.domain.gpu_sharing import Sharing, gpu_memory, gpus, sharing
from app.kube.wire.projections import NodeView, PodView

MOST_NODES_KEPT = 20_000  # nodes whose shared resources are kept read
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"  # the LocalQueue a Kueue-managed pod was submitted to


PRODUCT_LABEL = "nvidia.com/gpu.product"  # GPU feature discovery's (-SHARED when shared)


def _model(view: NodeView | None) -> str:
    """The node's GPU model as GPU feature discovery labels it ("" when it does not)."""
    product = view.labels.get(PRODUCT_LABEL, "") if view is not None else ""
    return product.removesuffix("-SHARED")[:63]


class GpuHours:
    def __init__(self, lock: threading.RLock, team_label: str = "", clock: Callable[[], float] = time.time):
        self._lock = lock
        self.team_label = team_label
        self.clock = clock
        self.ledger = Ledger()
        self.since = clock()  # what this process counts from (a hold seen before it was not)
        self._seen_hami: tuple[str, list[hami.HamiShare]] = ("", [])  # the last allocation parsed
        self._sharing: dict[str, tuple[NodeView, Mapping[str, Sharing]]] = {}  # per node, by its object
        # the GPU names DRA devices several claims share serve on a node (the store gives it)
        self.dra_shared: Callable[[NodeView], Mapping[str, Sharing]] = lambda view: {}

    def moved(self, old: PodView | None, new: PodView | None, nodes: Mapping[str, NodeView]) -> None:
        """A pod's change (caller holds the lock): what it holds from now, if that moved."""
        pod = new if new is not None else old
        if pod is None:
            return
        self._held_now(pod if new is not None else None, pod.key, nodes, self.clock())

    def relisted(self, pods: Mapping[tuple[str, str], PodView], nodes: Mapping[str, NodeView]) -> None:
        """A relist's pods (caller holds the lock): the holds of pods gone close now."""
        now = self.clock()
        for key in self.ledger.holding():  # each held: still, or no longer (completed, gone)
            self._held_now(pods.get(key) if isinstance(key, tuple) else None, key, nodes, now)
        for pod in pods.values():
            if pod.extended_share is not None or pod.kai:
                self._held_now(pod, pod.key, nodes, now)

    def _held_now(self, pod: PodView | None, key: Hashable, nodes: Mapping[str, NodeView], at: float) -> None:
        """What ``pod`` holds from ``at`` (None: it is gone): its GPU requests, or KAI's fraction."""
        if pod is not None and pod.kai and pod.counts:
            self._hold(pod, pod.node_name, {}, nodes, at)
        elif pod is not None and (share := pod.extended_share) is not None:
            self._hold(pod, share[0], share[1], nodes, at)
        else:
            self.ledger.release(key, at)

    def _gpus(self, pod: PodView, asked: Mapping[str, int], view: NodeView | None) -> float:
        """What the pod holds in physical GPUs: KAI's fraction, HAMi's parts by what they keep of
        their GPUs, else shares (a device plugin's, or of GPUs DRA shares alike) and MIG instances
        by their fraction, whole GPUs as 1."""
        if pod.kai:  # KAI's fraction of a GPU (its GPU's memory from GPU feature discovery's label)
            whole = gpu_memory(view.labels) if view is not None else None
            ask = kai.asked(pod.kai)
            return (kai.held(ask, whole) or 0.0) if ask is not None else 0.0
        if pod.namespace == kai.RESERVATION_NAMESPACE and kai.GROUP in pod.labels:
            return 0.0  # KAI's reservation pod: its GPU is charged to the fractions given of it
        if pod.hami and pod.hami != self._seen_hami[0]:
            self._seen_hami = (pod.hami, hami.parse_allocated(pod.hami)[0])
        if pod.hami:
            register = view.annotations.get(hami.REGISTER, "") if view is not None else ""
            return hami.held(self._seen_hami[1], hami.parse_register(register)[0] if register else ())
        dra = self.dra_shared(view) if view is not None else {}
        return gpus_of(asked, {**self._shared(view), **dra} if dra else self._shared(view), gpus)

    def _shared(self, view: NodeView | None) -> Mapping[str, Sharing]:
        """The node's shared resources, read from its labels once per node object (kept while
        the node is unchanged: a node event makes a new object)."""
        if view is None:
            return {}
        kept = self._sharing.get(view.name)
        if kept is not None and kept[0] is view:
            return kept[1]
        if len(self._sharing) >= MOST_NODES_KEPT:
            self._sharing.clear()
        found = sharing(view.labels, view.capacity, view.allocatable)
        self._sharing[view.name] = (view, found)
        return found

    def _hold(
        self, pod: PodView, node: str, asked: Mapping[str, int], nodes: Mapping[str, NodeView], at: float
    ) -> None:
        view = nodes.get(node)
        gpus = self._gpus(pod, asked, view)
        if gpus <= 0:
            self.ledger.release(pod.key, at)
            return
        owner = pod.owner
        account = Account(
            pod.namespace,
            pod.labels.get(QUEUE_LABEL, "")[:63],
            owner.kind if owner is not None and owner.name else "",
            owner.name[:253] if owner is not None else "",
            pod.labels.get(self.team_label, "")[:63] if self.team_label else "",
            _model(view),
        )
        self.ledger.hold(pod.key, account, gpus, at)

    def busy(self, utilization: Callable[[Hashable], float | None]) -> None:
        """A usage read: each hold's time since the last one split into used and idle by its pod's
        mean utilization (app.domain.gpu_ledger.Ledger.busy)."""
        with self._lock:
            self.ledger.busy(utilization, self.clock())

    def used(self) -> tuple[dict[Account, float], dict[Account, float]]:
        with self._lock:
            return self.ledger.used()

    def held(self) -> dict[Account, float]:
        """GPU-seconds per account up to now."""
        with self._lock:
            return self.ledger.held(self.clock())
