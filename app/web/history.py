"""The capacity history (``app.kube.api.capacity_log``): every change of an extended resource's
capacity or allocatable on any node, who made it (its field manager, and this dashboard's user
where it made it) and when, filtered by node, resource and a range of days, exported as CSV."""

from __future__ import annotations

from datetime import date

from flask import Response, render_template, request

from app.domain.capacity_log import Record
from app.kube.api.capacity_log import Kept
from app.kube.api.errors import KubeError
from app.web.export import csv_response
from app.web.hx import Page, resource_arg
from app.web.paging import paginate
from app.web.services import Services

bp = Page("history", __name__, url_prefix="/history", reads=(("list", "nodes"),))
PAGE_SIZE = 100
FIELDS = ("when", "node", "field", "resource", "before", "after", "manager", "user")


def _day(name: str, errors: dict[str, str]) -> str:
    text = request.args.get(name, "").strip()[:10]
    if not text:
        return ""
    try:
        return date.fromisoformat(text).isoformat()
    except ValueError:
        label = "From" if name == "since" else "To"
        errors[name] = f"{label}: {text!r} is not a date (YYYY-MM-DD); left out."
        return ""


def _query() -> tuple[list[Record], Kept | None, dict[str, str], dict[str, str], str | None]:
    state = Services.get()
    errors: dict[str, str] = {}
    node = request.args.get("node", "").strip()[:253]
    resource = resource_arg(request.args, errors, then="Showing every resource.")
    since, until = _day("since", errors), _day("until", errors)
    if since and until and since > until:
        errors["until"] = "To: before From; left out."
        until = ""
    problem, kept = None, None
    try:
        kept = state.cluster.capacity_log.read(since, until)
    except KubeError as err:
        problem = f"The capacity history could not be read: {err.message}"
    records = [
        r
        for r in (kept.records if kept else [])
        if (not node or node in r.node) and (not resource or r.resource == resource)
    ]
    given = (("node", node), ("resource", resource), ("since", since), ("until", until))
    args = {k: v for k, v in given if v}
    return records, kept, args, errors, problem


@bp.get("/")
def index() -> str:
    records, kept, args, errors, problem = _query()
    rows, page, pages = paginate(records, PAGE_SIZE)
    log = Services.get().cluster.capacity_log
    return render_template(
        "history/index.html",
        rows=rows,
        total=len(records),
        page=page,
        pages=pages,
        args=args,
        errors=errors,
        problem=problem or log.problem,
        kept=kept,
        enabled=log.enabled,
        keyed=log.writes,
        off=not log.namespace,
        where=f"{log.namespace}/{log.prefix}-00 to -31",
        days=log.keep_days,
    )


@bp.get("/export.csv")
def export_csv() -> Response:
    records, _, _, _, _ = _query()
    rows = [{f: getattr(r, f) if getattr(r, f) is not None else "" for f in FIELDS} for r in records]
    return csv_response(rows, list(FIELDS), "extres-capacity-history.csv")
