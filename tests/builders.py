"""Node and pod JSON as the API server returns them, for every test that feeds a store or a
decoder: one place knows their shape. Amounts may be given as numbers or quantity strings."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

Amounts = Mapping[str, int | str]


def _quantities(amounts: Amounts | None) -> dict[str, str]:
    return {k: str(v) for k, v in (amounts or {}).items()}


def node(
    name: str,
    capacity: Amounts | None = None,
    *,
    allocatable: Amounts | None = None,
    rv: int | str = "1",
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    taints: Iterable[Mapping[str, str]] = (),
    unschedulable: bool = False,
    conditions: Iterable[Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    """A node advertising ``capacity``, with ``allocatable`` the same unless given; ``conditions``:
    its status conditions (none unless given)."""
    obj: dict[str, Any] = {
        "metadata": {"name": name, "resourceVersion": str(rv)},
        "status": {
            "capacity": _quantities(capacity),
            "allocatable": _quantities(capacity if allocatable is None else allocatable),
        },
    }
    if labels is not None:
        obj["metadata"]["labels"] = dict(labels)
    if annotations is not None:
        obj["metadata"]["annotations"] = dict(annotations)
    if taints or unschedulable:
        obj["spec"] = {"taints": [dict(t) for t in taints], "unschedulable": unschedulable}
    if conditions is not None:
        obj["status"]["conditions"] = [dict(c) for c in conditions]
    return obj


def pod(
    name: str,
    node: str | None = None,
    requests: Amounts | None = None,
    *,
    namespace: str = "default",
    rv: int | str = "1",
    phase: str | None = None,
    limits: Amounts | None = None,
    owner: tuple[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    created: str | None = None,
    terminating: bool = False,
    unschedulable: str | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A pod with one container requesting ``requests`` (limits: its extended requests unless
    given), bound to ``node`` and Running, or Pending unbound; ``unschedulable``: the
    scheduler's message on its PodScheduled condition; ``spec``: more of its spec."""
    extended = {k: v for k, v in (requests or {}).items() if "/" in k}
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "resourceVersion": str(rv)}
    if created is not None:
        meta["creationTimestamp"] = created
    if labels:
        meta["labels"] = dict(labels)
    if terminating:
        meta["deletionTimestamp"] = "2026-12-03T10:00:00Z"
    if owner:
        meta["ownerReferences"] = [{"kind": owner[0], "name": owner[1], "controller": True}]
    resources = {
        "requests": _quantities(requests),
        "limits": _quantities(extended if limits is None else limits),
    }
    status: dict[str, Any] = {"phase": phase or ("Running" if node else "Pending")}
    if unschedulable is not None:
        status["conditions"] = [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": unschedulable}
        ]
    return {
        "metadata": meta,
        "spec": {"nodeName": node or "", "containers": [{"name": "main", "resources": resources}], **spec},
        "status": status,
    }
