"""One node: every resource and the pods that request extended resources there."""

from __future__ import annotations

from typing import Any, NoReturn

from flask import Response, abort

from app.domain.accounting import node_usage
from app.domain.names import is_requested_as_extended
from app.runtime import reads
from app.web.hx import NODES_AND_PODS, page_or_fragment
from app.web.surface import Page
from app.web.viewer import viewer

bp = Page("nodes", __name__, url_prefix="/nodes", reads=NODES_AND_PODS)


def detail(name: str) -> str | Response:
    """Read the node, its usage and pods and (for who may read them) its devices; render."""
    return page_or_fragment("nodes/_node.html", "nodes/detail.html", **_read(name))


def _read(name: str) -> dict[str, Any]:
    """The node as the page shows it; 404 (or 503) when it is not there."""
    read = reads.node(viewer().runtime, name, viewer().may_read_devices)
    if read is None:
        _missing(name)
    usage = node_usage(read.node.capacity, read.node.allocatable, read.requested)
    return {
        "node": read.node,
        "standard": {k: v for k, v in usage.items() if not is_requested_as_extended(k)},
        "extended": read.row.usage,
        "row": read.row,
        "limits": read.limits,
        "pods": read.pods,
        "devices": read.devices,
        "hami": read.hami,
        "kai": read.kai,
    }


def _missing(name: str) -> NoReturn:
    """404, or 503 while the node list has not been loaded (it may yet be there)."""
    fresh = viewer().freshness
    if not fresh.synced and fresh.counting is None:
        abort(503, description="The node list has not been loaded yet; try again shortly.")
    abort(404, description=f"There is no node named {name!r}.")
