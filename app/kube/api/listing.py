"""The cache's requests: a kind's list in pages, its watch, and its list streamed as a watch.

Two ways to list. In pages (``limit``/``continue``): each page is read whole, then decoded while
the API server waits for the next request. Streamed (KEP-3157, ``sendInitialEvents``; served
by default since Kubernetes 1.34): one watch whose first events are every object, then a
bookmark marked ``k8s.io/initial-events-end``, then the changes; each object is decoded as it
arrives while the API server encodes the next, and one object at a time is held, not a page.
bench/first_answer.py measures both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import msgspec
from kubernetes import client

from app.kube.state.pod_index import PodIndex
from app.kube.wire.reading import Unreadable

# Pods that ended count nowhere: list and watch only the others (a pod that ends arrives as DELETED).
LIVE_PODS = "status.phase!=Succeeded,status.phase!=Failed"
STREAMED_SINCE = 34  # the minor version from which kube-apiserver streams lists by default
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


class Requests:
    """One kind's list, watch and streamed list, each read raw (``_preload_content=False``)."""

    def __init__(
        self, api: client.ApiClient, *, page_size: int, watch_timeout: int, live_pods_only: bool
    ) -> None:
        self.api = api
        self.core = client.CoreV1Api(api)
        self.page_size = page_size
        self.watch_timeout = watch_timeout
        self.live_pods_only = live_pods_only
        self.open: dict[str, Any] = {}  # each kind's watch response while it is read (to abort it)

    def fn(self, kind: str) -> Callable[..., Any]:
        dra = client.ResourceV1Api(self.api)
        fns: dict[str, Callable[..., Any]] = {
            "nodes": self.core.list_node,
            "pods": self.core.list_pod_for_all_namespaces,
            "quotas": self.core.list_resource_quota_for_all_namespaces,
            "deviceclasses": dra.list_device_class,
            "resourceslices": dra.list_resource_slice,
            "resourceclaims": dra.list_resource_claim_for_all_namespaces,
        }
        return fns[kind]

    def selection(self, kind: str) -> dict[str, str]:
        return {"field_selector": LIVE_PODS} if kind == "pods" and self.live_pods_only else {}

    def pages(self, kind: str, take: Callable[[bytes], tuple[str | None, str]]) -> str:
        """Fetch a paginated list page by page; ``take`` decodes and projects a page's bytes and
        returns its (continue token, resourceVersion). A page is freed before the next is fetched."""
        cont: str | None = None
        while True:
            kwargs: dict[str, Any] = {"limit": self.page_size, "_preload_content": False}
            if cont:
                kwargs["_continue"] = cont
            resp = self.fn(kind)(_request_timeout=(5, 60), **self.selection(kind), **kwargs)
            data = resp.data
            resp.release_conn()
            del resp
            cont, rv = take(data)
            del data
            if not cont:
                return rv

    def lines(self, kind: str, rv: str | None, opened: Callable[[], None]) -> Iterator[bytes]:
        """A watch from ``rv``, or (``rv`` None) a streamed list: every object first, as of a
        consistent read, then the end bookmark, then the changes. Each event's line as it comes;
        ``opened`` is called once the API server has answered."""
        since: dict[str, Any] = (
            {"resource_version": rv}
            if rv is not None
            else {"send_initial_events": True, "resource_version_match": "NotOlderThan"}
        )
        resp = self.fn(kind)(
            **self.selection(kind),
            **since,
            watch=True,
            allow_watch_bookmarks=True,
            timeout_seconds=self.watch_timeout,
            _preload_content=False,
            _request_timeout=(5, self.watch_timeout + 30),
        )
        self.open[kind] = resp
        opened()
        try:
            buf = bytearray()
            for chunk in resp.stream(amt=None, decode_content=False):
                buf.extend(chunk)
                while (nl := buf.find(b"\n")) >= 0:
                    line = bytes(buf[:nl])
                    del buf[: nl + 1]
                    if line.strip():
                        yield line
        finally:
            self.open.pop(kind, None)
            resp.release_conn()


class _Annotated(msgspec.Struct, rename="camel"):
    annotations: dict[str, str] | None = None
    resource_version: str = ""


class _Bookmark(msgspec.Struct):
    metadata: _Annotated = msgspec.field(default_factory=_Annotated)


_BOOKMARK = msgspec.json.Decoder(_Bookmark)


def initial_events_end(raw: bytes) -> str | None:
    """A bookmark's resourceVersion if it marks the end of a streamed list's objects, else None."""
    meta = _BOOKMARK.decode(raw).metadata
    return meta.resource_version if (meta.annotations or {}).get(INITIAL_EVENTS_END) == "true" else None


class Listed:
    """What one list brings, page by page or object by object: the pods as their index, other
    kinds as views; and the objects that could not be read."""

    def __init__(self, kind: str) -> None:
        self.index = PodIndex() if kind == "pods" else None
        self.views: list[Any] = []
        self.unreadable: list[Unreadable] = []

    def take(self, views: list[Any], unreadable: list[Unreadable]) -> None:
        if self.index is not None:
            for view in views:
                self.index.put(view)
        else:
            self.views.extend(views)
        self.unreadable.extend(unreadable)

    @property
    def whole(self) -> Any:
        return self.index if self.index is not None else self.views
