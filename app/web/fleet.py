"""The fleet: every cluster's extended resources side by side (app.domain.fleet), with totals over
the clusters whose figures are current; exported as CSV and JSON. Each cluster's figures are
read from its own runtime (app.runtime.reads), shown only to whom may read them there."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flask import Response, jsonify, render_template, request

from app.domain import fleet
from app.domain.fleet import ClusterState, FleetRow
from app.kube.api.access import Identity
from app.kube.api.errors import KubeError, refused
from app.runtime import reads
from app.runtime.cluster import Runtime
from app.runtime.fleet import Fleet
from app.web import process, security
from app.web.export import csv_response
from app.web.hx import NODES_AND_PODS, htmx, page_or_fragment
from app.web.surface import Page
from app.web.viewer import DRA_READS, viewer

bp = Page("fleet", __name__, url_prefix="/fleet", reads=NODES_AND_PODS)
FIELDS = ("cluster", "state", "figures_from", "resource", "capacity", "allocatable", "requested", "free",
          "usable", "largest", "waiting", "physical", "slots")  # fmt: skip


def the_fleet() -> Fleet:
    return process.of().fleet


APP = Identity(mode="service-account")  # the dashboard's own account on a cluster


def _hidden(runtime: Runtime, here: bool) -> ClusterState | None:
    """Why this user is shown none of ``runtime``'s figures (None when they are shown). ``here``:
    ``runtime`` is the cluster of the request's own path, where the user was verified and may
    read what this page shows (the request pipeline); any other is asked of that cluster."""
    who, name = security.identity(), runtime.name
    if who.mode == "service-account" or here:
        return None
    if who.mode == "token":  # its own sign-in's cookie is sent with its own pages alone
        said = "not shown here: signed in on its own pages (a token goes only to the cluster that issued it)"
        return ClusterState(name, fleet.NOT_SHOWN, said)
    try:
        access = runtime.cluster.access
        if who.mode == "impersonate" and not access.check(APP, "impersonate", "users"):
            said = (
                "no access: the dashboard's account there may not impersonate users (nobody is asked about)"
            )
            return ClusterState(name, fleet.NO_ACCESS, said)
        if all(access.check(who, verb, kind) for verb, kind in NODES_AND_PODS):
            return None
    except KubeError as exc:
        if refused(exc):  # it answered: up, and the dashboard may not ask there for this user
            said = f"no access: that cluster refused to check {who.label}'s rights there ({exc.message})"
            return ClusterState(name, fleet.NO_ACCESS, said)
        return ClusterState(name, fleet.UNREACHABLE, f"unreachable: {exc.message}")
    said = f"no access: {who.label} may not list nodes and pods there (or may not be impersonated there)"
    return ClusterState(name, fleet.NO_ACCESS, said)


def _devices_shown(runtime: Runtime, here: bool) -> bool:
    """Whether this user may see the resources DRA devices serve on ``runtime``'s cluster."""
    who = security.identity()
    if who.mode == "service-account":
        return True
    if here:
        return viewer().may_read_devices
    access = runtime.cluster.access
    return all(access.allowed(who, verb, resource) for verb, resource in DRA_READS)


def _state(runtime: Runtime, here: bool, now: datetime) -> ClusterState:
    if (hidden := _hidden(runtime, here)) is not None:
        return hidden
    fresh = reads.freshness(runtime)
    waiting = len(reads.waiting_for_quota(runtime)) if fresh.synced else 0
    idle = sum(reads.idle_held(runtime).values()) if runtime.usage is not None and fresh.synced else None
    return fleet.state_of(runtime.name, fresh, now, waiting, idle)


def fleet_view() -> tuple[list[ClusterState], list[FleetRow]]:
    """Every cluster's state, and the rows of those whose figures may be shown (an unreachable
    one's last figures too: the page says from when, the totals leave them out)."""
    now, here = datetime.now(UTC), viewer().runtime
    states, rows = [], []
    for runtime in the_fleet().runtimes():
        state = _state(runtime, runtime is here, now)
        states.append(state)
        rows += _rows(runtime, runtime is here, state)
    return states, rows


def _rows(runtime: Runtime, here: bool, state: ClusterState) -> list[FleetRow]:
    """``runtime``'s rows, where its figures may be shown (an unreachable one's last too)."""
    if state.state not in fleet.LAST_SHOWN or state.figures_from is None:
        return []
    strip = reads.summary(runtime, _devices_shown(runtime, here))
    room = reads.room_for(runtime, tuple(e.resource for e in strip if e.allocatable))
    return fleet.rows_of(runtime.name, strip, room, reads.physical_devices(runtime))


def apart() -> str:
    """This cluster's figures alone, as the Fleet page of another cluster's path asks for them
    in token mode (from this cluster's path: its own session cookie goes with the request, and
    no other); a page of its own when asked as one."""
    runtime = viewer().runtime
    state = _state(runtime, True, datetime.now(UTC))
    part = "fleet/_apart.html" if htmx and not htmx.boosted else "fleet/apart.html"
    return render_template(part, state=state, rows=_rows(runtime, True, state))


def index() -> str | Response:
    """Parse (the filters), read (every cluster's state and rows), render."""
    asked = _asked()
    return page_or_fragment("fleet/_table.html", "fleet/index.html", **asked, refused=the_fleet().refused)


def _asked() -> dict[str, Any]:
    """Every cluster's state, the rows and clusters the request's filters choose, their totals,
    and what the filters offer."""
    states, rows = fleet_view()
    names = {"clusters": [s.name for s in states], "resources": sorted({r.resource for r in rows})}
    query, errors = fleet.parse(
        {k: request.args.getlist(k) for k in ("resource", "cluster")}, names["resources"], names["clusters"]
    )
    rows = fleet.chosen(rows, query)
    states = [s for s in states if not query.clusters or s.name in query.clusters]
    args = {"resource": list(query.resources), "cluster": list(query.clusters)}
    totals = fleet.totals(rows, states)
    said = {"states": states, "rows": rows, "totals": totals, "free_first": fleet.free_first(totals)}
    return {**said, "query": query, "errors": errors, "args": args, "names": names}


def _records(asked: dict[str, Any]) -> list[dict[str, object]]:
    by = {s.name: s for s in asked["states"]}
    out: list[dict[str, object]] = []
    for r in asked["rows"]:
        s = by[r.cluster]
        at = s.figures_from.isoformat() if s.figures_from else ""
        out.append({"cluster": r.cluster, "state": s.state, "figures_from": at, **_figures(r)})
    return out


def _figures(r: FleetRow) -> dict[str, object]:
    return {f: getattr(r, f) for f in FIELDS[3:]}


def export_csv() -> Response:
    return csv_response(_records(_asked()), FIELDS, "extres-fleet.csv")


def export_json() -> Response:
    asked = _asked()
    clusters = [{"cluster": s.name, "state": s.state, "said": s.said} for s in asked["states"]]
    return jsonify({"clusters": clusters, "rows": _records(asked)})
