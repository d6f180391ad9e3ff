"""Per-app state: settings, the device-plugin rule and the (lazily connected) cluster."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flask import current_app, get_template_attribute
from markupsafe import Markup

from app.config import Settings
from app.domain.overview import NodeRow
from app.domain.ownership import DevicePluginRule
from app.domain.pending import Diagnosis, ShapeIndex
from app.kube.cache import Freshness
from app.kube.client import ClusterConfig
from app.kube.cluster import Cluster
from app.kube.errors import KubeError
from app.kube.reading import Unreadable
from app.kube.writer import Outcome
from app.metrics import Metrics


class VersionedMemo:
    """Values computed from the cache's rows, kept until ``rows_version`` moves (at most ``limit``)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._kept: tuple[int, dict[Any, Any]] = (-1, {})  # one attribute: swapped atomically

    def at(self, version: int) -> dict[Any, Any]:
        kept_version, values = self._kept
        if kept_version != version or len(values) >= self.limit:
            values = {}
            self._kept = (version, values)
        return values


class RowHTML:
    """Each grid row's HTML, kept with the row object it was made from: the cache rebuilds a row
    object only when that node changed, so a view after an event renders one row, not a page."""

    def __init__(self, limit: int = 20_000) -> None:
        self.limit = limit
        self._kept: dict[tuple[str, tuple[str, ...]], tuple[object, Markup]] = {}

    def renderer(self, resources: tuple[str, ...]) -> Callable[[NodeRow], Markup]:
        macro = get_template_attribute("overview/_row.html", "node_row")

        def row_html(row: NodeRow) -> Markup:
            key = (row.name, resources)
            hit = self._kept.get(key)
            if hit is not None and hit[0] is row:
                return hit[1]
            if len(self._kept) >= self.limit:
                self._kept = {}
            html = Markup(macro(row, resources))
            self._kept[key] = (row, html)
            return html

        return row_html


@dataclass
class BulkJob:
    """A change over many nodes, applied in the background: its outcomes as they come."""

    total: int
    outcomes: list[Outcome] = field(default_factory=list)
    done: bool = False
    dry_run: bool = False  # a preview: its page offers to apply what the API server accepted
    action: str = ""
    resource: str = ""
    count: int | None = None


class AdviceHTML:
    """A pending shape's advice, rendered once per diagnosis: the shape index hands out the same
    Diagnosis object until a node's result changes, so its HTML is kept with it."""

    def __init__(self, limit: int = 512) -> None:
        self.limit = limit
        self._kept: dict[tuple[int, bool, bool], tuple[Diagnosis, Markup]] = {}
        self._lock = threading.Lock()

    def __call__(self, diagnosis: Diagnosis, selector: bool, writable: bool) -> Markup:
        key = (id(diagnosis), selector, writable)
        hit = self._kept.get(key)
        if hit is not None and hit[0] is diagnosis:
            return hit[1]
        html = Markup(get_template_attribute("pending/_advice.html", "advice")(diagnosis, selector, writable))
        with self._lock:
            if len(self._kept) >= self.limit:
                self._kept = {}
            self._kept[key] = (diagnosis, html)
        return html


class State:
    def __init__(self, settings: Settings, rule: DevicePluginRule) -> None:
        self.settings = settings
        self.device_plugins = rule
        self._cluster: Cluster | None = None
        self.results: OrderedDict[str, BulkJob] = OrderedDict()  # bulk changes, by key
        self.metrics = Metrics(lambda: self._cluster.cache if self._cluster is not None else None)
        self.grids = VersionedMemo(64)  # overview grids by filters, and their rendered tables by page
        self.shapes: dict[Any, ShapeIndex] = {}  # pending pods' shapes, with their per-node results
        self.plans: OrderedDict[Any, ShapeIndex] = OrderedDict()  # the planner's, least recent first
        self.shapes_lock = threading.Lock()
        self.row_html = RowHTML()
        self.advice_html = AdviceHTML()
        self.write_slots = threading.BoundedSemaphore(max(1, settings.threads - 2))
        self._lock = threading.Lock()

    @staticmethod
    def get() -> State:
        state: State = current_app.extensions["extres"]
        return state

    @property
    def cluster(self) -> Cluster:
        """The cluster connection; raises NotConfigured (a KubeError) when there is none."""
        if self._cluster is None:
            with self._lock:
                if self._cluster is None:
                    s = self.settings
                    self._cluster = Cluster(
                        ClusterConfig(s.in_cluster, s.kubeconfig, s.context),
                        page_size=s.list_page_size,
                        watch_timeout=s.watch_timeout,
                        request_timeout=s.request_timeout,
                        start_watches=s.start_watches,
                        event_namespace=s.event_namespace,
                    )
                    self._cluster.cache.on_error = self.metrics.api_error
        self._cluster.ensure_started()
        return self._cluster

    def freshness(self) -> Freshness:
        try:
            return self.cluster.cache.freshness()
        except KubeError as exc:
            return Freshness(synced=False, stale=True, age_seconds=None, error=exc.message)

    def unreadable_named(self) -> list[Unreadable]:
        """A few of the objects the cache could not read (kind, name, where it failed)."""
        try:
            return self.cluster.cache.unreadable.named()
        except KubeError:
            return []

    def pending_count(self) -> int:
        """Unschedulable pods, for the navigation badge (0 when there is no cluster)."""
        try:
            return len(self.cluster.cache.unschedulable)
        except KubeError:
            return 0

    def close(self) -> None:
        if self._cluster is not None:
            self._cluster.close()
