"""The Store: what is known of the cluster, and the aggregates kept current as objects come and go.

No I/O here: the watch loops in ``app.kube.api.cache`` feed projected views in.
Per node it keeps the sum of the counted pods' requests and limits, the pods
with extended requests, and the overview row (rebuilt lazily, only for nodes an
event touched), with cluster totals moved by the difference. A relist builds a
new index page by page, off to the side, and swaps it in under the lock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any

from app.domain.fit import HostPort, NodeFacts, PodShape
from app.domain.numbers import bounded_int
from app.domain.overview import NodeRow
from app.domain.pod_affinity import InterPod, Labels, PodTerms, decide
from app.domain.queues import Node, QueuesReport
from app.domain.selector_answers import Answers
from app.domain.totals import Totals
from app.kube.state.devices import Devices
from app.kube.state.fit_facts import FitFacts
from app.kube.state.gpu_hours import GpuHours
from app.kube.state.objects import Objects
from app.kube.state.pod_index import PodIndex, repels
from app.kube.state.queues import QUEUE_KINDS, Queues
from app.kube.state.rows import Rows
from app.kube.wire.projections import NodeView, PodView, QuotaView


class Store:
    """Nodes, pods, quotas and DRA objects with their kept aggregates; safe to read from many
    threads. Made of parts that each own their state: ``objects`` (what is held, the one lock,
    and the lookups pages make), ``devices`` (the DRA objects), the overview rows and the fit
    facts; the writes here take the lock and tell each part what moved."""

    def __init__(self, answers: Answers | None = None, team_label: str = "") -> None:
        """``answers``: the runtime's selector answers, its evaluator chosen by a setting
        (default: evaluated in this process); ``team_label``: the pod label GPU-hours are charged
        to a team by."""
        self.objects = Objects()
        self._lock = self.objects.lock
        self.gpu_hours = GpuHours(self._lock, team_label)  # GPU-seconds held, per account
        self.devices = Devices(self.objects, self._dra_moved, answers if answers is not None else Answers())
        self.gpu_hours.dra_shared = self.devices.gpu_shares
        self.queues = Queues(self._lock)  # Kueue's, where it is served
        self._rows = Rows()
        # What the fit model reads per node; its version moves with anything placement depends on
        # (any counted pod's requests or host ports, a node's facts).
        self._fit = FitFacts()
        self.pending_version = 0  # bumped whenever an unschedulable or gated pod comes, changes or goes
        # bumped whenever a pod holding extended resources comes, goes, moves or changes owner
        # (adopted or orphaned): the workloads and idle lists are made from the holders
        self.holders_version = 0
        # what an event, a relist and an unreadable object do, per kind (app.kube.state.kinds); a DRA
        # kind not named here goes to the devices
        self._kinds: dict[str, tuple[Callable[..., None], Callable[[Any], None], Callable[[Any], object]]] = {
            "nodes": (self.put_node, self.replace_nodes, lambda key: self._drop_node(key[1])),
            "pods": (
                self.put_pod,
                self.replace_pods,
                lambda key: self._pod_changed(self.objects.index.drop(key), None),
            ),
            "quotas": (self.put_quota, self.replace_quotas, lambda key: self.objects.quotas.pop(key, None)),
            **{
                kind: (
                    partial(self.queues.put, kind),
                    partial(self.queues.replace, kind),
                    partial(self._queued, kind),
                )
                for kind in QUEUE_KINDS
            },
        }

    @property
    def rows_version(self) -> int:
        """Moves whenever an overview row changes: a key for memoised grids."""
        return self._rows.version

    # ---- reading: the overview rows and the fit model ---------------------------
    def _refresh_rows(self) -> None:
        o = self.objects
        self._rows.refresh(o.nodes, o.index.requested, self.devices.usage)

    def overview_rows(self) -> tuple[list[NodeRow], Totals]:
        """Every node's overview row, by name, and their totals."""
        with self._lock:
            self._refresh_rows()
            return self._rows.of(self.objects.names()), self._rows.totals()

    def overview_row(self, name: str) -> NodeRow | None:
        """One node's kept overview row (the node page shows the same numbers as the grid)."""
        with self._lock:
            self._refresh_rows()
            return self._rows.get(name)

    def overview_totals(self) -> Totals:
        """The cluster totals of every node's row, without listing the rows."""
        with self._lock:
            self._refresh_rows()
            return self._rows.totals()

    @property
    def fit_version(self) -> int:
        return self._fit.version

    @property
    def queues_version(self) -> int:
        """Moves with any Kueue object (app.kube.state.queues)."""
        return self.queues.version

    def queue_report(self) -> QueuesReport:
        """Kueue's queues beside the nodes (the Queues page and the metrics read the same one):
        made again when a Kueue object, or a node's allocatable or labels, moved."""

        def nodes() -> list[Node]:
            return [(n.labels, n.allocatable) for n in self.objects.node_list()]

        return self.queues.report(nodes, (self.rows_version, self.fit_version))

    def device_room(self, covered: Callable[[str], bool]) -> dict[str, int]:
        """Per node, how many devices a GPU exporter may report there at most: the capacity of
        the extended resources ``covered`` names, plus the DRA devices its slices publish."""
        published = self.devices.read(lambda index: index.device_counts()) if self.devices.index else {}
        with self._lock:
            return {
                name: sum(v for r, v in view.capacity.items() if covered(r)) + published.get(name, 0)
                for name, view in self.objects.nodes.items()
            }

    def node_facts(self) -> list[NodeFacts]:
        """Every node as the fit model sees it, by name; rebuilt only where something changed."""
        with self._lock:
            self._fit.refresh(self.objects.nodes, self.objects.index, self.devices.usage)
            return self._fit.of(self.objects.names())

    def inter_pod(self, shape: PodShape, namespace: str, labels: Labels, terms: PodTerms) -> InterPod | None:
        """Inter-pod affinity and topology spread decided for one pod over every node (None when
        neither it nor any placed pod has a term to weigh): the pods placed are all read when it
        has terms of its own, else only those with required anti-affinity."""
        with self._lock:  # the pods and nodes as they are; decided after the lock is let go
            index = self.objects.index
            if not terms and not index.node_repelling:
                return None
            if terms:
                pods = [p for p in index.pods.values() if p.counts]
            else:  # only placed pods' anti-affinity can matter: just those pods
                pods = [index.pods[k] for k in index.repelling]
            nodes = self.node_facts()
        return decide(shape, namespace, labels, terms, nodes, pods)

    def fit_changes(self, since: int | None) -> tuple[int, dict[str, NodeFacts | None] | None]:
        """The fit version now, and the facts of the nodes changed after version ``since`` (None:
        the node went away); None instead when the log does not reach back that far (a relist
        came in between, or too much changed): read ``node_facts`` then."""
        with self._lock:
            self._fit.refresh(self.objects.nodes, self.objects.index, self.devices.usage)
            return self._fit.version, self._fit.changes(since)

    # ---- applying changes (also used for read-your-writes) ---------------
    def apply_node(self, obj: Mapping[str, Any], deleted: bool = False) -> None:
        self.put_node(NodeView.from_json(obj), deleted)

    def put_node(self, view: NodeView, deleted: bool = False) -> None:
        with self._lock:
            current = self.objects.nodes.get(view.name)
            if deleted:
                self._drop_node(view.name)
            elif current is None or _rv_newer(view.resource_version, current.resource_version):
                self.objects.set_node(view)
                relabelled = (
                    current is not None
                    and current.labels != view.labels
                    and self.devices.index.relabelled(view.name)
                )
                if current is None or not current.same_row(view) or relabelled:
                    self._touch(view.name)

    def apply_pod(self, obj: Mapping[str, Any], deleted: bool = False) -> None:
        self.put_pod(PodView.from_json(obj), deleted)

    def put_pod(self, view: PodView, deleted: bool = False) -> None:
        with self._lock:
            index = self.objects.index
            if deleted:
                self._pod_changed(index.drop(view.key), None)
            else:
                self._pod_changed(index.put(view), view)

    def _pod_changed(self, old: PodView | None, new: PodView | None) -> None:
        """Mark what a pod's change moved (caller holds the lock)."""
        before = old.extended_share if old is not None else None
        after = new.extended_share if new is not None else None
        if before != after:  # most pod updates (status, phase) leave the overview as it was
            for share in (before, after):
                if share is not None:
                    self._rows.touch(share[0])
            self.gpu_hours.moved(old, new, self.objects.nodes)
        elif (old is not None and old.kai) or (
            new is not None and new.kai
        ):  # KAI's fractions ask no resource
            self.gpu_hours.moved(old, new, self.objects.nodes)
        if _holding(old) != _holding(new):
            self.holders_version += 1
        if (old is not None and (old.unschedulable is not None or old.gates)) or (
            new is not None and (new.unschedulable is not None or new.gates)
        ):
            self.pending_version += 1  # the unschedulable pods (and their messages) moved
        was, now = _placed(old), _placed(new)
        if was != now:  # what the pod takes from its node, for the fit model
            for placed in (was, now):
                if placed is not None:
                    self._fit.touch(placed[0])

    def put(self, kind: str, view: Any, deleted: bool = False) -> None:
        """A watch event's object of ``kind``: put, or deleted."""
        if kind in self._kinds:
            self._kinds[kind][0](view, deleted)
        else:
            self.devices.put(kind, view, deleted)

    def replace(self, kind: str, listed: Any) -> None:
        """What a list of ``kind`` brought (the pods as their index), swapped in whole."""
        if kind in self._kinds:
            self._kinds[kind][1](listed)
        else:
            self.devices.replace(kind, listed)

    def forget(self, kind: str, key: tuple[str, str]) -> None:
        """Drop an object by its (namespace, name), if held: one that can no longer be read."""
        if kind not in self._kinds:
            self.devices.forget(kind, key)
            return
        with self._lock:
            self._kinds[kind][2](key)

    def _queued(self, kind: str, key: tuple[str, str]) -> None:
        """Forget a Kueue object (the lock is held by ``forget``)."""
        self.queues.forget(kind, key)

    def _drop_node(self, name: str) -> None:
        """Remove a node, if held (caller holds the lock)."""
        if self.objects.drop_node(name):
            self._touch(name)

    def put_quota(self, view: QuotaView, deleted: bool = False) -> None:
        with self._lock:
            if deleted or not view.items:
                self.objects.quotas.pop(view.key, None)
            else:
                self.objects.quotas[view.key] = view

    def _touch(self, node: str) -> None:
        """The overview row and the fit facts of ``node`` have changed (caller holds the lock)."""
        self._rows.touch(node)
        self._fit.touch(node)

    def _dra_moved(self, nodes: Iterable[str]) -> None:
        for node in nodes:
            self._touch(node)

    # ---- relists: built off to the side, swapped in whole -----------------
    def replace_nodes(self, views: Iterable[NodeView]) -> None:
        nodes = {v.name: v for v in views}
        with self._lock:
            self._rows.touch_all(self.objects.nodes)  # rows of vanished nodes are dropped too
            self.objects.set_nodes(nodes)
            self._rows.touch_all(nodes)
            self._fit.all(nodes, forget=True)

    def replace_pods(self, index: PodIndex) -> None:
        with self._lock:
            self.objects.index = index
            self.gpu_hours.relisted(index.pods, self.objects.nodes)
            self._rows.touch_all(self.objects.nodes)
            self.pending_version += 1
            self.holders_version += 1
            self._fit.all(self.objects.nodes)

    # ---- the first list of pods: counted in as it arrives ------------------
    def start_counting(self) -> None:
        """The first list of pods begins (again): whatever an earlier, broken one brought in is
        dropped, and each page is then counted in as it arrives (``count_pods``), so pages show
        capacity at once and requested as it rises; ``counted`` ends it."""
        self.replace_pods(PodIndex())

    def count_pods(self, views: Iterable[PodView]) -> None:
        """A page of the first list of pods, counted in: the rows of the nodes they are on are
        made again (the fit model and the holders are made whole by ``counted``)."""
        with self._lock:
            index, nodes, waiting = self.objects.index, set(), False
            for view in views:
                index.put(view)
                if (share := view.extended_share) is not None:
                    nodes.add(share[0])
                waiting = waiting or view.unschedulable is not None or bool(view.gates)
            for node in nodes:
                self._rows.touch(node)
            if waiting:
                self.pending_version += 1

    def counted(self) -> None:
        """The first list of pods is complete: every aggregate is made again over the whole."""
        self.replace_pods(self.objects.index)

    def replace_quotas(self, views: Iterable[QuotaView]) -> None:
        quotas = {v.key: v for v in views if v.items}
        with self._lock:
            self.objects.quotas = quotas


def _holding(pod: PodView | None) -> tuple[object, ...] | None:
    """What the workloads and idle lists read of a pod that holds extended resources."""
    if pod is None or not pod.counts or not pod.extended_requests:
        return None
    return (pod.node_name, pod.owner, pod.created, pod.extended_requests)


def _placed(pod: PodView | None) -> tuple[str, Mapping[str, int], tuple[HostPort, ...], bool] | None:
    """What a pod takes from its node (node, requests, host ports, whether it may repel others),
    if it counts there."""
    if pod is None or not pod.counts:
        return None
    return (pod.node_name, pod.requests, pod.placement.host_ports, repels(pod))


def _rv_newer(new: str, old: str) -> bool:
    """resourceVersions are opaque; etcd-backed ones are integers, compare those."""
    n, o = bounded_int(new), bounded_int(old)
    return True if n is None or o is None else n >= o
