"""The app's connection to one cluster (API client, the watch-fed store, access reviews, the
change history) and ``ClusterPort``, what the web layer needs of it: tests pass a fake."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol

from kubernetes import client

from app import audit
from app.domain.admission import Namespace
from app.domain.pod_details import PodDetails
from app.kube.api.access import Access, Identity
from app.kube.api.admission_reads import AdmissionReads
from app.kube.api.cache import ClusterCache
from app.kube.api.capacity_log import CapacityLog, Kept
from app.kube.api.client import ClusterConfig, api_client, load_configuration
from app.kube.api.freshness import Freshness, WatchCounters
from app.kube.api.pod_reads import PodReads
from app.kube.api.revocations import Revocations
from app.kube.api.writer import NodeWriter
from app.kube.state.store import Store
from app.kube.wire.reading import Unreadable

log = logging.getLogger(__name__)


class AccessPort(Protocol):
    def authenticate(self, identity: Identity, client_address: str = "") -> Identity | None: ...
    def accepted_lately(self, identity: Identity) -> bool: ...
    def check(self, identity: Identity, verb: str, resource: str, subresource: str = "") -> bool: ...
    def allowed(self, identity: Identity, verb: str, resource: str, subresource: str = "") -> bool: ...
    def can_edit(self, identity: Identity) -> bool: ...


class RevocationPort(Protocol):
    def revoked(self, session_id: str) -> bool: ...
    def revoke(self, session_id: str, until: float) -> None: ...
    def full(self) -> str | None: ...
    @property
    def read_at(self) -> float | None: ...
    @property
    def skipped(self) -> int: ...


class AdmissionPort(Protocol):
    def namespace(self, name: str) -> Namespace: ...


class PodReadsPort(Protocol):
    def details(self, namespace: str, name: str) -> PodDetails: ...


class CapacityLogPort(Protocol):
    namespace: str
    prefix: str
    keep_days: int
    problem: str | None
    writes: bool  # a history key is set: changes are recorded

    @property
    def enabled(self) -> bool: ...
    def read(self, since: str = "", until: str = "") -> Kept: ...


class ClusterPort(Protocol):
    """What the pages use: a Store to read, how fresh it is, access reviews, history, writes."""

    @property
    def store(self) -> Store: ...
    @property
    def access(self) -> AccessPort: ...
    @property
    def capacity_log(self) -> CapacityLogPort: ...
    @property
    def revocations(self) -> RevocationPort: ...
    @property
    def admission(self) -> AdmissionPort: ...
    @property
    def pods(self) -> PodReadsPort: ...
    @property
    def server(self) -> str: ...
    def ensure_started(self, first_sync_wait: float = 3.0) -> None: ...
    def freshness(self) -> Freshness: ...
    def unreadable_named(self) -> list[Unreadable]: ...
    def watch_counters(self) -> dict[str, WatchCounters]: ...
    def dra_state(self) -> str: ...
    def writer_for(self, identity: Identity, who: audit.Who | None = None) -> NodeWriter: ...
    def close(self) -> None: ...


class Cluster:
    """Created once per app; the watches start on first use, never at import or fork time."""

    def __init__(
        self,
        cfg: ClusterConfig,
        *,
        page_size: int = 500,
        stream_lists: bool = True,
        watch_timeout: int = 240,
        request_timeout: float = 10.0,
        start_watches: bool = True,
        event_namespace: str = "default",
        session_store: str | None = None,
        history_store: str | None = None,
        history_days: int = 31,
        keys: tuple[str, ...] = (),
        token_reviews_per_minute: int = 120,
        on_error: Callable[[str, str], None] | None = None,
    ) -> None:
        self.cfg = cfg
        self.event_namespace = event_namespace
        self.request_timeout = request_timeout
        self.configuration: client.Configuration = load_configuration(cfg)
        self.api = api_client(self.configuration)
        self.cache = ClusterCache(
            self.api, page_size=page_size, watch_timeout=watch_timeout, streaming=stream_lists
        )
        self.cache.on_sync = self._log_size
        self.cache.on_error = on_error
        self.access = Access(
            self.configuration,
            self.api,
            request_timeout,
            unreachable=lambda: self.cache.readiness.problem is not None,
            reviews_per_minute=token_reviews_per_minute,
        )
        self.admission = AdmissionReads(
            self.api, request_timeout, unreachable=lambda: self.cache.readiness.problem is not None
        )
        self.pods = PodReads(self.api, request_timeout)
        self.revocations = Revocations(
            self.api,
            session_store,
            timeout=request_timeout,
            unreachable=lambda: self.cache.readiness.problem is not None,
        )
        self.capacity_log = CapacityLog(
            self.api,
            history_store,
            keys,
            timeout=request_timeout,
            keep_days=history_days,
            unreachable=lambda: self.cache.readiness.problem is not None,
        )
        self.cache.on_node_event = self.capacity_log.observe
        self._start_watches = start_watches
        self._started = threading.Event()

    @property
    def server(self) -> str:
        return str(self.configuration.host)

    @property
    def store(self) -> Store:
        return self.cache.store

    def freshness(self) -> Freshness:
        return self.cache.freshness()

    def unreadable_named(self) -> list[Unreadable]:
        return self.cache.unreadable.named()

    def watch_counters(self) -> dict[str, WatchCounters]:
        return self.cache.counters()

    def dra_state(self) -> str:
        """Whether DRA objects are read: "served", "absent", "forbidden" or "unknown"."""
        return self.cache.dra

    def ensure_started(self, first_sync_wait: float = 3.0) -> None:
        """Start the watches; the first caller waits briefly so the first page is not empty."""
        if self._start_watches and not self._started.is_set():
            self._started.set()
            self.cache.start()
            self.cache.wait_synced(first_sync_wait)

    def _log_size(self, kind: str) -> None:
        log.info("cache synced %s: holds %s", kind, self.cache.store.size())

    def writer_for(self, identity: Identity, who: audit.Who | None = None) -> NodeWriter:
        """Writes go out as the acting user, so the API server's RBAC decides too; ``who`` is
        on their audit lines."""
        return NodeWriter(
            self.access.client_for(identity),
            timeout=self.request_timeout,
            on_node=self.cache.store.apply_node,
            on_error=self.cache.on_error,
            event_namespace=self.event_namespace,
            who=who,
            on_changed=self.capacity_log.own,
        )

    def close(self) -> None:
        self.revocations.stop()
        self.capacity_log.stop()
        self.access.close()
        self.cache.stop()
        self.api.close()
