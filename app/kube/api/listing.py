"""The cache's requests: a kind's list in pages, its watch, and its list streamed as a watch.

Two ways to list. In pages (``limit``/``continue``): each page is read whole and decoded while
the next one is fetched (the API server encodes while this process decodes). Streamed
(KEP-3157, ``sendInitialEvents``; served by default since Kubernetes 1.34): one watch whose
first events are every object, then a bookmark marked ``k8s.io/initial-events-end``, then the
changes; each object is decoded as it arrives while the API server encodes the next, and one
object at a time is held, not a page.
bench/first_answer.py measures both. Every request goes out raw (``app.kube.api.raw``).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import msgspec

from app.base import workers
from app.kube.api.errors import TooLong
from app.kube.api.raw import HELD, Held, body, get
from app.kube.state.pod_index import PodIndex
from app.kube.wire.decoders import ListMeta
from app.kube.wire.reading import Unreadable

if TYPE_CHECKING:
    from kubernetes import client

# Pods that ended count nowhere: list and watch only the others (a pod that ends arrives as DELETED).
LIVE_PODS = "status.phase!=Succeeded,status.phase!=Failed"
# what one answer may hold once decompressed (a member's server may send gzip unasked): a page of
# 500 objects of real size is ~6 MiB, one object at most 1.5 MiB in etcd
PAGE_MOST = 64 << 20
LINE_MOST = 8 << 20
STREAMED_SINCE = 34  # the minor version from which kube-apiserver streams lists by default
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


# Each kind's collection, across namespaces.
PATHS = {
    "nodes": "/api/v1/nodes",
    "pods": "/api/v1/pods",
    "quotas": "/api/v1/resourcequotas",
    "deviceclasses": "/apis/resource.k8s.io/v1/deviceclasses",
    "resourceslices": "/apis/resource.k8s.io/v1/resourceslices",
    "resourceclaims": "/apis/resource.k8s.io/v1/resourceclaims",
    "devicetaintrules": "/apis/resource.k8s.io/v1/devicetaintrules",
    "workloads": "/apis/kueue.x-k8s.io/v1beta2/workloads",
    "localqueues": "/apis/kueue.x-k8s.io/v1beta2/localqueues",
    "clusterqueues": "/apis/kueue.x-k8s.io/v1beta2/clusterqueues",
    "resourceflavors": "/apis/kueue.x-k8s.io/v1beta2/resourceflavors",
}


class Requests:
    """One kind's list, watch and streamed list, each read raw. ``get`` makes every request (a test
    may wrap it to see them: the kind, and the query as sent)."""

    def __init__(
        self,
        api: client.ApiClient,
        *,
        page_size: int,
        watch_timeout: int,
        live_pods_only: bool,
        held: Held = HELD,
    ) -> None:
        """``held``: where the pages and events read are counted until decoded (raw.Held)."""
        self.api, self.held = api, held
        self.page_size = page_size
        self.watch_timeout = watch_timeout
        self.live_pods_only = live_pods_only
        self.open: dict[str, Any] = {}  # each kind's watch response while it is read (to abort it)
        self.paths = dict(PATHS)  # a kind served at another version where discovery found only that

    def get(self, kind: str, query: dict[str, Any], timeout: tuple[float, float]) -> Any:
        return get(self.api, self.paths[kind], query, timeout)

    def selection(self, kind: str) -> dict[str, str]:
        return {"fieldSelector": LIVE_PODS} if kind == "pods" and self.live_pods_only else {}

    def pages(self, kind: str, take: Callable[[bytearray], object]) -> str:
        """Fetch a paginated list page by page, each handed to ``take`` (which decodes and projects
        it); returns the list's resourceVersion. The next page is fetched while ``take`` works on
        this one (the API server encodes while this process decodes), one page ahead at most: at
        most three pages are held at once (taken, waiting, arriving), each counted in ``held``
        until it is decoded."""
        ahead: queue.Queue[bytearray | BaseException | None] = queue.Queue(maxsize=1)
        done = threading.Event()
        meta = ListMeta()
        lock, owed = threading.Lock(), 0  # bytes of pages read, counted, not yet given back

        def settle(n: int) -> None:
            """``n`` bytes more read (negative: decoded, given back); once done, all of them."""
            nonlocal owed
            with lock:
                owed += n
                if done.is_set():
                    self.held.give(owed)
                    owed = 0
                elif n < 0:
                    self.held.give(-n)

        def put(item: bytearray | BaseException | None) -> None:
            while not done.is_set():
                try:
                    ahead.put(item, timeout=0.5)
                    return
                except queue.Full:
                    continue

        def fetch() -> None:
            nonlocal meta
            try:
                cont: str | None = None
                while not done.is_set():
                    data = self._page(kind, cont)
                    settle(len(data))
                    meta = _PAGE_META.decode(data).metadata or ListMeta()
                    put(data)
                    del data  # held by the queue or the taker alone, not while the next one arrives
                    if not (cont := meta.cont):
                        break
                put(None)
            except BaseException as exc:  # noqa: BLE001 - raised again where the pages are taken
                put(exc)

        workers.start(f"pages-{kind}", fetch)
        try:
            while (item := ahead.get()) is not None:
                if isinstance(item, BaseException):
                    try:
                        raise item
                    finally:  # no cycle through this frame: its pages go with the error
                        del item
                take(item)
                settle(-len(item))
                del item
            return meta.resource_version or ""
        finally:
            done.set()
            settle(0)  # what was read and never taken

    def _page(self, kind: str, cont: str | None) -> bytearray:
        query: dict[str, Any] = {**self.selection(kind), "limit": self.page_size}
        if cont:
            query["continue"] = cont
        return body(self.get(kind, query, (5, 60)), most=PAGE_MOST, keep=True, held=self.held)

    def lines(self, kind: str, rv: str | None, opened: Callable[[], None]) -> Iterator[bytes]:
        """A watch from ``rv``, or (``rv`` None) a streamed list: every object first, as of a
        consistent read, then the end bookmark, then the changes. Each event's line as it comes;
        ``opened`` is called once the API server has answered."""
        since: dict[str, Any] = (
            {"resourceVersion": rv}
            if rv is not None
            else {"sendInitialEvents": True, "resourceVersionMatch": "NotOlderThan"}
        )
        query = {
            **self.selection(kind),
            **since,
            "watch": True,
            "allowWatchBookmarks": True,
            "timeoutSeconds": self.watch_timeout,
        }
        resp = self.get(kind, query, (5, self.watch_timeout + 30))
        self.open[kind] = resp
        opened()
        counted = 0  # bytes of an event not yet ended, counted in ``held``
        try:
            buf = bytearray()
            for chunk in resp.stream(amt=None, decode_content=False):
                buf.extend(chunk)
                while (nl := buf.find(b"\n")) >= 0:
                    line = bytes(buf[:nl])
                    del buf[: nl + 1]
                    if line.strip():
                        yield line
                if len(buf) > LINE_MOST:  # one event's line, never ended: not one object
                    raise TooLong(LINE_MOST, "a watch event")
                if len(buf) > counted:
                    self.held.take(len(buf) - counted)  # TooLong past this cluster's bound
                elif len(buf) < counted:
                    self.held.give(counted - len(buf))
                counted = len(buf)
        finally:
            self.held.give(counted)
            self.open.pop(kind, None)
            resp.release_conn()


class _Annotated(msgspec.Struct, rename="camel"):
    annotations: dict[str, str] | None = None
    resource_version: str = ""


class _Bookmark(msgspec.Struct):
    metadata: _Annotated = msgspec.field(default_factory=_Annotated)


_BOOKMARK = msgspec.json.Decoder(_Bookmark)


class _PageMeta(msgspec.Struct):
    metadata: ListMeta | None = None


_PAGE_META = msgspec.json.Decoder(_PageMeta)  # a page's continue token; its items skipped


def initial_events_end(raw: bytes) -> str | None:
    """A bookmark's resourceVersion if it marks the end of a streamed list's objects, else None."""
    meta = _BOOKMARK.decode(raw).metadata
    return meta.resource_version if (meta.annotations or {}).get(INITIAL_EVENTS_END) == "true" else None


class Listed:
    """What one list brings, page by page or object by object: the pods as their index, other
    kinds as views; and the objects that could not be read. With ``into`` (the first list of
    pods), the views go there as they arrive, a page at a time, and nothing is kept here."""

    BATCH = 500  # views handed to ``into`` at once when a streamed list brings them one by one

    def __init__(self, kind: str, into: Callable[[list[Any]], None] | None = None) -> None:
        self.into = into
        self.index = PodIndex() if kind == "pods" and into is None else None
        self.views: list[Any] = []
        self.unreadable: list[Unreadable] = []

    def take(self, views: list[Any], unreadable: list[Unreadable]) -> None:
        if self.index is not None:
            for view in views:
                self.index.put(view)
        else:
            self.views.extend(views)
            if self.into is not None and len(self.views) >= self.BATCH:
                self.flush()
        self.unreadable.extend(unreadable)

    def flush(self) -> None:
        """Hand what was taken so far ``into`` its place (a page at its end; a stream in batches)."""
        if self.into is not None and self.views:
            self.into(self.views)
            self.views = []

    @property
    def whole(self) -> Any:
        """What the list brought, to swap in whole; None when it went ``into`` as it came."""
        if self.into is not None:
            self.flush()
            return None
        return self.index if self.index is not None else self.views
