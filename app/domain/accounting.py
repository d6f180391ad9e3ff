"""Per-node accounting of resource requests, as the scheduler does it.

A pod's effective request per resource (``PodRequests`` in
``k8s.io/component-helpers/resource``, hand-written here because the exact rule is the
point):

    max(sum(containers) + sum(sidecars), max over init containers i of
        (init_i + sum of the sidecars started before i))
    then pod-level requests (``spec.resources``) replace cpu, memory and hugepages-*
    then + overhead

where sidecars are init containers with ``restartPolicy: Always``. A request
missing for a resource that has a limit defaults to the limit (the API server
does the same on create). During an in-place resize a running pod counts the
larger of its spec and what the kubelet reports (``allocatedResources``,
``resources.requests``); while the resize is Infeasible, the spec is left out.
How the three are combined changed in 1.37 (``RESIZE_RULES``): up to 1.36 per
container, then summed; from 1.37 summed per source, then the largest sum.
A node's requested amount is the sum over pods bound to it (``spec.nodeName``)
that are not terminated (phase Succeeded or Failed).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from app.domain.names import is_requested_as_extended
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


POD_LEVEL = ("cpu", "memory")  # with hugepages-*: what pod-level resources may set
PER_CONTAINER, PER_SOURCE = "per-container", "per-source"


def resize_rule(minor: int | None) -> str:
    """How a resize's sources are combined, by the API server's minor version (newest if unknown)."""
    return PER_CONTAINER if minor is not None and minor <= 36 else PER_SOURCE


def _pod_level(name: str) -> bool:
    return name in POD_LEVEL or name.startswith("hugepages-")


@dataclass(frozen=True, slots=True)
class Reported:
    """What the kubelet reports for one container (``status.containerStatuses[]``)."""

    allocated: Mapping[str, Any] | None = None  # allocatedResources
    actuated: Mapping[str, Any] | None = None  # resources.requests
    resources: bool = False  # resources was set at all (up to 1.36, the status is read only then)


@dataclass(frozen=True, slots=True)
class Part:
    """One container as accounting reads it."""

    resources: Resources
    sidecar: bool = False  # an init container with restartPolicy Always
    init: bool = False
    reported: Reported | None = None


def _amounts(values: Mapping[str, Any] | None) -> Amounts:
    return {name: to_amount(name, str(v)) for name, v in (values or {}).items()}


def _aggregate(parts: Iterable[Part], pick: Any) -> Amounts:
    """The sidecar rule over each part's amounts as ``pick`` chooses them."""
    total: Amounts = {}
    sidecars: Amounts = {}
    init_peak: Amounts = {}
    for part in parts:
        amounts = pick(part)
        if not part.init:
            _add(total, amounts)
        elif part.sidecar:
            _add(total, amounts)
            _add(sidecars, amounts)
            _max(init_peak, sidecars)
        else:
            running = dict(sidecars)
            _add(running, amounts)
            _max(init_peak, running)
    _max(total, init_peak)
    return total


def pod_request_amounts(
    parts: Iterable[Part],
    overhead: Mapping[str, Any] | None,
    pod_level: Mapping[str, Any] | None = None,
    *,
    infeasible: bool = False,
    rule: str = PER_SOURCE,
) -> Amounts:
    """A pod's effective requests: ``parts`` in spec order (app containers, then init ones),
    ``pod_level`` the pod's ``spec.resources.requests``, ``infeasible`` whether its
    PodResizePending condition says Infeasible."""
    parts = list(parts)

    def spec(p: Part) -> Amounts:
        return _container_amounts(p.resources, "requests")

    fallback = (lambda p: {}) if infeasible else spec
    if rule == PER_CONTAINER:

        def effective(p: Part) -> Amounts:
            r = p.reported
            if r is None or not r.resources or (p.init and not p.sidecar):
                return spec(p)
            out = {} if infeasible else spec(p)
            _max(out, _amounts(r.actuated))
            _max(out, _amounts(r.allocated))
            return out

        total = _aggregate(parts, effective)
    else:

        def allocated(p: Part) -> Amounts:
            r = p.reported
            return _amounts(r.allocated) if r is not None and r.allocated is not None else fallback(p)

        def actuated(p: Part) -> Amounts:
            r = p.reported
            if r is not None and r.actuated is not None:
                return _amounts(r.actuated)
            return allocated(p)

        total = {} if infeasible else _aggregate(parts, spec)
        if any(p.reported is not None for p in parts):
            _max(total, _aggregate(parts, actuated))
            _max(total, _aggregate(parts, allocated))
        elif infeasible:
            total = _aggregate(parts, spec)
    for name, amount in _amounts(pod_level).items():
        if _pod_level(name):
            total[name] = amount
    _add(total, _amounts(overhead))
    return {name: value for name, value in total.items() if value}


def pod_limit_amounts(
    parts: Iterable[Part], overhead: Mapping[str, Any] | None, pod_level: Mapping[str, Any] | None = None
) -> Amounts:
    """A pod's effective limits (``PodLimits``), from its spec: the sidecar rule, pod-level limits
    for cpu, memory and hugepages-*, and overhead added to the limits that are set."""
    total = _aggregate(parts, lambda p: _container_amounts(p.resources, "limits"))
    for name, amount in _amounts(pod_level).items():
        if _pod_level(name):
            total[name] = amount
    for name, amount in _amounts(overhead).items():
        if total.get(name):
            total[name] += amount
    return {name: value for name, value in total.items() if value}


def _resources(container: Mapping[str, Any]) -> Resources:
    res = container.get("resources") or {}
    return res.get("requests"), res.get("limits")


def _spec_parts(spec: Mapping[str, Any]) -> list[Part]:
    parts = [Part(_resources(c)) for c in spec.get("containers") or ()]
    parts += [
        Part(_resources(c), sidecar=c.get("restartPolicy") == "Always", init=True)
        for c in spec.get("initContainers") or ()
    ]
    return parts


def pod_requests(spec: Mapping[str, Any]) -> Amounts:
    """Effective requests of a pod spec as in the API's JSON, not yet admitted: pod-level requests
    default to pod-level limits, as the API server's defaulting does."""
    pod_level = spec.get("resources") or {}
    requests = {**(pod_level.get("limits") or {}), **(pod_level.get("requests") or {})}
    return pod_request_amounts(_spec_parts(spec), spec.get("overhead"), requests)


def pod_limits(spec: Mapping[str, Any]) -> Amounts:
    """Effective limits of a pod spec as in the API's JSON."""
    return pod_limit_amounts(
        _spec_parts(spec), spec.get("overhead"), (spec.get("resources") or {}).get("limits")
    )


def counts_on_node(phase: str | None, node_name: str | None) -> bool:
    """Whether a pod's requests count against its node's allocatable."""
    return bool(node_name) and phase not in TERMINATED_PHASES


def extended_only(amounts: Mapping[str, int]) -> Amounts:
    """The extended part: names not native, and DeviceClasses' implicit names (KEP-5004)."""
    return {name: value for name, value in amounts.items() if is_requested_as_extended(name)}


@dataclass(frozen=True, slots=True)
class ResourceUsage:
    """One resource on one node (or summed over nodes). For a resource DRA devices serve there,
    ``allocated`` is how many of them claims hold, and what is free is counted against it (the
    pods' requests are served by those claims); None for a node-advertised resource."""

    capacity: int = 0
    allocatable: int = 0
    requested: int = 0
    advertised: bool = True
    allocated: int | None = None
    # totals only: the sum of each node's own over-commitment (one node over by 2 and another
    # with 2 free are not "0 free": the sums would hide it); None: computed from this usage (the
    # same where no node is over: the sums then fit)
    excess: int | None = None

    @property
    def used(self) -> int:
        return self.requested if self.allocated is None else self.allocated

    @property
    def unavailable(self) -> int:
        """Capacity the node does not offer (capacity above allocatable): for a device plugin's
        resource, devices it reports unhealthy (a lost GPU reads 8 -> 7). 0 for DRA-served ones
        (their devices are counted by the claims that hold them)."""
        return max(0, self.capacity - self.allocatable) if self.allocated is None else 0

    @property
    def free(self) -> int:
        return self.allocatable - self.used

    @property
    def percent(self) -> int | None:
        """The share of allocatable in use, for a bar; None where nothing is allocatable (a
        percentage of 0 means nothing) or where it is over-committed (that is said instead)."""
        if self.allocatable <= 0 or self.overcommitted:
            return None
        return round(100 * self.used / self.allocatable)

    @property
    def meter_max(self) -> int:
        """The scale of a usage bar: allocatable, or more when overcommitted (never 0)."""
        return max(self.allocatable, self.used, 1)

    @property
    def over(self) -> int:
        """By how much more is requested (held, for DRA) than is allocatable: 0 when it fits."""
        if self.excess is not None:
            return self.excess
        return max(0, self.used - self.allocatable)

    @property
    def overcommitted(self) -> bool:
        return self.over > 0

    def __add__(self, other: ResourceUsage) -> ResourceUsage:
        dra = self.allocated is not None or other.allocated is not None
        return ResourceUsage(
            self.capacity + other.capacity,
            self.allocatable + other.allocatable,
            self.requested + other.requested,
            self.advertised or other.advertised,
            self.used + other.used if dra else None,
            (self.over + other.over) or None,
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
