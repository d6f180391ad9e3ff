"""The overview's rows, one per node, with their running totals: an event marks only its node's
row, which is made again when next read, and the totals move by the difference. Called with the
Store's lock held (``app.kube.state.objects``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime

from app.domain.accounting import Amounts
from app.domain.dra_usage import DraUsage
from app.domain.overview import NodeRow, node_row
from app.domain.totals import RunningTotals, Totals
from app.kube.wire.projections import NodeView
from app.kube.wire.shared import EMPTY


class Rows:
    def __init__(self) -> None:
        self._rows: dict[str, NodeRow] = {}
        self._dirty: set[str] = set()
        self._totals = RunningTotals()  # of the rows in self._rows
        self.version = 0  # moves whenever a row changes: a key for memoised grids
        self._touched: dict[str, float] = {}  # when each marked row's node last changed
        # per node, its resources with capacity above allocatable -> since when (kept while so)
        self._since: dict[str, dict[str, str]] = {}

    def touch(self, node: str) -> None:
        """The row of ``node`` has changed."""
        self._dirty.add(node)
        self._touched[node] = time.time()
        self.version += 1

    def touch_all(self, nodes: Iterable[str]) -> None:
        now = time.time()
        for node in nodes:
            self._dirty.add(node)
            self._touched.setdefault(node, now)
        self.version += 1

    def refresh(
        self,
        nodes: Mapping[str, NodeView],
        requested: Mapping[str, Amounts],
        dra_usage: Callable[[str], Mapping[str, DraUsage]],
    ) -> None:
        """Make again only the rows marked, and move the totals by the difference."""
        for name in self._dirty:
            old = self._rows.pop(name, None)
            if old is not None:
                self._totals.add(old.usage, -1)
            node = nodes.get(name)
            if node is not None:
                row = self._rows[name] = node_row(node, requested.get(name, EMPTY), dra_usage(name))
                self._totals.add(row.usage)
                self._unhealthy(name, row)
            else:
                self._since.pop(name, None)
        self._dirty.clear()
        self._touched.clear()

    def _unhealthy(self, name: str, row: NodeRow) -> None:
        """Keep since when each resource of ``row`` has had capacity above allocatable (from the
        event that first showed it so; cleared once it is not)."""
        lost = [r for r, u in row.usage.items() if u.unavailable]
        if not lost:
            self._since.pop(name, None)
            return
        had = self._since.get(name, {})
        then = datetime.fromtimestamp(self._touched.get(name, time.time()), UTC).isoformat(timespec="seconds")
        since = self._since[name] = {r: had.get(r, then) for r in lost}
        row.unhealthy_since = since

    def get(self, name: str) -> NodeRow | None:
        return self._rows.get(name)

    def of(self, names: Iterable[str]) -> list[NodeRow]:
        return [self._rows[name] for name in names]

    def totals(self) -> Totals:
        return self._totals.totals()
