"""The Store's DRA part: DeviceClasses, ResourceSlices and ResourceClaims as events bring them
(a ``DraIndex`` it owns), what they serve on each node, and the selectors they bring to bear,
decided before the lock is taken (the runtime's ``Answers`` keep them). It reads the nodes through
the Store's objects, under their one lock, and tells the Store which nodes' numbers moved."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from app.domain.dra_usage import DraUsage, dra_sharing, on_node
from app.domain.gpu_sharing import Sharing, gpus
from app.domain.ownership import DRA_HERE, STATUS
from app.domain.selector_answers import Answers
from app.kube.state.dra_index import EVERY, DraIndex
from app.kube.state.dra_rows import node_devices
from app.kube.state.objects import Objects
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


class Devices:
    def __init__(self, objects: Objects, moved: Callable[[Iterable[str]], None], answers: Answers) -> None:
        """``moved``: called, with the lock held, with the held nodes whose DRA numbers may
        have moved (their rows and fit facts are made again); ``answers``: the selectors'."""
        self._objects = objects
        self._lock = objects.lock
        self._moved = moved
        self.answers = answers
        self.index = DraIndex(answers)

    def answer_with(self, answers: Answers) -> None:
        """From now on ``answers`` decide the selectors (a store made before its runtime: a test's
        or a bench's cluster, given to the app)."""
        with self._lock:
            self.answers = self.index.answers = answers

    # ---- read by pages, under the lock --------------------------------------------
    def read(self, read: Callable[[DraIndex], T]) -> T:
        """``read`` applied to the DRA objects held, under the lock."""
        with self._lock:
            return read(self.index)

    def class_for(self, resource: str) -> str | None:
        """The DeviceClass that serves ``resource`` through DRA, if one does."""
        return self.read(lambda dra: dra.class_for(resource))

    def aliases(self) -> dict[str, tuple[str, ...]]:
        """Each DRA-served name shown as one resource -> its other names (a DeviceClass's implicit
        name beside its extendedResourceName: the same devices)."""

        def read(dra: DraIndex) -> dict[str, tuple[str, ...]]:
            out: dict[str, list[str]] = {}
            for alias, primary in (dra.serving().aliases if dra.classes else {}).items():
                out.setdefault(primary, []).append(alias)
            return {k: tuple(sorted(v)) for k, v in out.items()}

        return self.read(read)

    def primaries(self) -> dict[str, str]:
        """Each alias -> the name its devices are shown and counted under (read once, not per name)."""
        return self.read(lambda dra: dict(dra.serving().aliases) if dra.classes else {})

    def served_on(self, node: str, resource: str) -> tuple[str | None, str | None]:
        """What serves ``resource`` on ``node`` as the scheduler sees it: ("status", None) when the
        node's status advertises it, ("dra", its DeviceClass) when DRA devices there serve it,
        (None, None) when nothing there does (app.domain.ownership.ownership_on)."""
        with self._lock:
            view = self._objects.nodes.get(node)
            if view is not None and (resource in view.capacity or resource in view.allocatable):
                return STATUS, None
            usage = self.usage(node).get(resource)
            if usage is None or not (usage.capacity or usage.unknown):
                return None, None
            return DRA_HERE, self.index.class_for(usage.alias_of or resource)

    def claims_holding(self, node: str, dra_class: str) -> list[ClaimHolding]:
        """The claims that hold devices of ``dra_class`` on ``node`` other than those the
        scheduler made for pods' extended resource requests (those pods are named by their
        requests): claims from templates and explicit ResourceClaims, a shared claim once."""

        def read(dra: DraIndex) -> list[ClaimHolding]:
            rows, _ = node_devices(dra, node)
            found: dict[tuple[str, str], ClaimHolding] = {}
            for row in rows:
                c = row.claim
                if c is None or c.extended or dra_class not in row.classes:
                    continue
                held = found.get(c.key)
                found[c.key] = ClaimHolding(c.namespace, c.name, (held.devices if held else 0) + 1, c.pods)
            return sorted(found.values(), key=lambda h: (h.namespace, h.name))

        return self.read(read)

    def usage(self, node: str) -> dict[str, DraUsage]:
        """What DRA devices serve on ``node`` (the caller holds the lock)."""
        view = self._objects.nodes.get(node)
        return self.index.usage(node, view.labels if view is not None else {}) if self.index else {}

    def gpu_shares(self, view: NodeView) -> Mapping[str, Sharing]:
        """The GPU names DRA devices several claims share serve on ``view``'s node, where its status
        does not (the caller holds the lock): a share held there is that part of a GPU."""
        served = on_node(view.allocatable, self.usage(view.name)).served
        return {r: s for r, s in dra_sharing(served).items() if gpus(r)}

    # ---- events and lists ------------------------------------------------------------
    def put(self, kind: str, view: Any, deleted: bool = False) -> None:
        """A DeviceClass, ResourceSlice or ResourceClaim came, changed or went."""
        if not deleted:
            self._decide_selectors(kind, [view])
        with self._lock:
            self._moved_nodes(self.index.put(kind, view, deleted))

    def replace(self, kind: str, views: Iterable[Any]) -> None:
        views = list(views)
        self._decide_selectors(kind, views)
        with self._lock:
            self._moved_nodes(self.index.replace(kind, views))

    def forget(self, kind: str, key: tuple[str, str]) -> None:
        """Drop an object of ``kind`` by its (namespace, name), if held."""
        with self._lock:
            self._moved_nodes(self.index.forget(kind, key))

    def _decide_selectors(self, kind: str, views: list[Any]) -> None:
        """Evaluate the selectors an event brings to bear (a class's over every device held, every
        class's over a slice's devices) before taking the lock: pages under it read the answers
        the answers keep, and never wait for an evaluation (each one is budgeted there)."""
        if kind == "deviceclasses":
            self.answers.decide_compiled(e for v in views for e in v.facts.expressions)
            with self._lock:
                devices = self.index.devices()
            self.answers.decide((v.facts.expressions for v in views), devices)
        elif kind == "resourceslices":
            with self._lock:
                selectors = self.index.selectors()
            self.answers.decide(selectors, {d.device for v in views for d in v.facts.devices})

    def _moved_nodes(self, nodes: frozenset[str]) -> None:
        held = self._objects.nodes
        self._moved(held if nodes == EVERY else nodes & held.keys())
