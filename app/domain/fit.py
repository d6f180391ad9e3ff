"""Will a pod fit on a node? kube-scheduler's filters that depend only on the pod and the node.

Modelled, as kube-scheduler implements them (pkg/scheduler/framework/plugins; written against
v1.20, checked against 1.37 and 1.35 by the agreement tests):

* NodeUnschedulable: a cordoned node takes only pods tolerating
  ``node.kubernetes.io/unschedulable:NoSchedule``.
* NodeName: ``spec.nodeName``, when set, names the node.
* NodeAffinity: ``nodeSelector`` (every label equal) and the required node
  affinity (terms ORed; a term's expressions and fields ANDed; an empty term
  matches nothing; In/NotIn/Exists/DoesNotExist/Gt/Lt; matchFields on
  ``metadata.name``).
* TaintToleration: every NoSchedule and NoExecute taint tolerated (an empty
  toleration key with Exists tolerates every taint; an empty effect every
  effect).
* NodeResourcesFit: one more pod within the node's ``pods``, and each resource the
  pod requests more than 0 of (cpu, memory, ephemeral-storage, hugepages-*,
  extended) against allocatable minus what the node's pods request. Since 1.27
  (kubernetes#116408) a resource the pod does not ask for is not checked, so an
  over-committed cpu does not keep out a pod asking only for a dongle; 1.20-1.26
  checked cpu, memory and ephemeral-storage whenever the pod asked for anything.
* NodePorts: no host port (protocol, port) already taken on the node (0.0.0.0 or
  an empty IP conflicts with every IP).

Not modelled, and named for the pods that use them (never assumed away):
inter-pod affinity and anti-affinity (required), topology spread constraints
(DoNotSchedule), volumes the scheduler checks (persistent volume claims, and
the per-node volume limits), scheduler extenders, dynamic resource allocation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from app.domain.names import (
    go_int,
    is_label_value,
    is_native_resource,
    is_requested_as_extended,
    qualified_name_errors,
)
from app.domain.shares import pods_fitting

UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
NATIVE_ORDER = {"cpu": 0, "memory": 1, "ephemeral-storage": 2}  # the scheduler's order of reasons


@dataclass(frozen=True, slots=True)
class Requirement:
    """One node selector requirement: key, operator, values."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def parses(self, field: bool = False) -> bool:
        """Whether kube-scheduler can use it: ``labels.NewRequirement`` for matchExpressions (a
        qualified key; every value a valid label value, so no negative bound; In/NotIn with
        values, Exists/DoesNotExist without, Gt/Lt with one integer), and for matchFields
        In/NotIn with exactly one value. A term holding one it cannot parse matches no node,
        though the API server accepted the pod."""
        op, values = self.operator, self.values
        if field:
            return op in ("In", "NotIn") and len(values) == 1
        if qualified_name_errors(self.key) or not all(is_label_value(v) for v in values):
            return False
        if op in ("In", "NotIn"):
            return bool(values)
        if op in ("Exists", "DoesNotExist"):
            return not values
        if op in ("Gt", "Lt"):
            return len(values) == 1 and go_int(values[0]) is not None
        return False

    def matches(self, value: str | None) -> bool:
        op = self.operator
        if op == "In":
            return value is not None and value in self.values
        if op == "NotIn":
            return value is None or value not in self.values
        if op == "Exists":
            return value is not None
        if op == "DoesNotExist":
            return value is None
        if op in ("Gt", "Lt"):
            if value is None or len(self.values) != 1:
                return False
            have, bound = go_int(value), go_int(self.values[0])  # Go's ParseInt on both sides
            if have is None or bound is None:
                return False
            return have > bound if op == "Gt" else have < bound
        return False  # an unknown operator matches nothing


@dataclass(frozen=True, slots=True)
class Term:
    """A node selector term: its expressions (on labels) and fields (on metadata.name), ANDed."""

    expressions: tuple[Requirement, ...] = ()
    fields: tuple[Requirement, ...] = ()
    usable: bool = field(init=False, compare=False)  # the scheduler can parse every requirement

    def __post_init__(self) -> None:
        usable = all(r.parses() for r in self.expressions) and all(r.parses(field=True) for r in self.fields)
        object.__setattr__(self, "usable", usable)

    def matches(self, name: str, labels: Mapping[str, str]) -> bool:
        if not self.expressions and not self.fields:
            return False  # an empty term selects nothing
        if not self.usable:
            return False  # the scheduler could not parse it
        return all(r.matches(labels.get(r.key)) for r in self.expressions) and all(
            r.matches(name if r.key == "metadata.name" else None) for r in self.fields
        )


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"  # "" means Equal
    value: str = ""
    effect: str = ""  # "" tolerates every effect

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.operator in ("", "Equal") and self.value == taint.value

    def __str__(self) -> str:
        """As ``kubectl describe`` writes one: ``key=value:effect``, ``key:effect op=Exists``."""
        effect = f":{self.effect}" if self.effect else ""
        if self.operator == "Exists":
            return f"{self.key}{effect} op=Exists" if self.key or effect else "op=Exists"
        return f"{self.key}={self.value}{effect}"


# The DefaultTolerationSeconds admission plugin (on by default) gives every new pod that does not
# already tolerate them these two NoExecute tolerations (for 300 s): a node whose kubelet reports
# NotReady, or has gone quiet, is tainted so by the node lifecycle controller, and the scheduler
# still places such a pod there. Mirrors plugin/pkg/admission/defaulttolerationseconds.
NOT_READY, UNREACHABLE = "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"


def admitted_tolerations(tolerations: tuple[Toleration, ...]) -> tuple[Toleration, ...]:
    """A pod's tolerations once admitted: the defaults added unless a toleration covers them
    (its key that taint's or empty, its effect NoExecute or empty)."""
    added = tuple(
        Toleration(key, "Exists", "", "NoExecute")
        for key in (NOT_READY, UNREACHABLE)
        if not any(t.key in ("", key) and t.effect in ("", "NoExecute") for t in tolerations)
    )
    return tolerations + added


def extended_resource_tolerations(names: Iterable[str]) -> tuple[Toleration, ...]:
    """What the ExtendedResourceToleration admission plugin (GKE turns it on; GPU pools are
    tainted with the resource's own name) adds to a pod requesting ``names``: per extended
    resource, ``{key: name, operator: Exists, effect: NoSchedule}``, in name order. Mirrors
    plugin/pkg/admission/extendedresourcetoleration (``IsExtendedResourceName``: not native, so a
    DeviceClass's implicit name gets none)."""
    return tuple(
        Toleration(n, "Exists", "", "NoSchedule") for n in sorted(set(names)) if not is_native_resource(n)
    )


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str = ""
    effect: str = "NoSchedule"

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


@dataclass(frozen=True, slots=True)
class HostPort:
    port: int
    protocol: str = "TCP"
    ip: str = ""

    def conflicts(self, other: HostPort) -> bool:
        if self.port != other.port or self.protocol != other.protocol:
            return False
        wild = ("", "0.0.0.0")
        return self.ip in wild or other.ip in wild or self.ip == other.ip


@dataclass(frozen=True, eq=False)
class PodShape:
    """What placement depends on, for one pod (pods of one shape are placed alike)."""

    requests: Mapping[str, int]  # effective requests (init containers, sidecars and overhead applied)
    node_selector: Mapping[str, str] = field(default_factory=dict)
    affinity: tuple[Term, ...] | None = None  # required node affinity; None: none
    tolerations: tuple[Toleration, ...] = ()
    host_ports: tuple[HostPort, ...] = ()
    node_name: str = ""
    unmodelled: tuple[str, ...] = ()  # scheduler features the pod uses that are not modelled here

    @cached_property
    def key(self) -> tuple[object, ...]:
        """Pods alike for placement have equal keys (a shape is hashed and compared by it)."""
        return (
            frozenset(self.requests.items()),
            frozenset(self.node_selector.items()),
            self.affinity,
            self.tolerations,
            self.host_ports,
            self.node_name,
            self.unmodelled,
        )

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PodShape) and self.key == other.key

    @property
    def extended(self) -> dict[str, int]:
        return {r: v for r, v in self.requests.items() if is_requested_as_extended(r) and v}


@dataclass(frozen=True, eq=False)
class NodeFacts:
    name: str
    labels: Mapping[str, str]
    allocatable: Mapping[str, int]
    requested: Mapping[str, int]  # by the node's counted pods, with "pods" their number
    unschedulable: bool = False
    taints: tuple[Taint, ...] = ()
    host_ports: Iterable[HostPort] = ()
    capacity: Mapping[str, int] = field(default_factory=dict)  # for advice: what to set capacity to
    repelling: int = 0  # pods on it with required inter-pod anti-affinity (not modelled: named)
    # a filter decided over every node for one pod (inter-pod affinity, topology spread:
    # app.domain.pod_affinity) that keeps that pod off this node
    blocked: Failure | None = None
    # a name DRA serves here from devices several claims share: the shares each has left; a pod
    # asking for k takes one on each of k distinct devices (app.domain.shares)
    spread: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

    def free(self, resource: str) -> int:
        return self.allocatable.get(resource, 0) - self.requested.get(resource, 0)

    def usable(self, resource: str) -> int:
        """The most of ``resource`` one pod may be given here: its free amount, or, of shared
        devices, the devices that have a share left (one pod takes one share of each)."""
        if resource in self.spread:
            return sum(1 for n in self.spread[resource] if n > 0)
        return self.free(resource)

    def pods_of(self, resource: str, want: int, extra: int = 0) -> int:
        """How many pods asking ``want`` of ``resource`` it takes, by that resource alone."""
        if resource in self.spread:
            return pods_fitting(self.spread[resource], want)
        return (self.free(resource) + extra) // want


@dataclass(frozen=True)
class Failure:
    """Why a node was filtered out: the plugin, and the reason in the scheduler's words."""

    plugin: str
    reason: str
    resource: str = ""  # NodeResourcesFit: the resource short
    taint: Taint | None = None  # TaintToleration: the first taint not tolerated


def _tolerated(taint: Taint, tolerations: Iterable[Toleration]) -> bool:
    return any(t.tolerates(taint) for t in tolerations)


def failures(pod: PodShape, node: NodeFacts) -> list[Failure]:
    """Every filter ``node`` fails for ``pod`` (empty: the pod fits), in the scheduler's order."""
    out: list[Failure] = []
    if node.unschedulable and not _tolerated(Taint(UNSCHEDULABLE_TAINT, "", "NoSchedule"), pod.tolerations):
        out.append(Failure("NodeUnschedulable", "node(s) were unschedulable"))
    out.extend(resource_failures(pod, node))
    if pod.node_name and pod.node_name != node.name:
        out.append(Failure("NodeName", "node(s) didn't match the requested hostname"))
    if pod.host_ports and any(p.conflicts(q) for p in pod.host_ports for q in node.host_ports):
        out.append(Failure("NodePorts", "node(s) didn't have free ports for the requested pod ports"))
    if not selects_node(pod, node):
        out.append(Failure("NodeAffinity", "node(s) didn't match node selector"))
    if (taint := untolerated(pod, node)) is not None:
        reason = f"node(s) had taint {{{taint.key}: {taint.value}}}, that the pod didn't tolerate"
        out.append(Failure("TaintToleration", reason, taint=taint))
    if node.blocked is not None:
        out.append(node.blocked)
    return out


def selects_node(pod: PodShape, node: NodeFacts) -> bool:
    """NodeAffinity: the pod's node selector and required node affinity match the node."""
    if any(node.labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    return pod.affinity is None or any(t.matches(node.name, node.labels) for t in pod.affinity)


def untolerated(pod: PodShape, node: NodeFacts) -> Taint | None:
    """TaintToleration: the node's first NoSchedule or NoExecute taint the pod does not tolerate."""
    for taint in node.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not _tolerated(taint, pod.tolerations):
            return taint
    return None


def resource_failures(
    pod: PodShape, node: NodeFacts, extra: Mapping[str, int] | None = None
) -> list[Failure]:
    """NodeResourcesFit, with ``extra`` added to the node's allocatable (a what-if)."""
    extra = extra or {}
    out: list[Failure] = []
    if node.requested.get("pods", 0) + 1 > node.allocatable.get("pods", 0) + extra.get("pods", 0):
        out.append(Failure("NodeResourcesFit", "Too many pods", "pods"))
    asked = {r: v for r, v in pod.requests.items() if v > 0 and r != "pods"}
    for resource in sorted(asked, key=lambda r: (r not in NATIVE_ORDER, NATIVE_ORDER.get(r, 0), r)):
        want = asked[resource]
        if node.pods_of(resource, want, extra.get(resource, 0)) < 1:
            out.append(Failure("NodeResourcesFit", f"Insufficient {resource}", resource))
    return out


def fits(pod: PodShape, node: NodeFacts) -> bool:
    return not failures(pod, node)


def how_many(pod: PodShape, node: NodeFacts, extra: Mapping[str, int] | None = None) -> int:
    """How many more pods of this shape ``node`` takes now (or with ``extra`` allocatable), when
    nothing but resources and host ports stand in the way."""
    extra = extra or {}
    limits = [node.allocatable.get("pods", 0) + extra.get("pods", 0) - node.requested.get("pods", 0)]
    asked = {r: v for r, v in pod.requests.items() if v and r != "pods"}
    for resource, want in asked.items():
        limits.append(node.pods_of(resource, want, extra.get(resource, 0)))
    if pod.host_ports:
        limits.append(1)
    return max(0, min(limits))
