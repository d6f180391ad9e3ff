"""Pods the scheduler could not place: why, and what would make them fit."""

from __future__ import annotations

from dataclasses import dataclass

from flask import Blueprint, render_template, request

from app.domain.names import extended_resource_name_errors
from app.domain.pending import Diagnosis, SchedulerMessage, diagnose, parse_scheduler_message
from app.kube.cache import PodView
from app.web import htmx
from app.web.state import State

bp = Blueprint("pending", __name__, url_prefix="/pending")


@dataclass
class PendingPod:
    pod: PodView
    message: SchedulerMessage
    diagnosis: Diagnosis


def pending_pods(namespace: str = "", resource: str = "") -> list[PendingPod]:
    cache = State.get().cluster.cache
    nodes = cache.node_list()
    out = []
    for pod in cache.unschedulable_pods():
        extended = pod.extended_requests
        if namespace and pod.namespace != namespace:
            continue
        if resource and resource not in extended:
            continue
        diagnosis = diagnose(extended, pod.node_selector, nodes, cache.requested_on)
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
    quotas = State.get().cluster.cache.quota_list()
    fragment = bool(htmx) and htmx.target == "pending-list"
    return render_template(
        "pending/_list.html" if fragment else "pending/index.html",
        pods=pods,
        quotas=quotas,
        namespace=namespace,
        resource=resource,
        errors=errors,
        fragment=fragment,
    )
