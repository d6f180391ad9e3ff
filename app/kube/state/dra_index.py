"""The DRA objects the cache holds, and what they add up to per node (``app.domain.devices``):
each event says which nodes' numbers it may move, and a node's usage is computed again only
when asked after such a move."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from app.domain.device_cel import Device
from app.domain.devices import (
    Serving,
    SliceFacts,
    complete,
    serving,
    tainted_by,
)
from app.domain.dra_usage import DraUsage, Held, Shares, node_usage
from app.domain.selector_answers import Answers
from app.kube.wire.dra import ClaimView, ClassView, SliceView, TaintRuleView

EVERY = frozenset({"*"})  # every node may move


class DraIndex:
    def __init__(self, answers: Answers | None = None) -> None:
        """``answers``: the runtime's selector answers (default: evaluated in this process)."""
        self.answers = answers if answers is not None else Answers()
        self.classes: dict[tuple[str, str], ClassView] = {}
        self.slices: dict[tuple[str, str], SliceView] = {}
        self.claims: dict[tuple[str, str], ClaimView] = {}
        self.rules: dict[tuple[str, str], TaintRuleView] = {}  # DeviceTaintRules
        self._served: Serving | None = None
        self._by_node: dict[str, list[SliceFacts]] | None = None  # complete pools' slices
        self._where: dict[tuple[str, str, str], str] = {}  # their devices' nodes, made with them
        self._incomplete: list[tuple[str, str]] = []
        # the slices of each (driver, pool), and the nodes its complete slices are counted on: a
        # slice's change is taken pool by pool (a driver rewriting slices 10 times a second made
        # every node's slices be gone through again, under the lock, for each rewrite)
        # (in the order of ``slices``: which slice a pool's completeness is read from depends on it)
        self._pools: dict[tuple[str, str], dict[tuple[str, str], None]] = {}
        self._pool_nodes: dict[tuple[str, str], set[str]] = {}
        self._unbound: list[SliceFacts] = []  # complete pools' slices for several nodes
        # kept as claims come and go: per device, the claims holding it and, of a shared device,
        # what each share took (a page after a claim event reads them without going through every
        # claim: 160,000 shares at 5,000 nodes)
        self._holders: dict[tuple[str, str, str], dict[tuple[str, str], ClaimView]] = {}
        # a share per (claim, its result's place): a claim may hold two shares of one device
        self._shares: dict[tuple[str, str, str], dict[tuple[str, str, int], dict[str, Decimal]]] = {}
        self._share_views: dict[tuple[str, str, str], Any] = {}
        self._usage: dict[str, dict[str, DraUsage]] = {}

    def __bool__(self) -> bool:
        return bool(self.classes or self.slices or self.claims)

    def _table(self, kind: str) -> dict[tuple[str, str], Any]:
        tables: dict[str, dict[tuple[str, str], Any]] = {
            "deviceclasses": self.classes,
            "resourceslices": self.slices,
            "resourceclaims": self.claims,
            "devicetaintrules": self.rules,
        }
        return tables[kind]

    def put(self, kind: str, view: Any, deleted: bool = False) -> frozenset[str]:
        """Take an object (or its deletion); the nodes whose numbers it may move."""
        table = self._table(kind)
        old = table.pop(view.key, None)
        if not deleted:
            table[view.key] = view
        if kind == "resourceslices":
            for was, now in ((old, False), (None if deleted else view, True)):
                if was is not None:
                    self._pooled(was, now)
        elif kind == "resourceclaims":
            if old is not None:
                self._unhold(old)
            if not deleted:
                self._hold(view)
        return self._moved(kind, [v for v in (old, None if deleted else view) if v is not None])

    def _pooled(self, view: SliceView, present: bool) -> None:
        key = (view.facts.driver, view.facts.pool)
        names = self._pools.setdefault(key, {})
        if present:
            names[view.key] = None
        else:
            names.pop(view.key, None)
            if not names:
                del self._pools[key]

    def forget(self, kind: str, key: tuple[str, str]) -> frozenset[str]:
        """Drop an object by its (namespace, name), if held; the nodes whose numbers that moves."""
        held = self._table(kind).get(key)
        return frozenset() if held is None else self.put(kind, held, deleted=True)

    def replace(self, kind: str, views: Iterable[Any]) -> frozenset[str]:
        table = self._table(kind)
        table.clear()
        table.update((v.key, v) for v in views)
        if kind == "resourceslices":
            self._pools.clear()
            for v in table.values():
                self._pooled(v, True)
        elif kind == "resourceclaims":
            self._holders.clear()
            self._shares.clear()
            self._share_views.clear()
            for v in table.values():
                self._hold(v)
        return self._moved(kind, None)

    def _hold(self, claim: ClaimView) -> None:
        for d in claim.held:
            self._holders.setdefault(d, {})[claim.key] = claim
        for i, (d, took) in enumerate(claim.shares):
            self._shares.setdefault(d, {})[(*claim.key, i)] = dict(took)
            self._share_views[d] = self._shares[d].values()

    def _unhold(self, claim: ClaimView) -> None:
        for d in claim.held:
            if (holders := self._holders.get(d)) is not None:
                holders.pop(claim.key, None)
                if not holders:
                    del self._holders[d]
        for i, (d, _) in enumerate(claim.shares):
            if (shares := self._shares.get(d)) is not None:
                shares.pop((*claim.key, i), None)
                if not shares:
                    del self._shares[d]
                    del self._share_views[d]

    def _moved(self, kind: str, views: list[Any] | None) -> frozenset[str]:
        if kind in ("deviceclasses", "devicetaintrules") or views is None:
            self._served = self._by_node = None
            self._usage.clear()
            return EVERY
        if kind == "resourceslices":
            if any(not v.facts.node for v in views):  # several nodes reach its devices
                self._by_node = None
                self._usage.clear()
                return EVERY
            nodes = frozenset(v.facts.node for v in views)
            # a pool's completeness may change with any of its slices: its nodes move too
            repooled = self._repool({(v.facts.driver, v.facts.pool) for v in views})
            if repooled is None:
                self._by_node = None
            else:
                nodes |= repooled
        else:
            self._slices_by_node()
            where = self._where
            if any(d not in where for v in views for d in v.held) and self._unbound:
                self._usage.clear()  # a device several nodes reach, or one not seen yet
                return EVERY
            nodes = frozenset(where[d] for v in views for d in v.held if d in where)
        for node in nodes:
            self._usage.pop(node, None)
        return nodes

    def _repool(self, pools: set[tuple[str, str]]) -> frozenset[str] | None:
        """Count ``pools`` again where the slices are counted per node; the nodes whose numbers
        that may move. None when there is nothing to update (not counted yet) or a pool now has a
        slice for several nodes: then everything is counted again when next asked."""
        by_node, where = self._by_node, self._where
        if by_node is None:
            return None
        touched: set[str] = set()
        for key in pools:
            for node in self._pool_nodes.pop(key, ()):
                others = []
                for s in by_node.get(node, ()):
                    if (s.driver, s.pool) != key:
                        others.append(s)
                        continue
                    for d in s.devices:
                        where.pop((s.driver, s.pool, d.name), None)
                if others:
                    by_node[node] = others
                else:
                    by_node.pop(node, None)
                touched.add(node)
            if key in self._incomplete:
                self._incomplete.remove(key)
            kept, incomplete = complete(self._ruled(self.slices[k].facts) for k in self._pools.get(key, ()))
            if any(not s.node for s in kept):
                return None
            self._incomplete.extend(incomplete)
            for s in kept:
                by_node.setdefault(s.node, []).append(s)
                for d in s.devices:
                    where[(s.driver, s.pool, d.name)] = s.node
                self._pool_nodes.setdefault(key, set()).add(s.node)
                touched.add(s.node)
        for node in touched:  # in pool order, as counting everything again leaves them
            if node in by_node:
                by_node[node].sort(key=lambda s: (s.driver, s.pool))
        self._incomplete.sort()
        return frozenset(touched)

    def _slices_by_node(self) -> dict[str, list[SliceFacts]]:
        if self._by_node is None:
            kept, self._incomplete = complete(self._ruled(v.facts) for v in self.slices.values())
            by_node: dict[str, list[SliceFacts]] = {}
            self._unbound = []
            self._pool_nodes = {}
            for s in kept:
                if s.node:
                    by_node.setdefault(s.node, []).append(s)
                    self._pool_nodes.setdefault((s.driver, s.pool), set()).add(s.node)
                else:
                    self._unbound.append(s)
            self._by_node = by_node
            self._where = {
                (s.driver, s.pool, d.name): n
                for n, found in by_node.items()
                for s in found
                for d in s.devices
            }
            self._usage.clear()
        return self._by_node

    def _ruled(self, s: SliceFacts) -> SliceFacts:
        """A slice with the DeviceTaintRules' taints on the devices they pick."""
        return tainted_by(s, (v.rule for v in self.rules.values())) if self.rules else s

    def device_counts(self) -> dict[str, int]:
        """Per node, the devices its complete slices publish."""
        return {n: sum(len(s.devices) for s in found) for n, found in self._slices_by_node().items()}

    def devices(self) -> set[Device]:
        """Every device held, alike ones once (what a selector can tell apart)."""
        return {d.device for v in self.slices.values() for d in v.facts.devices}

    def selectors(self) -> list[tuple[str, ...]]:
        """Every class's selectors."""
        return [v.facts.expressions for v in self.classes.values()]

    def serving(self) -> Serving:
        if self._served is None:
            self._served = serving(v.facts for v in self.classes.values())
        return self._served

    def usage(self, node: str, labels: Mapping[str, str]) -> dict[str, DraUsage]:
        """The extended resources DRA devices serve on ``node`` (its ``labels``: which slices for
        several nodes reach it)."""
        found = self._usage.get(node)
        if found is None:
            slices = [*self._slices_by_node().get(node, ()), *self._unbound]
            found = (
                node_usage(slices, self.serving(), self.held(), self.answers, (node, labels), self.shares())
                if slices
                else {}
            )
            self._usage[node] = found
        return found

    def relabelled(self, node: str) -> bool:
        """A node's labels changed: whether its numbers may move (slices for several nodes)."""
        self._slices_by_node()
        if not self._unbound:
            return False
        self._usage.pop(node, None)
        return True

    def held(self) -> Held:
        """Every device some claim holds (a live view: read it under the store's lock)."""
        return self._holders.keys()

    def holders(self, device: tuple[str, str, str]) -> list[ClaimView]:
        """The claims holding ``device`` (several for a shared device), by name."""
        return sorted(self._holders.get(device, {}).values(), key=lambda c: c.key)

    def shares(self) -> Shares:
        """The shares of each device several claims may hold: what each took of its capacities
        (a live view: read it under the store's lock)."""
        return self._share_views

    @property
    def incomplete(self) -> list[tuple[str, str]]:
        self._slices_by_node()
        return self._incomplete

    @property
    def unbound(self) -> list[SliceFacts]:
        """Complete pools' slices whose devices several nodes reach (``allNodes``, a node
        selector, or per device): counted on each node they reach."""
        self._slices_by_node()
        return self._unbound

    def class_for(self, resource: str) -> str | None:
        """The DeviceClass that serves ``resource``, if one does."""
        found = self.serving().by_name.get(resource) if self.classes else None
        return found.name if found is not None else None

    def bound(self) -> list[SliceFacts]:
        """Complete pools' slices bound to one node each."""
        return [s for found in self._slices_by_node().values() for s in found]

    def node_slices(self, node: str) -> list[SliceFacts]:
        """The node's slices, complete pools or not (the page says which)."""
        return sorted(
            (self._ruled(v.facts) for v in self.slices.values() if v.facts.node == node), key=lambda s: s.name
        )
