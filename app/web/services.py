"""The app's services: settings, the device-plugin rule, the cluster (given, or connected on
first use), metrics, the pending shapes' cache and the write slots."""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime, timedelta

from flask import current_app

from app.config import Settings
from app.domain.device_plugins import DevicePluginRule
from app.domain.diagnosis import ShapeCache
from app.domain.gpu_usage import PodKey, Reading
from app.domain.idle_pods import Holding, Idle, idle
from app.domain.ownership import Ownership, ownership_of, ownership_on
from app.domain.usage_mapping import UsageMapping
from app.kube.api.cluster_config import ClusterConfig
from app.kube.api.errors import KubeError
from app.kube.api.freshness import Freshness
from app.kube.api.ports import ClusterPort
from app.kube.wire.reading import Unreadable
from app.metrics import Metrics
from app.usage.poller import Source, UsagePoller, UsageStatus
from app.usage.refresh import Job, collect, in_child
from app.web.plan_limits import PlanLimits
from app.web.sign_in_limits import SignInLimits

log = logging.getLogger(__name__)


class Services:
    def __init__(
        self, settings: Settings, cluster: ClusterPort | None = None, usage_source: Source | None = None
    ) -> None:
        self.settings = settings
        self.device_plugins = DevicePluginRule(settings.device_plugin_resources)
        self._cluster = cluster  # given (tests pass a fake), else connected on first use
        self.metrics = Metrics(lambda: self._cluster)
        self.shapes = ShapeCache()  # pending pods' and planned shapes, with their per-node results
        self.write_slots = threading.BoundedSemaphore(max(1, settings.threads - 2))
        self.sign_ins = SignInLimits()  # failed sign-ins per client address and per token
        self.plans = PlanLimits(settings.plans_per_minute)  # What-if plans per user
        self._lock = threading.Lock()
        # None: no Prometheus set, no usage anywhere (tests may give a source of their own)
        self.usage = self._usage_poller(settings, usage_source)
        self._idle: tuple[Reading, tuple[int, int], list[Idle]] | None = (
            None  # the last idle list, by its inputs
        )

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

        def job() -> Job:
            url, token, ca = s.prometheus_url or "", s.prometheus_token_file, s.prometheus_ca_file
            pods, room = self._pod_nodes(), self._device_room(s.mappings)
            return Job(url, token, ca, s.usage_timeout, s.mappings, window, s.usage_max_series, pods, room)

        def fetch() -> Reading:
            return in_child(job()) if source is None else collect(source, job(), datetime.now(UTC))

        poller = UsagePoller(fetch, s.usage_refresh_seconds, on_refresh=self.metrics.usage_refreshed)
        self.metrics.watch_usage(self.usage_status, self.idle_pods)
        return poller

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

    def usage_status(self) -> UsageStatus | None:
        """GPU usage as last read (None when no Prometheus is set: pages show no usage at all)."""
        return self.usage.status() if self.usage is not None else None

    def idle_pods(self, reading: Reading | None = None) -> list[Idle]:
        """Running pods whose GPUs stayed under the idle threshold over the window, most
        device-hours first, as of ``reading`` (a page passes the one it shows; default: the
        last one; none without one)."""
        if reading is None:
            status = self.usage_status()
            reading = status.reading if status is not None else None
        if reading is None:
            return []
        try:
            store = self.cluster.store
        except KubeError:
            return []

        def holding(key: PodKey) -> Holding | None:
            pod = store.objects.pod(*key)
            if pod is None or not pod.counts:
                return None
            owner = f"{pod.owner.kind}/{pod.owner.name}" if pod.owner and pod.owner.name else ""
            return Holding(pod.namespace, pod.name, pod.node_name, _time(pod.created), owner)

        version = (store.rows_version, store.holders_version)  # holders come, go, move, change owner
        kept = self._idle
        if kept is not None and kept[0] is reading and kept[1] == version:
            return kept[2]
        found = idle(reading, holding, self.settings.idle_threshold_percent, reading.taken)
        self._idle = (reading, version, found)
        return found

    def idle_held(self, reading: Reading | None = None) -> dict[str, int]:
        """Per node, the GPUs its idle pods hold (``idle_pods``; shares of one GPU add up to it)."""
        found: dict[str, float] = {}
        for i in self.idle_pods(reading):
            found[i.holding.node] = found.get(i.holding.node, 0) + i.devices
        return {node: round(n) for node, n in found.items() if round(n)}

    @staticmethod
    def get() -> Services:
        services: Services = current_app.extensions["extres"]
        return services

    @property
    def cluster(self) -> ClusterPort:
        """The cluster connection, its watches started; raises NotConfigured (a KubeError) when
        there is none."""
        cluster = self._connected()
        cluster.ensure_started()
        return cluster

    def connect(self) -> None:
        """Start the watches now, not on the first request: the worker does it once it is up, so
        the first sync runs before anyone asks. Without a cluster, nothing (pages say why)."""
        try:
            self._connected().ensure_started(first_sync_wait=0)
        except KubeError as exc:
            log.warning("not connected to a cluster: %s", exc.message)
        if self.usage is not None:
            self.usage.start()

    def _connected(self) -> ClusterPort:
        if self._cluster is None:
            with self._lock:
                if self._cluster is None:
                    from app.kube.api.cluster import Cluster  # the Kubernetes client: after the worker serves

                    s = self.settings
                    self._cluster = Cluster(
                        ClusterConfig(s.in_cluster, s.kubeconfig, s.context),
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
                    )
        return self._cluster

    def freshness(self) -> Freshness:
        try:
            return self.cluster.freshness()
        except KubeError as exc:
            return Freshness(synced=False, stale=True, age_seconds=None, error=exc.message)

    def unreadable_named(self) -> list[Unreadable]:
        """A few of the objects the cache could not read (kind, name, where it failed)."""
        try:
            return self.cluster.unreadable_named()
        except KubeError:
            return []

    def ownership(self, resource: str, node: str | None = None) -> Ownership:
        """Who sets ``resource``'s amount (app.domain.ownership), on ``node`` when one is in
        question (as the scheduler decides there: its status first, else DRA devices there),
        else the name's owner: the one rule for every page that offers or describes a change."""

        def dra_class_for(name: str) -> str | None:
            try:
                return self.cluster.store.devices.class_for(name)
            except KubeError:
                return None

        if node is None:
            return ownership_of(resource, self.device_plugins.owns, dra_class_for)
        try:
            here, dra_class = self.cluster.store.devices.served_on(node, resource)
        except KubeError:
            here, dra_class = None, None
        return ownership_on(resource, here, dra_class, self.device_plugins.owns, dra_class_for)

    def read_only(self, resource: str, node: str | None = None) -> str | None:
        """What sets ``resource``'s amount (on ``node``) instead of this dashboard, if anything: a
        device plugin (the kubelet rewrites it) or DRA devices (their driver publishes them)."""
        return self.ownership(resource, node).source or None

    def dra_state(self) -> str:
        try:
            return self.cluster.dra_state()
        except KubeError:
            return "unknown"

    def pending_count(self) -> int:
        """Unschedulable and gated pods and jobs waiting for quota, for the navigation badge (0 when
        there is no cluster)."""
        try:
            store = self.cluster.store
            return (
                store.objects.unschedulable_count()
                + store.objects.gated_count()
                + store.queues.waiting_count()
            )
        except KubeError:
            return 0

    def close(self) -> None:
        if self.usage is not None:
            self.usage.close()
        if self._cluster is not None:
            self._cluster.close()


def _time(text: str) -> datetime:
    """An RFC 3339 time from the API (a pod's creation), or the epoch where it is not one."""
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return datetime.fromtimestamp(0, UTC)
