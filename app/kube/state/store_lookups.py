"""What pages look up in the Store, each under its lock: one node or pod, the drifted nodes, a
node's requests and limits, the pods requesting extended resources, the holders, the quotas,
the unschedulable pods, and the cache's size. A part of ``app.kube.state.store.Store``."""

from __future__ import annotations

import threading

from app.domain.accounting import Amounts
from app.domain.workloads import Holder
from app.kube.state.pod_index import PodIndex
from app.kube.state.sizes import CacheSize, estimate
from app.kube.wire.projections import NodeView, PodView, QuotaView


class Lookups:
    """Needs the Store's lock, nodes, pod index and quotas."""

    _lock: threading.RLock
    nodes: dict[str, NodeView]
    _index: PodIndex
    quotas: dict[tuple[str, str], QuotaView]

    def drifted_nodes(self) -> list[NodeView]:
        with self._lock:
            return sorted((n for n in self.nodes.values() if n.desired and n.drift), key=lambda n: n.name)

    def node(self, name: str) -> NodeView | None:
        with self._lock:
            return self.nodes.get(name)

    def pod(self, namespace: str, name: str) -> PodView | None:
        with self._lock:
            return self._index.pods.get((namespace, name))

    def pod_nodes(self) -> dict[tuple[str, str], str]:
        """Each running pod's node (the pods that count on a node), keyed (namespace, name)."""
        with self._lock:
            return {k: p.node_name for k, p in self._index.pods.items() if p.counts}

    def declaring_features(self) -> int:
        """Nodes that declare features (NodeDeclaredFeatures): the scheduler may keep a pod that
        needs one off the others, which the fit model does not weigh."""
        with self._lock:
            return sum(1 for n in self.nodes.values() if n.declares_features)

    def wide_repelling(self) -> int:
        """Counted pods whose required anti-affinity spans a zone or wider: any node in their
        domain may refuse a pod they select (named with the advice, not weighed)."""
        with self._lock:
            return self._index.wide_repelling

    def requested_on(self, name: str) -> Amounts:
        with self._lock:
            return dict(self._index.requested.get(name, {}))

    def limits_on(self, name: str) -> Amounts:
        with self._lock:
            return dict(self._index.limits.get(name, {}))

    def pods_requesting_extended(self, node: str) -> list[PodView]:
        with self._lock:
            index = self._index
            keys = index.node_pods.get(node, set())
            return sorted((index.pods[k] for k in keys if k in index.pods), key=lambda p: p.key)

    def holders(self) -> list[Holder]:
        """Every counted pod with extended requests, as app.domain.workloads groups them."""
        with self._lock:
            return self._index.holders()

    def quota_list(self) -> list[QuotaView]:
        with self._lock:
            return sorted(self.quotas.values(), key=lambda q: q.key)

    def unschedulable_pods(self) -> list[PodView]:
        with self._lock:
            index = self._index
            return sorted((index.pods[k] for k in index.unschedulable), key=lambda p: p.key)

    def counts(self) -> dict[str, int]:
        with self._lock:
            return {"nodes": len(self.nodes), "pods": len(self._index.pods), "quotas": len(self.quotas)}

    def size(self, sample: int = 200) -> CacheSize:
        """How much the cache holds: counts, and bytes estimated from a sample of each kind."""
        with self._lock:
            kinds = (list(self.nodes.values()), list(self._index.pods.values()), list(self.quotas.values()))
        return estimate(*kinds, sample=sample)
