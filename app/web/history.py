"""The capacity history (``app.kube.api.capacity_log``): every change of an extended resource's
capacity or allocatable on any node, who made it (its field manager, and this dashboard's user
where it made it) and when, filtered by node, resource and a range of days, exported as CSV."""

from __future__ import annotations

from flask import Response, render_template, request

from app.domain.capacity_log import Record
from app.domain.history_query import HistoryQuery, parse
from app.kube.api.capacity_log import Kept
from app.kube.api.errors import KubeError
from app.web import process
from app.web.export import csv_response
from app.web.paging import paged
from app.web.surface import Page
from app.web.viewer import viewer

bp = Page("history", __name__, url_prefix="/history", reads=(("list", "nodes"),))
PAGE_SIZE = 100
FIELDS = ("when", "node", "field", "resource", "before", "after", "manager", "user")


def _read(query: HistoryQuery) -> tuple[list[Record], Kept | None, str | None]:
    """The kept records the query selects, all that is kept, and why it could not be read."""
    try:
        kept = viewer().runtime.cluster.capacity_log.read(query.since, query.until)
    except KubeError as err:
        return [], None, f"The capacity history could not be read: {err.message}"
    return [r for r in kept.records if query.selects(r)], kept, None


def _log_state() -> dict[str, object]:
    """What the page says of the history itself: where it is kept, for how long, whether sealed."""
    log = viewer().runtime.cluster.capacity_log
    return {
        "enabled": log.enabled,
        "keyed": log.writes,
        "off": not log.namespace,
        "where": f"{log.namespace}/{log.prefix}-00 to -31",
        "days": log.keep_days,
        "log_problem": log.problem,
    }


def index() -> str:
    """Parse the query, read the records it selects, render."""
    query, errors = parse(request.args)
    records, kept, problem = _read(query)
    runtime = viewer().runtime
    member = runtime.name if runtime is not process.of().local else ""
    said = {"args": query.args(), "errors": errors, "problem": problem, "kept": kept, "member": member}
    return render_template("history/index.html", **paged("rows", records, PAGE_SIZE), **said, **_log_state())


def export_csv() -> Response:
    records, _, _ = _read(parse(request.args)[0])
    rows = [{f: getattr(r, f) if getattr(r, f) is not None else "" for f in FIELDS} for r in records]
    return csv_response(rows, list(FIELDS), "extres-capacity-history.csv")
