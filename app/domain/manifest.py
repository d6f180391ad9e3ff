"""A pod shape for the what-if planner from a pasted manifest (the form's fields: ``plan_fields``).

A manifest is one YAML or JSON document (JSON is YAML) of kind Pod, Deployment,
StatefulSet, Job or DaemonSet; its pod spec is read for what placement depends
on. It comes from anyone who can open a link: it is loaded only once its YAML
events passed ``app.domain.safe_yaml``'s checks (no anchors or aliases, bounded
size, nesting and values), every value read is type-checked (never ``str()``-ed),
and a message quotes at most ~80 characters of what was pasted. Fields this
project does not know in the parts it reads are refused by name (a typo such as
``resorces`` would otherwise be silently ignored, and so would the requests).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from app.domain.accounting import pod_requests
from app.domain.admission import Namespace, Rejected, admit
from app.domain.fit import HostPort, PodShape, Requirement, Term, Toleration, admitted_tolerations
from app.domain.names import (
    extended_resource_name_errors,
    is_native_resource,
    is_requested_as_extended,
    is_standard_resource,
)
from app.domain.numbers import within
from app.domain.pod_affinity import NO_TERMS, PodTerms, TermError, merge_label_keys, pod_term, spread
from app.domain.quantity import QuantityError, parse_count, to_amount
from app.domain.safe_yaml import UnsafeYAML, load_all
from app.domain.shape import placement, pod_shape, running

MAX_MANIFEST = 64 * 1024
KINDS = {
    "Pod": None,
    "Deployment": "apps/v1",
    "StatefulSet": "apps/v1",
    "Job": "batch/v1",
    "DaemonSet": "apps/v1",
}
TOP = {"apiVersion", "kind", "metadata", "spec", "status"}
WORKLOAD_SPEC = {
    "replicas", "selector", "template", "strategy", "minReadySeconds", "revisionHistoryLimit", "paused",
    "progressDeadlineSeconds", "serviceName", "podManagementPolicy", "updateStrategy", "volumeClaimTemplates",
    "persistentVolumeClaimRetentionPolicy", "ordinals", "parallelism", "completions", "activeDeadlineSeconds",
    "backoffLimit", "manualSelector", "ttlSecondsAfterFinished", "completionMode", "suspend",
    "podFailurePolicy", "backoffLimitPerIndex", "maxFailedIndexes", "podReplacementPolicy",
}  # fmt: skip
POD_SPEC = {
    "volumes", "initContainers", "containers", "ephemeralContainers", "restartPolicy",
    "terminationGracePeriodSeconds", "activeDeadlineSeconds", "dnsPolicy", "nodeSelector",
    "serviceAccountName", "serviceAccount", "automountServiceAccountToken", "nodeName", "hostNetwork",
    "hostPID", "hostIPC", "shareProcessNamespace", "securityContext", "imagePullSecrets", "hostname",
    "subdomain", "affinity", "schedulerName", "tolerations", "hostAliases", "priorityClassName", "priority",
    "dnsConfig", "readinessGates", "runtimeClassName", "enableServiceLinks", "preemptionPolicy", "overhead",
    "topologySpreadConstraints", "setHostnameAsFQDN", "os", "hostUsers", "schedulingGates", "resourceClaims",
    "resources",
}  # fmt: skip
CONTAINER = {
    "name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources", "resizePolicy",
    "restartPolicy", "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe", "startupProbe",
    "lifecycle", "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy", "securityContext",
    "stdin", "stdinOnce", "tty",
}  # fmt: skip
RESOURCES = {"requests", "limits", "claims"}


class ManifestError(ValueError):
    """Bad planner input: field -> message."""

    def __init__(self, errors: Mapping[str, str]) -> None:
        super().__init__("; ".join(errors.values()))
        self.errors = dict(errors)


@dataclass
class Planned:
    shape: PodShape
    replicas: int | None  # from the manifest (None: not given, or one per node for a DaemonSet)
    kind: str = "Pod"
    name: str = ""
    notes: list[str] = field(default_factory=list)
    # what inter-pod affinity and topology spread read of the pod (app.domain.pod_affinity)
    namespace: str = "default"
    labels: Mapping[str, str] = field(default_factory=dict)
    terms: PodTerms = NO_TERMS


def _unknown(obj: Mapping[str, Any], known: set[str], where: str) -> str | None:
    extra = sorted(k for k in obj if k not in known)
    return f"unknown field {where}.{extra[0]}" if extra else None


def shown(value: Any, limit: int = 80) -> str:
    """A pasted value as a message may quote it: its repr, cut to ``limit`` characters."""
    scalar = isinstance(value, str | int | float | bool) or value is None
    text = repr(value) if scalar else f"a {type(value).__name__}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _text(value: Any, where: str) -> str:
    """A string field: a string, or absent (""); anything else is refused, never str()-ed."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ManifestError({"manifest": f"{where} must be a string, not {shown(value)}."})
    return value


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ManifestError({"manifest": f"{where} must be a mapping."})
    return value


def parse_manifest(text: str, admission: Callable[[str], Namespace] | None = None) -> Planned:
    """One manifest (YAML or JSON) to a pod shape, as admission would leave it in its namespace
    (``admission``: what that namespace's admission reads; None: not applied); raises
    ManifestError naming the problem."""
    if len(text.encode()) > MAX_MANIFEST:
        raise ManifestError({"manifest": f"The manifest is larger than {MAX_MANIFEST // 1024} KiB."})
    try:
        docs = load_all(text)
    except UnsafeYAML as exc:
        raise ManifestError({"manifest": str(exc)}) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise ManifestError({"manifest": f"Not valid YAML or JSON{where}."}) from None
    if len(docs) != 1:
        raise ManifestError({"manifest": f"Paste exactly one manifest, not {len(docs)} documents."})
    doc = docs[0]
    if not isinstance(doc, dict):
        raise ManifestError({"manifest": "The manifest must be a mapping with apiVersion, kind and spec."})
    kind = doc.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        raise ManifestError(
            {"manifest": f"Kind {shown(kind)} is not one the planner reads: {', '.join(KINDS)}."}
        )
    problems = [_unknown(doc, TOP, kind)]
    spec = _mapping(doc.get("spec"), f"{kind}.spec")
    replicas: int | None = None
    if kind == "Pod":
        pod_spec = spec
        pod_meta = _mapping(doc.get("metadata"), "metadata")
    else:
        problems.append(_unknown(spec, WORKLOAD_SPEC, f"{kind}.spec"))
        template = _mapping(spec.get("template"), f"{kind}.spec.template")
        pod_spec = _mapping(template.get("spec"), f"{kind}.spec.template.spec")
        pod_meta = _mapping(template.get("metadata"), f"{kind}.spec.template.metadata")
        raw = spec.get("parallelism" if kind == "Job" else "replicas", None if kind == "DaemonSet" else 1)
        if raw is not None:
            replicas = within(raw, 0, 2**31 - 1)  # the API server's int32
            if replicas is None:
                raise ManifestError({"manifest": f"{kind}.spec replicas must be a whole number."})
    problems.append(_unknown(pod_spec, POD_SPEC, "spec"))
    if found := next((p for p in problems if p), None):
        raise ManifestError({"manifest": f"The manifest has an {found}."})
    containers = pod_spec.get("containers")
    if not isinstance(containers, list) or not containers:
        raise ManifestError({"manifest": "The pod spec has no containers."})
    for group in ("initContainers", "containers"):
        for i, c in enumerate(_list(pod_spec.get(group), f"spec.{group}")):
            if not isinstance(c, dict):  # a null container too: the API server refuses it
                raise ManifestError({"manifest": f"spec.{group}[{i}] must be a mapping, not {shown(c)}."})
            problems.append(_unknown(c, CONTAINER, f"spec.{group}[{i}]"))
            problems.append(
                _unknown(_mapping(c.get("resources"), "resources"), RESOURCES, f"spec.{group}[{i}].resources")
            )
    if found := next((p for p in problems if p), None):
        raise ManifestError({"manifest": f"The manifest has an {found}."})
    metadata = _mapping(doc.get("metadata"), "metadata")
    name = _text(metadata.get("name"), "metadata.name")
    notes = ["A DaemonSet runs one pod on every node it selects."] if kind == "DaemonSet" else []
    namespace = _text(metadata.get("namespace"), "metadata.namespace") or "default"
    labels = _labels(pod_meta.get("labels"))
    if admission is not None:
        _check_quantities(pod_spec)  # bad input is refused before anything is read for admission
        ns = admission(namespace)
        if not ns.known:
            notes.append(
                "RuntimeClasses and LimitRanges could not be read: their overhead, node selection and "
                "default requests are not applied."
            )
        else:
            try:
                pod_spec, admitted = admit(pod_spec, ns)
            except Rejected as exc:
                raise ManifestError({"manifest": str(exc)}) from None
            notes.extend(admitted)
    shape = shape_of_spec(pod_spec)
    return Planned(shape, replicas, kind, name, notes, namespace, labels, pod_terms(pod_spec, labels))


def _labels(raw: Any) -> dict[str, str]:
    labels = _mapping(raw, "labels")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
        raise ManifestError({"manifest": "labels must map strings to strings."})
    return dict(labels)


def pod_terms(spec: Mapping[str, Any], labels: Mapping[str, str]) -> PodTerms:
    """The pod's required inter-pod (anti-)affinity terms and hard topology spread constraints,
    their matchLabelKeys merged as the API server does on create."""
    aff = _mapping(spec.get("affinity"), "affinity")
    required = "requiredDuringSchedulingIgnoredDuringExecution"
    try:
        groups = []
        for name in ("podAffinity", "podAntiAffinity"):
            raw = _list(_mapping(aff.get(name), name).get(required), f"{name}.{required}")
            where = f"affinity.{name}[]"
            groups.append(
                tuple(pod_term(merge_label_keys(_mapping(t, where), labels, where), where) for t in raw)
            )
        where = "topologySpreadConstraints[]"
        constraints = (
            spread(merge_label_keys(_mapping(c, where), labels, where), where)
            for c in _list(spec.get("topologySpreadConstraints"), "topologySpreadConstraints")
        )
        return PodTerms(groups[0], groups[1], tuple(c for c in constraints if c is not None))
    except TermError as exc:
        raise ManifestError({"manifest": str(exc)}) from None


def name_problem(name: str) -> str | None:
    """Why a resource name cannot be requested: not a standard resource, nor an extended one."""
    if "/" not in name:
        if is_standard_resource(name):
            return None
        return "is neither a standard resource (cpu, memory, ephemeral-storage, hugepages-*) nor qualified"
    if is_native_resource(name):
        return None
    problems = extended_resource_name_errors(name)
    return problems[0] if problems else None


def _check_quantities(spec: Mapping[str, Any]) -> None:
    """Every quantity the accounting reads, refused by name unless it is one: each container's,
    the pod-level resources' and the overhead's."""
    amounts = [("overhead", _mapping(spec.get("overhead"), "spec.overhead"))]
    for owner, resources in [("spec.resources", spec.get("resources"))] + [
        (shown(_mapping(c, f"spec.{group}[]").get("name") or group), _mapping(c, "").get("resources"))
        for group in ("initContainers", "containers")
        for c in _list(spec.get(group), f"spec.{group}")
    ]:
        resources = _mapping(resources, f"{owner}: resources")
        amounts += [
            (f"{owner}: {part}", _mapping(resources.get(part), f"{owner}: {part}"))
            for part in ("requests", "limits")
        ]
    for owner, named in amounts:
        for name, value in named.items():
            where = f"{owner}.{shown(name)}"
            if not isinstance(name, str):
                raise ManifestError({"manifest": f"{where}: a resource name must be a string."})
            if problem := name_problem(name):
                raise ManifestError({"manifest": f"{where}: {shown(name)} {problem}."})
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                raise ManifestError({"manifest": f"{where}: a quantity, not {shown(value)}."})
            try:
                if is_requested_as_extended(name):
                    parse_count(str(value))
                else:
                    to_amount(name, str(value))
            except QuantityError as exc:
                raise ManifestError({"manifest": f"{where}={shown(value)}: {exc}"}) from None


def shape_of_spec(spec: Mapping[str, Any]) -> PodShape:
    """The shape of a pod spec as the API sends it (admitted, or as admission would leave it)."""
    _check_quantities(spec)
    try:
        requests = pod_requests(spec)
    except QuantityError as exc:
        raise ManifestError({"manifest": str(exc)}) from None
    affinity = None
    node_affinity = _mapping(_mapping(spec.get("affinity"), "affinity").get("nodeAffinity"), "nodeAffinity")
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required:
        affinity = tuple(
            Term(
                tuple(_req(r) for r in _list(t.get("matchExpressions"), "matchExpressions")),
                tuple(_req(r) for r in _list(t.get("matchFields"), "matchFields")),
            )
            for t in (
                _mapping(t, "nodeSelectorTerms[]")
                for t in _list(
                    _mapping(required, "required node affinity").get("nodeSelectorTerms"), "nodeSelectorTerms"
                )
            )
        )
    tolerations = admitted_tolerations(  # a pasted pod is not admitted yet
        tuple(
            Toleration(
                _text(t.get("key"), "tolerations.key"),
                _text(t.get("operator"), "tolerations.operator") or "Equal",
                _text(t.get("value"), "tolerations.value"),
                _text(t.get("effect"), "tolerations.effect"),
            )
            for t in (_mapping(t, "tolerations[]") for t in _list(spec.get("tolerations"), "tolerations"))
        )
    )
    # a hostNetwork pod's container ports are its host ports (the API server's defaulting)
    host_network = spec.get("hostNetwork") is True
    ports = [
        HostPort(
            _port(p.get("hostPort") or p.get("containerPort")),
            _text(p.get("protocol"), "ports.protocol") or "TCP",
            _text(p.get("hostIP"), "ports.hostIP"),
        )
        for c in _running(spec)
        for p in (_mapping(p, "ports[]") for p in _list(c.get("ports"), "ports"))
        if p.get("hostPort") or (host_network and p.get("containerPort"))
    ]
    aff = _mapping(spec.get("affinity"), "affinity")
    required = "requiredDuringSchedulingIgnoredDuringExecution"
    spread = [
        _mapping(c, "topologySpreadConstraints[]")
        for c in _list(spec.get("topologySpreadConstraints"), "topologySpreadConstraints")
    ]
    volumes = [_mapping(v, "volumes[]") for v in _list(spec.get("volumes"), "volumes")]
    where = placement(
        tolerations,
        affinity,
        ports,
        pod_affinity=bool(_mapping(aff.get("podAffinity"), "podAffinity").get(required)),
        pod_anti_affinity=bool(_mapping(aff.get("podAntiAffinity"), "podAntiAffinity").get(required)),
        hard_spread=any(c.get("whenUnsatisfiable") == "DoNotSchedule" for c in spread),
        claims_volumes=any("persistentVolumeClaim" in v or "ephemeral" in v for v in volumes),
        claims_devices=bool(_list(spec.get("resourceClaims"), "resourceClaims")),
    )
    selector = {
        _text(k, "nodeSelector key"): _text(v, f"nodeSelector.{shown(k)}")
        for k, v in _mapping(spec.get("nodeSelector"), "nodeSelector").items()
    }
    return pod_shape(requests, selector, where, _text(spec.get("nodeName"), "nodeName"))


def _running(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    init = [_mapping(c, "initContainers[]") for c in _list(spec.get("initContainers"), "initContainers")]
    app = [_mapping(c, "containers[]") for c in _list(spec.get("containers"), "containers")]
    return running(init, app, lambda c: c.get("restartPolicy"))


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ManifestError({"manifest": f"{where} must be a list, not {shown(value)}."})
    return value


def _port(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ManifestError({"manifest": f"ports.hostPort must be a whole number, not {shown(value)}."})
    return value


def _req(r: Mapping[str, Any]) -> Requirement:
    r = _mapping(r, "a node selector requirement")
    values = tuple(_text(v, "requirement values") for v in _list(r.get("values"), "requirement values"))
    return Requirement(_text(r.get("key"), "requirement key"), _text(r.get("operator"), "operator"), values)
