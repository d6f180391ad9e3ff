"""Idle GPUs: running pods holding GPUs whose utilization stayed under the threshold over the
usage window, most GPU-hours held idle first; filtered, exported."""

from __future__ import annotations

from flask import Response, request

from app.domain.idle_pods import Idle
from app.domain.idle_query import parse, select
from app.runtime import reads
from app.web.export import UNTIL_COUNTED, csv_response
from app.web.hx import NODES_AND_PODS, page_or_fragment, typed
from app.web.paging import paged
from app.web.surface import Page
from app.web.viewer import refuse_until_counted, viewer

bp = Page("idle", __name__, url_prefix="/idle", reads=NODES_AND_PODS)
PAGE_SIZE = 100
FIELDS = ("namespace", "pod", "owner", "node", "devices", "utilization", "since", "device_hours", "as_of")


def index() -> str | Response:
    query, errors = parse(request.args)
    state = viewer().runtime
    counted = viewer().freshness.synced  # while pods are counted the page says so, and lists none
    rows = (
        select(reads.idle_pods(state, viewer().usage_reading), query) if counted else []
    )  # the reading shown
    listing = {**paged("rows", rows, PAGE_SIZE), "hours": sum(r.device_hours for r in rows)}
    said = {"status": viewer().usage, "settings": state.settings, "query": query, "args": query.args()}
    said["typed"] = typed("min_hours")
    return page_or_fragment("idle/_table.html", "idle/index.html", **listing, **said, errors=errors)


def _records(rows: list[Idle], as_of: str) -> list[dict[str, object]]:
    """``as_of``: when the reading was taken (the window's end)."""
    return [
        {
            "namespace": r.holding.namespace,
            "pod": r.holding.pod,
            "owner": r.holding.owner,
            "node": r.holding.node,
            "devices": int(r.devices) if r.devices == int(r.devices) else round(r.devices, 2),  # shares
            "utilization": round(r.utilization, 2),
            "since": r.since.isoformat(),
            "device_hours": round(r.device_hours, 4),
            "as_of": as_of,
        }
        for r in rows
    ]


def export_csv() -> Response:
    refuse_until_counted(UNTIL_COUNTED)
    query, errors = parse(request.args)
    if errors:
        return Response("; ".join(errors.values()) + "\n", status=422, mimetype="text/plain")
    reading = viewer().usage_reading
    as_of = reading.taken.isoformat() if reading is not None else ""
    rows = select(reads.idle_pods(viewer().runtime, reading), query) if reading is not None else []
    return csv_response(_records(rows, as_of), FIELDS, "extres-idle-gpus.csv")
