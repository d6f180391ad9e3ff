"""What admission reads for a pasted pod (``app.domain.admission``): the RuntimeClasses and the
LimitRanges, each listed cluster-wide at most once per ``KEPT_SECONDS`` whatever the namespace
asked (so a request naming many namespaces costs no more), bounded in what is kept, and never
waited on once read (``KeptRead``)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import msgspec
from kubernetes import client

from app.domain.admission import LimitRange, Namespace, RuntimeClass
from app.kube.api import raw
from app.kube.api.errors import KubeError, NotFound, translate
from app.kube.api.kept import KeptRead
from app.kube.wire.decoders import RAW_LIST, ListMeta

log = logging.getLogger(__name__)
KEPT_SECONDS = 30.0
MAX_ITEMS = 2000  # of each kind: more are left out (and the notes say admission was not applied)


class _Meta(msgspec.Struct):
    name: str = ""
    namespace: str = ""


class _Overhead(msgspec.Struct, rename="camel"):
    pod_fixed: dict[str, str] | None = None


class _Scheduling(msgspec.Struct, rename="camel"):
    node_selector: dict[str, str] | None = None
    tolerations: list[dict[str, Any]] | None = None


class _RuntimeClass(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    overhead: _Overhead | None = None
    scheduling: _Scheduling | None = None


class _LimitItem(msgspec.Struct, rename="camel"):
    type: str = ""
    default: dict[str, str] | None = None
    default_request: dict[str, str] | None = None


class _LimitSpec(msgspec.Struct):
    limits: list[_LimitItem] | None = None


class _LimitRange(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    spec: _LimitSpec = msgspec.field(default_factory=_LimitSpec)


RUNTIME_CLASS = msgspec.json.Decoder(_RuntimeClass)
LIMIT_RANGE = msgspec.json.Decoder(_LimitRange)


def _items(api: client.ApiClient, path: str, timeout: float) -> tuple[list[msgspec.Raw], bool]:
    """Every item of a paginated list, and whether they all fit in MAX_ITEMS."""
    out: list[msgspec.Raw] = []
    token = None
    while True:
        query: dict[str, Any] = {"limit": 500, **({"continue": token} if token else {})}
        page = RAW_LIST.decode(raw.body(raw.get(api, path, query, timeout)))
        out.extend(page.items or ())
        token = (page.metadata or ListMeta()).cont
        if not token:
            return out, True
        if len(out) >= MAX_ITEMS:
            return out[:MAX_ITEMS], False


class AdmissionReads:
    def __init__(
        self, api: client.ApiClient, timeout: float, unreachable: Callable[[], bool] = lambda: False
    ) -> None:
        self.api = api
        self.timeout = timeout
        self._classes = KeptRead(self._read_classes, KEPT_SECONDS, unreachable, "runtimeclasses")
        self._ranges = KeptRead(self._read_ranges, KEPT_SECONDS, unreachable, "limitranges")

    def namespace(self, name: str) -> Namespace:
        """What admission reads for a pod in namespace ``name``; ``known`` False when it could not
        be read (no right to, the API server down, or more than MAX_ITEMS)."""
        try:
            classes, _ = self._classes.get()
            ranges, _ = self._ranges.get()
        except KubeError as exc:
            log.info("admission objects not read: %s [%s]", exc.message, exc.detail)
            return Namespace(known=False)
        if classes is None or ranges is None:
            return Namespace(known=False)
        return Namespace(classes, tuple(ranges.get(name, ())))

    def _read_classes(self) -> dict[str, RuntimeClass] | None:
        try:
            raw, whole = _items(self.api, "/apis/node.k8s.io/v1/runtimeclasses", self.timeout)
        except Exception as exc:
            if isinstance(translate(exc), NotFound):  # no node.k8s.io/v1 here: no RuntimeClass either
                return {}
            raise
        if not whole:
            return None
        out = {}
        for item in raw:
            try:
                rc = RUNTIME_CLASS.decode(item)
            except msgspec.DecodeError:
                return None  # one unreadable: what admission does is not known
            sched = rc.scheduling or _Scheduling()
            out[rc.metadata.name] = RuntimeClass(
                rc.metadata.name,
                dict((rc.overhead.pod_fixed if rc.overhead else None) or {}),
                dict(sched.node_selector or {}),
                tuple(sched.tolerations or ()),
            )
        return out

    def _read_ranges(self) -> dict[str, list[LimitRange]] | None:
        raw, whole = _items(self.api, "/api/v1/limitranges", self.timeout)
        if not whole:
            return None
        out: dict[str, list[LimitRange]] = {}
        for item in raw:
            try:
                lr = LIMIT_RANGE.decode(item)
            except msgspec.DecodeError:
                return None
            for limit in lr.spec.limits or ():
                if limit.type == "Container":
                    out.setdefault(lr.metadata.namespace, []).append(
                        LimitRange(
                            lr.metadata.name, dict(limit.default or {}), dict(limit.default_request or {})
                        )
                    )
        return out
