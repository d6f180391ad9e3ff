"""One node: every resource and the pods that request extended resources there."""

from __future__ import annotations

from dataclasses import dataclass

from flask import Response, abort

from app.domain.accounting import node_usage
from app.domain.devices import DeviceFacts, SliceFacts, classes_matching
from app.domain.names import is_requested_as_extended
from app.kube.dra import ClaimView
from app.kube.dra_index import DraIndex
from app.web.hx import NODES_AND_PODS, Page, page_or_fragment
from app.web.services import Services
from app.web.viewer import viewer

bp = Page("nodes", __name__, url_prefix="/nodes", reads=NODES_AND_PODS)


@bp.get("/<name>")
def detail(name: str) -> str | Response:
    state = Services.get()
    store = state.cluster.store
    node = store.node(name)
    if node is None:
        fresh = state.cluster.freshness()
        if not fresh.synced:
            abort(503, description="The node list has not been loaded yet; try again shortly.")
        abort(404, description=f"There is no node named {name!r}.")
    requested = store.requested_on(name)
    usage = node_usage(node.capacity, node.allocatable, requested)
    limits = store.limits_on(name)
    standard = {k: v for k, v in usage.items() if not is_requested_as_extended(k)}
    row = store.overview_row(name)
    if row is None:  # gone since it was read, a moment ago
        abort(404, description=f"There is no node named {name!r}.")
    return page_or_fragment(
        "node",
        "nodes/_node.html",
        "nodes/detail.html",
        node=node,
        standard=standard,
        extended=row.usage,
        row=row,
        limits=limits,
        pods=store.pods_requesting_extended(name),
        owns=state.owns,
        device_plugin=state.device_plugins.owns,
        devices=store.with_dra(lambda dra: _devices(dra, name)) if viewer().may_read_devices else ([], set()),
    )


@dataclass(frozen=True)
class DeviceRow:
    slice: SliceFacts
    device: DeviceFacts
    claim: ClaimView | None  # the claim holding it, if allocated
    classes: list[str]  # the DeviceClasses that match it
    undecided: list[str]  # and those whose selectors cannot be evaluated for it


def _devices(dra: DraIndex, node: str) -> tuple[list[DeviceRow], set[str]]:
    """The node's devices from its ResourceSlices, and the pools counted as incomplete."""
    holders = dra.holder_claims()
    classes = [v.facts for v in dra.classes.values()]
    rows = []
    for s in dra.node_slices(node):
        for d in s.devices:
            matched, undecided = classes_matching(classes, d.device)
            rows.append(DeviceRow(s, d, holders.get((s.driver, s.pool, d.name)), matched, undecided))
    return rows, {f"{d}/{p}" for d, p in dra.incomplete}
