"""Pods and what they add up to per node (requests, limits, host ports, the pods with extended
requests), moved by each pod that comes, changes or goes; the Store keeps one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from app.domain import kai
from app.domain.accounting import Amounts
from app.domain.fit import HostPort
from app.domain.shape import INTER_POD_ANTI_AFFINITY
from app.domain.workloads import Holder
from app.kube.wire.projections import NO_OWNER, PodView

_ONE_POD = {"pods": 1}
GPU_GROUP = kai.GROUP


def repels(pod: PodView) -> bool:
    """Whether the pod has required inter-pod anti-affinity, which may keep others off its node."""
    return INTER_POD_ANTI_AFFINITY in pod.placement.unmodelled


def _add_into(into: Amounts, amounts: Mapping[str, int], sign: int) -> None:
    for name, value in amounts.items():
        new = into.get(name, 0) + sign * value
        if new:
            into[name] = new
        else:
            into.pop(name, None)


@dataclass
class PodIndex:
    """Pods and what they add up to per node; built whole on a (re)list, then moved by events."""

    pods: dict[tuple[str, str], PodView] = field(default_factory=dict)
    requested: dict[str, Amounts] = field(default_factory=dict)  # node -> sum of counted pods' requests
    limits: dict[str, Amounts] = field(default_factory=dict)
    node_pods: dict[str, set[tuple[str, str]]] = field(default_factory=dict)  # with extended requests
    unschedulable: set[tuple[str, str]] = field(default_factory=set)
    gated: set[tuple[str, str]] = field(default_factory=set)  # unbound, scheduling gates not lifted
    node_ports: dict[str, list[HostPort]] = field(default_factory=dict)  # host ports taken per node
    node_repelling: dict[str, int] = field(default_factory=dict)  # pods with required anti-affinity
    repelling: set[tuple[str, str]] = field(default_factory=set)  # those pods' keys
    wide_repelling: int = 0  # counted pods whose anti-affinity spans more than their node
    # pods in a KAI GPU group (fraction pods, reservation pods), per node
    node_gpu_groups: dict[str, set[tuple[str, str]]] = field(
        default_factory=dict
    )  # KAI's fractions, reservations

    def put(self, view: PodView) -> PodView | None:
        """Add or replace a pod; returns the view it replaced."""
        old = self.pods.pop(view.key, None)
        if old is not None:
            self._account(old, -1)
        self.pods[view.key] = view
        self._account(view, +1)
        return old

    def drop(self, key: tuple[str, str]) -> PodView | None:
        old = self.pods.pop(key, None)
        if old is not None:
            self._account(old, -1)
        return old

    def _account(self, pod: PodView, sign: int) -> None:
        key = pod.key
        if pod.counts:
            requested = self.requested.setdefault(pod.node_name, {})
            _add_into(requested, pod.requests, sign)
            _add_into(requested, _ONE_POD, sign)  # each pod takes one of the node's "pods"
            _add_into(self.limits.setdefault(pod.node_name, {}), pod.limits, sign)
            if pod.extended_requests:
                members = self.node_pods.setdefault(pod.node_name, set())
                if sign > 0:
                    members.add(key)
                else:
                    members.discard(key)
            if pod.kai or GPU_GROUP in pod.labels:
                grouped = self.node_gpu_groups.setdefault(pod.node_name, set())
                (grouped.add if sign > 0 else grouped.discard)(key)
            if repels(pod):
                _add_into(self.node_repelling, {pod.node_name: 1}, sign)
                (self.repelling.add if sign > 0 else self.repelling.discard)(key)
                if pod.placement.wide_anti_affinity:
                    self.wide_repelling += sign
            if pod.placement.host_ports:
                ports = self.node_ports.setdefault(pod.node_name, [])
                for port in pod.placement.host_ports:
                    if sign > 0:
                        ports.append(port)
                    elif port in ports:
                        ports.remove(port)
        if pod.unschedulable is not None:
            if sign > 0:
                self.unschedulable.add(key)
            else:
                self.unschedulable.discard(key)
        if pod.gates:
            if sign > 0:
                self.gated.add(key)
            else:
                self.gated.discard(key)

    def holders(self) -> list[Holder]:
        """Every counted pod with extended requests, as app.domain.workloads groups them."""
        out = []
        for keys in self.node_pods.values():
            for key in keys:
                pod = self.pods.get(key)
                if pod is None or not pod.counts:
                    continue
                owner = pod.owner or NO_OWNER
                out.append(
                    Holder(
                        pod.namespace,
                        owner.kind,
                        owner.name,
                        pod.node_name,
                        pod.created,
                        pod.extended_requests,
                        pod.name,
                    )
                )
        return out
