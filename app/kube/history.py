"""The Events this app writes about changes, read back for the history page.

Read with paginated lists of a single namespace (the reason as a field selector, the app's label
as a label selector), kept for a few seconds so that any number of viewers costs the API server
one read per interval. Only Events sealed by this app (``app.domain.history.sealed``) count; each
is dated by its creation time, which the API server sets, and a seal seen twice (a copy) counts
once. Anyone allowed to create Events could flood the namespace to push real ones out: the read
is bounded (``SCANNED`` Events, decoded one by one and dropped), keeps the newest ``LIMIT``
changes, and says when it stopped at its bound, so a drowned history is reported, not hidden."""

from __future__ import annotations

import heapq
import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

import msgspec
from kubernetes import client

from app.domain.history import SEAL_ANNOTATION, Change, Recent, parse_change, sealed
from app.kube.decoders import RAW_LIST, ListMeta
from app.kube.kept import KeptRead
from app.kube.writer import EVENT_LABELS, EVENT_REASON

log = logging.getLogger(__name__)
KEPT_SECONDS = 5.0
LIMIT = 1000  # the newest this many changes are shown
SCANNED = 5000  # Events read at most per refresh (the API server keeps them for --event-ttl)
PAGE = 500


class _Meta(msgspec.Struct):
    name: str = ""
    creationTimestamp: str = ""
    annotations: dict[str, str] | None = None


class _Involved(msgspec.Struct):
    name: str = ""


class _Event(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    involvedObject: _Involved = msgspec.field(default_factory=_Involved)
    message: str = ""


EVENT = msgspec.json.Decoder(_Event)


class History:
    def __init__(
        self,
        api: client.ApiClient,
        namespace: str,
        timeout: float,
        keys: tuple[str, ...] = (),
        unreachable: Callable[[], bool] = lambda: False,
    ) -> None:
        self.core = client.CoreV1Api(api)
        self.namespace = namespace
        self.timeout = timeout
        self.keys = keys  # the secret key and the previous ones: seals made with any of them count
        self._kept = KeptRead(self._read, KEPT_SECONDS, unreachable, "history")

    def recent(self) -> Recent:
        """The changes recorded, newest first, read at most once per ``KEPT_SECONDS`` and never
        waited on once read (``KeptRead``); marked stale while the API server does not answer.
        Raises KubeError only when it was never read and cannot be now."""
        self._kept.keep_seconds = KEPT_SECONDS
        found, stale = self._kept.get()
        return replace(found, stale=True) if stale else found

    def _read(self) -> Recent:
        newest: list[tuple[str, str, int, Change]] = []  # a heap of the newest LIMIT changes
        seen: set[str] = set()
        left_out = scanned = 0
        token = None
        labels = ",".join(f"{k}={v}" for k, v in EVENT_LABELS.items())
        while scanned < SCANNED:
            resp: Any = self.core.list_namespaced_event(
                self.namespace,
                field_selector=f"reason={EVENT_REASON}",
                label_selector=labels,
                limit=min(PAGE, SCANNED - scanned),
                _continue=token,
                _preload_content=False,
                _request_timeout=self.timeout,
            )
            page = RAW_LIST.decode(resp.data)
            items = page.items or []
            scanned += len(items)
            for raw in items:
                change = self._change(raw, seen)
                if change is None:
                    left_out += 1
                    continue
                item = (change.when, change.node, len(seen), change)
                if len(newest) < LIMIT:
                    heapq.heappush(newest, item)
                else:
                    heapq.heappushpop(newest, item)
            token = (page.metadata or ListMeta()).cont
            if not token:
                break
        if token:
            log.warning("history: stopped after %d Events in %s (a flood?)", scanned, self.namespace)
        if left_out:
            log.warning(
                "history: %d Events in %s not sealed by this app, or copies", left_out, self.namespace
            )
        changes = [c for *_, c in sorted(newest, reverse=True)]
        return Recent(changes, left_out=left_out, incomplete=bool(token))

    def _change(self, raw: msgspec.Raw, seen: set[str]) -> Change | None:
        """The change one sealed Event records, or None (unreadable, left_out, or a copy)."""
        try:
            e = EVENT.decode(raw)
            created = datetime.fromisoformat(e.metadata.creationTimestamp.replace("Z", "+00:00"))
        except (msgspec.DecodeError, ValueError):
            return None
        value = (e.metadata.annotations or {}).get(SEAL_ANNOTATION, "")
        node, message = e.involvedObject.name, e.message
        if value in seen or not sealed(self.keys, node, message, value, int(created.timestamp())):
            return None
        seen.add(value)
        return parse_change(created.strftime("%Y-%m-%dT%H:%M:%SZ"), node, message)
