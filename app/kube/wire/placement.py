"""The parts of a pod and a node that placement depends on, as the API sends them, converted
to the domain's ``Placement`` (``app.domain.shape``) and taints."""

from __future__ import annotations

from typing import Any

import msgspec

from app.domain import shape
from app.domain.fit import HostPort, Requirement, Taint, Term, Toleration
from app.domain.pod_affinity import PodTerm, TermError, pod_term
from app.domain.shape import Placement


class _Requirement(msgspec.Struct, gc=False):
    key: str = ""
    operator: str = ""
    values: list[str] | None = None


class _Term(msgspec.Struct, gc=False, rename="camel"):
    match_expressions: list[_Requirement] | None = None
    match_fields: list[_Requirement] | None = None


class NodeSelector(msgspec.Struct, gc=False, rename="camel"):
    node_selector_terms: list[_Term] | None = None


class _NodeAffinity(msgspec.Struct, gc=False):
    requiredDuringSchedulingIgnoredDuringExecution: NodeSelector | None = None


class Present(msgspec.Struct, gc=False):
    """An object whose presence is what matters (an inter-pod affinity term, a claim volume's
    source): decodes any object, keeps none of it."""


class _PodAffinityTerm(msgspec.Struct, gc=False, rename="camel"):
    topology_key: str = ""
    label_selector: dict[str, Any] | None = None
    namespaces: list[str] | None = None
    namespace_selector: dict[str, Any] | None = None

    def term(self) -> PodTerm | None:
        """As the fit model reads it (None: one the API server should not have taken)."""
        raw = {
            "topologyKey": self.topology_key,
            "labelSelector": self.label_selector,
            "namespaces": self.namespaces,
            "namespaceSelector": self.namespace_selector,
        }
        try:
            return pod_term(raw, "podAntiAffinity")
        except TermError:
            return None


HOSTNAME = "kubernetes.io/hostname"


class _PodAffinity(msgspec.Struct, gc=False):
    requiredDuringSchedulingIgnoredDuringExecution: list[_PodAffinityTerm] | None = None


class Affinity(msgspec.Struct, gc=False, rename="camel"):
    node_affinity: _NodeAffinity | None = None
    pod_affinity: _PodAffinity | None = None
    pod_anti_affinity: _PodAffinity | None = None


class TolerationJSON(msgspec.Struct, gc=False):
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None


class TaintJSON(msgspec.Struct, gc=False):
    key: str = ""
    value: str | None = None
    effect: str = ""


class PortJSON(msgspec.Struct, gc=False, rename={"host_port": "hostPort", "host_ip": "hostIP"}):
    host_port: int | None = None
    protocol: str | None = None
    host_ip: str | None = None


class SpreadJSON(msgspec.Struct, gc=False, rename="camel"):
    when_unsatisfiable: str = ""


def _requirement(r: _Requirement) -> Requirement:
    return Requirement(r.key, r.operator, tuple(r.values or ()))


def node_selector_terms(selector: NodeSelector) -> tuple[Term, ...]:
    """A v1.NodeSelector's terms (ORed), as the scheduler matches them."""
    return tuple(
        Term(
            tuple(map(_requirement, t.match_expressions or ())),
            tuple(map(_requirement, t.match_fields or ())),
        )
        for t in selector.node_selector_terms or ()
    )


def placement(
    tolerations: list[TolerationJSON] | None,
    affinity: Affinity | None,
    ports: list[PortJSON],
    spread: list[SpreadJSON] | None,
    claims_volumes: bool,
    claims_devices: bool = False,
) -> Placement:
    """A watched pod's placement from its decoded parts, by ``app.domain.shape.placement``."""
    tols = (
        Toleration(t.key or "", t.operator or "Equal", t.value or "", t.effect or "")
        for t in tolerations or ()
    )
    node_affinity = affinity.node_affinity if affinity else None
    required = node_affinity.requiredDuringSchedulingIgnoredDuringExecution if node_affinity else None
    terms = None if required is None else node_selector_terms(required)
    pod_affinity = affinity.pod_affinity if affinity else None
    anti = affinity.pod_anti_affinity if affinity else None
    anti_terms = (anti.requiredDuringSchedulingIgnoredDuringExecution if anti else None) or ()
    return shape.placement(
        tols,
        terms,
        (HostPort(p.host_port, p.protocol or "TCP", p.host_ip or "") for p in ports if p.host_port),
        pod_affinity=bool(pod_affinity and pod_affinity.requiredDuringSchedulingIgnoredDuringExecution),
        pod_anti_affinity=bool(anti_terms),
        wide_anti_affinity=any(t.topology_key != HOSTNAME for t in anti_terms),
        hard_spread=any(s.when_unsatisfiable == "DoNotSchedule" for s in spread or ()),
        claims_volumes=claims_volumes,
        claims_devices=claims_devices,
        anti_affinity=tuple(t for t in (a.term() for a in anti_terms) if t is not None),
    )


def taints(raw: list[TaintJSON] | None) -> tuple[Taint, ...]:
    return tuple(Taint(t.key, t.value or "", t.effect) for t in raw or ())
