"""The add-ons a cluster may serve, or not, and may gain or lose while the dashboard runs: DRA's
resource.k8s.io/v1 and Kueue's kueue.x-k8s.io. Each group is asked for before its kinds are
watched; Kueue's is asked again while absent (a Kueue installed later is watched without a
restart) and forgotten when its kinds are no longer served (its CRDs deleted). A part of
``ClusterCache`` (app/kube/api/cache.py), whose state it reads and writes."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from app import workers
from app.kube.api.errors import NotFound, refused, translate
from app.kube.api.queue_positions import INTERVAL as POSITIONS_INTERVAL
from app.kube.api.queue_positions import QueuePositions
from app.kube.api.raw import body, get
from app.kube.state import kinds

if TYPE_CHECKING:
    from kubernetes import client

    from app.kube.api.freshness import Statuses
    from app.kube.api.listing import Requests
    from app.kube.state.store import Store

log = logging.getLogger(__name__)

DRA_KINDS = kinds.DRA
KUEUE_KINDS = kinds.KUEUE
KUEUE_VERSIONS = ("v1beta2", "v1beta1")  # the first the API server serves is watched
KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_REDISCOVER = 30.0  # seconds between asks for Kueue's group while it is absent


class AddOns:
    """What ``ClusterCache`` knows of its add-ons: "unknown" until asked, then "served",
    "absent" (nothing shown, no error) or "forbidden" (the app may not read it: a note on the
    pages)."""

    api: client.ApiClient
    store: Store
    requests: Requests
    status: Statuses
    _lock: threading.Lock
    _stop: threading.Event
    _threads: list[threading.Thread]
    dra: str
    kueue: str
    kueue_version: str  # the version of it watched, once "served"
    _kueue_watched: set[str]  # its kinds whose watch runs
    _positions_started: bool

    def _start_kind(self, kind: str) -> None:
        raise NotImplementedError

    def _discover_dra(self) -> None:
        """Watch the DRA kinds only where the API server serves resource.k8s.io/v1."""
        self.dra = self._discover("/apis/resource.k8s.io/v1/", DRA_KINDS)

    def _discover_kueue(self) -> None:
        """Watch Kueue's kinds only where the API server serves kueue.x-k8s.io: v1beta2 (Kueue
        0.15+), else v1beta1 (older Kueue; the fields read are the same but a ClusterQueue's cohort,
        app/kube/wire/kueue.py). Without Kueue nothing about queues appears and nothing errs; the
        group is asked again every ``KUEUE_REDISCOVER`` seconds, so a Kueue installed later is
        watched without a restart (and one removed is forgotten: ``_kueue_gone``)."""
        while not self._stop.is_set():
            found = "absent"
            for version in KUEUE_VERSIONS:
                group = f"/apis/kueue.x-k8s.io/{version}/"
                self.requests.paths.update({kind: group + kind for kind in KUEUE_KINDS})
                found = self._discover(group, KUEUE_KINDS, optional=True)
                if found != "absent":
                    self.kueue_version = version if found == "served" else ""
                    break
            self.kueue = found
            if found != "absent":
                if found == "served" and not self._positions_started:
                    self._positions_started = True
                    positions = QueuePositions(self.api, self.store.queues)
                    with self._lock:
                        self._threads.append(
                            workers.every("kueue-positions", POSITIONS_INTERVAL, positions.round, self._stop)
                        )
                return
            self._stop.wait(KUEUE_REDISCOVER)

    def _kueue_gone(self, kind: str) -> None:
        """A Kueue kind the API server no longer serves (its CRDs deleted): its objects forgotten;
        once every kind is gone, Kueue reads absent and the group is asked for again."""
        log.warning("%s is no longer served: Kueue's %s forgotten", KUEUE_GROUP, kind)
        self.status.drop(kind)
        self.store.replace(kind, [])
        with self._lock:
            self._kueue_watched.discard(kind)
            if self._kueue_watched or self._stop.is_set():
                return
            self.kueue, self.kueue_version = "absent", ""
            self._threads.append(workers.start("kueue", self._discover_kueue))

    def _discover(self, group: str, kinds_served: tuple[str, ...], optional: bool = False) -> str:
        """ "served" once ``group`` answers (its kinds then watched), "absent" where it is not
        served, "forbidden" where the app may not read it; asked again while unanswered."""
        backoff = 1.0
        while not self._stop.is_set():
            try:
                body(get(self.api, group, {}, (5, 10)))
            except Exception as exc:  # noqa: BLE001 - absent, refused, or not answering (ask again)
                err = translate(exc)
                if isinstance(err, NotFound):
                    return "absent"
                if refused(err):
                    return "forbidden"
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 30.0)
                continue
            with self._lock:
                if self._stop.is_set():
                    return "unknown"
                for kind in kinds_served:  # watched before "served" is said (``counting`` reads both)
                    self.status.add(kind, optional)
                    self._start_kind(kind)
                    if kind in KUEUE_KINDS:
                        self._kueue_watched.add(kind)
            return "served"
        return "unknown"
