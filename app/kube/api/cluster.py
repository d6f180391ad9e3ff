"""The app's connection to one cluster (API client, the watch-fed store, access reviews, the
change history): what ``app.kube.api.ports.ClusterPort`` asks for."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from app.base import audit
from app.domain.selector_answers import Answers
from app.kube.api import raw
from app.kube.api.access import Access, Identity
from app.kube.api.admission_reads import AdmissionReads
from app.kube.api.cache import ClusterCache
from app.kube.api.capacity_log import CapacityLog
from app.kube.api.client import ClusterConfig, api_client, load_configuration
from app.kube.api.freshness import Freshness, WatchCounters
from app.kube.api.pod_reads import PodReads
from app.kube.api.revocations import Revocations
from app.kube.api.writer import NodeWriter
from app.kube.state.store import Store
from app.kube.wire.reading import Unreadable

if TYPE_CHECKING:
    from kubernetes import client

log = logging.getLogger(__name__)


class Cluster:
    """Created once per app; the watches start on first use, never at import or fork time."""

    def __init__(
        self,
        cfg: ClusterConfig,
        *,
        page_size: int = 500,
        stream_lists: bool = False,
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
        answers: Answers | None = None,
        capacity_log: CapacityLog | None = None,
        team_label: str = "",
    ) -> None:
        """``answers``: the runtime's selector answers, given to the store. ``capacity_log``: where
        this cluster's capacity changes are recorded when not in its own store (a member's, kept
        by the dashboard's own cluster: ``history_of``)."""
        self.cfg = cfg
        self.event_namespace = event_namespace
        self.request_timeout = request_timeout
        self.configuration: client.Configuration = load_configuration(cfg)
        self.api = api_client(self.configuration)
        self.cache = ClusterCache(
            self.api,
            page_size=page_size,
            watch_timeout=watch_timeout,
            streaming=stream_lists,
            store=Store(answers, team_label),
            held=raw.member_share() if cfg.member is not None else raw.HELD,
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
        self._history = (history_store, keys, history_days)
        self.capacity_log = capacity_log or self.history_of("")
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

    def start(self, first_sync_wait: float = 3.0) -> None:
        """Start the watches, the revocation reader and the history writer (each where it is
        set), once; the caller waits up to ``first_sync_wait`` seconds so the first page is not
        empty (until the nodes are known: pods may still be counting)."""
        if self._start_watches and not self._started.is_set():
            self._started.set()
            self.revocations.start()
            self.capacity_log.start()
            self.cache.start()
            self.cache.wait_offered(first_sync_wait)

    def _log_size(self, kind: str) -> None:
        log.info("cache synced %s: holds %s", kind, self.cache.store.objects.size())

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

    def history_of(self, member: str) -> CapacityLog:
        """A capacity log of cluster ``member`` ("": this one) kept in this cluster's history
        store, its records named by their cluster (app.domain.capacity_log)."""
        store, keys, days = self._history
        return CapacityLog(
            self.api,
            store,
            keys,
            timeout=self.request_timeout,
            keep_days=days,
            unreachable=lambda: self.cache.readiness.problem is not None,
            cluster=member,
        )

    def member_kubeconfigs(self, namespace: str, selector: str, most: int) -> list[tuple[str, bytes]]:
        """The member clusters' kubeconfigs kept in this cluster's Secrets (app.kube.api.member_secrets)."""
        from app.kube.api.member_secrets import MemberSecrets

        return MemberSecrets(lambda: self.api, namespace, selector, most).read()

    def close(self) -> None:
        self.revocations.stop()
        self.capacity_log.stop()
        self.access.close()
        self.cache.stop()
        self.api.close()
