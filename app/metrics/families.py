"""Prometheus metrics with prometheus_client, in kube-state-metrics style.

Cluster metrics come from a custom collector that reads the store's kept
aggregates at scrape time: the overview rows (one per node, extended resources
only) and the unschedulable pods, so a scrape costs O(nodes x resources), never
O(pods). The app's own request latency and API errors are ordinary
instruments. Each app has its own registry, served on a port of its own
(``EXTRES_METRICS_PORT``), which the chart's Service exposes for scraping but
the Ingress never routes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from app.domain import device_cel
from app.domain.quantity import QuantityError, parse_quantity
from app.domain.scheduler_message import parse_scheduler_message
from app.metrics import gpu_hours
from app.metrics.nodes import NodeFamilies
from app.metrics.tallies import ANSWERS_DROPPED
from app.sandbox import bounded_child

if TYPE_CHECKING:
    from app.domain.idle_pods import Idle
    from app.domain.selector_answers import Answers
    from app.kube.api.ports import ClusterPort
    from app.kube.state.store import Store
    from app.kube.wire.projections import PodView
    from app.usage.poller import UsageStatus

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class ClusterCollector(Collector):
    """Cluster numbers from the store's kept rows; nothing when there is no cluster yet."""

    def __init__(self, cluster: Callable[[], ClusterPort | None], answers: Answers) -> None:
        self._cluster = cluster
        self._answers = answers  # the runtime's selector answers
        # the pending family, kept while the unschedulable pods are unchanged (``built`` counts
        # builds); the node families are text kept per row (``NodeFamilies``)
        self._pending: tuple[object, int, list[Metric]] | None = None
        self.built = 0

    def collect(self) -> Iterator[Metric]:
        cluster = self._cluster()
        if cluster is None:
            return
        store = cluster.store
        fresh = cluster.freshness()
        if fresh.synced:  # while pods are being counted the pending pods are not all known
            if self._pending is None or self._pending[:2] != (store, store.pending_version):
                version = store.pending_version
                self._pending = (store, version, [_pending_family(store.objects.unschedulable_pods())])
                self.built += 1
            yield from self._pending[2]
        if store.queues.served():
            yield from _queue_families(store)
        yield from gpu_hours.families(store)
        yield GaugeMetricFamily(
            "extres_cache_synced",
            "1 when the cache has synced and its watches are open.",
            int(not fresh.stale),
        )
        yield GaugeMetricFamily(
            "extres_cache_complete",
            "1 once every kind has been listed (every pod counted); until then the per-node "
            "families and extres_pending_pods are left out, never exported from part of the pods.",
            int(fresh.synced),
        )
        yield GaugeMetricFamily(
            "extres_cache_age_seconds",
            "Seconds since the cache last heard from the API server (0 while every watch is open).",
            fresh.age_seconds if fresh.age_seconds is not None else float("nan"),
        )
        objects = GaugeMetricFamily("extres_cache_objects", "Objects held by the cache.", labels=["kind"])
        size = store.objects.counts()
        for kind, count in size.items():
            objects.add_metric([kind], count)
        yield objects
        relists = CounterMetricFamily(
            "extres_watch_relists",
            "Full lists made by the cache (the first sync and each relist).",
            labels=["kind"],
        )
        restarts = CounterMetricFamily(
            "extres_watch_restarts", "Watches reopened after a failure.", labels=["kind"]
        )
        decode_errors = CounterMetricFamily(
            "extres_decode_errors",
            "Objects that could not be decoded, each time one was read (a list or a watch event); "
            "each is left out of the numbers.",
            labels=["kind"],
        )
        for kind, counters in cluster.watch_counters().items():
            relists.add_metric([kind], counters.relists)
            restarts.add_metric([kind], counters.restarts)
            decode_errors.add_metric([kind], counters.unreadable)
        yield relists
        yield restarts
        yield decode_errors
        sign_outs = cluster.revocations
        yield GaugeMetricFamily(
            "extres_session_revocations_read_timestamp_seconds",
            "When the shared sign-out list was last read (every 2 s): time() minus this is its age.",
            sign_outs.read_at if sign_outs.read_at is not None else float("nan"),
        )
        yield GaugeMetricFamily(
            "extres_session_revocations_skipped_lines",
            "Lines of the shared sign-out list that are not entries, skipped at the last read.",
            sign_outs.skipped,
        )
        undecided = CounterMetricFamily(
            "extres_selector_undecided",
            "DeviceClass selectors (per device, or a class's expression) that cannot be decided, "
            "counted once each by reason, in the worker whatever process evaluates them.",
            labels=["reason"],
        )
        for why, n in sorted(self._answers.unknown.items()):
            undecided.add_metric([why], n)
        yield undecided
        yield CounterMetricFamily(
            "extres_selector_evaluator_lost",
            "Selector evaluator processes lost (a crash, a stall or past their memory), each replaced.",
            self._answers.lost(),
        )


def _pending_family(pods: Iterable[PodView]) -> Metric:
    pending: dict[tuple[str, str], int] = {}
    for pod in pods:
        short = parse_scheduler_message(pod.unschedulable or "").insufficient
        for resource in pod.extended_requests or {"": 0}:
            reason = "insufficient" if resource in short else "other"
            pending[(resource, reason)] = pending.get((resource, reason), 0) + 1
    family = GaugeMetricFamily(
        "extres_pending_pods",
        "Unschedulable pods by the extended resource they request ('' for none) and whether the "
        "scheduler found nodes short of it ('insufficient') or not ('other').",
        labels=["resource", "reason"],
    )
    for (resource, reason), count in sorted(pending.items()):
        family.add_metric([resource, reason], count)
    return family


def _number(text: str) -> float:
    try:
        return float(parse_quantity(text)) if text else 0.0
    except QuantityError:
        return float("nan")


def _queue_families(store: Store) -> Iterator[Metric]:
    """Kueue's queues, where they are seen: pending workloads per ClusterQueue (as Kueue counts
    them), quota nominal and reserved per flavor and resource, and quota past the capacity of the
    nodes a flavor selects (what the chart's alert reads)."""
    report = store.queue_report()
    pending = GaugeMetricFamily(
        "extres_kueue_pending_workloads", "Workloads pending in a ClusterQueue, as Kueue counts them.",
        labels=["cluster_queue"],
    )  # fmt: skip
    quota = GaugeMetricFamily(
        "extres_kueue_quota",
        "A ClusterQueue's quota of a resource in a flavor: nominal, or reserved by admitted workloads.",
        labels=["cluster_queue", "flavor", "resource", "kind"],
    )
    over = GaugeMetricFamily(
        "extres_kueue_quota_over_capacity",
        "Nominal quota of an extended resource in a flavor, over every ClusterQueue, past what the nodes "
        "its labels select have allocatable (0 when within).",
        labels=["flavor", "resource"],
    )
    for q in report.queues:  # what Kueue has not reported yet is left out, never 0
        if q.pending is not None:
            pending.add_metric([q.name], q.pending)
        for r in q.rows:
            quota.add_metric([q.name, r.flavor, r.resource, "nominal"], _number(r.nominal))
            if r.reserved:
                quota.add_metric([q.name, r.flavor, r.resource, "reserved"], _number(r.reserved))
    for c in report.capacity:
        over.add_metric([c.flavor, c.resource], c.over)
    yield pending
    yield quota
    yield over


class UsageCollector(Collector):
    """GPU usage as last read: its age, and per namespace the device-hours held idle over the
    window by pods under the idle threshold."""

    def __init__(self, status: Callable[[], UsageStatus | None], idle: Callable[[], list[Idle]]) -> None:
        self._status = status
        self._idle = idle

    def collect(self) -> Iterator[Metric]:
        status = self._status()
        if status is None:
            return
        yield GaugeMetricFamily(
            "extres_usage_age_seconds",
            "Seconds since GPU usage was last read from Prometheus (NaN before the first answer).",
            status.age_seconds if status.age_seconds is not None else float("nan"),
        )
        hours = GaugeMetricFamily(
            "extres_idle_gpu_device_hours",
            "Device-hours held within the usage window by running pods whose GPUs stayed under the "
            "idle threshold, by namespace.",
            labels=["namespace"],
        )
        pods = GaugeMetricFamily(
            "extres_idle_gpu_pods",
            "Running pods holding GPUs that stayed idle, by namespace.",
            labels=["namespace"],
        )
        by_namespace: dict[str, list[float]] = {}
        for found in self._idle():
            by_namespace.setdefault(found.holding.namespace, []).append(found.device_hours)
        for namespace, values in sorted(by_namespace.items()):
            hours.add_metric([namespace], sum(values))
            pods.add_metric([namespace], len(values))
        yield hours
        yield pods


class _ProcessCounts(Collector):
    """What is counted once per process, whichever cluster it was for: exported once, never
    with a cluster's label (one child's exit is one exit)."""

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily(
            "extres_intake_answers_dropped",
            "Answers dropped with their connection: the client had stopped reading while the "
            "intake's byte budget was spent.",
            ANSWERS_DROPPED.value,
        )
        exits = CounterMetricFamily(
            "extres_child_exits",
            "Child processes (the selector evaluator, the usage refresh) that ended unasked, by why: "
            "crashed, stalled, over memory, stopped with the server, failed.",
            labels=["child", "reason"],
        )
        for (child, why), n in sorted(bounded_child.EXITS.counts().items()):
            exits.add_metric([child, why], n)
        yield exits
        yield CounterMetricFamily(
            "extres_selector_too_costly",
            "DeviceClass selector evaluations stopped by the CEL runtime's budget (shown as unknown).",
            device_cel.TOO_COSTLY.count,
        )


PROCESS = CollectorRegistry(auto_describe=False)  # the process's own counts, once per scrape
PROCESS.register(_ProcessCounts())


class Metrics:
    """One cluster's families: the cluster collector's (its store), its instruments (requests to
    its pages, its API errors, its usage refreshes and GPU usage) and the per-node families kept
    as text; ``exposition`` is what a scrape of a single-cluster dashboard gets, the process's
    own counts included (app/runtime/fleet_metrics.py labels each cluster's where there are several)."""

    def __init__(self, cluster: Callable[[], ClusterPort | None], answers: Answers) -> None:
        self._cluster = cluster
        self.nodes = NodeFamilies()
        self.collector = ClusterCollector(cluster, answers)  # the cluster's families
        self.instruments = CollectorRegistry(auto_describe=False)  # what this cluster's use counts
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self.collector)
        self.registry.register(self.instruments)
        self.registry.register(PROCESS)
        self.requests = Histogram(
            "extres_request_duration_seconds",
            "Time to answer an HTTP request, by endpoint.",
            ["endpoint", "method"],
            buckets=BUCKETS,
            registry=self.instruments,
        )
        self.refused = Counter(
            "extres_requests_refused",
            "HTTP requests answered with a 4xx (not signed in, not allowed, bad input, too many), by status.",
            ["status"],
            registry=self.instruments,
        )
        self.api_errors = Counter(
            "extres_api_errors",
            "Failed calls to the Kubernetes API server, by operation and kind of error.",
            ["operation", "error"],
            registry=self.instruments,
        )

        self.usage_refreshes = Histogram(
            "extres_usage_refresh_duration_seconds",
            "Time to read GPU usage from Prometheus (every mapping's queries), by outcome.",
            ["outcome"],
            buckets=BUCKETS,
            registry=self.instruments,
        )

    def usage_refreshed(self, seconds: float, ok: bool) -> None:
        self.usage_refreshes.labels("ok" if ok else "failed").observe(seconds)

    def watch_usage(self, status: Callable[[], UsageStatus | None], idle: Callable[[], list[Idle]]) -> None:
        """Export GPU usage's age and the device-hours held idle (what the chart's alert reads)."""
        self.instruments.register(UsageCollector(status, idle))

    def exposition(self) -> bytes:
        """The scrape: the per-node families (kept text), then the registry's."""
        cluster = self._cluster()
        nodes = b""
        if cluster is not None and cluster.freshness().synced:  # never from part of the pods
            nodes = self.nodes.text(cluster.store)
        return nodes + generate_latest(self.registry)

    def observe(self, endpoint: str, method: str, seconds: float, status: int = 200) -> None:
        self.requests.labels(endpoint, method).observe(seconds)
        if 400 <= status < 500:
            self.refused.labels(str(status)).inc()

    def api_error(self, operation: str, kind: str) -> None:
        self.api_errors.labels(operation, kind).inc()
