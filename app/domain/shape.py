"""A pod's shape for placement, built one way from the pod spec's parts, whether the pod was
watched (``app.kube.wire.projections``) or pasted (``app.domain.manifest``).

``Placement`` is the part pods of one template share (tolerations, required node affinity,
host ports, scheduler features the fit model does not cover): kept once, a pointer per pod.
``pod_shape`` adds the requests, node selector and node name; a ``PodShape`` is hashable, so it
is its own key wherever shapes are kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from app.domain.fit import HostPort, PodShape, Term, Toleration
from app.domain.pod_affinity import PodTerm

# What a pod may use that the fit model leaves to the scheduler (its decision is then undecided).
INTER_POD_AFFINITY = "inter-pod affinity"
INTER_POD_ANTI_AFFINITY = "inter-pod anti-affinity"
TOPOLOGY_SPREAD = "topology spread constraints"
# what app.domain.pod_affinity decides for a pasted pod (the pending page still names them)
ACROSS_NODES = (INTER_POD_AFFINITY, INTER_POD_ANTI_AFFINITY, TOPOLOGY_SPREAD)
CLAIM_VOLUMES = "persistent volumes (binding, zones and per-node volume limits)"
DEVICE_CLAIMS = "dynamic resource allocation (the pod's resource claims)"


@dataclass(frozen=True, slots=True)
class Placement:
    tolerations: tuple[Toleration, ...] = ()
    affinity: tuple[Term, ...] | None = None  # required node affinity terms; None: none
    host_ports: tuple[HostPort, ...] = ()
    unmodelled: tuple[str, ...] = ()
    # required anti-affinity over a topology wider than one node (a zone, ...): it may keep pods off
    # nodes other than its own
    wide_anti_affinity: bool = False
    # its required anti-affinity terms: what keeps other pods off its node's domains
    anti_affinity: tuple[PodTerm, ...] = ()


NONE = Placement()
_KEPT: dict[Placement, Placement] = {}
_KEPT_MAX = 100_000  # distinct placements kept shared; past it each pod keeps its own


def _shared(p: Placement) -> Placement:
    if p == NONE:
        return NONE
    found = _KEPT.get(p)
    if found is None:
        if len(_KEPT) >= _KEPT_MAX:
            return p
        found = _KEPT[p] = p
    return found


def placement(
    tolerations: Iterable[Toleration],
    affinity: tuple[Term, ...] | None,
    host_ports: Iterable[HostPort],
    *,
    pod_affinity: bool = False,
    pod_anti_affinity: bool = False,
    wide_anti_affinity: bool = False,
    hard_spread: bool = False,
    claims_volumes: bool = False,
    claims_devices: bool = False,
    anti_affinity: tuple[PodTerm, ...] = (),
) -> Placement:
    """``hard_spread``: a topology spread constraint with whenUnsatisfiable DoNotSchedule;
    ``claims_volumes``: a PersistentVolumeClaim or a generic ephemeral volume; ``claims_devices``:
    DRA resource claims (the devices a claim could get are not evaluated here)."""
    flags = (
        (pod_affinity, INTER_POD_AFFINITY),
        (pod_anti_affinity, INTER_POD_ANTI_AFFINITY),
        (hard_spread, TOPOLOGY_SPREAD),
        (claims_volumes, CLAIM_VOLUMES),
        (claims_devices, DEVICE_CLAIMS),
    )
    ports = tuple(sorted(set(host_ports), key=lambda h: (h.port, h.protocol, h.ip)))
    unmodelled = tuple(text for on, text in flags if on)
    return _shared(
        Placement(tuple(tolerations), affinity, ports, unmodelled, wide_anti_affinity, anti_affinity)
    )


def pod_shape(
    requests: Mapping[str, int], node_selector: Mapping[str, str], where: Placement, node_name: str = ""
) -> PodShape:
    return PodShape(
        requests,
        node_selector,
        where.affinity,
        where.tolerations,
        where.host_ports,
        node_name,
        where.unmodelled,
    )


C = TypeVar("C")


def running(init: Sequence[C], app: Sequence[C], restart_policy: Callable[[C], object]) -> list[C]:
    """The containers that run beside the app (their host ports are taken): the app containers and
    the sidecars (init containers with restartPolicy Always), as kube-scheduler's GetHostPorts."""
    return [*(c for c in init if restart_policy(c) == "Always"), *app]
