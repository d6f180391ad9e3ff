"""The Store's DRA part (mixed into ``app.kube.state.store.Store``): DeviceClasses, ResourceSlices and
ResourceClaims as events bring them, the nodes whose numbers they move, and the selectors they
bring to bear decided before the lock is taken (``device_cel`` keeps the answers)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from app.domain import device_cel
from app.domain.devices import DraUsage
from app.domain.ownership import DRA_HERE, STATUS
from app.kube.state.dra_index import EVERY, DraIndex
from app.kube.wire.projections import NodeView

T = TypeVar("T")


@dataclass(frozen=True)
class ClaimHolding:
    """A ResourceClaim holding devices on a node: how many of one class's, and the pods it is
    reserved for."""

    namespace: str
    name: str
    devices: int
    pods: tuple[str, ...]


class DraHolding:
    """Needs the Store's lock, nodes and row/fit marks (``_touch``, ``_touch_fit``)."""

    _lock: threading.RLock
    nodes: dict[str, NodeView]
    dra: DraIndex

    def _touch(self, node: str) -> None:
        raise NotImplementedError

    def _touch_fit(self, node: str) -> None:
        raise NotImplementedError

    def with_dra(self, read: Callable[[DraIndex], T]) -> T:
        """``read`` applied to the DRA objects held, under the lock (what pages read of them)."""
        with self._lock:
            return read(self.dra)

    def dra_class_for(self, resource: str) -> str | None:
        """The DeviceClass that serves ``resource`` through DRA, if one does."""
        return self.with_dra(lambda dra: dra.class_for(resource))

    def dra_aliases(self) -> dict[str, tuple[str, ...]]:
        """Each DRA-served name shown as one resource -> its other names (a DeviceClass's implicit
        name beside its extendedResourceName: the same devices)."""

        def read(dra: DraIndex) -> dict[str, tuple[str, ...]]:
            out: dict[str, list[str]] = {}
            for alias, primary in (dra.serving().aliases if dra.classes else {}).items():
                out.setdefault(primary, []).append(alias)
            return {k: tuple(sorted(v)) for k, v in out.items()}

        return self.with_dra(read)

    def dra_primaries(self) -> dict[str, str]:
        """Each alias -> the name its devices are shown and counted under (read once, not per name)."""
        return self.with_dra(lambda dra: dict(dra.serving().aliases) if dra.classes else {})

    def put_dra(self, kind: str, view: Any, deleted: bool = False) -> None:
        """A DeviceClass, ResourceSlice or ResourceClaim came, changed or went."""
        if not deleted:
            self._decide_selectors(kind, [view])
        with self._lock:
            self._dra_moved(self.dra.put(kind, view, deleted))

    def replace_dra(self, kind: str, views: Iterable[Any]) -> None:
        views = list(views)
        self._decide_selectors(kind, views)
        with self._lock:
            self._dra_moved(self.dra.replace(kind, views))

    def _decide_selectors(self, kind: str, views: list[Any]) -> None:
        """Evaluate the selectors an event brings to bear (a class's over every device held, every
        class's over a slice's devices) before taking the lock: pages under it read the answers
        device_cel keeps, and never wait for an evaluation (each one is budgeted there)."""
        if kind == "deviceclasses":
            with self._lock:
                devices = self.dra.devices()
            device_cel.decide((v.facts.expressions for v in views), devices)
        elif kind == "resourceslices":
            with self._lock:
                selectors = self.dra.selectors()
            device_cel.decide(selectors, {d.device for v in views for d in v.facts.devices})

    def served_on(self, node: str, resource: str) -> tuple[str | None, str | None]:
        """What serves ``resource`` on ``node`` as the scheduler sees it: ("status", None) when the
        node's status advertises it, ("dra", its DeviceClass) when DRA devices there serve it,
        (None, None) when nothing there does (app.domain.ownership.ownership_on)."""
        with self._lock:
            view = self.nodes.get(node)
            if view is not None and (resource in view.capacity or resource in view.allocatable):
                return STATUS, None
            usage = self._dra_usage(node).get(resource)
            if usage is None or not (usage.capacity or usage.unknown):
                return None, None
            return DRA_HERE, self.dra.class_for(usage.alias_of or resource)

    def claims_holding(self, node: str, dra_class: str) -> list[ClaimHolding]:
        """The claims that hold devices of ``dra_class`` on ``node`` other than those the
        scheduler made for pods' extended resource requests (those pods are named by their
        requests): claims from templates and explicit ResourceClaims, a shared claim once."""

        def read(dra: DraIndex) -> list[ClaimHolding]:
            rows, _ = dra.node_devices(node)
            found: dict[tuple[str, str], ClaimHolding] = {}
            for row in rows:
                c = row.claim
                if c is None or c.extended or dra_class not in row.classes:
                    continue
                held = found.get(c.key)
                found[c.key] = ClaimHolding(c.namespace, c.name, (held.devices if held else 0) + 1, c.pods)
            return sorted(found.values(), key=lambda h: (h.namespace, h.name))

        return self.with_dra(read)

    def _dra_usage(self, node: str) -> dict[str, DraUsage]:
        view = self.nodes.get(node)
        return self.dra.usage(node, view.labels if view is not None else {}) if self.dra else {}

    def _dra_moved(self, nodes: frozenset[str]) -> None:
        """Rebuild the rows and fit facts of the nodes whose DRA numbers may have moved (caller
        holds the lock)."""
        for node in self.nodes if nodes == EVERY else nodes & self.nodes.keys():
            self._touch(node)
            self._touch_fit(node)
