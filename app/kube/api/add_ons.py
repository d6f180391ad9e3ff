"""The add-ons a cluster may serve, or not, and may gain or lose while the dashboard runs: DRA's
resource.k8s.io/v1 and Kueue's kueue.x-k8s.io. Each group is asked for before its kinds are
watched; Kueue's is asked again while absent (a Kueue installed later is watched without a
restart) and forgotten when its kinds are no longer served (its CRDs deleted). A part of
``ClusterCache`` (app/kube/api/cache.py), whose state it reads and writes."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

import msgspec

from app.base import workers
from app.kube.api.errors import NotFound, refused, translate
from app.kube.api.queue_positions import INTERVAL as POSITIONS_INTERVAL
from app.kube.api.queue_positions import QueuePositions
from app.kube.api.raw import body, get
from app.kube.api.watch_wire import abort
from app.kube.state import kinds

if TYPE_CHECKING:
    from kubernetes import client

    from app.kube.api.contact import Contact
    from app.kube.api.freshness import Statuses
    from app.kube.api.listing import Requests
    from app.kube.state.store import Store

log = logging.getLogger(__name__)

DRA_KINDS = kinds.DRA
DRA_LISTED = kinds.DRA_LISTED  # watched only where resource.k8s.io/v1 lists them
KUEUE_KINDS = kinds.KUEUE
KUEUE_VERSIONS = ("v1beta2", "v1beta1")  # the first the API server serves is watched
KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_REDISCOVER = 30.0  # seconds between asks for Kueue's group while it is absent


DISCOVERY_BYTES = 1 << 20  # a group's resource list read at most


class _Resource(msgspec.Struct):
    name: str = ""


class _GroupList(msgspec.Struct):
    resources: list[_Resource] | None = None


GROUP_LIST = msgspec.json.Decoder(_GroupList)


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
    _generation: dict[str, int]  # per kind, moved when its watch is no longer wanted
    _positions_started: bool
    contact: Contact

    def _start_kind(self, kind: str) -> None:
        raise NotImplementedError

    def _discover_dra(self) -> None:
        """Watch the DRA kinds only where the API server serves resource.k8s.io/v1."""
        self.dra = self._discover("/apis/resource.k8s.io/v1/", DRA_KINDS)

    def _discover_kueue(self, after: float = 0.0) -> None:
        """Watch Kueue's kinds only where the API server serves kueue.x-k8s.io: v1beta2 (Kueue
        0.15+), else v1beta1 (older Kueue; the fields read are the same but a ClusterQueue's cohort,
        app/kube/wire/kueue.py). Without Kueue nothing about queues appears and nothing errs; the
        group is asked again every ``KUEUE_REDISCOVER`` seconds, so a Kueue installed later is
        watched without a restart (and one removed is forgotten: ``_kueue_gone``); ``after``:
        seconds to wait first."""
        if after:
            self._stop.wait(after)
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
        """A Kueue kind the API server no longer serves (its CRDs deleted): the group is gone, so
        every Kueue kind's objects are forgotten at once and its watches ended (a watch on a
        deleted kind may stay open until it times out); Kueue reads absent and is asked for
        again. Each forgotten watch's thread ends at its next turn (``watching``)."""
        with self._lock:
            if kind not in self._kueue_watched or self._stop.is_set():
                return  # forgotten already, with the rest of the group
            log.warning("%s is no longer served (%s not found): Kueue's objects forgotten", KUEUE_GROUP, kind)
            for each in self._kueue_watched:
                self._generation[each] = self._generation.get(each, 0) + 1
                self.status.drop(each)
                self.contact.forget(each)
                self.store.replace(each, [])
                if (resp := self.requests.open.get(each)) is not None:
                    abort(resp)
            self._kueue_watched.clear()
            self.kueue, self.kueue_version = "absent", ""
            self._threads.append(workers.start("kueue", lambda: self._discover_kueue(KUEUE_REDISCOVER)))

    def watching(self, kind: str, generation: int) -> bool:
        """Whether the watch of ``kind`` started at ``generation`` is still wanted."""
        return self._generation.get(kind, 0) == generation

    def _discover(self, group: str, kinds_served: tuple[str, ...], optional: bool = False) -> str:
        """ "served" once ``group`` answers (its kinds then watched), "absent" where it is not
        served, "forbidden" where the app may not read it; asked again while unanswered."""
        backoff = 1.0
        while not self._stop.is_set():
            try:
                listed = GROUP_LIST.decode(body(get(self.api, group, {}, (5, 10)), most=DISCOVERY_BYTES))
            except Exception as exc:  # noqa: BLE001 - absent, refused, or not answering (ask again)
                err = translate(exc)
                if isinstance(err, NotFound):
                    return "absent"
                if refused(err):
                    return "forbidden"
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 30.0)
                continue
            named = {r.name for r in listed.resources or ()}
            if optional and not set(kinds_served) <= named:  # a group being removed lists fewer
                return "absent"
            with self._lock:
                if self._stop.is_set():
                    return "unknown"
                for kind in kinds_served:  # watched before "served" is said (``counting`` reads both)
                    if kind in DRA_LISTED and kind not in named:  # newer than this API server
                        continue
                    self.status.add(kind, optional)
                    self._start_kind(kind)
                    if kind in KUEUE_KINDS:
                        self._kueue_watched.add(kind)
            return "served"
        return "unknown"
