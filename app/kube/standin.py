"""A stand-in for the kubelet, for tests and the demo (there is no kubelet here).

A real kubelet copies a node's extended-resource capacity into allocatable and
runs the pods bound to it, and the node controller lifts the
``node.kubernetes.io/not-ready`` taint (which the API server puts on every new
node) once the kubelet reports Ready. ``sync_once`` does just that, through
the API: allocatable := capacity for extended resources, the not-ready taint
removed, and bound Pending pods marked Running.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from kubernetes import client

from app.domain.names import escape_json_pointer, is_native_resource

NOT_READY = "node.kubernetes.io/not-ready"


def make_ready(core: client.CoreV1Api, node: Mapping[str, Any]) -> bool:
    """Lift the not-ready taint, as the node controller does for a Ready node."""
    taints = (node.get("spec") or {}).get("taints") or []
    kept = [t for t in taints if t.get("key") != NOT_READY]
    if len(kept) == len(taints):
        return False
    core.patch_node(node["metadata"]["name"], {"spec": {"taints": kept or None}})
    return True


def sync_node(core: client.CoreV1Api, node: Mapping[str, Any]) -> bool:
    """Copy extended capacity to allocatable on one node (a dict as in the API's JSON)."""
    status = node.get("status") or {}
    cap = {k: v for k, v in (status.get("capacity") or {}).items() if not is_native_resource(k)}
    alloc = {k: v for k, v in (status.get("allocatable") or {}).items() if not is_native_resource(k)}
    ops: list[dict[str, object]] = []
    if "allocatable" not in status:
        ops.append({"op": "add", "path": "/status/allocatable", "value": {}})
    for name, value in cap.items():
        if alloc.get(name) != value:
            ops.append(
                {"op": "add", "path": "/status/allocatable/" + escape_json_pointer(name), "value": value}
            )
    for name in alloc.keys() - cap.keys():
        ops.append({"op": "remove", "path": "/status/allocatable/" + escape_json_pointer(name)})
    if ops:
        core.patch_node_status(node["metadata"]["name"], ops)
    return bool(ops)


def run_bound_pods(core: client.CoreV1Api) -> int:
    """Mark pods that are bound to a node and still Pending as Running."""
    resp: Any = core.list_pod_for_all_namespaces(
        field_selector="status.phase=Pending", _preload_content=False
    )
    started = 0
    for pod in orjson.loads(resp.data)["items"]:
        if (pod.get("spec") or {}).get("nodeName"):
            meta = pod["metadata"]
            core.patch_namespaced_pod_status(
                meta["name"], meta["namespace"], {"status": {"phase": "Running"}}
            )
            started += 1
    return started


def sync_once(core: client.CoreV1Api) -> None:
    resp: Any = core.list_node(_preload_content=False)
    for node in orjson.loads(resp.data)["items"]:
        make_ready(core, node)
        sync_node(core, node)
    run_bound_pods(core)
