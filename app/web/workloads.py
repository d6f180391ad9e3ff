"""Who holds the extended resources: by workload or by namespace, sortable, filterable, exported."""

from __future__ import annotations

from flask import Response, request

from app.domain.workloads import WorkloadRow
from app.domain.workloads_query import in_rows, parse
from app.runtime import reads
from app.web.export import UNTIL_COUNTED, csv_response, json_body
from app.web.hx import NODES_AND_PODS, page_or_fragment, typed
from app.web.paging import paged
from app.web.surface import Page
from app.web.viewer import refuse_until_counted, viewer

bp = Page("workloads", __name__, url_prefix="/workloads", reads=NODES_AND_PODS)
PAGE_SIZE = 100
FIELDS = ("resource", "namespace", "kind", "name", "pods", "requested", "share", "oldest", "nodes")


def _query() -> tuple[list[WorkloadRow], dict[str, str], dict[str, str]]:
    """Parse (app.domain.workloads_query), read the rows (kept until the holders or the totals
    move), choose; the rows, the arguments in force, a message per bad one."""
    query, errors = parse(request.args, viewer().known_resources)
    runtime = viewer().runtime
    query = in_rows(query, reads.workload_rows(runtime, query.by), errors)
    return reads.workloads_chosen(runtime, query), query.args(), errors


def index() -> str | Response:
    rows, args, errors = _query()
    asked = {"args": args, "errors": errors, "typed": typed("resource")}
    return page_or_fragment(
        "workloads/_table.html",
        "workloads/index.html",
        **paged("rows", rows, PAGE_SIZE),
        **asked,
    )


def _records(rows: list[WorkloadRow]) -> list[dict[str, object]]:
    return [
        {
            "resource": r.resource,
            "namespace": r.namespace,
            "kind": r.kind,
            "name": r.name,
            "pods": r.pods,
            "requested": r.requested,
            "share": round(r.share, 4),
            "oldest": r.oldest,
            "nodes": " ".join(sorted(r.nodes)),
        }
        for r in rows
    ]


def export_json() -> Response:
    refuse_until_counted(UNTIL_COUNTED)
    rows, args, errors = _query()
    return json_body({"rows": _records(rows), "filters": args, "errors": errors})


def export_csv() -> Response:
    refuse_until_counted(UNTIL_COUNTED)
    rows, _, _ = _query()
    return csv_response(_records(rows), FIELDS, "extres-workloads.csv")
