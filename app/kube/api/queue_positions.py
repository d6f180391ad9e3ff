"""Where each Workload waiting for quota stands in its queues, from Kueue's visibility API
(visibility.kueue.x-k8s.io/v1beta2, an aggregated API Kueue's manager serves where its
VisibilityOnDemand feature is on, the default since Kueue 0.9). It is not watchable: while a
Workload waits it is asked every INTERVAL seconds, one request per ClusterQueue that has a
waiting Workload, each answer bounded; the answers go to the store (``Queues.read_positions``).

Where the API is not served (404 at its group) or the app may not ask it (401/403), nothing is
shown and it is asked again after ASK_AGAIN seconds; where it does not answer, the positions of
its last answer are kept and marked as such."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

import msgspec

from app.domain.queues import Position
from app.kube.api.errors import NotFound, refused, translate
from app.kube.api.paths import path
from app.kube.api.raw import body, get
from app.kube.state.queues import Queues
from app.kube.wire.kueue import PendingWorkloads

if TYPE_CHECKING:
    from kubernetes import client

log = logging.getLogger(__name__)

GROUP = "visibility.kueue.x-k8s.io/v1beta2"
INTERVAL = 10.0  # seconds between rounds while a Workload waits
ASK_AGAIN = 300.0  # seconds before asking an API that was absent or refused
MAX_QUEUES = 50  # ClusterQueues asked per round
LIMIT = 1000  # pending workloads read per ClusterQueue (Kueue's own default)
MOST_BYTES = 2 * 1024 * 1024  # of one answer (a pending workload is ~500 bytes)
TIMEOUT = (3.0, 5.0)
_DECODER = msgspec.json.Decoder(PendingWorkloads)


class QueuePositions:
    def __init__(self, api: client.ApiClient, queues: Queues) -> None:
        self.api = api
        self.queues = queues
        self._quiet_until = 0.0  # while absent or refused, not asked before this (monotonic)

    def round(self) -> None:
        """Ask once for every ClusterQueue that has a waiting Workload."""
        asked = sorted({w.cluster_queue for w in self.queues.waiting() if w.cluster_queue})[:MAX_QUEUES]
        if not asked:
            self.queues.read_positions({}, self.queues.positions_state)
            return
        if time.monotonic() < self._quiet_until:
            return
        found: dict[tuple[str, str], Position] = {}
        for name in asked:
            try:
                pending = path(GROUP, "clusterqueues", name, "pendingworkloads")
                doc = body(get(self.api, pending, {"limit": LIMIT}, TIMEOUT), MOST_BYTES)
                found.update(_DECODER.decode(doc).positions(LIMIT))
            except Exception as exc:  # noqa: BLE001 - every failure is one of the states below
                state = self._failed(exc)
                if state == "unknown-queue":
                    continue  # Kueue does not know this ClusterQueue (yet): the others still count
                self.queues.read_positions(None, state)
                return
        self.queues.read_positions(found, "served")

    def _failed(self, exc: Exception) -> str:
        err = translate(exc)
        if refused(err):
            log.warning("the app may not ask Kueue's visibility API: queue positions are not shown")
            self._quiet_until = time.monotonic() + ASK_AGAIN
            return "forbidden"
        if isinstance(err, NotFound):
            try:
                body(get(self.api, path(GROUP), {}, TIMEOUT), MOST_BYTES)
            except Exception as again:  # noqa: BLE001 - the group itself is not there, or not answering
                if isinstance(translate(again), NotFound):
                    self._quiet_until = time.monotonic() + ASK_AGAIN
                    return "absent"
                return "unanswered"
            return "unknown-queue"
        log.info("Kueue's visibility API did not answer: %s [%s]", err.message, err.detail)
        return "unanswered"
