"""One node: every resource and the pods that request extended resources there."""

from __future__ import annotations

from flask import abort, render_template

from app.domain.accounting import node_usage
from app.domain.names import is_native_resource
from app.web.hx import NODES_AND_PODS, Page
from app.web.services import Services

bp = Page("nodes", __name__, url_prefix="/nodes", reads=NODES_AND_PODS)


@bp.get("/<name>")
def detail(name: str) -> str:
    state = Services.get()
    store = state.cluster.store
    node = store.node(name)
    if node is None:
        fresh = state.cluster.freshness()
        if not fresh.synced:
            abort(503, description="The node list has not been loaded yet; try again shortly.")
        abort(404, description=f"There is no node named {name!r}.")
    usage = node_usage(node.capacity, node.allocatable, store.requested_on(name))
    limits = store.limits_on(name)
    standard = {k: v for k, v in usage.items() if is_native_resource(k)}
    extended = {k: v for k, v in usage.items() if not is_native_resource(k)}
    return render_template(
        "nodes/detail.html",
        node=node,
        standard=standard,
        extended=extended,
        limits=limits,
        pods=store.pods_requesting_extended(name),
        owns=state.device_plugins.owns,
    )
