"""Pods the scheduler could not place: why, and what would make them fit."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, render_template, request
from markupsafe import Markup

from app.domain.fit import NodeFacts, PodShape
from app.domain.names import extended_resource_name_errors
from app.domain.pending import Diagnosis, SchedulerMessage, ShapeIndex, parse_scheduler_message
from app.kube.projections import PodView
from app.web import can_write, htmx
from app.web.paging import paginate
from app.web.state import State

bp = Blueprint("pending", __name__, url_prefix="/pending")


@dataclass
class PendingPod:
    pod: PodView
    message: SchedulerMessage
    diagnosis: Diagnosis
    advice: Markup  # the diagnosis rendered (shared by the pods of a shape)


PAGE_SIZE = 50


def pending_pods(namespace: str = "", resource: str = "") -> list[PodView]:
    """Unschedulable pods matching the filters, by namespace and name."""
    return [
        pod
        for pod in State.get().cluster.cache.unschedulable_pods()
        if (not namespace or pod.namespace == namespace)
        and (not resource or resource in pod.extended_requests)
    ]


def shape_key(pod: PodView) -> tuple[object, ...]:
    """Pods alike for placement: the same requests, node selector and placement (shared)."""
    return (frozenset(pod.requests.items()), frozenset(pod.node_selector.items()), pod.placement)


def shape_of(pod: PodView) -> PodShape:
    p = pod.placement
    return PodShape(
        pod.requests, pod.node_selector, p.affinity, p.tolerations, p.host_ports, "", p.unmodelled
    )


def explain(shown: Sequence[PodView], every: Sequence[PodView]) -> list[PendingPod]:
    """Each shown pod with its diagnosis and the advice rendered from it. Pending pods mostly
    repeat a few shapes: each shape keeps its filter results per node (``ShapeIndex``) and is told
    only the nodes changed since it last looked; its advice is rendered once per diagnosis."""
    state = State.get()
    cache = state.cluster.cache
    counts = Counter(map(shape_key, every))
    made: dict[Any, tuple[Diagnosis, Markup]] = {}  # each shape on this page diagnosed once
    every_node: list[NodeFacts] | None = None
    writable = can_write()
    out = []
    with state.shapes_lock:
        if len(state.shapes) > SHAPES_KEPT:
            state.shapes.clear()
        for pod in shown:
            key = shape_key(pod)
            if key not in made:
                index = state.shapes.get(key)
                if index is None:
                    index = state.shapes[key] = ShapeIndex(shape_of(pod))
                version, changed = cache.fit_changes(index.version)
                if changed is not None:
                    index.apply(changed, version)
                elif version != index.version:
                    every_node = every_node if every_node is not None else cache.node_facts()
                    index.update(every_node, version)
                diagnosis = index.diagnosis(counts[key])
                made[key] = (diagnosis, state.advice_html(diagnosis, bool(pod.node_selector), writable))
            diagnosis, advice = made[key]
            out.append(PendingPod(pod, parse_scheduler_message(pod.unschedulable or ""), diagnosis, advice))
    return out


SHAPES_KEPT = 200


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
        pods=explain(shown, pods),
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
