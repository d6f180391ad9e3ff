"""Per-node accounting of resource requests, as the scheduler does it.

A pod's effective request per resource (``PodRequests`` in
``k8s.io/component-helpers/resource``):

    max(sum(containers) + sum(sidecars), max over init containers i of
        (init_i + sum of the sidecars started before i)) + overhead

where sidecars are init containers with ``restartPolicy: Always``. A request
missing for a resource that has a limit defaults to the limit (the API server
does the same on create). A node's requested amount is the sum over pods bound
to it (``spec.nodeName``) that are not terminated (phase Succeeded or Failed).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.domain.names import is_native_resource
from app.domain.quantity import to_amount

TERMINATED_PHASES = frozenset({"Succeeded", "Failed"})
Amounts = dict[str, int]


# One container's resources as (requests, limits), each a mapping of name -> quantity, or None.
Resources = tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]


def _container_amounts(resources: Resources, kind: str) -> Amounts:
    requests, limits = resources
    merged: dict[str, Any] = dict(limits or {})
    if kind == "requests":
        merged.update(requests or {})
    return {name: to_amount(name, str(value)) for name, value in merged.items()}


def _add(into: Amounts, other: Mapping[str, int]) -> None:
    for name, value in other.items():
        into[name] = into.get(name, 0) + value


def _max(into: Amounts, other: Mapping[str, int]) -> None:
    for name, value in other.items():
        if value > into.get(name, 0):
            into[name] = value


def effective_amounts(
    containers: Iterable[Resources],
    init_containers: Iterable[tuple[Resources, bool]],
    overhead: Mapping[str, Any] | None,
    kind: str = "requests",
) -> Amounts:
    """A pod's effective requests (or limits): ``init_containers`` as (resources, is a sidecar)."""
    total: Amounts = {}
    for resources in containers:
        _add(total, _container_amounts(resources, kind))
    sidecars: Amounts = {}
    init_peak: Amounts = {}
    for resources, sidecar in init_containers:
        amounts = _container_amounts(resources, kind)
        if sidecar:
            _add(sidecars, amounts)
            _max(init_peak, sidecars)
        else:
            running = dict(sidecars)
            _add(running, amounts)
            _max(init_peak, running)
    _add(total, sidecars)
    _max(total, init_peak)
    _add(total, {name: to_amount(name, str(v)) for name, v in (overhead or {}).items()})
    return {name: value for name, value in total.items() if value}


def _resources(container: Mapping[str, Any]) -> Resources:
    res = container.get("resources") or {}
    return res.get("requests"), res.get("limits")


def pod_requests(spec: Mapping, kind: str = "requests") -> Amounts:
    """Effective requests (or, with ``kind="limits"``, limits) of a pod spec as in the API's JSON."""
    return effective_amounts(
        map(_resources, spec.get("containers") or ()),
        ((_resources(c), c.get("restartPolicy") == "Always") for c in spec.get("initContainers") or ()),
        spec.get("overhead"),
        kind,
    )


def counts_on_node(phase: str | None, node_name: str | None) -> bool:
    """Whether a pod's requests count against its node's allocatable."""
    return bool(node_name) and phase not in TERMINATED_PHASES


def extended_only(amounts: Mapping[str, int]) -> Amounts:
    return {name: value for name, value in amounts.items() if not is_native_resource(name)}


@dataclass(frozen=True, slots=True)
class ResourceUsage:
    """One resource on one node (or summed over nodes)."""

    capacity: int = 0
    allocatable: int = 0
    requested: int = 0
    advertised: bool = True

    @property
    def free(self) -> int:
        return self.allocatable - self.requested

    @property
    def percent(self) -> int:
        if self.allocatable <= 0:
            return 100 if self.requested else 0
        return min(100, round(100 * self.requested / self.allocatable))

    @property
    def meter_max(self) -> int:
        """The scale of a usage bar: allocatable, or more when overcommitted (never 0)."""
        return max(self.allocatable, self.requested, 1)

    @property
    def overcommitted(self) -> bool:
        return self.requested > self.allocatable

    def __add__(self, other: ResourceUsage) -> ResourceUsage:
        return ResourceUsage(
            self.capacity + other.capacity,
            self.allocatable + other.allocatable,
            self.requested + other.requested,
            self.advertised or other.advertised,
        )


def node_usage(
    capacity: Mapping[str, int], allocatable: Mapping[str, int], requested: Mapping[str, int]
) -> dict[str, ResourceUsage]:
    """Usage of every resource a node advertises or that its pods request."""
    names = set(capacity) | set(allocatable) | set(requested)
    return {
        name: ResourceUsage(
            capacity.get(name, 0),
            allocatable.get(name, 0),
            requested.get(name, 0),
            name in capacity or name in allocatable,
        )
        for name in sorted(names)
    }


@dataclass
class Totals:
    """Cluster totals per resource."""

    by_resource: dict[str, ResourceUsage] = field(default_factory=dict)
    nodes_with: dict[str, int] = field(default_factory=dict)  # nodes advertising each resource

    @classmethod
    def of(cls, usages: Iterable[Mapping[str, ResourceUsage]]) -> Totals:
        running = RunningTotals()
        for usage in usages:
            running.add(usage)
        return running.totals()


class RunningTotals:
    """Totals kept current as per-node usages come and go: add a node's usage, subtract it
    (``sign=-1``) when it is replaced. Sums plain integers: no object per node and resource."""

    def __init__(self) -> None:
        # resource -> [capacity, allocatable, requested, nodes advertising, nodes with it at all]
        self._sums: dict[str, list[int]] = {}

    def add(self, usage: Mapping[str, ResourceUsage], sign: int = 1) -> None:
        for name, u in usage.items():
            s = self._sums.get(name)
            if s is None:
                s = self._sums[name] = [0, 0, 0, 0, 0]
            s[0] += sign * u.capacity
            s[1] += sign * u.allocatable
            s[2] += sign * u.requested
            s[3] += sign * u.advertised
            s[4] += sign
            if not s[4]:
                del self._sums[name]

    def totals(self) -> Totals:
        return Totals(
            {name: ResourceUsage(c, a, r, n > 0) for name, (c, a, r, n, _) in self._sums.items()},
            {name: s[3] for name, s in self._sums.items() if s[3]},
        )
