"""The parts of a pod and a node that placement depends on: decoded, converted, shared.

Pods made from one template share one ``Placement`` (tolerations, required node
affinity, host ports, features the fit model does not cover), so keeping it
costs a pointer per pod.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from app.domain.fit import HostPort, Requirement, Taint, Term, Toleration


class _Requirement(msgspec.Struct):
    key: str = ""
    operator: str = ""
    values: list[str] | None = None


class _Term(msgspec.Struct, rename="camel"):
    match_expressions: list[_Requirement] | None = None
    match_fields: list[_Requirement] | None = None


class _NodeSelector(msgspec.Struct, rename="camel"):
    node_selector_terms: list[_Term] | None = None


class _NodeAffinity(msgspec.Struct):
    requiredDuringSchedulingIgnoredDuringExecution: _NodeSelector | None = None


class Present(msgspec.Struct):
    """An object whose presence is what matters (an inter-pod affinity term, a claim volume's
    source): decodes any object, keeps none of it."""


class _PodAffinity(msgspec.Struct):
    requiredDuringSchedulingIgnoredDuringExecution: list[Present] | None = None


class Affinity(msgspec.Struct, rename="camel"):
    node_affinity: _NodeAffinity | None = None
    pod_affinity: _PodAffinity | None = None
    pod_anti_affinity: _PodAffinity | None = None


class TolerationJSON(msgspec.Struct):
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None


class TaintJSON(msgspec.Struct):
    key: str = ""
    value: str | None = None
    effect: str = ""


class PortJSON(msgspec.Struct, rename={"host_port": "hostPort", "host_ip": "hostIP"}):
    host_port: int | None = None
    protocol: str | None = None
    host_ip: str | None = None


class SpreadJSON(msgspec.Struct, rename="camel"):
    when_unsatisfiable: str = ""


@dataclass(frozen=True, slots=True)
class Placement:
    tolerations: tuple[Toleration, ...] = ()
    affinity: tuple[Term, ...] | None = None  # required node affinity terms; None: none
    host_ports: tuple[HostPort, ...] = ()
    unmodelled: tuple[str, ...] = ()


NONE = Placement()
_KEPT: dict[Placement, Placement] = {}
_KEPT_MAX = 100_000


def shared(p: Placement) -> Placement:
    if p == NONE:
        return NONE
    found = _KEPT.get(p)
    if found is None:
        if len(_KEPT) >= _KEPT_MAX:
            return p
        found = _KEPT[p] = p
    return found


def _requirement(r: _Requirement) -> Requirement:
    return Requirement(r.key, r.operator, tuple(r.values or ()))


def placement(
    tolerations: list[TolerationJSON] | None,
    affinity: Affinity | None,
    ports: list[PortJSON],
    spread: list[SpreadJSON] | None,
    claims_volumes: bool,
) -> Placement:
    tols = tuple(
        Toleration(t.key or "", t.operator or "Equal", t.value or "", t.effect or "")
        for t in tolerations or ()
    )
    terms = None
    unmodelled = []
    if affinity is not None:
        node_affinity = affinity.node_affinity
        required = node_affinity.requiredDuringSchedulingIgnoredDuringExecution if node_affinity else None
        if required is not None:
            terms = tuple(
                Term(
                    tuple(map(_requirement, t.match_expressions or ())),
                    tuple(map(_requirement, t.match_fields or ())),
                )
                for t in required.node_selector_terms or ()
            )
        if affinity.pod_affinity and affinity.pod_affinity.requiredDuringSchedulingIgnoredDuringExecution:
            unmodelled.append("inter-pod affinity")
        anti = affinity.pod_anti_affinity
        if anti and anti.requiredDuringSchedulingIgnoredDuringExecution:
            unmodelled.append("inter-pod anti-affinity")
    if any(s.when_unsatisfiable == "DoNotSchedule" for s in spread or ()):
        unmodelled.append("topology spread constraints")
    if claims_volumes:  # a PersistentVolumeClaim or a generic ephemeral volume
        unmodelled.append("persistent volumes (binding, zones and per-node volume limits)")
    host_ports = tuple(
        sorted(
            {HostPort(p.host_port, p.protocol or "TCP", p.host_ip or "") for p in ports if p.host_port},
            key=lambda h: (h.port, h.protocol, h.ip),
        )
    )
    return shared(Placement(tols, terms, host_ports, tuple(unmodelled)))


def taints(raw: list[TaintJSON] | None) -> tuple[Taint, ...]:
    return tuple(Taint(t.key, t.value or "", t.effect) for t in raw or ())
