"""Pods the scheduler could not place: why, and what would make them fit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from flask import Blueprint, render_template, request

from app.domain.names import extended_resource_name_errors
from app.domain.overview import NodeRow
from app.domain.pending import Diagnosis, SchedulerMessage, diagnose, parse_scheduler_message
from app.kube.views import PodView
from app.web import htmx
from app.web.paging import paginate
from app.web.state import State

bp = Blueprint("pending", __name__, url_prefix="/pending")


@dataclass
class PendingPod:
    pod: PodView
    message: SchedulerMessage
    diagnosis: Diagnosis


PAGE_SIZE = 50


def pending_pods(namespace: str = "", resource: str = "") -> list[PodView]:
    """Unschedulable pods matching the filters, by namespace and name."""
    return [
        pod
        for pod in State.get().cluster.cache.unschedulable_pods()
        if (not namespace or pod.namespace == namespace)
        and (not resource or resource in pod.extended_requests)
    ]


def explain(pods: Sequence[PodView]) -> list[PendingPod]:
    """Each pod with its diagnosis. Pending pods mostly repeat a few shapes (requests and node
    selector): a shape is diagnosed once over the kept node rows, then reused until a row changes."""
    state = State.get()
    cache = state.cluster.cache
    memo = state.diagnoses.at(cache.rows_version)
    rows: list[NodeRow] | None = None
    out = []
    for pod in pods:
        shape = (frozenset(pod.extended_requests.items()), frozenset(pod.node_selector.items()))
        diagnosis = memo.get(shape)
        if diagnosis is None:
            if rows is None:
                rows = cache.overview_rows()[0]
            diagnosis = memo[shape] = diagnose(pod.extended_requests, pod.node_selector, rows)
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
    shown, page, pages = paginate(pods, PAGE_SIZE)
    quotas = State.get().cluster.cache.quota_list()
    fragment = bool(htmx) and htmx.target == "pending-list"
    return render_template(
        "pending/_list.html" if fragment else "pending/index.html",
        pods=explain(shown),
        total=len(pods),
        page=page,
        pages=pages,
        quotas=quotas,
        namespace=namespace,
        resource=resource,
        args={k: v for k, v in (("namespace", namespace), ("resource", resource)) if v},
        errors=errors,
        fragment=fragment,
    )
