"""The overview's rows, one per node, with their running totals: an event marks only its node's
row, which is made again when next read, and the totals move by the difference. Called with the
Store's lock held (``app.kube.state.objects``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from app.domain.accounting import Amounts, RunningTotals, Totals
from app.domain.devices import DraUsage
from app.domain.overview import NodeRow, node_row
from app.kube.wire.projections import NodeView
from app.kube.wire.shared import EMPTY


class Rows:
    def __init__(self) -> None:
        self._rows: dict[str, NodeRow] = {}
        self._dirty: set[str] = set()
        self._totals = RunningTotals()  # of the rows in self._rows
        self.version = 0  # moves whenever a row changes: a key for memoised grids

    def touch(self, node: str) -> None:
        """The row of ``node`` has changed."""
        self._dirty.add(node)
        self.version += 1

    def touch_all(self, nodes: Iterable[str]) -> None:
        self._dirty.update(nodes)
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
        self._dirty.clear()

    def get(self, name: str) -> NodeRow | None:
        return self._rows.get(name)

    def of(self, names: Iterable[str]) -> list[NodeRow]:
        return [self._rows[name] for name in names]

    def totals(self) -> Totals:
        return self._totals.totals()
