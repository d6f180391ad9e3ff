"""Kueue's Workloads and LocalQueues as the cache holds them (watched only where Kueue is
served), and what app/domain/queues.py is given of them. ``version`` moves with any change, so a
page's read of the jobs waiting for quota is made again only then."""

from __future__ import annotations

import threading
from collections.abc import Iterable

from app.domain.queues import QuotaWait, waiting
from app.kube.wire.kueue import LocalQueueView, WorkloadView


class Queues:
    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self.workloads: dict[tuple[str, str], WorkloadView] = {}
        self.local_queues: dict[tuple[str, str], LocalQueueView] = {}
        self.version = 0

    def _table(self, kind: str) -> dict[tuple[str, str], object]:
        return self.workloads if kind == "workloads" else self.local_queues  # type: ignore[return-value]

    def put(self, kind: str, view: WorkloadView | LocalQueueView, deleted: bool = False) -> None:
        with self._lock:
            table = self._table(kind)
            if deleted:
                table.pop(view.key, None)
            else:
                table[view.key] = view
            self.version += 1

    def replace(self, kind: str, views: Iterable[WorkloadView | LocalQueueView]) -> None:
        with self._lock:
            table = self._table(kind)
            table.clear()
            table.update((v.key, v) for v in views)
            self.version += 1

    def forget(self, kind: str, key: tuple[str, str]) -> None:
        with self._lock:
            if self._table(kind).pop(key, None) is not None:
                self.version += 1

    def waiting(self) -> list[QuotaWait]:
        """Each Workload waiting for its queue's quota, what it lacks and who holds that quota."""
        with self._lock:
            workloads = [v.workload for v in self.workloads.values()]
            cluster_queue_of = {k: q.cluster_queue for k, q in self.local_queues.items()}
        return waiting(workloads, cluster_queue_of)

    def waiting_count(self) -> int:
        with self._lock:
            return sum(1 for v in self.workloads.values() if v.workload.waiting_for_quota)
