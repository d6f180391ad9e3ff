"""What the fit model reads per node (``NodeFacts``), kept like the overview rows: rebuilt only for
nodes something placement depends on changed on, with a log of which node each fit version
changed, so a reader at an older version catches up on just those nodes."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping

from app.domain.dra_usage import DraUsage, on_node
from app.domain.fit import NodeFacts
from app.kube.state.pod_index import PodIndex
from app.kube.wire.projections import NodeView
from app.kube.wire.shared import EMPTY

FIT_LOG_KEPT = 8192  # node changes a reader of changes() can catch up on


class FitFacts:
    def __init__(self) -> None:
        self._facts: dict[str, NodeFacts] = {}
        self._dirty: set[str] = set()
        self.version = 0  # moves with anything placement depends on
        # which node each version changed; it reaches back to _log_start (a relist, or trimming)
        self._log: list[tuple[int, str]] = []
        self._log_start = 0

    def touch(self, node: str) -> None:
        self._dirty.add(node)
        self.version += 1
        log = self._log
        log.append((self.version, node))
        if len(log) > FIT_LOG_KEPT:
            self._log_start = log[FIT_LOG_KEPT // 2 - 1][0]
            del log[: FIT_LOG_KEPT // 2]

    def all(self, nodes: Iterable[str], forget: bool = False) -> None:
        """Everything may have changed (a relist): every node is rebuilt, the log starts anew."""
        if forget:
            self._facts.clear()
        self._dirty.update(nodes)
        self.version += 1
        self._log.clear()
        self._log_start = self.version

    def refresh(
        self, nodes: Mapping[str, NodeView], index: PodIndex, dra: Callable[[str], Mapping[str, DraUsage]]
    ) -> None:
        """Rebuild the facts of the nodes touched. An extended resource DRA devices serve on a
        node that does not advertise it in its status counts as the devices a pod may be
        given (untainted or held), of which what claims hold is taken (the scheduler gives
        such a request to DRA there)."""
        for name in self._dirty:
            node = nodes.get(name)
            if node is None:
                self._facts.pop(name, None)
                continue
            allocatable, requested = node.allocatable, index.requested.get(name, EMPTY)
            served = on_node(allocatable, dra(name)).served
            if served:
                allocatable = {**allocatable, **{r: u.allocatable for r, u in served.items()}}
                requested = {**requested, **{r: u.allocated for r, u in served.items()}}
            self._facts[name] = NodeFacts(
                name,
                node.labels,
                allocatable,
                requested,
                node.unschedulable,
                node.taints,
                index.node_ports.get(name, ()),
                node.capacity,
                index.node_repelling.get(name, 0),
                spread={r: u.lefts for r, u in served.items() if u.lefts is not None},
            )
        self._dirty.clear()

    def of(self, names: Iterable[str]) -> list[NodeFacts]:
        return [self._facts[name] for name in names]

    def changes(self, since: int | None) -> dict[str, NodeFacts | None] | None:
        """The facts of the nodes changed after version ``since`` (refreshed first), or None when
        the log does not reach back that far."""
        if since is None or since < self._log_start:
            return None
        start = bisect.bisect_right(self._log, since, key=lambda entry: entry[0])
        return {name: self._facts.get(name) for _, name in self._log[start:]}
