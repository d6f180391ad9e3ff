"""The one part of a kubelet that kwok does not play: allocatable follows capacity.

kwok (demo/extres_demo/kwok-stages.yaml) makes the test and demo nodes Ready, keeps their leases, runs
bound pods and removes deleted ones; the node lifecycle controller then lifts the
``node.kubernetes.io/not-ready`` taint. A real kubelet also copies a node's extended-resource
capacity into allocatable when an admin patches capacity; kwok leaves status.allocatable as it
is, so ``sync_node`` does that through the API, for the extended resources only.

It also plays a device plugin's health report: a node annotated ``extres.test/unhealthy-devices``
(JSON, resource -> devices the plugin reports unhealthy) gets that many fewer allocatable, as a
kubelet gives allocatable = the plugin's healthy devices (a lost GPU reads 8 -> 7).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from kubernetes import client

from app.domain.names import escape_json_pointer, is_native_resource

FIELD_MANAGER = "kubelet-standin"  # the test bed's stand-in for the kubelet's copy, as the history names it


def sync_node(core: client.CoreV1Api, node: Mapping[str, Any]) -> bool:
    """Copy extended capacity to allocatable on one node (a dict as in the API's JSON)."""
    status = node.get("status") or {}
    cap = {k: v for k, v in (status.get("capacity") or {}).items() if not is_native_resource(k)}
    for name, lost in _unhealthy(node).items():
        if name in cap and str(cap[name]).isdigit():
            cap[name] = str(max(0, int(cap[name]) - lost))
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
        # named as what it plays, so the history says who copied it (not the client's default)
        core.patch_node_status(node["metadata"]["name"], ops, field_manager=FIELD_MANAGER)
    return bool(ops)


UNHEALTHY = "extres.test/unhealthy-devices"


def _unhealthy(node: Mapping[str, Any]) -> dict[str, int]:
    """What the node's device plugin (played here) reports unhealthy: resource -> devices."""
    text = ((node.get("metadata") or {}).get("annotations") or {}).get(UNHEALTHY, "")
    try:
        found = orjson.loads(text) if text else {}
    except orjson.JSONDecodeError:
        return {}
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, int) and v > 0}


def sync_once(core: client.CoreV1Api) -> None:
    resp: Any = core.list_node(_preload_content=False)
    for node in orjson.loads(resp.data)["items"]:
        sync_node(core, node)
