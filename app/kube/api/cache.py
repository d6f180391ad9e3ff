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

import contextlib
import gc
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import msgspec
from kubernetes import client

from app import workers
from app.domain.accounting import resize_rule
from app.domain.numbers import bounded_int
from app.kube.api.errors import Forbidden, Gone, KubeError, NotFound, refused, translate
from app.kube.api.freshness import Freshness, KindStatus, WatchCounters, missing_right
from app.kube.api.listing import STREAMED_SINCE, Listed, Requests, initial_events_end
from app.kube.api.raw import body, get
from app.kube.api.readiness import Readiness
from app.kube.state import kinds
from app.kube.state.store import Store
from app.kube.wire.reading import Reader, Unreadable, UnreadableLog, readers

log = logging.getLogger(__name__)

KINDS = kinds.CORE
DRA_KINDS = kinds.DRA


class Event(msgspec.Struct):
    """A watch event; its object is decoded by kind, after the type is known."""

    type: str
    object: msgspec.Raw


EVENT = msgspec.json.Decoder(Event)


class ClusterCache:
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
    ) -> None:
        self.store = store if store is not None else Store()
        self._lock = threading.Lock()
        self.api = api
        self.freeze_gc = freeze_gc
        self.requests = Requests(
            api, page_size=page_size, watch_timeout=watch_timeout, live_pods_only=live_pods_only
        )
        # list by streaming where the API server offers it (1.34+), else in pages; False once a
        # server refuses a streamed list (its WatchList feature gate is off)
        self.streaming = streaming
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._seen: dict[str, str] = {}  # the resourceVersion of the last event, per kind
        self.status = {kind: KindStatus() for kind in KINDS}
        self.on_error: Callable[[str, str], None] | None = None  # (operation, error kind)
        self.on_sync: Callable[[str], None] | None = None  # (kind), after each (re)list
        # (the node as held, the node as the event has it, the event's raw object) for each
        # node put by a watch event, before the store takes it
        self.on_node_event: Callable[[Any, Any, bytes], None] | None = None
        self.readiness = Readiness(api)  # a watch does not notice when the API server loses etcd
        self.server_minor: int | None = None  # the API server's minor version, read before a list
        self._by_version: dict[str, Reader[Any, Any]] | None = None
        self.unreadable = UnreadableLog()
        # resource.k8s.io/v1: "unknown" until asked, then "served", "absent" (an older server:
        # nothing shown, no error) or "forbidden" (the app may not read it: a note on the pages)
        self.dra = "unknown"

    # ---- lifecycle -------------------------------------------------------
    def start(self) -> None:
        with self._lock:
            if self._threads:
                return
            for kind in KINDS:
                self._start_kind(kind)
            self._threads.append(self.readiness.start(self._stop))
            self._threads.append(workers.start("dra", self._discover_dra))

    def _start_kind(self, kind: str) -> None:
        """(caller holds the lock)"""
        self._threads.append(workers.start(f"watch-{kind}", lambda: self._run(kind)))

    def _discover_dra(self) -> None:
        """Watch the DRA kinds only where the API server serves resource.k8s.io/v1."""
        backoff = 1.0
        while not self._stop.is_set():
            try:
                body(get(self.api, "/apis/resource.k8s.io/v1/", {}, (5, 10)))
            except Exception as exc:  # noqa: BLE001 - absent, refused, or not answering (ask again)
                err = translate(exc)
                if isinstance(err, NotFound):
                    self.dra = "absent"
                    return
                if refused(err):
                    self.dra = "forbidden"
                    return
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 30.0)
                continue
            with self._lock:
                if self._stop.is_set():
                    return
                self.dra = "served"
                for kind in DRA_KINDS:
                    self.status[kind] = KindStatus()
                    self._start_kind(kind)
            return

    def stop(self) -> None:
        self._stop.set()
        self.readiness.nudge()  # its thread wakes, sees the stop, and ends
        for resp in list(self.requests.open.values()):
            _abort(resp)
        for t in self._threads:
            t.join(timeout=5)

    def _all_synced(self) -> bool:
        return all(s.synced for s in self.status.values())

    def wait_synced(self, timeout: float = 30.0) -> bool:
        """Until every kind is listed (every pod counted), or ``timeout``."""
        return _until(self._all_synced, timeout)

    def wait_offered(self, timeout: float) -> bool:
        """Until what nodes offer is known (pods may still be counting), or ``timeout``."""
        return _until(lambda: self.counting() is not None or self._all_synced(), timeout)

    def counting(self) -> int | None:
        """Pods counted so far while the first list of pods is under way and what nodes offer is
        known (nodes listed, and DRA devices where they are served); else None."""
        with self._lock:
            status = self.status
            offered = status["nodes"].synced and self.dra != "unknown"
            offered = offered and all(status[k].synced for k in DRA_KINDS if k in status)
            if not offered or status["pods"].synced:
                return None
        return self.store.objects.pod_count()

    def freshness(self) -> Freshness:
        """Live while every watch is open and the API server says it is ready; otherwise stale,
        with the age of the last contact."""
        with self._lock:
            statuses = [KindStatus(**vars(s)) for s in self.status.values()]
        not_ready, last_ready = self.readiness.problem, self.readiness.last_ready
        synced = all(s.synced for s in statuses)
        unreadable = tuple(sorted(self.unreadable.counts().items()))
        counting = None if synced else self.counting()
        if synced and all(s.connected for s in statuses) and not_ready is None:
            return Freshness(synced=True, stale=False, age_seconds=0.0, error=None, unreadable=unreadable)
        lasts: list[float | None] = [s.last_ok for s in statuses]
        if not_ready is not None:
            lasts.append(last_ready)
        age = time.monotonic() - min(x for x in lasts if x) if all(lasts) else None
        refused = next((s for s in statuses if s.forbidden), None)
        error = not_ready or (
            refused.error if refused else next((s.error for s in statuses if s.error), None)
        )
        return Freshness(
            synced=synced,
            stale=True,
            age_seconds=age,
            error=error,
            unreadable=unreadable,
            forbidden=refused is not None and not_ready is None,
            counting=counting,
        )

    def counters(self) -> dict[str, WatchCounters]:
        failures = self.unreadable.failures
        with self._lock:
            return {
                kind: WatchCounters(s.relists, s.restarts, failures.get(kind, 0))
                for kind, s in self.status.items()
            }

    def _readers(self, relist: bool = False) -> dict[str, Reader[Any, Any]]:
        """The readers for this API server's version, read from /version once; while it could
        not be read (the newest rules apply), it is asked again at each (re)list."""
        if self._by_version is None or (relist and self.server_minor is None):
            self.server_minor = server_minor(self.api)
            self._by_version = readers(resize_rule(self.server_minor))
        return self._by_version

    # ---- the watch loops -------------------------------------------------
    def _streams(self) -> bool:
        """Whether to list by streaming: asked of the server's version, read before each (re)list."""
        minor = self.server_minor
        return self.streaming and minor is not None and minor >= STREAMED_SINCE

    def _list(self, kind: str) -> str:
        """List a kind in pages, projecting each page as it arrives, and swap the result in whole.
        An object that cannot be read is left out and named (``app.kube.wire.reading``)."""
        reader = self._readers()[kind]  # asked again by ``_sync`` before each (re)list
        listed = self._listed(kind)

        def take(data: bytes) -> None:
            page = reader.page(data)
            listed.take(page.views, page.unreadable)
            listed.flush()  # a page goes in whole as it arrives

        rv = self.requests.pages(kind, take)
        self._swap(kind, listed)
        return rv

    def _listed(self, kind: str) -> Listed:
        """Where a list's objects go: the first list of pods is counted into the store as it
        arrives (pages show what nodes offer at once, and requested as it rises, marked as still
        counting); any other list, and every relist, is built off to the side and swapped in whole."""
        if kind == "pods" and not self.status[kind].synced:
            self.store.start_counting()
            return Listed(kind, into=self.store.count_pods)
        return Listed(kind)

    def _swap(self, kind: str, listed: Listed) -> None:
        whole = listed.whole
        if whole is None:
            self.store.counted()
        else:
            self.store.replace(kind, whole)
        self.unreadable.replace(kind, listed.unreadable)
        if self.freeze_gc:
            # What a list brought in lives until the next relist: move it out of the collector's
            # sight, so full collections no longer traverse the whole cache (objects are still
            # freed by reference counting when an event replaces them).
            gc.freeze()
        if self.on_sync is not None:
            self.on_sync(kind)

    def _synced(self, kind: str) -> None:
        self._mark(kind, connected=True, synced=True)
        with self._lock:
            self.status[kind].relists += 1

    def _sync(self, kind: str) -> str:
        """The first list or a relist: streamed, then followed as a watch until that ends (see
        ``_stream``), where the server offers it; else in pages. Returns the version to watch from."""
        self._seen.pop(kind, None)
        self._readers(relist=True)
        if self._streams():
            try:
                return self._stream(kind)
            except client.ApiException as exc:
                if exc.status not in (400, 422):  # not "unknown or forbidden parameter"
                    raise
                log.info("the API server does not stream lists (%s): listing in pages", exc.status)
                self.streaming = False
        rv = self._list(kind)
        self._synced(kind)
        return rv

    def _stream(self, kind: str) -> str:
        """A streamed list: every object arrives as an event and is projected as it comes; at the
        end bookmark they are swapped in whole and the same stream goes on as the watch."""
        reader = self._readers()[kind]
        listed: Listed | None = self._listed(kind)
        rv = ""
        for event in self._events(kind, None):
            if listed is None:  # past the objects: the changes
                rv = self._event(kind, event, rv)
                continue
            _raise_for(event)
            if event.type == "BOOKMARK":
                end = initial_events_end(event.object)
                if end is not None:
                    self._swap(kind, listed)
                    self._synced(kind)
                    listed, rv = None, end
                    self._seen[kind] = rv
                continue
            view, _, problem = reader.one(event.object)
            listed.take([view] if view is not None else [], [problem] if problem is not None else [])
        if listed is not None:
            raise KubeError("The API server ended the list's stream before every object arrived.", 0, "")
        return rv

    def _events(self, kind: str, rv: str | None) -> Iterator[Event]:
        for line in self._lines(kind, rv):
            yield EVENT.decode(line)

    def _lines(self, kind: str, rv: str | None) -> Iterator[bytes]:
        """A watch from ``rv`` (None: a streamed list), each event's line as it comes (the bench
        records them raw)."""
        # the watch is open: live again, even before an event
        return self.requests.lines(kind, rv, lambda: self._mark(kind, connected=True))

    def _mark(
        self,
        kind: str,
        *,
        connected: bool,
        error: str | None = None,
        synced: bool | None = None,
        forbidden: bool = False,
    ) -> None:
        with self._lock:
            st = self.status[kind]
            st.connected = connected
            st.error = error
            st.forbidden = forbidden
            if synced is not None:
                st.synced = st.synced or synced
            if connected:
                st.last_ok = time.monotonic()

    def _run(self, kind: str) -> None:
        """List, then watch from the list's resourceVersion. A watch that ends or breaks is
        resumed from the last resourceVersion seen (as client-go's reflector does), so a blip
        costs no relist; only a 410 Gone (that version was compacted away) leads to one."""
        backoff = 0.5
        rv: str | None = None
        while not self._stop.is_set():
            try:
                if rv is None:
                    rv = self._sync(kind)
                    backoff = 0.5
                while not self._stop.is_set():
                    rv = self._watch_once(kind, rv)
                    self._mark(kind, connected=True)
                    backoff = 0.5
            except Gone:
                log.info("watch of %s: resource version too old, relisting", kind)
                rv = None
                continue
            except Exception as exc:  # noqa: BLE001 - every failure means: reconnect later
                if self._stop.is_set():
                    return
                err = translate(exc)
                if isinstance(err, Gone):
                    rv = None
                    continue
                if kind in DRA_KINDS and refused(err):
                    log.warning("the app may not read %s: DRA-served resources are not shown", kind)
                    with self._lock:
                        self.dra = "forbidden"
                        self.status.pop(kind, None)
                    return
                if isinstance(err, Forbidden):  # the app's own account: say which right, and who grants it
                    err = Forbidden(missing_right(kind), 403, err.detail)
                rv = self._seen.get(kind, rv)  # resume from the last event that arrived
                self.readiness.nudge()  # is the API server itself answering? ask now
                log.warning(
                    "watch of %s failed: %s [%s] (retrying in %.1fs)", kind, err.message, err.detail, backoff
                )
                if self.on_error is not None:
                    self.on_error(f"watch {kind}", type(err).__name__)
                self._mark(kind, connected=False, error=err.message, forbidden=err.status == 403)
                with self._lock:
                    self.status[kind].restarts += 1
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 30.0)

    def _watch_once(self, kind: str, rv: str) -> str:
        self._seen[kind] = rv
        for event in self._events(kind, rv):
            rv = self._event(kind, event, rv)
        return rv

    def _event(self, kind: str, event: Event, rv: str) -> str:
        """One watch event applied to the store; returns the resourceVersion it brings."""
        _raise_for(event)
        view, version, problem = self._readers()[kind].one(event.object)
        rv = version or rv
        if kind == "nodes" and view is not None and event.type == "MODIFIED" and self.on_node_event:
            self.on_node_event(self.store.objects.node(view.name), view, event.object)
        if event.type != "BOOKMARK":
            self._apply(kind, event.type == "DELETED", view, problem)
        self._seen[kind] = rv
        self._mark(kind, connected=True)
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


def _until(done: Callable[[], bool], timeout: float) -> bool:
    """Whether ``done`` came true within ``timeout`` seconds (asked every 50 ms)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if done():
            return True
        time.sleep(0.05)
    return False


def _raise_for(event: Event) -> None:
    """An ERROR event ends the watch: 410 as Gone (relist), any other code as an error."""
    if event.type != "ERROR":
        return
    status = msgspec.json.decode(event.object)
    code = status.get("code")
    if code == 410:
        raise Gone("The resource version is too old.", detail=str(status.get("message", "")))
    detail = str(status.get("message", ""))
    raise KubeError(f"The watch ended with an error ({code}).", int(code or 0), detail)


def server_minor(api: client.ApiClient) -> int | None:
    """The API server's minor version ("37" of v1.37.2; "37+" from some providers), or None when
    /version cannot be read (the newest rules apply then)."""
    try:
        minor = msgspec.json.decode(body(get(api, "/version", {}, (5, 10)))).get("minor")
        return bounded_int("".join(ch for ch in str(minor)[:8] if ch in "0123456789"))
    except Exception:  # noqa: BLE001 - any failure: unknown, and the newest rules
        log.info("the API server's version could not be read; counting as the newest version does")
        return None


def _abort(resp: Any) -> None:
    """Unblock a thread reading a watch: shut the socket down (close() would wait for its lock)."""
    sock = getattr(getattr(resp, "connection", None), "sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
