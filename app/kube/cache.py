"""One shared, watch-fed cache of nodes and pods.

Each kind is listed in pages (``limit``/``continue``), then watched from the
list's resourceVersion; a 410 Gone leads to a relist, any other failure to a
reconnect with exponential backoff. Responses are read raw
(``_preload_content=False``) and parsed with orjson into slim projections:
only what accounting and the pages need is kept. Per-node totals are kept up
to date on every event, so a page view never lists anything.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from kubernetes import client

from app.domain.accounting import (
    Amounts,
    RunningTotals,
    Totals,
    counts_on_node,
    extended_only,
    pod_requests,
)
from app.domain.changes import DESIRED_ANNOTATION, Drift, drift, parse_desired
from app.domain.names import is_native_resource
from app.domain.overview import NodeRow, node_row
from app.domain.quantity import QuantityError, to_amount
from app.kube.errors import Gone, KubeError, translate

log = logging.getLogger(__name__)

ANNOTATION_PREFIX = "extres.dev/"
REQUESTS = "requests."
KINDS = ("nodes", "pods", "quotas")


_EMPTY: dict[str, Any] = {}
_ONE_POD = {"pods": 1}
_SHARED: dict[tuple[tuple[str, Any], ...], dict[str, Any]] = {}
_SHARED_MAX = 100_000


def _shared(values: dict[str, Any]) -> dict[str, Any]:
    """One dict per distinct content (pods mostly repeat a few request shapes): never mutate it."""
    if not values:
        return _EMPTY
    key = tuple(sorted(values.items()))
    found = _SHARED.get(key)
    if found is None:
        if len(_SHARED) >= _SHARED_MAX:
            return values
        found = _SHARED[key] = {sys.intern(k): v for k, v in key}
    return found


def _amounts(raw: Mapping[str, Any] | None) -> Amounts:
    out: Amounts = {}
    for name, value in (raw or {}).items():
        try:
            out[name] = to_amount(name, str(value))
        except QuantityError:
            log.warning("ignoring unparsable quantity %s=%r", name, value)
    return out


@dataclass(slots=True)
class NodeView:
    name: str
    labels: dict[str, str]
    annotations: dict[str, str]  # only this project's own annotations
    capacity: Amounts
    allocatable: Amounts
    resource_version: str
    unschedulable: bool
    created: str
    desired: dict[str, int]  # the desired-state annotation, parsed

    @property
    def drift(self) -> list[Drift]:
        return drift(self.desired, self.capacity)

    def same_row(self, other: NodeView) -> bool:
        """Whether ``other`` gives the same overview row and candidacy (a heartbeat changes neither)."""
        return (
            self.capacity == other.capacity
            and self.allocatable == other.allocatable
            and self.labels == other.labels
            and self.desired == other.desired
            and self.unschedulable == other.unschedulable  # cordoned: no longer a candidate
        )

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> NodeView:
        meta = obj.get("metadata") or {}
        status = obj.get("status") or {}
        annotations = {
            k: v for k, v in (meta.get("annotations") or {}).items() if k.startswith(ANNOTATION_PREFIX)
        }
        return cls(
            name=meta.get("name", ""),
            labels=dict(meta.get("labels") or {}),
            annotations=annotations,
            capacity=_amounts(status.get("capacity")),
            allocatable=_amounts(status.get("allocatable")),
            resource_version=str(meta.get("resourceVersion", "")),
            unschedulable=bool((obj.get("spec") or {}).get("unschedulable")),
            created=str(meta.get("creationTimestamp") or ""),
            desired=parse_desired(annotations.get(DESIRED_ANNOTATION)),
        )


@dataclass(slots=True)
class PodView:
    namespace: str
    name: str
    node_name: str
    phase: str
    requests: Amounts
    limits: Amounts
    created: str
    extended_requests: Amounts = field(default_factory=dict)  # the extended part of requests
    unschedulable: str | None = None  # the scheduler's message, when Unschedulable
    node_selector: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    @property
    def counts(self) -> bool:
        return counts_on_node(self.phase, self.node_name)

    @property
    def extended_share(self) -> tuple[str, Amounts] | None:
        """What this pod adds to a node's extended requested amounts, if anything."""
        if self.extended_requests and self.counts:
            return (self.node_name, self.extended_requests)
        return None

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> PodView:
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        unschedulable = None
        if not spec.get("nodeName"):
            for cond in status.get("conditions") or ():
                if (
                    cond.get("type") == "PodScheduled"
                    and cond.get("status") == "False"
                    and cond.get("reason") == "Unschedulable"
                ):
                    unschedulable = str(cond.get("message") or "")
        try:
            requests = _shared(pod_requests(spec))
            limits = _shared(pod_requests(spec, "limits"))
        except QuantityError:
            log.warning("pod %s/%s has an unparsable quantity", meta.get("namespace"), meta.get("name"))
            requests = limits = _EMPTY
        selector = spec.get("nodeSelector")
        return cls(
            namespace=sys.intern(meta.get("namespace", "")),
            name=meta.get("name", ""),
            node_name=sys.intern(spec.get("nodeName") or ""),
            phase=sys.intern(status.get("phase") or "Pending"),
            requests=requests,
            limits=limits,
            created=str(meta.get("creationTimestamp") or ""),
            extended_requests=_shared(extended_only(requests)),
            unschedulable=unschedulable,
            node_selector=_shared(selector) if selector else _EMPTY,
        )


@dataclass(slots=True)
class QuotaView:
    """A ResourceQuota's ``requests.<extended resource>`` items: resource -> (hard, used)."""

    namespace: str
    name: str
    items: dict[str, tuple[int, int]]

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> QuotaView:
        meta = obj.get("metadata") or {}
        status = obj.get("status") or {}
        hard = _amounts(status.get("hard") or (obj.get("spec") or {}).get("hard"))
        used = _amounts(status.get("used"))
        items = {
            key[len(REQUESTS) :]: (value, used.get(key, 0))
            for key, value in hard.items()
            if key.startswith(REQUESTS) and not is_native_resource(key[len(REQUESTS) :])
        }
        return cls(meta.get("namespace", ""), meta.get("name", ""), items)


@dataclass
class KindStatus:
    synced: bool = False
    connected: bool = False
    last_ok: float = 0.0  # monotonic time of the last successful contact
    error: str | None = None
    relists: int = 0


@dataclass(frozen=True)
class Freshness:
    synced: bool
    stale: bool
    age_seconds: float | None
    error: str | None


def _add_into(into: Amounts, amounts: Mapping[str, int], sign: int) -> None:
    for name, value in amounts.items():
        new = into.get(name, 0) + sign * value
        if new:
            into[name] = new
        else:
            into.pop(name, None)


class ClusterCache:
    """Nodes and pods, kept current by watches; safe to read from many threads."""

    def __init__(
        self,
        api: client.ApiClient,
        *,
        page_size: int = 500,
        watch_timeout: int = 240,
        freeze_gc: bool = True,
    ) -> None:
        self.api = api
        self.freeze_gc = freeze_gc
        self.core = client.CoreV1Api(api)
        self.page_size = page_size
        self.watch_timeout = watch_timeout
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._responses: dict[str, Any] = {}
        self.nodes: dict[str, NodeView] = {}
        self.pods: dict[tuple[str, str], PodView] = {}
        self.requested: dict[str, Amounts] = {}  # node -> sum of counted pods' requests
        self.limits: dict[str, Amounts] = {}
        self.node_pods: dict[str, set[tuple[str, str]]] = {}  # node -> pods with extended requests
        self.unschedulable: set[tuple[str, str]] = set()
        self.quotas: dict[tuple[str, str], QuotaView] = {}  # only quotas on extended resources
        self.status = {kind: KindStatus() for kind in KINDS}
        self.on_error: Callable[[str, str], None] | None = None  # (operation, error kind)
        # The overview's rows, kept per node: an event marks only its node's row for rebuilding.
        self._rows: dict[str, NodeRow] = {}
        self._dirty: set[str] = set()
        self._order: list[str] | None = None  # node names, sorted; None after a node came or went
        self._totals = RunningTotals()  # of the rows in self._rows
        self.rows_version = 0  # bumped whenever a row changes: a key for memoised grids

    # ---- lifecycle -------------------------------------------------------
    def start(self) -> None:
        with self._lock:
            if self._threads:
                return
            for kind in KINDS:
                t = threading.Thread(target=self._run, args=(kind,), name=f"extres-watch-{kind}", daemon=True)
                self._threads.append(t)
                t.start()

    def stop(self) -> None:
        self._stop.set()
        for resp in list(self._responses.values()):
            _abort(resp)
        for t in self._threads:
            t.join(timeout=5)

    def wait_synced(self, timeout: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(s.synced for s in self.status.values()):
                return True
            time.sleep(0.05)
        return False

    # ---- reading ---------------------------------------------------------
    def freshness(self) -> Freshness:
        """Live while every watch is open; otherwise stale, with the age of the last contact."""
        with self._lock:
            statuses = [KindStatus(**vars(s)) for s in self.status.values()]
        synced = all(s.synced for s in statuses)
        if synced and all(s.connected for s in statuses):
            return Freshness(synced=True, stale=False, age_seconds=0.0, error=None)
        lasts = [s.last_ok for s in statuses]
        age = time.monotonic() - min(lasts) if all(lasts) else None
        error = next((s.error for s in statuses if s.error), None)
        return Freshness(synced=synced, stale=True, age_seconds=age, error=error)

    def _names(self) -> list[str]:
        if self._order is None:
            self._order = sorted(self.nodes)
        return self._order

    def node_list(self) -> list[NodeView]:
        with self._lock:
            return [self.nodes[name] for name in self._names()]

    def overview_rows(self) -> tuple[list[NodeRow], Totals]:
        """Every node's overview row, by name, and their totals; rebuilds only the rows events
        have touched, and moves the totals by the difference."""
        with self._lock:
            for name in self._dirty:
                old = self._rows.pop(name, None)
                if old is not None:
                    self._totals.add(old.usage, -1)
                node = self.nodes.get(name)
                if node is not None:
                    row = self._rows[name] = node_row(node, self.requested.get(name, _EMPTY))
                    self._totals.add(row.usage)
            self._dirty.clear()
            return [self._rows[name] for name in self._names()], self._totals.totals()

    def drifted_nodes(self) -> list[NodeView]:
        with self._lock:
            return sorted((n for n in self.nodes.values() if n.desired and n.drift), key=lambda n: n.name)

    def node(self, name: str) -> NodeView | None:
        with self._lock:
            return self.nodes.get(name)

    def requested_on(self, name: str) -> Amounts:
        with self._lock:
            return dict(self.requested.get(name, {}))

    def requested_live(self, name: str) -> Mapping[str, int]:
        """A node's requested amounts without a copy, for loops over every node: read, never keep."""
        return self.requested.get(name, _EMPTY)

    def limits_on(self, name: str) -> Amounts:
        with self._lock:
            return dict(self.limits.get(name, {}))

    def pods_requesting_extended(self, node: str) -> list[PodView]:
        with self._lock:
            keys = self.node_pods.get(node, set())
            return sorted((self.pods[k] for k in keys if k in self.pods), key=lambda p: p.key)

    def quota_list(self) -> list[QuotaView]:
        with self._lock:
            return sorted(self.quotas.values(), key=lambda q: q.key)

    def unschedulable_pods(self) -> list[PodView]:
        with self._lock:
            return sorted((self.pods[k] for k in self.unschedulable), key=lambda p: p.key)

    # ---- applying changes (also used for read-your-writes) ---------------
    def apply_node(self, obj: Mapping[str, Any], deleted: bool = False) -> None:
        view = NodeView.from_json(obj)
        with self._lock:
            current = self.nodes.get(view.name)
            if deleted:
                if current is not None:
                    del self.nodes[view.name]
                    self._order = None
                    self._touch(view.name)
            elif current is None or _rv_newer(view.resource_version, current.resource_version):
                self.nodes[view.name] = view
                if current is None:
                    self._order = None
                if current is None or not current.same_row(view):
                    self._touch(view.name)

    def apply_pod(self, obj: Mapping[str, Any], deleted: bool = False) -> None:
        view = PodView.from_json(obj)
        with self._lock:
            old = self.pods.pop(view.key, None)
            if old is not None:
                self._account(old, -1)
            if not deleted:
                self.pods[view.key] = view
                self._account(view, +1)
            before = old.extended_share if old is not None else None
            after = None if deleted else view.extended_share
            if before != after:  # most pod updates (status, phase) leave the overview as it was
                for share in (before, after):
                    if share is not None:
                        self._touch(share[0])

    def apply_quota(self, obj: Mapping[str, Any], deleted: bool = False) -> None:
        view = QuotaView.from_json(obj)
        with self._lock:
            if deleted or not view.items:
                self.quotas.pop(view.key, None)
            else:
                self.quotas[view.key] = view

    def _touch(self, node: str) -> None:
        """The overview row of ``node`` has changed (caller holds the lock)."""
        self._dirty.add(node)
        self.rows_version += 1

    def _account(self, pod: PodView, sign: int) -> None:
        key = pod.key
        if pod.counts:
            requested = self.requested.setdefault(pod.node_name, {})
            _add_into(requested, pod.requests, sign)
            _add_into(requested, _ONE_POD, sign)  # each pod takes one of the node's "pods"
            _add_into(self.limits.setdefault(pod.node_name, {}), pod.limits, sign)
            if pod.extended_requests:
                members = self.node_pods.setdefault(pod.node_name, set())
                if sign > 0:
                    members.add(key)
                else:
                    members.discard(key)
        if pod.unschedulable is not None:
            if sign > 0:
                self.unschedulable.add(key)
            else:
                self.unschedulable.discard(key)

    def _replace(self, kind: str, items: list[Mapping[str, Any]]) -> None:
        if kind == "nodes":
            nodes = {v.name: v for v in map(NodeView.from_json, items)}
            with self._lock:
                self._dirty.update(self.nodes)  # rows of vanished nodes are dropped too
                self.nodes, self._order = nodes, None
                self._dirty.update(nodes)
                self.rows_version += 1
        elif kind == "quotas":
            quotas = {v.key: v for v in map(QuotaView.from_json, items) if v.items}
            with self._lock:
                self.quotas = quotas
        else:
            with self._lock:
                self.pods, self.requested, self.limits = {}, {}, {}
                self.node_pods, self.unschedulable = {}, set()
                for view in map(PodView.from_json, items):
                    self.pods[view.key] = view
                    self._account(view, +1)
                self._dirty.update(self.nodes)
                self.rows_version += 1
        if self.freeze_gc:
            # What a list brought in lives until the next relist: move it out of the collector's
            # sight, so full collections no longer traverse the whole cache (objects are still
            # freed by reference counting when an event replaces them).
            gc.freeze()

    # ---- the watch loops -------------------------------------------------
    def _list_fn(self, kind: str) -> Callable[..., Any]:
        fns: dict[str, Callable[..., Any]] = {
            "nodes": self.core.list_node,
            "pods": self.core.list_pod_for_all_namespaces,
            "quotas": self.core.list_resource_quota_for_all_namespaces,
        }
        return fns[kind]

    def _list(self, kind: str) -> str:
        items: list[Mapping[str, Any]] = []
        cont: str | None = None
        while True:
            kwargs: dict[str, Any] = {"limit": self.page_size, "_preload_content": False}
            if cont:
                kwargs["_continue"] = cont
            resp = self._list_fn(kind)(_request_timeout=(5, 60), **kwargs)
            body = orjson.loads(resp.data)
            items.extend(body.get("items") or ())
            meta = body.get("metadata") or {}
            cont = meta.get("continue")
            if not cont:
                self._replace(kind, items)
                return str(meta.get("resourceVersion", ""))

    def _events(self, kind: str, rv: str) -> Iterator[dict[str, Any]]:
        resp = self._list_fn(kind)(
            watch=True,
            resource_version=rv,
            allow_watch_bookmarks=True,
            timeout_seconds=self.watch_timeout,
            _preload_content=False,
            _request_timeout=(5, self.watch_timeout + 30),
        )
        self._responses[kind] = resp
        try:
            buf = bytearray()
            for chunk in resp.stream(amt=None, decode_content=False):
                buf.extend(chunk)
                while (nl := buf.find(b"\n")) >= 0:
                    line = bytes(buf[:nl])
                    del buf[: nl + 1]
                    if line.strip():
                        yield orjson.loads(line)
        finally:
            self._responses.pop(kind, None)
            resp.release_conn()

    def _mark(
        self, kind: str, *, connected: bool, error: str | None = None, synced: bool | None = None
    ) -> None:
        with self._lock:
            st = self.status[kind]
            st.connected = connected
            st.error = error
            if synced is not None:
                st.synced = st.synced or synced
            if connected:
                st.last_ok = time.monotonic()

    def _run(self, kind: str) -> None:
        backoff = 0.5
        while not self._stop.is_set():
            try:
                rv = self._list(kind)
                self._mark(kind, connected=True, synced=True)
                with self._lock:
                    self.status[kind].relists += 1
                backoff = 0.5
                while not self._stop.is_set():
                    rv = self._watch_once(kind, rv)
                    self._mark(kind, connected=True)
            except Gone:
                log.info("watch of %s: resource version too old, relisting", kind)
                continue
            except Exception as exc:  # noqa: BLE001 - every failure means: reconnect later
                if self._stop.is_set():
                    return
                err = translate(exc)
                if isinstance(err, Gone):
                    continue
                log.warning("watch of %s failed: %s (retrying in %.1fs)", kind, err.message, backoff)
                if self.on_error is not None:
                    self.on_error(f"watch {kind}", type(err).__name__)
                self._mark(kind, connected=False, error=err.message)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 30.0)

    def _watch_once(self, kind: str, rv: str) -> str:
        apply = {"nodes": self.apply_node, "pods": self.apply_pod, "quotas": self.apply_quota}[kind]
        for event in self._events(kind, rv):
            etype = event.get("type")
            obj = event.get("object") or {}
            if etype == "ERROR":
                code = obj.get("code")
                if code == 410:
                    raise Gone(str(obj.get("message", "")))
                raise KubeError(f"watch error {code}: {obj.get('message', '')}", int(code or 0))
            rv = str((obj.get("metadata") or {}).get("resourceVersion") or rv)
            if etype != "BOOKMARK":
                apply(obj, deleted=etype == "DELETED")
            self._mark(kind, connected=True)
        return rv


def _abort(resp: Any) -> None:
    """Unblock a thread reading a watch: shut the socket down (close() would wait for its lock)."""
    sock = getattr(getattr(resp, "connection", None), "sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _rv_newer(new: str, old: str) -> bool:
    """resourceVersions are opaque; etcd-backed ones are integers, compare those."""
    try:
        return int(new) >= int(old)
    except ValueError:
        return True
