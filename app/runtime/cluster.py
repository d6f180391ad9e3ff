"""What runs for one cluster, built from Settings, with one ``start`` and one ``stop``: the
selector evaluator and its kept answers, the cluster (its watches and store, the revocation
reader, the history writer), the GPU usage poller and its child, the metrics; and the answers
what the reads (app.runtime.reads) read: handles and their lifecycle, no answers of its own.

The web reaches it through the viewer (app.web.viewer). Every thread it starts goes through
app.base.workers, every child through app.sandbox.bounded_child."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from app.base import logs
from app.base.memo import VersionedMemo
from app.domain.device_plugins import DevicePluginRule
from app.domain.diagnosis import ShapeCache
from app.domain.gpu_usage import PodKey, Reading
from app.domain.member_kubeconfig import Member
from app.domain.usage_mapping import UsageMapping
from app.kube.api.cluster_config import ClusterConfig
from app.kube.api.errors import KubeError
from app.metrics.families import Metrics
from app.runtime import reads
from app.sandbox import cel_sandbox
from app.settings.config import Settings
from app.usage import refresh
from app.usage.poller import Source, UsagePoller

if TYPE_CHECKING:
    from app.kube.api.capacity_log import CapacityLog
    from app.kube.api.ports import ClusterPort

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Step:
    """One thing a runtime starts and stops: ``start`` runs them in order, ``stop`` in reverse."""

    name: str
    what: str
    up: Callable[[], None]
    down: Callable[[], None]


class Runtime:
    def __init__(
        self,
        settings: Settings,
        cluster: ClusterPort | None = None,
        usage_source: Source | None = None,
        *,
        member: Member | None = None,
        home: Runtime | None = None,
    ) -> None:
        """``cluster``: given (tests pass a fake or their own), else connected on first use (to
        ``member``, a member cluster's checked kubeconfig, when given; else as the settings say);
        ``usage_source``: where usage is asked in this process (tests), else a child asks;
        ``home``: the dashboard's own cluster's runtime, which keeps a member's capacity history."""
        self.settings = settings
        self.member = member
        self._home = home
        self.name = member.name if member is not None else settings.cluster_name
        self.answers = cel_sandbox.answers(settings.selector_evaluator)  # given to the store
        self.device_plugins = DevicePluginRule(settings.device_plugin_resources)
        self._cluster = cluster
        if cluster is not None:  # made before this runtime (tests, benches): its store is answered here
            cluster.store.devices.answer_with(self.answers)
            cluster.store.gpu_hours.team_label = settings.team_label
        self.metrics = Metrics(lambda: self._cluster, self.answers)
        self.shapes = ShapeCache()  # pending pods' and planned shapes, with their per-node results
        self.memos: dict[str, VersionedMemo] = {}  # the read model's, one per read (app.runtime.reads)
        self._lock = threading.Lock()
        self._started = False
        # None: no Prometheus set, no usage anywhere
        self.usage = self._usage_poller(settings, usage_source)

    # ---- start and stop ----------------------------------------------------------------------
    def steps(self, first_sync_wait: float = 0) -> tuple[Step, ...]:
        """What ``start`` starts, in this order (``stop``: the reverse)."""
        return (
            Step(
                "selector evaluator",
                "nothing yet (its child starts when first asked, never before a fork)",
                lambda: None,
                self.answers.close,
            ),
            Step(
                "cluster",
                "its watches (the store fills), the revocation reader, the history writer",
                lambda: self._start_cluster(first_sync_wait),
                lambda: self._cluster.close() if self._cluster is not None else None,
            ),
            Step(
                "usage poller",
                "its first refresh at once, in a child",
                lambda: self.usage.start() if self.usage is not None else None,
                lambda: self.usage.close() if self.usage is not None else None,
            ),
        )

    def start(self, first_sync_wait: float = 0) -> None:
        """Start each step, once: the served worker calls it once it is up, so the first sync runs
        before anyone asks. Without a cluster, the usage poller alone (pages say why)."""
        with self._lock:
            if self._started:
                return
            self._started = True
        with logs.about(self.name):  # what its threads log names it
            for step in self.steps(first_sync_wait):
                step.up()

    def stop(self) -> None:
        """Stop what ``start`` started, in the reverse order: the usage poller, the cluster (the
        history's last records written), the evaluator's child."""
        for step in reversed(self.steps()):
            step.down()

    def _start_cluster(self, first_sync_wait: float) -> None:
        try:
            self._connected().start(first_sync_wait)
        except KubeError as exc:
            log.warning("not connected to a cluster: %s", exc.message)

    @property
    def cluster(self) -> ClusterPort:
        """The cluster connection (made on first use); raises NotConfigured (a KubeError) when
        there is none. Reading it starts nothing: ``start`` does (the served worker's process
        steps; a test or bench that serves no worker calls it itself)."""
        return self._connected()

    @property
    def connected(self) -> ClusterPort | None:
        """The cluster connection if it was made (nothing is connected by asking)."""
        return self._cluster

    def _connected(self) -> ClusterPort:
        if self._cluster is None:
            with self._lock:
                if self._cluster is None:
                    from app.kube.api.cluster import Cluster  # the Kubernetes client: after the worker serves

                    s = self.settings
                    self._cluster = Cluster(
                        ClusterConfig(s.in_cluster, s.kubeconfig, s.context, self.member),
                        page_size=s.list_page_size,
                        stream_lists=s.stream_lists,
                        watch_timeout=s.watch_timeout,
                        request_timeout=s.request_timeout,
                        start_watches=s.start_watches,
                        event_namespace=s.event_namespace,
                        session_store=s.session_store,
                        history_store=s.capacity_log,
                        history_days=s.history_days,
                        keys=(s.history_key, *s.previous_history_keys),
                        token_reviews_per_minute=s.token_reviews_per_minute,
                        on_error=self.metrics.api_error,
                        answers=self.answers,
                        capacity_log=self._history_at_home(),
                        team_label=s.team_label,
                    )
        return self._cluster

    def _history_at_home(self) -> CapacityLog | None:
        """A member's capacity log, kept in the dashboard's own cluster (None: its own, or none)."""
        if self._home is None:
            return None
        try:
            return self._home.cluster.history_of(self.name)
        except KubeError:  # the dashboard's own cluster is not configured: no history kept
            return None

    # ---- GPU usage ---------------------------------------------------------------------------
    def _usage_poller(self, s: Settings, source: Source | None) -> UsagePoller | None:
        """The background refresh of GPU usage: in a child process (app.usage.refresh), or, with
        a source given (tests), here."""
        if not s.prometheus_url:
            return None
        window = timedelta(minutes=s.usage_window_minutes)
        if s.prometheus_token_file and s.prometheus_url.startswith("http://"):
            log.warning(
                "EXTRES_PROMETHEUS_TOKEN_FILE is sent to %s in the clear (http://): use https:// to "
                "keep the token off the network",
                s.prometheus_url[:200],
            )
        child = refresh.child()

        def job() -> refresh.Job:
            url, token, ca = s.prometheus_url or "", s.prometheus_token_file, s.prometheus_ca_file
            pods, room = self._pod_nodes(), self._device_room(s.mappings)
            return refresh.Job(
                url, token, ca, s.usage_timeout, s.mappings, window, s.usage_max_series, pods, room
            )

        def fetch() -> Reading:
            if source is None:
                return refresh.in_child(job(), child)
            return refresh.collect(source, job(), datetime.now(UTC))

        def refreshed(seconds: float, ok: bool) -> None:
            self.metrics.usage_refreshed(seconds, ok)
            if ok:
                self._split_held()

        poller = UsagePoller(fetch, s.usage_refresh_seconds, on_refresh=refreshed)
        self.metrics.watch_usage(lambda: reads.usage_status(self), lambda: reads.idle_pods(self))
        return poller

    def _split_held(self) -> None:
        """GPU-hours held since the last usage read, split into used and idle by each pod's mean
        utilization as this read reports it (pods it does not name: neither)."""
        status = self.usage.status() if self.usage is not None else None
        reading = status.reading if status is not None else None
        if reading is None or self._cluster is None:
            return
        self._cluster.store.gpu_hours.busy(
            lambda pod: reading.pod_utilization(pod) if isinstance(pod, tuple) else None
        )

    def _pod_nodes(self) -> dict[PodKey, str]:
        """The running pods' nodes, as the cache knows them (empty without a cluster)."""
        try:
            return self.cluster.store.objects.pod_nodes()
        except KubeError:
            return {}

    def _device_room(self, mappings: tuple[UsageMapping, ...]) -> dict[str, int] | None:
        """Per node the cache knows, the devices an exporter may report there (None without a
        cluster: nothing to bound by)."""
        try:
            return self.cluster.store.device_room(lambda r: any(m.covers(r) for m in mappings))
        except KubeError:
            return None
