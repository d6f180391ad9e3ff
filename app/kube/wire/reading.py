"""Reading list pages and watch events one object at a time: one bad object never stops the rest.

A page is decoded whole (the fast path); only when that fails is it decoded item by item, so that
the objects that can be read are kept and each one that cannot becomes an ``Unreadable``: its
kind, namespace and name, and where in it decoding failed. The same holds for a watch event.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, Protocol, TypeVar

import msgspec

from app.domain.accounting import PER_SOURCE
from app.domain.quantity import QuantityError
from app.kube.wire.decoders import Ident, ListMeta, Meta, Node, ObjectList, Pod, Quota
from app.kube.wire.dra import (
    ClaimView,
    ClassView,
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceSlice,
    SliceView,
    TaintRuleView,
)
from app.kube.wire.kueue import (
    ClusterQueueView,
    FlavorView,
    KueueClusterQueue,
    KueueLocalQueue,
    KueueResourceFlavor,
    KueueWorkload,
    LocalQueueView,
    WorkloadView,
)
from app.kube.wire.projections import NodeView, PodView, QuotaView

log = logging.getLogger(__name__)

# JSON nesting: the API server keeps objects nested up to 10,000 deep (its decoder's limit, as Go's
# encoding/json), and a DRA driver's opaque parameters or a claim's device data are free-form. msgspec
# counts its depth against Python's recursion limit (1,000 by default): past it, the watch of that
# kind would fail on the one object again and again. Raised once, so that everything the API server
# can send decodes (a decode recurses in C, a few hundred bytes of a thread's 8 MiB stack a level).
API_NESTING = 10_000
if sys.getrecursionlimit() < API_NESTING + 2_000:
    sys.setrecursionlimit(API_NESTING + 2_000)


class _Object(Protocol):
    metadata: Meta | None


S = TypeVar("S", bound=_Object)  # a decoded struct
V = TypeVar("V")  # its view

# What reading an object can raise besides a decode error: a projection meeting a value it
# cannot use (a quantity out of syntax, a number where a name goes).
_PROJECTION_ERRORS = (QuantityError, ValueError, TypeError, AttributeError, RecursionError)
KEPT_PER_KIND = 1000  # unreadable objects named per kind (each one is counted, named or not)


@dataclass(frozen=True, slots=True)
class Unreadable:
    kind: str  # the cache's kind: pods, nodes, quotas
    namespace: str
    name: str
    resource_version: str
    reason: str  # msgspec's message, with the path: "Expected `str`, got `int` - at `$.spec...`"

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    def __str__(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{where or '(unnamed)'}: {self.reason}"


@dataclass(frozen=True, slots=True)
class Page(Generic[V]):
    views: list[V]
    unreadable: list[Unreadable]
    cont: str | None
    resource_version: str


class _RawList(msgspec.Struct):
    metadata: Any = None
    items: list[msgspec.Raw] | None = None


_RAW_LIST = msgspec.json.Decoder(_RawList)
_IDENT = msgspec.json.Decoder(Ident)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


class Reader(Generic[S, V]):
    """Decodes and projects one kind's list pages and watch events."""

    def __init__(self, kind: str, struct: type[S], project: Callable[[S], V]) -> None:
        self.kind = kind
        self.project = project
        self._item = msgspec.json.Decoder(struct)
        self._page = msgspec.json.Decoder(ObjectList[struct])  # type: ignore[valid-type]

    def page(self, data: bytes | bytearray) -> Page[V]:
        try:
            whole = self._page.decode(data)
            views = list(map(self.project, whole.items or ()))
            meta = whole.metadata or ListMeta()
            return Page(views, [], meta.cont, meta.resource_version or "")
        except (msgspec.ValidationError, *_PROJECTION_ERRORS):
            pass  # some item cannot be read: read them one by one
        raw = _RAW_LIST.decode(data)  # not even a list: let it raise
        views, bad = [], []
        for item in raw.items or ():
            view, _, problem = self.one(item)
            if view is not None:
                views.append(view)
            if problem is not None:
                bad.append(problem)
        raw_meta = raw.metadata if isinstance(raw.metadata, dict) else {}
        return Page(views, bad, raw_meta.get("continue") or None, _text(raw_meta.get("resourceVersion")))

    def one(self, raw: bytes) -> tuple[V | None, str, Unreadable | None]:
        """An object's view and resourceVersion, or why it could not be read."""
        try:
            obj = self._item.decode(raw)
            view = self.project(obj)
        except (msgspec.ValidationError, *_PROJECTION_ERRORS) as exc:
            problem = self.unreadable(raw, exc)
            return None, problem.resource_version, problem
        return view, (obj.metadata and obj.metadata.resource_version) or "", None

    def unreadable(self, raw: bytes, exc: Exception) -> Unreadable:
        try:
            meta = _IDENT.decode(raw).metadata
        except msgspec.DecodeError:
            meta = None
        meta = meta if isinstance(meta, dict) else {}
        reason = str(exc) if isinstance(exc, msgspec.ValidationError) else f"{type(exc).__name__}: {exc}"
        return Unreadable(
            self.kind,
            _text(meta.get("namespace")),
            _text(meta.get("name")),
            _text(meta.get("resourceVersion")),
            reason[:300],
        )


NODES: Reader[Node, NodeView] = Reader("nodes", Node, NodeView.from_struct)
QUOTAS: Reader[Quota, QuotaView] = Reader("quotas", Quota, QuotaView.from_struct)
DRA: tuple[Reader[Any, Any], ...] = (
    Reader("deviceclasses", DeviceClass, ClassView.from_struct),
    Reader("resourceslices", ResourceSlice, SliceView.from_struct),
    Reader("resourceclaims", ResourceClaim, ClaimView.from_struct),
    Reader("devicetaintrules", DeviceTaintRule, TaintRuleView.from_struct),
)


KUEUE: tuple[Reader[Any, Any], ...] = (
    Reader("workloads", KueueWorkload, WorkloadView.from_struct),
    Reader("localqueues", KueueLocalQueue, LocalQueueView.from_struct),
    Reader("clusterqueues", KueueClusterQueue, ClusterQueueView.from_struct),
    Reader("resourceflavors", KueueResourceFlavor, FlavorView.from_struct),
)


def readers(rule: str = PER_SOURCE) -> dict[str, Reader[Any, Any]]:
    """A reader per kind; pods are counted by ``rule`` (the API server's version's resize rule)."""
    pods: Reader[Pod, PodView] = Reader("pods", Pod, partial(PodView.from_struct, rule=rule))
    every: list[Reader[Any, Any]] = [NODES, pods, QUOTAS, *DRA, *KUEUE]
    return {r.kind: r for r in every}


READERS = readers()
PODS: Reader[Pod, PodView] = READERS["pods"]


class UnreadableLog:
    """The objects of each kind that could not be read, for the banner, /readyz and the log.

    Each is logged once (when it first fails, or fails differently); an object leaves the log when
    it is deleted or read again. At most ``KEPT_PER_KIND`` are named per kind."""

    def __init__(self) -> None:
        self._kinds: dict[str, dict[tuple[str, str], Unreadable]] = {}
        self.failures: dict[str, int] = {}  # every failed read, for extres_decode_errors_total
        self._lock = threading.Lock()

    def replace(self, kind: str, found: list[Unreadable]) -> None:
        """A relist: what it could not read is all that is unreadable of that kind now."""
        with self._lock:
            before = self._kinds.get(kind, {})
            kept: dict[tuple[str, str], Unreadable] = {}
            for problem in found:
                if len(kept) < KEPT_PER_KIND:
                    kept[problem.key] = problem
                self._count(problem, before.get(problem.key))
            self._kinds[kind] = kept

    def failed(self, problem: Unreadable) -> None:
        with self._lock:
            kept = self._kinds.setdefault(problem.kind, {})
            self._count(problem, kept.get(problem.key))
            if problem.key in kept or len(kept) < KEPT_PER_KIND:
                kept[problem.key] = problem

    def read(self, kind: str, key: tuple[str, str]) -> None:
        """The object was read, or is gone."""
        with self._lock:
            kept = self._kinds.get(kind)
            gone = kept.pop(key, None) if kept else None
        if gone is not None:
            log.info("%s %s can be read again, or is gone", kind, "/".join(filter(None, key)))

    def _count(self, problem: Unreadable, known: Unreadable | None) -> None:
        self.failures[problem.kind] = self.failures.get(problem.kind, 0) + 1
        if known is None or known.reason != problem.reason:
            log.error("%s could not be read, left out: %s", problem.kind, problem)

    def counts(self) -> dict[str, int]:
        with self._lock:
            return {kind: len(kept) for kind, kept in self._kinds.items() if kept}

    def named(self, limit: int = 10) -> list[Unreadable]:
        with self._lock:
            return [p for kept in self._kinds.values() for p in kept.values()][:limit]
