"""Pods the scheduler could not place: why, and what would make them fit."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import quote

from flask import Response, request
from markupsafe import Markup, escape

from app.domain import hami, kai, shares
from app.domain.diagnosis import Diagnosis, ShapeIndex
from app.domain.fit import PodShape
from app.domain.ownership import DRA
from app.domain.pending_cards import Held, grouped, stuck
from app.domain.pending_cards import held as held_by
from app.domain.pending_query import PendingQuery, parse
from app.domain.queues import Workload, waiting_counts
from app.domain.scheduler_message import SchedulerMessage, gate_owner, parse_scheduler_message
from app.kube.wire.projections import PodView
from app.runtime import reads
from app.web.hx import NODES_AND_PODS, page_or_fragment
from app.web.paging import paged
from app.web.surface import Page
from app.web.viewer import viewer

bp = Page("pending", __name__, url_prefix="/pending", reads=NODES_AND_PODS)


@dataclass
class PendingPod:
    pod: PodView
    message: SchedulerMessage
    diagnosis: Diagnosis
    advice: Markup  # the diagnosis rendered (shared by the pods of a shape)
    held: list[Held[PodView]]
    others: list[PodView] = field(default_factory=list)  # more pods of its workload and shape here
    dra: dict[str, str] = field(default_factory=dict)  # its requests DRA devices serve: the class
    admitted: Workload | None = None  # Kueue admitted its job: the quota admits it, the nodes do not

    @property
    def size(self) -> int:
        return 1 + len(self.others)


@dataclass(frozen=True)
class Gated:
    """A pod no scheduler looks at yet: its scheduling gates, each with who lifts it."""

    pod: PodView
    gates: tuple[tuple[str, str], ...]  # (gate, who lifts it and when, in words)


HELD_NODES = 5  # nodes listed with who holds a read-only resource there


Places = dict[str, list[tuple[str, int, int]]]  # resource -> (node, free, allocatable), most free first


def places(index: ShapeIndex, d: Diagnosis) -> Places:
    """For each resource the shape is short of, the nodes it could otherwise use that advertise
    it: taken from the index under its lock, for ``held`` to use after."""
    out: Places = {}
    for fit in d.fits:
        if fit.shortfall:
            nodes = index.advertising(fit.resource)[:HELD_NODES]
            facts = [(name, free, index.node(name)) for name, free in nodes]
            out[fit.resource] = [
                (n, free, f.allocatable.get(fit.resource, 0) if f else 0) for n, free, f in facts
            ]
    return out


def _diagnosed(index: ShapeIndex, wanted: int) -> tuple[Diagnosis, Places]:
    d = index.diagnosis(wanted)
    return d, places(index, d)


def held(pod: PodView, d: Diagnosis, where: Places, writable: bool) -> list[Held[PodView]]:
    """For each resource the pod is short of and this dashboard may not add (a device plugin's,
    DRA's, or the user may not change nodes): on the nodes the pod could otherwise use, who holds
    it (app.domain.pending_cards.held), each node's owner decided once (``reads.ownership``)."""
    runtime = viewer().runtime
    out = []
    for fit in d.fits:
        if not fit.shortfall:
            continue
        for name, free, allocatable in where.get(fit.resource, ()):
            owner = reads.ownership(runtime, fit.resource, name)
            if owner.editable and writable:
                continue
            dra_class = owner.dra_class if owner.kind == DRA else None
            claims = reads.claims_holding(runtime, name, dra_class) if dra_class else []
            on_node = reads.holders_on(runtime, name)
            out.append(held_by(pod, fit.resource, name, free, allocatable, fit.requested, on_node, claims))
    return out


PAGE_SIZE = 50
QUOTA_SHOWN = 20  # jobs waiting for quota shown (their count is said; the filters narrow them)


def _stuck(quota: Sequence[Any]) -> dict[tuple[str, str, str], PodView]:
    """Of the jobs holding the quota others wait for, those that cannot run themselves."""
    holding = ((h.namespace, *h.owner) for q in quota for held in q.holders.values() for h in held)
    return stuck(holding, reads.unschedulable(viewer().runtime) if quota else [])


def pending_pods(query: PendingQuery) -> list[PodView]:
    """Unschedulable pods matching the filters, by namespace and name."""
    pods = reads.unschedulable(viewer().runtime)
    return [pod for pod in pods if query.selects(pod.namespace, pod.extended_requests)]


def explain(shown: Sequence[PodView], every: Sequence[PodView]) -> list[PendingPod]:
    """A card per shown pod with its diagnosis and the advice rendered from it; the pods of one
    workload and shape share one card ("nginx-deployment: 10 pending"). Pending pods mostly
    repeat a few shapes: each shape keeps its filter results per node (``ShapeIndex``) and is told
    only the nodes changed since it last looked (``ShapeCache.read``, under its lock); its advice
    is rendered once per diagnosis, after the lock is let go."""
    runtime = viewer().runtime
    counts = Counter(pod.shape for pod in every)
    made: dict[PodShape, tuple[Diagnosis, Markup, Places]] = {}  # each shape on this page diagnosed once
    writable = viewer().may_write
    advice_html = viewer().render_caches().advice_html

    def card(pod: PodView) -> PendingPod:
        key = pod.shape
        if key not in made:
            diagnosis, where = reads.shaped(runtime, key, partial(_diagnosed, wanted=counts[key]))
            owner = partial(reads.ownership, runtime)
            made[key] = (diagnosis, advice_html(diagnosis, bool(pod.node_selector), writable, owner), where)
        diagnosis, advice, where = made[key]
        holding = held(pod, diagnosis, where, writable) if diagnosis.kind == "short" else []
        message = parse_scheduler_message(pod.unschedulable or "")
        dra = {r: c for r in pod.extended_requests if (c := reads.dra_class_for(runtime, r)) is not None}
        owners = [(pod.owner.kind, pod.owner.name)] if pod.owner and pod.owner.name else []
        admitted = reads.admitted_for(runtime, pod.namespace, [*owners, ("Pod", pod.name)])
        return PendingPod(pod, message, diagnosis, for_pod(advice, pod), holding, dra=dra, admitted=admitted)

    return grouped(shown, card, lambda c: c.others)


POD_MARK = "POD-OF-CARD"  # in the shared advice's form links (pending/_advice.html)
POD_NAME_MARK = "POD-NAME-OF-CARD"  # and where it names the card's pod to a reader


def for_pod(advice: Markup, pod: PodView) -> Markup:
    """The shape's advice, its form links naming this card's pod (the form says who asked)."""
    if POD_MARK not in advice and POD_NAME_MARK not in advice:
        return advice
    html = str(advice).replace(POD_NAME_MARK, str(escape(f"{pod.namespace}/{pod.name}")))
    return Markup(html.replace(POD_MARK, quote(f"{pod.namespace}/{pod.name}", safe="")))


def index() -> str | Response:
    """Parse (app.domain.pending_query), read the pods it selects, render."""
    query, errors = parse(request.args, viewer().known_resources)
    listing = _listing(query)
    return page_or_fragment("pending/_list.html", "pending/index.html", **listing, errors=errors)


def _listing(query: PendingQuery) -> dict[str, Any]:
    """The page of pending pods the filters select, each with what would fix it (none until every
    pod is counted: the list would be part of one)."""
    synced = viewer().freshness.synced
    pods = pending_pods(query) if synced else []
    listing = paged("pods", pods, PAGE_SIZE)
    listing["pods"] = explain(listing["pods"], pods)
    runtime = viewer().runtime
    around = reads.surroundings(runtime)
    gated = [
        Gated(pod, tuple(gate_owner(g) for g in pod.gates))
        for pod in (reads.gated(runtime) if synced else [])
        if query.selects(pod.namespace, pod.extended_requests)
    ]
    quota = [
        q
        for q in (reads.waiting_for_quota(runtime) if synced else [])
        if query.selects(q.workload.namespace, q.workload.requests)
    ]
    counts = waiting_counts(
        listing["total"],
        (reads.gated_pod(g.pod) for g in gated),
        (q.workload for q in quota),
    )
    return {
        "counts": counts,
        "stuck": _stuck(quota),
        **listing,
        "gated": gated[:PAGE_SIZE],
        "gated_total": len(gated),
        "quota_waits": quota[:QUOTA_SHOWN],
        "quota_total": len(quota),
        "positions": around.positions,
        "positions_state": around.positions_state,
        "quotas": around.quotas,
        "namespace": query.namespace,
        "resource": query.resource,
        "args": query.args(),
        "wide": around.wide,
        "featured": around.featured,
        "gpu_usage": viewer().usage_reading,
        "physical": reads.physical_devices(viewer().runtime),
        "sharing_notes": {
            **_sharing_notes([c.pod for c in listing["pods"]]),
            **_shares_notes(listing["pods"]),
        },
    }


def _shares_notes(cards: list[PendingPod]) -> dict[str, str]:
    """For each shown pod waiting for devices several claims share (DRA consumable capacity), on
    the node with the most of them free: each device's shares, in their own words."""
    notes = {}
    for c in cards:
        for f in c.diagnosis.fits:
            if f.per_device and f.best_node and f.resource in c.dra:
                found = reads.shared_devices(viewer().runtime, f.best_node, c.dra[f.resource])
                if found:
                    notes[f"{c.pod.namespace}/{c.pod.name}"] = shares.waiting_words(
                        f.best_node, f.requested, found
                    )
    return notes


def _sharing_notes(pods: list[PodView]) -> dict[str, str]:
    """For each shown pod that asks HAMi for GPU memory or cores, or KAI for a fraction of a GPU,
    whether a GPU has that part free, in their terms (kube-scheduler's advice cannot weigh them:
    no node advertises them)."""
    hamis = [p for p in pods if hami.asks(p.extended_requests)]
    kais = [(p, ask) for p in pods if p.kai and (ask := kai.asked(p.kai)) is not None]
    if not hamis and not kais:
        return {}
    shared = reads.shared_gpus(viewer().runtime)
    notes = {f"{p.namespace}/{p.name}": hami.fit(p.extended_requests, shared.hami) for p in hamis}
    for p, ask in kais:
        notes[f"{p.namespace}/{p.name}"] = kai.fit(ask, shared.kai, None)
    return notes
