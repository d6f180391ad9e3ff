"""Who holds the extended resources: by workload or by namespace, sortable, filterable, exported."""

from __future__ import annotations

from flask import Response, jsonify, request

from app.domain.workloads import GROUPINGS, SORT_KEYS, WorkloadRow, group, sort_rows
from app.web.export import csv_response
from app.web.hx import NODES_AND_PODS, Page, page_or_fragment, resource_arg, typed
from app.web.paging import paged
from app.web.render_cache import RenderCaches
from app.web.services import Services
from app.web.viewer import viewer

bp = Page("workloads", __name__, url_prefix="/workloads", reads=NODES_AND_PODS)
PAGE_SIZE = 100
FIELDS = ("resource", "namespace", "kind", "name", "pods", "requested", "share", "oldest", "nodes")


def _query() -> tuple[list[WorkloadRow], dict[str, str], dict[str, str]]:
    """The rows for the request's filters and order, the arguments in force, a message per bad one.
    A bad argument is named and left out: the view shows what it would without it."""
    args, errors = request.args, {}
    state = Services.get()
    store = state.cluster.store
    by = args.get("by", "workload")
    if by not in GROUPINGS:
        errors["by"] = f"Group by {by[:40]!r}: choose workload or namespace."
        by = "workload"
    resource = resource_arg(args, errors, known=viewer().known_resources)
    namespace = args.get("namespace", "").strip()[:63]
    sort = args.get("sort", "requested")
    if sort not in SORT_KEYS:
        errors["sort"] = f"Sort by {sort[:40]!r}: choose one of {', '.join(SORT_KEYS)}."
        sort = "requested"
    order = args.get("order", "desc" if sort in ("pods", "requested", "share") else "asc")
    if order not in ("asc", "desc"):
        errors["order"] = "Order: asc or desc."
        order = "desc"
    memo = RenderCaches.get().workloads.at((store.rows_version, store.holders_version))
    rows = memo.get(("workloads", by))
    if rows is None:
        totals = store.overview_totals()
        allocatable = {r: u.allocatable for r, u in totals.by_resource.items()}
        rows = memo[("workloads", by)] = group(store.holders(), allocatable, by)
    if namespace and not any(r.namespace == namespace for r in rows):
        errors["namespace"] = f"No pod in namespace {namespace!r} requests an extended resource."
        namespace = ""
    used = {"by": by, "resource": resource, "namespace": namespace, "sort": sort, "order": order}
    key = ("workloads-sorted", by, resource, namespace, sort, order)
    chosen = memo.get(key)
    if chosen is None:  # filtered and sorted once per query until the rows change
        chosen = [
            r
            for r in rows
            if (not resource or r.resource == resource) and (not namespace or r.namespace == namespace)
        ]
        chosen = memo[key] = sort_rows(chosen, sort, order == "desc")
    return chosen, {k: v for k, v in used.items() if v}, errors


@bp.get("/")
def index() -> str | Response:
    rows, args, errors = _query()
    asked = {"args": args, "errors": errors, "typed": typed("resource")}
    return page_or_fragment(
        "workloads",
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


@bp.get("/export.json")
def export_json() -> Response:
    rows, args, errors = _query()
    return jsonify({"rows": _records(rows), "filters": args, "errors": errors})


@bp.get("/export.csv")
def export_csv() -> Response:
    rows, _, _ = _query()
    return csv_response(_records(rows), FIELDS, "extres-workloads.csv")
