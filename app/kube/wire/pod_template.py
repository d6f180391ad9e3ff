"""What pods of one template share, worked out once per distinct template.

Pods made by one ReplicaSet, StatefulSet or Job carry the same containers, overhead, tolerations
and affinity, and once running the same container statuses: their requests, limits and placement
are the same. Each is computed from a key that is the JSON encoding of exactly the parts it reads
(msgspec, a few microseconds), and the computation reads those parts back from the key: the
result is a function of the key alone, so two pods with equal keys cannot get different answers.
A miss costs the computation plus a decode; at 5,000 real pods of a few dozen templates the
projection of a pod takes a fifth of the time it took computed each time (docs/performance.md,
"Pods of one template, projected once"). Each memo is an LRU of bounded size, and a key past
``KEY_MAX`` (a pod of unusual size: thousands of containers or resources) is computed and not
remembered, so the memos hold at most ``MEMO_SIZE`` x ``KEY_MAX`` bytes of keys whatever the
cluster sends.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, TypeVar

import msgspec

from app.domain.accounting import (
    Amounts,
    Part,
    Reported,
    extended_only,
    pod_limit_amounts,
    pod_request_amounts,
)
from app.domain.shape import Placement, running
from app.kube.wire.decoders import Container, ContainerStatus, PodSpec, PodStatus, Quantities, Resources
from app.kube.wire.placement import Affinity, PortJSON, SpreadJSON, TolerationJSON, placement
from app.kube.wire.shared import shared

if TYPE_CHECKING:
    from functools import _lru_cache_wrapper

MEMO_SIZE = 2048  # distinct templates remembered per memo (~1 KB each)
KEY_MAX = 16 * 1024  # bytes of a key that is remembered
_ENCODE = msgspec.json.Encoder().encode
T = TypeVar("T")


class _AmountParts(msgspec.Struct, array_like=True):
    """What a pod's requests and limits are computed from."""

    containers: list[Container] | None
    init_containers: list[Container] | None
    overhead: Quantities | None
    pod_level: Resources | None
    statuses: list[ContainerStatus] | None  # only on a bound pod: the kubelet's report
    init_statuses: list[ContainerStatus] | None
    infeasible: bool  # a resize the kubelet cannot do
    rule: str  # how this API server's version combines a resize's sources


class _PlacementParts(msgspec.Struct, array_like=True):
    """What a pod's placement is computed from."""

    tolerations: list[TolerationJSON] | None
    affinity: Affinity | None
    ports: list[PortJSON]  # of the containers that run (app containers and sidecars)
    spread: list[SpreadJSON] | None
    claims_volumes: bool
    claims_devices: bool


_AMOUNT_PARTS = msgspec.json.Decoder(_AmountParts)
_PLACEMENT_PARTS = msgspec.json.Decoder(_PlacementParts)


class Amounted(msgspec.Struct, frozen=True):
    requests: Amounts
    limits: Amounts
    extended: Amounts  # the extended part of requests


NO_AMOUNTS = Amounted({}, {}, {})  # a pod whose quantities cannot be read


def amounts(spec: PodSpec, status: PodStatus, rule: str) -> Amounted:
    """A pod's effective requests and limits (``app.domain.accounting``); the container statuses
    count only on a bound pod (the kubelet writes them once it runs the pod). Raises
    ``QuantityError`` for a quantity out of syntax."""
    bound = bool(spec.node_name)
    infeasible = any(
        c.type == "PodResizePending" and c.reason == "Infeasible" for c in status.conditions or ()
    )
    parts = _AmountParts(
        spec.containers,
        spec.init_containers,
        spec.overhead,
        spec.resources,
        status.container_statuses if bound else None,
        status.init_container_statuses if bound else None,
        infeasible,
        rule,
    )
    return _remembered(_amounted, _ENCODE(parts))


def pod_placement(spec: PodSpec) -> Placement:
    """A pod's placement (``app.kube.wire.placement``)."""
    parts = _PlacementParts(
        spec.tolerations,
        spec.affinity,
        [p for c in _running(spec) for p in c.ports or ()],
        spec.topology_spread_constraints,
        any(v.persistent_volume_claim or v.ephemeral for v in spec.volumes or ()),
        bool(spec.resource_claims),
    )
    return _remembered(_placed, _ENCODE(parts))


def _remembered(memo: _lru_cache_wrapper[T], key: bytes) -> T:
    """``memo``'s answer for ``key``; computed without remembering it when the key is too large."""
    return memo(key) if len(key) <= KEY_MAX else memo.__wrapped__(key)


@lru_cache(maxsize=MEMO_SIZE)
def _amounted(key: bytes) -> Amounted:
    p = _AMOUNT_PARTS.decode(key)
    reported: dict[str, Reported] = {}
    for cs in [*(p.statuses or ()), *(p.init_statuses or ())]:
        if cs.name is not None:
            actuated = cs.resources.requests if cs.resources is not None else None
            reported[cs.name] = Reported(cs.allocated_resources, actuated, cs.resources is not None)
    parts = [Part(c.amounts, reported=reported.get(c.name or "")) for c in p.containers or ()]
    parts += [
        Part(c.amounts, c.restart_policy == "Always", True, reported.get(c.name or ""))
        for c in p.init_containers or ()
    ]
    pod_level = p.pod_level or Resources()
    requests = pod_request_amounts(
        parts, p.overhead, pod_level.requests, infeasible=p.infeasible, rule=p.rule
    )
    limits = pod_limit_amounts(parts, p.overhead, pod_level.limits)
    return Amounted(shared(requests), shared(limits), shared(extended_only(requests)))


@lru_cache(maxsize=MEMO_SIZE)
def _placed(key: bytes) -> Placement:
    p = _PLACEMENT_PARTS.decode(key)
    return placement(p.tolerations, p.affinity, p.ports, p.spread, p.claims_volumes, p.claims_devices)


def _running(spec: PodSpec) -> list[Container]:
    return running(spec.init_containers or [], spec.containers or [], lambda c: c.restart_policy)
