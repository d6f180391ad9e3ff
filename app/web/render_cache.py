"""HTML and grids kept between requests, each keyed by the objects it was made from."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

from flask import get_template_attribute
from markupsafe import Markup

from app.base.memo import VersionedMemo
from app.domain import columns
from app.domain.diagnosis import Diagnosis
from app.domain.gpu_usage import Reading
from app.domain.overview import NodeRow
from app.domain.ownership import Ownership


class RowHTML:
    """Each grid row's HTML, kept with the row object it was made from: the store rebuilds a row
    object only when that node changed, so a view after an event renders one row, not a page."""

    def __init__(self, limit: int = 20_000) -> None:
        self.limit = limit
        self._kept: dict[tuple[str, tuple[str, ...], bool, bool], tuple[object, object, Markup, int]] = {}

    def renderer(
        self,
        resources: tuple[str, ...],
        compact: bool = False,
        usage: Reading | None = None,
        counting: bool = False,
        device_plugin: Callable[[str], bool] = lambda _: False,
        held_idle: Mapping[str, int] | None = None,
    ) -> Callable[[NodeRow], Markup]:
        """``usage``: GPU usage as last read, shown beside the bars of the resources it covers
        (a row is made again once per reading); ``counting``: pods are still being counted;
        ``device_plugin``: whether a device plugin serves a resource (its lost capacity is
        unhealthy devices); ``held_idle``: per node, the GPUs idle pods hold there."""
        idle = held_idle or {}
        macro = get_template_attribute("overview/_row.html", "node_row")
        cols = columns.shown(compact)
        plugins = frozenset(r for r in resources if device_plugin(r))

        def row_html(row: NodeRow) -> Markup:
            key = (row.name, resources, compact, counting)
            hit = self._kept.get(key)
            n_idle = idle.get(row.name, 0)
            if hit is not None and hit[0] is row and hit[1] is usage and hit[3] == n_idle:
                return hit[2]
            if len(self._kept) >= self.limit:
                self._kept = {}
            html = Markup(macro(row, resources, cols, compact, usage, counting, plugins, n_idle))
            self._kept[key] = (row, usage, html, n_idle)
            return html

        return row_html


class AdviceHTML:
    """A pending shape's advice, rendered once per diagnosis: the shape index hands out the same
    Diagnosis object until a node's result changes, so its HTML is kept with it."""

    def __init__(self, limit: int = 512) -> None:
        self.limit = limit
        self._kept: dict[tuple[int, bool, bool], tuple[Diagnosis, Markup]] = {}
        self._lock = threading.Lock()

    def __call__(
        self, diagnosis: Diagnosis, selector: bool, writable: bool, ownership: Callable[..., Ownership]
    ) -> Markup:
        """``ownership``: the app's rule of who sets a resource on a node (the same for every call).
        Kept per diagnosis: a node whose serving changes (a device plugin's count gone, DRA devices
        there instead) changes its fit numbers and so the diagnosis, in every case met so far."""
        key = (id(diagnosis), selector, writable)
        hit = self._kept.get(key)
        if hit is not None and hit[0] is diagnosis:
            return hit[1]
        macro = get_template_attribute("pending/_advice.html", "advice")
        html = Markup(macro(diagnosis, selector, writable, ownership))
        with self._lock:
            if len(self._kept) >= self.limit:
                self._kept = {}
            self._kept[key] = (diagnosis, html)
        return html


class RenderCaches:
    """The app's render caches (what is kept of the data itself is the read model's: app.runtime.reads):
    the overview's tables and heat squares, by page, grid rows, pending advice."""

    def __init__(self) -> None:
        self.tables = VersionedMemo(64)  # the overview's rendered tables and heat squares, by rows version
        self.row_html = RowHTML()
        self.advice_html = AdviceHTML()
