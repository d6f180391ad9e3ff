"""One pod: its owner workload, node, extended requests and limits, claims, conditions, and the
Events about it (the scheduler's among them: why it waited). The cache's view first; the pod's
conditions and Events are read for this panel alone (two GETs), and a failure there leaves the
rest shown."""

from __future__ import annotations

from typing import NoReturn

from flask import Response, abort

from app.domain.names import is_dns_label, is_dns_subdomain
from app.domain.pod_details import PodDetails
from app.kube.api.errors import KubeError, NotFound
from app.runtime import reads
from app.runtime.cluster import Runtime
from app.web.hx import page_or_fragment
from app.web.security import identity
from app.web.surface import Page
from app.web.viewer import viewer

# the Events about a pod are read with the app's own identity, once the user's own right to get
# pods in its namespace is checked (users hold no right to list Events)
bp = Page("pods", __name__, url_prefix="/pods", reads=(("list", "pods"),))


def detail(namespace: str, name: str) -> str | Response:
    """Read the cache's pod and its details; render."""
    state = viewer().runtime
    details, problem = _details(state, namespace, name)
    pod = reads.pod(state, namespace, name)
    if pod is None and not details.conditions and not problem:
        _missing(namespace, name)
    reading = viewer().usage_reading
    gpu = reading.pod_utilization((namespace, name)) if reading else None
    x = details.extended_claim if viewer().may_read_devices else None
    held = reads.claim(state, namespace, x.claim) if x else None
    said = {"pod": pod, "details": details, "problem": problem, "gpu": gpu, "claim_held": held}
    return page_or_fragment("pods/_pod.html", "pods/detail.html", namespace=namespace, name=name, **said)


def _details(state: Runtime, namespace: str, name: str) -> tuple[PodDetails, str]:
    """The pod's details read for the panel, and why they could not be (""); 404 when it is gone.
    A name no pod can have is never sent to the API server (it would land in the request's path
    and field selector)."""
    if not is_dns_label(namespace) or not is_dns_subdomain(name):
        _missing(namespace[:63], name[:253])
    who = identity()
    if who.mode != "service-account" and not state.cluster.access.check(
        who, "get", "pods", namespace=namespace
    ):
        abort(
            403,
            description=f"{who.label} may not get pods in namespace {namespace}, so this pod is not shown.",
        )
    try:
        return state.cluster.pods.details(namespace, name), ""
    except NotFound:
        _missing(namespace, name)
    except KubeError as err:
        return PodDetails(), err.message


def _missing(namespace: str, name: str) -> NoReturn:
    abort(404, description=f"There is no pod {namespace}/{name} (it may have finished and been removed).")
