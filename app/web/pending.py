"""Pods the scheduler could not place: why, and what would make them fit."""

from __future__ import annotations

from dataclasses import dataclass

from flask import Blueprint, render_template, request

from app.domain.names import extended_resource_name_errors
from app.domain.pending import Diagnosis, SchedulerMessage, diagnose, parse_scheduler_message
from app.kube.cache import NodeView, PodView
from app.web import htmx
from app.web.state import State

bp = Blueprint("pending", __name__, url_prefix="/pending")


@dataclass
class PendingPod:
    pod: PodView
    message: SchedulerMessage
    diagnosis: Diagnosis


PAGE_SIZE = 50
DIAGNOSES_KEPT = 1000


def pending_pods(namespace: str = "", resource: str = "") -> list[PodView]:
    """Unschedulable pods matching the filters, by namespace and name."""
    return [
        pod
        for pod in State.get().cluster.cache.unschedulable_pods()
        if (not namespace or pod.namespace == namespace)
        and (not resource or resource in pod.extended_requests)
    ]


def explain(pods: list[PodView]) -> list[PendingPod]:
    """Each pod with its diagnosis. Pending pods mostly repeat a few shapes (requests and node
    selector): a shape is diagnosed once over all nodes, then reused until a node's row changes."""
    state = State.get()
    cache = state.cluster.cache
    version, memo = state.diagnoses
    if version != cache.rows_version or len(memo) > DIAGNOSES_KEPT:
        memo = {}
        state.diagnoses = (cache.rows_version, memo)
    nodes: list[NodeView] | None = None
    out = []
    for pod in pods:
        shape = (frozenset(pod.extended_requests.items()), frozenset(pod.node_selector.items()))
        diagnosis = memo.get(shape)
        if diagnosis is None:
            if nodes is None:
                nodes = cache.node_list()
            diagnosis = memo[shape] = diagnose(
                pod.extended_requests, pod.node_selector, nodes, cache.requested_live
            )
        out.append(PendingPod(pod, parse_scheduler_message(pod.unschedulable or ""), diagnosis))
    return out


@bp.get("/")
def index() -> str:
    namespace = request.args.get("namespace", "").strip()[:63]
    resource = request.args.get("resource", "").strip()
    errors = {}
    if resource and (problems := extended_resource_name_errors(resource)):
        errors["resource"] = f"Resource {resource!r} {problems[0]}."
        resource = ""
    pods = pending_pods(namespace, resource)
    pages = max(1, -(-len(pods) // PAGE_SIZE))
    page = min(max(1, request.args.get("page", 1, type=int) or 1), pages)
    quotas = State.get().cluster.cache.quota_list()
    fragment = bool(htmx) and htmx.target == "pending-list"
    return render_template(
        "pending/_list.html" if fragment else "pending/index.html",
        pods=explain(pods[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]),
        total=len(pods),
        page=page,
        pages=pages,
        quotas=quotas,
        namespace=namespace,
        resource=resource,
        errors=errors,
        fragment=fragment,
    )
