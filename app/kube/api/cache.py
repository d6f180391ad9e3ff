"""The I/O half of the shared cache: list, then watch, each kind; relist on 410.

Each kind is listed (in pages, or streamed: ``app.kube.api.listing``), then watched
from the list's resourceVersion; a watch that ends or breaks resumes from the last
resourceVersion seen (with exponential backoff after a failure), and only a 410
Gone leads to a relist. Responses are read raw (``app.kube.api.raw``) and decoded
with msgspec; each page is projected into slim views as it arrives and freed once
taken, and a watch event is projected and dropped the same way (``app.kube.wire.reading``). What is kept, and
the aggregates over it, live in ``app.kube.state.store``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

from kubernetes import client

from app.base import workers
from app.domain.accounting import resize_rule
from app.kube.api.add_ons import DRA_KINDS, DRA_LISTED, KUEUE_KINDS, AddOns
from app.kube.api.contact import Contact
from app.kube.api.errors import (
    AnswerTooLarge,
    BadRequest,
    Forbidden,
    Gone,
    Invalid,
    NotFound,
    refused,
    translate,
)
from app.kube.api.freshness import Freshness, Statuses, WatchCounters, missing_right
from app.kube.api.listing import STREAMED_SINCE, Requests
from app.kube.api.raw import HELD, Held
from app.kube.api.readiness import Readiness
from app.kube.api.store_lists import StoreLists
from app.kube.api.watch_wire import EVENT, Event, abort, raise_for, server_minor
from app.kube.state import kinds
from app.kube.state.store import Store
from app.kube.wire.reading import Reader, Unreadable, UnreadableLog, readers

log = logging.getLogger(__name__)

KINDS = kinds.CORE


class ClusterCache(AddOns):
    """Feeds a Store from the API server: lists, then watches, each kind in a thread of its own."""

    def __init__(
        self,
        api: client.ApiClient,
        *,
        page_size: int = 500,
        watch_timeout: int = 240,
        freeze_gc: bool = True,
        live_pods_only: bool = True,
        streaming: bool = True,
        store: Store | None = None,
        held: Held = HELD,
    ) -> None:
        """``held``: where answers read are counted until decoded (a member's bound: raw.Held)."""
        self.store = store if store is not None else Store()
        self._lock = threading.Lock()
        self.api = api
        self.requests = Requests(
            api, page_size=page_size, watch_timeout=watch_timeout, live_pods_only=live_pods_only, held=held
        )
        # list by streaming where the API server offers it (1.34+), else in pages; False once a
        # server refuses a streamed list (its WatchList feature gate is off)
        self.streaming = streaming
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._seen: dict[str, str] = {}  # the resourceVersion of the last event, per kind
        self.status = Statuses(KINDS)
        self.on_error: Callable[[str, str], None] | None = None  # (operation, error kind)
        self.on_sync: Callable[[str], None] | None = None  # (kind), after each (re)list
        # (the node as held, the node as the event has it, the event's raw object) for each
        # node put by a watch event, before the store takes it
        self.on_node_event: Callable[[Any, Any, bytes], None] | None = None
        self.readiness = Readiness(api)  # a watch does not notice when the API server loses etcd
        self.server_minor: int | None = None  # the API server's minor version, read before a list
        self._by_version: dict[str, Reader[Any, Any]] | None = None
        self.unreadable = UnreadableLog()
        self.contact = Contact()  # one log line when contact is lost, one when it is back
        self.lists = StoreLists(self.store, self.requests, self.unreadable, freeze_gc, self._listed_one)
        # resource.k8s.io/v1: "unknown" until asked, then "served", "absent" (an older server:
        # nothing shown, no error) or "forbidden" (the app may not read it: a note on the pages)
        self.dra = "unknown"
        self.kueue = "unknown"  # kueue.x-k8s.io, likewise
        self.kueue_version = ""  # the version of it watched, once "served"
        self._kueue_watched = set()  # its kinds whose watch runs (app.kube.api.add_ons)
        self._generation = {}
        self._positions_started = False

    # ---- lifecycle -------------------------------------------------------
    def start(self) -> None:
        with self._lock:
            if self._threads:
                return
            for kind in KINDS:
                self._start_kind(kind)
            self._threads.append(self.readiness.start(self._stop))
            self._threads.append(workers.start("dra", self._discover_dra))
            self._threads.append(workers.start("kueue", self._discover_kueue))

    def _start_kind(self, kind: str) -> None:
        """(caller holds the lock)"""
        self._threads.append(workers.start(f"watch-{kind}", lambda: self._run(kind)))

    def stop(self) -> None:
        self._stop.set()
        self.readiness.nudge()  # its thread wakes, sees the stop, and ends
        for resp in list(self.requests.open.values()):
            abort(resp)
        for t in self._threads:
            t.join(timeout=5)

    def wait_synced(self, timeout: float = 30.0) -> bool:
        """Until every kind is listed (every pod counted), or ``timeout``."""
        return workers.until(self.status.synced, timeout)

    def wait_offered(self, timeout: float) -> bool:
        """Until what nodes offer is known (pods may still be counting), or ``timeout``."""
        return workers.until(lambda: self.counting() is not None or self.status.synced(), timeout)

    def counting(self) -> int | None:
        """Pods counted so far while the first list of pods is under way and what nodes offer is
        known (nodes listed, and DRA devices where they are served); else None."""
        if self.dra == "unknown" or not self.status.synced("nodes", *DRA_KINDS) or self.status.synced("pods"):
            return None
        return self.store.objects.pod_count()

    def freshness(self) -> Freshness:
        """Live while every watch is open and the API server says it is ready; otherwise stale,
        with the age of the last contact."""
        unreadable = tuple(sorted(self.unreadable.counts().items()))
        ready = self.readiness
        return self.status.freshness(ready.problem, ready.last_ready, unreadable, self.counting)

    def counters(self) -> dict[str, WatchCounters]:
        return self.status.counters(self.unreadable.failures)

    def _readers(self, relist: bool = False) -> dict[str, Reader[Any, Any]]:
        """The readers for this API server's version, read from /version once; while it could
        not be read (the newest rules apply), it is asked again at each (re)list."""
        if self._by_version is None or (relist and self.server_minor is None):
            # asked again at each relist while unknown; said once, not at every retry
            self.server_minor = server_minor(self.api, said=self._by_version is not None)
            self._by_version = readers(resize_rule(self.server_minor))
        return self._by_version

    # ---- the watch loops -------------------------------------------------
    def _streams(self) -> bool:
        """Whether to list by streaming: asked of the server's version, read before each (re)list."""
        minor = self.server_minor
        return self.streaming and minor is not None and minor >= STREAMED_SINCE

    def _list(self, kind: str) -> str:
        """List a kind in pages (``app.kube.api.store_lists``)."""
        first = not self.status.synced(kind)
        return self.lists.paged(kind, self._readers()[kind], first)  # readers asked again by ``_sync``

    def _listed_one(self, kind: str) -> None:
        if self.on_sync is not None:
            self.on_sync(kind)

    def _sync(self, kind: str) -> str:
        """The first list or a relist: streamed, then followed as a watch until that ends (see
        ``_stream``), where the server offers it; else in pages. Returns the version to watch from."""
        self._seen.pop(kind, None)
        self._readers(relist=True)
        if self._streams():
            try:
                return self._stream(kind)
            except Exception as exc:
                err = translate(exc)
                if not isinstance(err, (BadRequest, Invalid)):  # not "unknown or forbidden parameter"
                    raise
                log.info("the API server does not stream lists (%s): listing in pages", err.status)
                self.streaming = False
        rv = self._list(kind)
        self.status.listed(kind)
        return rv

    def _stream(self, kind: str) -> str:
        """A streamed list: its objects go in at the bookmark that ends them, and the same stream
        goes on as the watch."""
        events = self._events(kind, None)
        rv = self.lists.streamed(kind, self._readers()[kind], events, first=not self.status.synced(kind))
        self.status.listed(kind)
        self._seen[kind] = rv
        for event in events:  # past the objects: the changes
            rv = self._event(kind, event, rv)
        return rv

    def _events(self, kind: str, rv: str | None) -> Iterator[Event]:
        for line in self._lines(kind, rv):
            yield EVENT.decode(line)

    def _lines(self, kind: str, rv: str | None) -> Iterator[bytes]:
        """A watch from ``rv`` (None: a streamed list), each event's line as it comes (the bench
        records them raw)."""
        # the watch is open: live again, even before an event
        return self.requests.lines(kind, rv, lambda: self._in_contact(kind))

    def _in_contact(self, kind: str) -> None:
        self.status.mark(kind, connected=True)
        self.contact.ok(kind)

    def _run(self, kind: str) -> None:
        """List, then watch from the list's resourceVersion. A watch that ends or breaks is
        resumed from the last resourceVersion seen (as client-go's reflector does), so a blip
        costs no relist; only a 410 Gone (that version was compacted away) leads to one."""
        backoff = 0.5
        rv: str | None = None
        listed: str | None = None  # the last list's resourceVersion
        generation = self._generation.get(kind, 0)
        while not self._stop.is_set() and self.watching(kind, generation):
            try:
                if rv is None:
                    rv = listed = self._sync(kind)
                    self.contact.ok(kind)
                    backoff = 0.5
                while not self._stop.is_set():
                    rv = self._watch_once(kind, rv)
                    self.status.mark(kind, connected=True)
                    backoff = 0.5
            except Exception as exc:  # noqa: BLE001 - every failure means: reconnect later
                if self._stop.is_set():
                    return
                err = translate(exc)
                if isinstance(err, Gone):
                    log.info("watch of %s: resource version too old, relisting", kind)
                    if rv == listed:  # gone before any event since the list: relisting at once again
                        self._stop.wait(backoff)  # would let a server that always says so spin
                        backoff = min(backoff * 2, 30.0)
                    rv = None
                    continue
                if kind in DRA_LISTED and refused(err):  # the rest of DRA is still read
                    log.warning("the app may not read %s: their taints are not applied", kind)
                    self.status.drop(kind)
                    return
                if kind in DRA_KINDS and refused(err):
                    log.warning("the app may not read %s: DRA-served resources are not shown", kind)
                    self.dra = "forbidden"
                    self.status.drop(kind)
                    return
                if not self.watching(kind, generation):
                    return  # forgotten meanwhile (its group is gone)
                if kind in KUEUE_KINDS and isinstance(err, NotFound):
                    self._kueue_gone(kind)
                    return
                if kind in KUEUE_KINDS and refused(err):
                    log.warning("the app may not read %s: jobs waiting for Kueue's quota are not shown", kind)
                    self.kueue = "forbidden"
                    self.status.drop(kind)
                    return
                if isinstance(err, Forbidden):  # the app's own account: say which right, and who grants it
                    err = Forbidden(missing_right(kind), 403, err.detail)
                rv = self._seen.get(kind, rv)  # resume from the last event that arrived
                self.readiness.nudge()  # is the API server itself answering? ask now
                self.contact.failed(kind, err.message, err.detail, refused=refused(err))
                if self.on_error is not None:
                    self.on_error(f"watch {kind}", type(err).__name__)
                large, forbidden = isinstance(err, AnswerTooLarge), isinstance(err, Forbidden)
                self.status.restarted(kind, err.message, forbidden=forbidden, too_large=large)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 30.0)

    def _watch_once(self, kind: str, rv: str) -> str:
        self._seen[kind] = rv
        for event in self._events(kind, rv):
            rv = self._event(kind, event, rv)
        return rv

    def _event(self, kind: str, event: Event, rv: str) -> str:
        """One watch event applied to the store; returns the resourceVersion it brings."""
        raise_for(event)
        view, version, problem = self._readers()[kind].one(event.object)
        rv = version or rv
        if kind == "nodes" and view is not None and event.type == "MODIFIED" and self.on_node_event:
            self.on_node_event(self.store.objects.node(view.name), view, event.object)
        if event.type != "BOOKMARK":
            self._apply(kind, event.type == "DELETED", view, problem)
        self._seen[kind] = rv
        self.status.mark(kind, connected=True)
        return rv

    def _apply(self, kind: str, deleted: bool, view: Any, problem: Unreadable | None) -> None:
        """A watch event's object: put or deleted; one that cannot be read is left out (and any
        earlier view of it dropped), so the rest stays live."""
        if problem is not None:
            self.store.forget(kind, problem.key)
            if deleted:
                self.unreadable.read(kind, problem.key)
            else:
                self.unreadable.failed(problem)
            return
        self.store.put(kind, view, deleted)
        self.unreadable.read(kind, view.key)
