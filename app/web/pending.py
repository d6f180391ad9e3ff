"""Pods the scheduler could not place: why, and what would make them fit."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from flask import request
from markupsafe import Markup

from app.domain.diagnosis import Diagnosis
from app.domain.fit import NodeFacts, PodShape
from app.domain.scheduler_message import SchedulerMessage, parse_scheduler_message
from app.kube.projections import PodView
from app.web import can_write
from app.web.hx import NODES_AND_PODS, Page, page_or_fragment, resource_arg
from app.web.paging import paginate
from app.web.render_cache import RenderCaches
from app.web.services import Services

bp = Page("pending", __name__, url_prefix="/pending", reads=NODES_AND_PODS)


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
        for pod in Services.get().cluster.store.unschedulable_pods()
        if (not namespace or pod.namespace == namespace)
        and (not resource or resource in pod.extended_requests)
    ]


def explain(shown: Sequence[PodView], every: Sequence[PodView]) -> list[PendingPod]:
    """Each shown pod with its diagnosis and the advice rendered from it. Pending pods mostly
    repeat a few shapes: each shape keeps its filter results per node (``ShapeIndex``) and is told
    only the nodes changed since it last looked; its advice is rendered once per diagnosis."""
    services = Services.get()
    store = services.cluster.store
    counts = Counter(pod.shape for pod in every)
    made: dict[PodShape, tuple[Diagnosis, Markup]] = {}  # each shape on this page diagnosed once
    every_node: list[NodeFacts] | None = None
    writable = can_write()
    advice_html = RenderCaches.get().advice_html
    out = []
    with services.shapes.lock:
        for pod in shown:
            key = pod.shape
            if key not in made:
                index = services.shapes.index(key)
                version, changed = store.fit_changes(index.version)
                if changed is not None:
                    index.apply(changed, version)
                elif version != index.version:
                    every_node = every_node if every_node is not None else store.node_facts()
                    index.update(every_node, version)
                diagnosis = index.diagnosis(counts[key])
                made[key] = (diagnosis, advice_html(diagnosis, bool(pod.node_selector), writable))
            diagnosis, advice = made[key]
            out.append(PendingPod(pod, parse_scheduler_message(pod.unschedulable or ""), diagnosis, advice))
    return out


@bp.get("/")
def index() -> str:
    namespace = request.args.get("namespace", "").strip()[:63]
    errors: dict[str, str] = {}
    resource = resource_arg(request.args, errors)
    pods = pending_pods(namespace, resource)
    shown, page, pages = paginate(pods, PAGE_SIZE)
    quotas = Services.get().cluster.store.quota_list()
    return page_or_fragment(
        "pending-list",
        "pending/_list.html",
        "pending/index.html",
        pods=explain(shown, pods),
        total=len(pods),
        page=page,
        pages=pages,
        quotas=quotas,
        namespace=namespace,
        resource=resource,
        args={k: v for k, v in (("namespace", namespace), ("resource", resource)) if v},
        errors=errors,
    )
