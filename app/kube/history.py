"""The Events this app writes about changes, read back for the history page.

Read with one paginated list of a single namespace (the reason as a field selector), kept for a
few seconds so that any number of viewers costs the API server one list per interval. Only
Events that say they come from this app (reporting component and field manager ``extres``) are
read, and each is dated by its creation time, which the API server sets: an Event written by
hand with a future time cannot sort itself above the real ones."""

from __future__ import annotations

import threading
import time
from typing import Any

from kubernetes import client

from app.domain.history import Change, parse_change
from app.kube.errors import translate
from app.kube.writer import EVENT_REASON, FIELD_MANAGER

KEPT_SECONDS = 5.0
LIMIT = 1000  # the newest this many Events at most (the API server keeps them for --event-ttl)


class History:
    def __init__(self, api: client.ApiClient, namespace: str, timeout: float) -> None:
        self.core = client.CoreV1Api(api)
        self.namespace = namespace
        self.timeout = timeout
        self._kept: tuple[float, list[Change]] | None = None
        self._lock = threading.Lock()

    def recent(self) -> list[Change]:
        """The changes recorded, newest first; raises KubeError when they cannot be read."""
        with self._lock:
            if self._kept is not None and time.monotonic() - self._kept[0] < KEPT_SECONDS:
                return self._kept[1]
            try:
                changes = self._read()
            except Exception as exc:
                raise translate(exc) from exc
            self._kept = (time.monotonic(), changes)
            return changes

    def _read(self) -> list[Change]:
        out: list[Change] = []
        token = None
        while len(out) < LIMIT:
            page: Any = self.core.list_namespaced_event(
                self.namespace,
                field_selector=f"reason={EVENT_REASON}",
                limit=min(500, LIMIT - len(out)),
                _continue=token,
                _request_timeout=self.timeout,
            )
            for e in page.items:
                managers = {f.manager for f in e.metadata.managed_fields or ()}
                if e.reporting_component != FIELD_MANAGER or FIELD_MANAGER not in managers:
                    continue
                when = e.metadata.creation_timestamp
                stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ") if when else ""
                change = parse_change(stamp, e.involved_object.name or "", e.message or "")
                if change is not None:
                    out.append(change)
            token = page.metadata._continue
            if not token:
                break
        return sorted(out, key=lambda c: (c.when, c.node), reverse=True)
