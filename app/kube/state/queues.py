"""Kueue's Workloads and LocalQueues as the cache holds them (watched only where Kueue is
served), and what app/domain/queues.py is given of them. ``version`` moves with any change, so a
page's read of the jobs waiting for quota is made again only then."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from app.base.memo import VersionedMemo
from app.domain.queues import Node, Position, QueuesReport, QuotaWait, Workload, report, waiting
from app.kube.wire.kueue import LocalQueueView, WorkloadView

QUEUE_KINDS = ("workloads", "localqueues", "clusterqueues", "resourceflavors")


class Queues:
    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self.tables: dict[str, dict[tuple[str, str], Any]] = {kind: {} for kind in QUEUE_KINDS}
        self.version = 0
        # the last answers, at the version they were made at (a page asks every few seconds)
        self._read = VersionedMemo(4)  # at ``version``
        self._reports = VersionedMemo(2)  # at ``version`` and the nodes'
        # where each waiting Workload stands, from Kueue's visibility API (app/kube/api/queue_positions.py)
        self.positions: dict[tuple[str, str], Position] = {}
        # "unknown" until asked, then "served", "absent" (no visibility API), "forbidden" or
        # "unanswered" (the positions held are those of the last answer)
        self.positions_state = "unknown"

    @property
    def workloads(self) -> dict[tuple[str, str], WorkloadView]:
        return self.tables["workloads"]

    @property
    def local_queues(self) -> dict[tuple[str, str], LocalQueueView]:
        return self.tables["localqueues"]

    def put(self, kind: str, view: Any, deleted: bool = False) -> None:
        with self._lock:
            table = self.tables[kind]
            if deleted:
                table.pop(view.key, None)
            else:
                table[view.key] = view
            self.version += 1

    def replace(self, kind: str, views: Iterable[Any]) -> None:
        with self._lock:
            table = self.tables[kind]
            table.clear()
            table.update((v.key, v) for v in views)
            self.version += 1

    def forget(self, kind: str, key: tuple[str, str]) -> None:
        with self._lock:
            if self.tables[kind].pop(key, None) is not None:
                self.version += 1

    def waiting(self) -> list[QuotaWait]:
        """Each Workload waiting for its queue's quota, what it lacks and who holds that quota
        (made again only when a Kueue object moved)."""
        with self._lock:
            kept = self._read.at(self.version)
            if "waiting" in kept:
                was: list[QuotaWait] = kept["waiting"]
                return was
            workloads = [v.workload for v in self.workloads.values()]
            cluster_queue_of = {k: q.cluster_queue for k, q in self.local_queues.items()}
            cohort_of = {v.queue.name: v.queue.cohort for v in self.tables["clusterqueues"].values()}
        found: list[QuotaWait] = waiting(workloads, cluster_queue_of, cohort_of)
        kept["waiting"] = found
        return found

    def admitted_for(self, namespace: str, owners: Iterable[tuple[str, str]]) -> Workload | None:
        """The admitted Workload standing for the first of ``owners`` ((kind, name): a pod's Job,
        or the pod itself) that has one in ``namespace``, or None."""
        with self._lock:
            kept = self._read.at(self.version)
            if "admitted" not in kept:
                kept["admitted"] = {
                    (w.namespace, *w.owner): w
                    for v in self.workloads.values()
                    if (w := v.workload).holds_quota
                }
            found: dict[tuple[str, str, str], Workload] = kept["admitted"]
        for kind, name in owners:
            if (admitted := found.get((namespace, kind, name))) is not None:
                return admitted
        return None

    def read_positions(self, found: dict[tuple[str, str], Position] | None, state: str) -> None:
        """What the visibility API said (None: nothing new; the last answer is kept)."""
        with self._lock:
            if found is not None:
                self.positions = found
            self.positions_state = state

    def served(self) -> bool:
        """Whether any Kueue object is held (the Queues page and its navigation link show then)."""
        with self._lock:
            return any(self.tables.values())

    def report(self, nodes: Callable[[], Sequence[Node]], nodes_version: object) -> QueuesReport:
        """The Queues page's figures (app/domain/queues.py ``report``); ``nodes``: every node's
        labels and allocatable, asked only when ``nodes_version`` (the store's row and fit
        versions: allocatable and labels) or a Kueue object moved."""
        with self._lock:
            kept = self._reports.at((self.version, nodes_version))
            if "report" in kept:
                made: QueuesReport = kept["report"]
                return made
            queues = [v.queue for v in self.tables["clusterqueues"].values()]
            flavors = {v.name: v.node_labels for v in self.tables["resourceflavors"].values()}
            workloads = [v.workload for v in self.workloads.values()]
        reported: QueuesReport = report(queues, flavors, workloads, nodes())
        kept["report"] = reported
        return reported
