"""The objects the Store holds (nodes, the pod index, quotas) and its one lock, with what pages
look up in them: every public reader here takes the lock; the Store's writes take it too, and
its other parts (``rows``, ``devices``) are called with it held."""

from __future__ import annotations

import threading

from app.domain import hami
from app.domain.accounting import Amounts
from app.domain.fit import Toleration
from app.domain.workloads import Holder
from app.kube.state.pod_index import PodIndex
from app.kube.state.sizes import CacheSize, estimate
from app.kube.wire.projections import NodeView, PodView, QuotaView


class Objects:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.nodes: dict[str, NodeView] = {}
        self.index = PodIndex()
        self.quotas: dict[tuple[str, str], QuotaView] = {}  # only quotas on extended resources
        self._order: list[str] | None = None  # node names, sorted; None after a node came or went

    # ---- kept by the Store's writes (the caller holds the lock) ----------------
    def names(self) -> list[str]:
        if self._order is None:
            self._order = sorted(self.nodes)
        return self._order

    def set_node(self, view: NodeView) -> None:
        if view.name not in self.nodes:
            self._order = None
        self.nodes[view.name] = view

    def drop_node(self, name: str) -> bool:
        """Whether a node was held and is now gone."""
        if self.nodes.pop(name, None) is None:
            return False
        self._order = None
        return True

    def set_nodes(self, nodes: dict[str, NodeView]) -> None:
        self.nodes, self._order = nodes, None

    # ---- looked up by pages ------------------------------------------------------
    def node_names(self) -> list[str]:
        """Every node's name, sorted: read, never modify."""
        with self.lock:
            return self.names()

    def node_list(self) -> list[NodeView]:
        with self.lock:
            return [self.nodes[name] for name in self.names()]

    def drifted_nodes(self) -> list[NodeView]:
        with self.lock:
            return sorted((n for n in self.nodes.values() if n.desired and n.drift), key=lambda n: n.name)

    def node(self, name: str) -> NodeView | None:
        with self.lock:
            return self.nodes.get(name)

    def pod(self, namespace: str, name: str) -> PodView | None:
        with self.lock:
            return self.index.pods.get((namespace, name))

    def pod_keys(self) -> list[tuple[str, str]]:
        """Every pod held, as (namespace, name), sorted."""
        with self.lock:
            return sorted(self.index.pods)

    def pod_nodes(self) -> dict[tuple[str, str], str]:
        """Each running pod's node (the pods that count on a node), keyed (namespace, name)."""
        with self.lock:
            return {k: p.node_name for k, p in self.index.pods.items() if p.counts}

    def declaring_features(self) -> int:
        """Nodes that declare features (NodeDeclaredFeatures): the scheduler may keep a pod that
        needs one off the others, which the fit model does not weigh."""
        with self.lock:
            return sum(1 for n in self.nodes.values() if n.declares_features)

    def wide_repelling(self) -> int:
        """Counted pods whose required anti-affinity spans a zone or wider: any node in their
        domain may refuse a pod they select (named with the advice, not weighed)."""
        with self.lock:
            return self.index.wide_repelling

    def requested_on(self, name: str) -> Amounts:
        with self.lock:
            return dict(self.index.requested.get(name, {}))

    def limits_on(self, name: str) -> Amounts:
        with self.lock:
            return dict(self.index.limits.get(name, {}))

    def shared_gpu_nodes(self) -> list[NodeView]:
        """The nodes whose GPUs HAMi registers or KAI's groups share, by name."""
        with self.lock:
            grouped = self.index.node_gpu_groups
            return [
                self.nodes[n]
                for n in self.names()
                if hami.REGISTER in self.nodes[n].annotations or grouped.get(n)
            ]

    def gpu_group_pods(self, node: str) -> list[PodView]:
        """The pods on ``node`` in a KAI GPU group: reservation pods and fraction pods."""
        with self.lock:
            index = self.index
            keys = index.node_gpu_groups.get(node, set())
            return sorted((index.pods[k] for k in keys if k in index.pods), key=lambda p: p.key)

    def pods_requesting_extended(self, node: str) -> list[PodView]:
        with self.lock:
            index = self.index
            keys = index.node_pods.get(node, set())
            return sorted((index.pods[k] for k in keys if k in index.pods), key=lambda p: p.key)

    def holders(self) -> list[Holder]:
        """Every counted pod with extended requests, as app.domain.workloads groups them."""
        with self.lock:
            return self.index.holders()

    def asking_tolerations(self) -> list[tuple[tuple[str, ...], tuple[Toleration, ...]]]:
        """Each kind of counted or unschedulable pod with extended requests: the names it asks for
        and its tolerations (what app.domain.room.shared_tolerations reads), pods alike given
        once (a workload's pods share their tolerations' tuple)."""
        with self.lock:
            index = self.index
            keys = [k for ks in index.node_pods.values() for k in ks]
            keys.extend(index.unschedulable)
            kinds: dict[tuple[int, frozenset[str]], tuple[tuple[str, ...], tuple[Toleration, ...]]] = {}
            for key in keys:
                pod = index.pods.get(key)
                if pod is None or not pod.extended_requests:
                    continue
                if pod.unschedulable is None and not pod.counts:
                    continue
                tolerations = pod.placement.tolerations
                kind = (id(tolerations), frozenset(pod.extended_requests))
                if kind not in kinds:
                    kinds[kind] = (tuple(pod.extended_requests), tolerations)
            return list(kinds.values())

    def quota_list(self) -> list[QuotaView]:
        with self.lock:
            return sorted(self.quotas.values(), key=lambda q: q.key)

    def unschedulable_pods(self) -> list[PodView]:
        with self.lock:
            index = self.index
            return sorted((index.pods[k] for k in index.unschedulable), key=lambda p: p.key)

    def gated_pods(self) -> list[PodView]:
        """Unbound pods whose scheduling gates are not all lifted, by namespace and name."""
        with self.lock:
            index = self.index
            return sorted((index.pods[k] for k in index.gated), key=lambda p: p.key)

    def unschedulable_count(self) -> int:
        with self.lock:
            return len(self.index.unschedulable)

    def pod_count(self) -> int:
        with self.lock:
            return len(self.index.pods)

    def counts(self) -> dict[str, int]:
        with self.lock:
            return {"nodes": len(self.nodes), "pods": len(self.index.pods), "quotas": len(self.quotas)}

    def size(self, sample: int = 200) -> CacheSize:
        """How much the cache holds: counts, and bytes estimated from a sample of each kind."""
        with self.lock:
            kinds = (list(self.nodes.values()), list(self.index.pods.values()), list(self.quotas.values()))
        return estimate(*kinds, sample=sample)
