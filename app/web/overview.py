"""The overview: every node and extended resource, with totals."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify, render_template, request
from markupsafe import Markup

from app.domain.names import extended_resource_name_errors
from app.domain.overview import Filters, build_grid
from app.domain.selectors import Selector, SelectorError, parse_selector
from app.web.export import csv_response
from app.web.paging import paginate
from app.web.state import State

bp = Blueprint("overview", __name__)


def parse_filters(args) -> tuple[Filters, dict[str, str]]:
    """Filters from the query string, and a message per bad field."""
    errors: dict[str, str] = {}
    q = args.get("q", "").strip()[:253]
    resources = tuple(sorted({r.strip() for r in args.getlist("resource") if r.strip()}))
    for name in resources:
        problems = extended_resource_name_errors(name)
        if problems:
            errors["resource"] = f"Resource {name!r} {problems[0]}."
    text = args.get("selector", "").strip()
    selector = Selector()
    if text:
        try:
            selector = parse_selector(text)
        except SelectorError as exc:
            errors["selector"] = f"Label selector: {exc}."
    if errors.get("resource"):
        resources = ()
    return Filters(q=q, resources=resources, selector=selector), errors


FILTER_KEYS = ("q", "selector", "resource")


def filter_args(args) -> dict[str, list[str]]:
    """The query arguments links on the page carry along: the filters, nothing else (an unknown
    key such as ``endpoint`` would otherwise reach ``url_for``)."""
    return {k: args.getlist(k) for k in FILTER_KEYS if args.getlist(k)}


PAGE_SIZE = 100
FIELDS = ("capacity", "allocatable", "requested", "free")


def _grid():
    """The grid for the request's filters, and the memo it is kept in until the cache next changes."""
    filters, errors = parse_filters(request.args)
    state = State.get()
    cache = state.cluster.cache
    memo = state.grids.at(cache.rows_version)
    grid = memo.get(filters)
    if grid is None:
        rows, totals = cache.overview_rows()
        grid = memo[filters] = build_grid(rows, filters, totals)
    return grid, filters, errors, memo


@bp.get("/")
def index() -> str:
    state = State.get()
    grid, filters, errors, memo = _grid()
    rows, page, pages = paginate(grid.rows, PAGE_SIZE)
    table = memo.get(("table", filters, page))
    if table is None:  # the same for every viewer: rendered once until a row changes
        html = render_template(
            "overview/_table.html",
            grid=grid,
            rows=rows,
            owns=state.device_plugins.owns,
            row_html=state.row_html.renderer(tuple(grid.resources)),
        )
        table = memo[("table", filters, page)] = Markup(html)
    from app.web import htmx

    fragment = bool(htmx) and htmx.target == "grid"
    return render_template(
        "overview/_grid.html" if fragment else "overview/index.html",
        fragment=fragment,
        grid=grid,
        rows=rows,
        table=table,
        page=page,
        pages=pages,
        filters=filters,
        errors=errors,
        selector_text=request.args.get("selector", ""),
        args=filter_args(request.args),
    )


def _records(grid) -> list[dict[str, object]]:
    out = []
    for row in grid.rows:
        for resource, u in sorted(row.usage.items()):
            out.append(
                {
                    "node": row.name,
                    "resource": resource,
                    **{f: getattr(u, f) for f in FIELDS},
                    "device_plugin": State.get().device_plugins.owns(resource),
                    "drift": resource in row.drifted,
                }
            )
    return out


@bp.get("/export.json")
def export_json() -> Response:
    grid, _, errors, _ = _grid()
    if errors:
        return jsonify({"errors": errors}), 422  # type: ignore[return-value]
    totals = {r: {f: getattr(u, f) for f in FIELDS} for r, u in sorted(grid.totals.by_resource.items())}
    return jsonify({"nodes": _records(grid), "totals": totals})


@bp.get("/export.csv")
def export_csv() -> Response:
    grid, _, errors, _ = _grid()
    if errors:
        return Response("; ".join(errors.values()) + "\n", status=422, mimetype="text/plain")
    fields = ["node", "resource", *FIELDS, "device_plugin", "drift"]
    return csv_response(_records(grid), fields, "extres-overview.csv")
