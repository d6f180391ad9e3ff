"""What the API server does to a pasted pod before the scheduler sees it, in its order.

A watched pod was admitted already; a pasted manifest was not. Written by hand after the API
server's own code, because no library applies it. First the defaulting every decoded Pod gets
(``SetDefaults_Pod``, pkg/apis/core/v1/defaults.go), then the mutating admission plugins on by
default (plugin/pkg/admission) in their registered order:

* Defaulting: a container (init containers too) that gives a resource's limit but not its
  request gets the limit as its request. This comes first: LimitRanger's ``defaultRequest``
  only fills what is still missing after it (so a limits-only container keeps requests equal to
  its limits, whatever the LimitRange says). Pod-level ``spec.resources`` requests default to its
  limits where unset (``app.domain.accounting.pod_requests``); the aggregate of the containers'
  requests that 1.35 puts there first, and 1.37 after admission, is not modelled.

* LimitRanger: each container (init containers too) gets the namespace's ``Container``
  defaults for the resources it names neither way: ``default`` as its limit, ``defaultRequest``
  as its request (the API server stores a LimitRange with ``defaultRequest`` filled from
  ``default``, and ``default`` from ``max``). Several LimitRanges apply in name order; the first
  to give a resource wins. (Where two disagree on one resource, the API server's own order is
  its informer's, which is not defined: tests/integration/test_admission_defaulting.py saw
  either win.) Pod-level resources are not defaulted here.
* RuntimeClass: ``spec.runtimeClassName`` names a RuntimeClass; its ``overhead.podFixed`` becomes
  the pod's ``overhead``, its ``scheduling.nodeSelector`` is merged into the pod's (a conflicting
  key rejects the pod) and its ``scheduling.tolerations`` are added. An unknown RuntimeClass, or
  an overhead the pod sets differently, rejects the pod.
* DefaultTolerationSeconds: ``app.domain.fit.admitted_tolerations``.
* Validation afterwards: a request above its limit (a LimitRange's default limit below what the
  container asks for) refuses the pod.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.domain.quantity import QuantityError, to_amount


class Rejected(ValueError):
    """Admission would refuse the pod: the API server's reason, in this project's words."""


@dataclass(frozen=True)
class RuntimeClass:
    name: str
    overhead: Mapping[str, str] = field(default_factory=dict)  # overhead.podFixed
    node_selector: Mapping[str, str] = field(default_factory=dict)  # scheduling.nodeSelector
    tolerations: tuple[Mapping[str, Any], ...] = ()  # scheduling.tolerations, as the API sends them


@dataclass(frozen=True)
class LimitRange:
    name: str
    default: Mapping[str, str] = field(default_factory=dict)  # the Container item's default limits
    default_request: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Namespace:
    """What admission reads, for one namespace; ``known``: whether it could be read at all."""

    runtime_classes: Mapping[str, RuntimeClass] = field(default_factory=dict)
    limit_ranges: Sequence[LimitRange] = ()
    known: bool = True


def admit(spec: Mapping[str, Any], ns: Namespace) -> tuple[dict[str, Any], list[str]]:
    """The pod spec as admission leaves it, and notes on what it changed; raises Rejected."""
    out: dict[str, Any] = copy.deepcopy(dict(spec))
    notes: list[str] = []
    _requests_from_limits(out)
    for ranged in sorted(ns.limit_ranges, key=lambda r: r.name):
        for group in ("initContainers", "containers"):
            for c in out.get(group) or ():
                if isinstance(c, dict) and _default(c, ranged):
                    notes.append(
                        f"LimitRange {ranged.name} gave {c.get('name') or 'a container'} its defaults."
                    )
    _requests_within_limits(out)
    name = out.get("runtimeClassName")
    if isinstance(name, str) and name:
        rc = ns.runtime_classes.get(name)
        if rc is None:
            raise Rejected(
                f"spec.runtimeClassName: there is no RuntimeClass {name!r}; the pod would be refused."
            )
        _runtime_class(out, rc, notes)
    return out, notes


def _requests_from_limits(spec: dict[str, Any]) -> None:
    """``SetDefaults_Pod``: each container's (and init container's) limits give its requests for
    the resources it names no request for."""
    for _, _, resources in _resources(spec, ("initContainers", "containers")):
        limits, requests = resources.get("limits"), resources.get("requests")
        if isinstance(limits, dict) and limits and (requests is None or isinstance(requests, dict)):
            resources["requests"] = {**limits, **(requests if isinstance(requests, dict) else {})}


def _requests_within_limits(spec: dict[str, Any]) -> None:
    """Validation after admission: a request above its limit (a LimitRange's default limit below
    what the container asks) makes the API server refuse the pod. Named as the API server's first
    cause names it: app containers are validated before init containers."""
    for group, i, resources in _resources(spec, ("containers", "initContainers")):
        requests, limits = resources.get("requests"), resources.get("limits")
        if not (isinstance(requests, dict) and isinstance(limits, dict)):
            continue
        for name, value in requests.items():
            if name in limits and _above(name, value, limits[name]):
                raise Rejected(
                    f"spec.{group}[{i}].resources.requests: {name} {value} is more than its limit "
                    f"{limits[name]}; the API server would refuse the pod."
                )


def _resources(spec: dict[str, Any], groups: tuple[str, ...]) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """Each container's ``resources`` mapping (group, index, the mapping), in ``groups``' order;
    a container or resources of the wrong type is left to the shape's reading, which refuses it."""
    for group in groups:
        for i, c in enumerate(spec.get(group) or ()):
            resources = c.get("resources") if isinstance(c, dict) else None
            if isinstance(resources, dict):
                yield group, i, resources


def _above(name: str, request: Any, limit: Any) -> bool:
    try:
        return to_amount(name, str(request)) > to_amount(name, str(limit))
    except QuantityError:
        return False  # a quantity out of syntax: reading the shape refuses it with a message


def _default(container: dict[str, Any], ranged: LimitRange) -> bool:
    resources = container.get("resources")
    if not isinstance(resources, dict):
        resources = container["resources"] = {}
    given_limits, given_requests = resources.get("limits"), resources.get("requests")
    limits: dict[str, Any] = given_limits if isinstance(given_limits, dict) else {}
    requests: dict[str, Any] = given_requests if isinstance(given_requests, dict) else {}
    changed = False
    for k, v in ranged.default.items():
        if k not in limits:
            limits = {**limits, k: v}
            changed = True
    for k, v in ranged.default_request.items():
        if k not in requests:
            requests = {**requests, k: v}
            changed = True
    if changed:
        resources["limits"], resources["requests"] = limits, requests
    return changed


def _runtime_class(spec: dict[str, Any], rc: RuntimeClass, notes: list[str]) -> None:
    # a field of the wrong type is left as it is: reading the shape refuses it with a message
    if rc.overhead:
        given = spec.get("overhead")
        if given and (not isinstance(given, dict) or given != dict(rc.overhead)):
            raise Rejected(
                f"spec.overhead differs from RuntimeClass {rc.name}'s overhead; the pod would be refused."
            )
        spec["overhead"] = dict(rc.overhead)
        notes.append(f"RuntimeClass {rc.name} adds its overhead ({_listed(rc.overhead)}).")
    if rc.node_selector and isinstance(spec.get("nodeSelector") or {}, dict):
        selector = dict(spec.get("nodeSelector") or {})
        for k, v in rc.node_selector.items():
            if k in selector and selector[k] != v:
                raise Rejected(
                    f"spec.nodeSelector.{k} conflicts with RuntimeClass {rc.name}'s scheduling; "
                    "the pod would be refused."
                )
            selector[k] = v
        spec["nodeSelector"] = selector
        notes.append(f"RuntimeClass {rc.name} selects nodes with {_listed(rc.node_selector)}.")
    if rc.tolerations and isinstance(spec.get("tolerations") or [], list):
        have = list(spec.get("tolerations") or ())
        spec["tolerations"] = have + [dict(t) for t in rc.tolerations if dict(t) not in have]
        notes.append(f"RuntimeClass {rc.name} adds {len(rc.tolerations)} toleration(s).")


def _listed(values: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(values.items()))
