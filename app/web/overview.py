"""The overview: every node and extended resource, with totals."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from flask import Response, jsonify, render_template, request, url_for
from markupsafe import Markup, escape
from werkzeug.datastructures import MultiDict

from app.domain import columns
from app.domain.accounting import ResourceUsage
from app.domain.names import unknown_resource
from app.domain.overview import HEAT_BANDS, Filters, Grid, NodeRow, heat_band
from app.domain.overview_query import parse_query
from app.domain.ownership import served_on_row, sources
from app.domain.strip import shown_first
from app.runtime import reads
from app.web.export import UNTIL_COUNTED, csv_response, json_body
from app.web.hx import NODES_AND_PODS, page_or_fragment, resource_arg, typed
from app.web.paging import paginate
from app.web.surface import Page
from app.web.viewer import refuse_until_counted, viewer

bp = Page("overview", __name__, reads=NODES_AND_PODS)


FILTER_KEYS = ("q", "selector", "resource", "free", "min", "sort", "order", "view")


def filter_args(args: MultiDict[str, str]) -> dict[str, list[str]]:
    """The query arguments links on the page carry along: the filters, nothing else (an unknown
    key such as ``endpoint`` would otherwise reach ``url_for``)."""
    return {k: args.getlist(k) for k in FILTER_KEYS if args.getlist(k)}


PAGE_SIZE = 100  # rows a page, with one resource's columns; fewer with more (see rows_per_page)
STRIP_OPEN = 3  # resources totalled on the first screen; the others fold (the grid's last row has all)


def rows_per_page(resources: int) -> int:
    """Rows a page so that a page of the grid stays near 40 KB of HTML however many resource
    columns it has (about 400 bytes a resource a row): 100 with one, 33 with three, at least 20."""
    return max(20, PAGE_SIZE // max(1, resources))


def _grid() -> tuple[Grid, Filters, dict[str, str], dict[Any, Any]]:
    """The grid for the request's filters (app.runtime.reads.grid), and the memo its HTML is kept in
    until the rows next change."""
    filters, errors = parse_query(request.args)
    filters = _known_only(filters, errors)
    runtime = viewer().runtime
    grid = reads.grid(runtime, filters, viewer().may_read_devices)
    return grid, filters, errors, viewer().render_caches().tables.at(reads.rows_version(runtime))


def _known_only(filters: Filters, errors: dict[str, str]) -> Filters:
    """The filters without names no node or pod knows, each refused with what it may have meant
    (a misspelt name would otherwise show an empty grid, silently)."""
    known = set(viewer().known_resources)
    unknown = [r for r in filters.resources if r not in known]
    if unknown:
        errors["resource"] = unknown_resource(unknown[0], known)
        filters = replace(filters, resources=tuple(r for r in filters.resources if r in known))
    if filters.free_at_least and filters.free_at_least[0] not in known:
        errors["min"] = "Free at least: " + unknown_resource(filters.free_at_least[0], known)
        filters = replace(filters, free_at_least=None)
    return filters


def index() -> str | Response:
    """Parse (``_grid``: the query and the grid it asks for), read (a page of its rows), render."""
    grid, filters, errors, memo = _grid()
    rows, page, pages = paginate(grid.rows, rows_per_page(len(grid.resources)))
    compact = request.args.get("view") == "compact"  # free and a bar per resource
    table = _table(grid, filters, rows, page, compact, memo)
    said = {"grid": grid, "rows": rows, "table": table, "page": page, "pages": pages, **_strip(filters)}
    return page_or_fragment("overview/_grid.html", "overview/index.html", **said, **_asked(filters, errors))


def _strip(filters: Filters) -> dict[str, object]:
    """The totals strip: the entries on the first screen and the folded rest; where lost capacity
    is unhealthy devices; what a job can use; physical devices behind shares."""
    runtime = viewer().runtime
    strip = reads.summary(runtime, viewer().may_read_devices)
    shown, more = shown_first(strip, filters.resources, STRIP_OPEN)
    return {
        "strip": shown,
        "strip_more": more,
        "strip_names": frozenset(s.resource for s in strip),
        "plugins": frozenset(s.resource for s in strip if runtime.device_plugins.owns(s.resource)),
        "room": reads.room_for(runtime, tuple(s.resource for s in strip if s.allocatable)),
        "physical": reads.physical_devices(runtime),
    }


def _asked(filters: Filters, errors: dict[str, str]) -> dict[str, object]:
    """What the reader asked for, as the filters' form shows it back."""
    return {
        "filters": filters,
        "errors": errors,
        "typed": typed("selector", "min", "free", "sort", "order"),
        "args": filter_args(request.args),
        "compact": request.args.get("view") == "compact",
    }


def _table(
    grid: Grid, filters: Filters, rows: Sequence[NodeRow], page: int, compact: bool, memo: dict[Any, Any]
) -> Markup:
    """The grid's table for one page: the same for every viewer, so rendered once until a row
    changes. Its links carry the query's own arguments, which are part of its key: one
    requester's spelling of a filter never reaches another's links."""
    link_args = {k: v for k, v in filter_args(request.args).items() if k not in ("sort", "order")}
    dra = viewer().may_read_devices
    usage = viewer().usage_reading
    links = tuple((k, tuple(v)) for k, v in sorted(link_args.items()))
    counting = viewer().freshness.counting is not None
    key = ("table", filters, page, links, dra, usage.taken if usage else None, counting)
    table = memo.get(key)
    if table is None:
        state = viewer().runtime
        html = render_template(
            "overview/_table.html",
            grid=grid,
            rows=rows,
            compact=compact,
            cols=columns.shown(compact),
            sources=column_sources(grid, state.device_plugins.owns),
            aliases=reads.aliases(state) if dra else {},
            row_html=viewer()
            .render_caches()
            .row_html.renderer(
                tuple(grid.resources),
                compact,
                usage,
                counting,
                state.device_plugins.owns,
                reads.idle_held(state, usage) if usage is not None and not counting else None,
            ),
            usage=usage,
            # per resource, the nodes advertising it: its cluster busy is over their devices only
            busy_nodes=_advertising(grid.rows) if usage else {},
            counting=counting,
            filters=filters,
            args=link_args,
        )
        table = memo[key] = Markup(html)
    return table


def column_sources(grid: Grid, device_plugin: Callable[[str], bool]) -> dict[str, str]:
    """Per resource column, what serves it over the grid's nodes, in words (each node as the
    scheduler decides it there: its status first, else DRA devices)."""
    kinds: dict[str, list[str]] = {}
    for row in grid.rows:
        for r, u in row.usage.items():
            kinds.setdefault(r, []).append(served_on_row(r, u.allocated is not None, device_plugin))
    return {r: sources(k) for r, k in kinds.items()}


def _numbers(u: ResourceUsage) -> dict[str, int]:
    """A usage's number columns, by field, as the exports hold them."""
    return {c.field: c.value(u) for c in columns.numbers() if c.value is not None}


def _advertising(rows: Iterable[NodeRow]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for row in rows:
        for resource, u in row.usage.items():
            if u.advertised:
                found.setdefault(resource, []).append(row.name)
    return found


# the overview's CSV columns after each node and resource's numbers (app/domain/columns.py)
CSV_AFTER_NUMBERS = (
    "allocated",
    "source",
    "device_plugin",
    "drift",
    "shares_per_device",
    "physical_devices",
    "unavailable",
)


def _records(grid: Grid) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for row in grid.rows:
        for resource, u in sorted(row.usage.items()):
            out.append(
                {
                    "node": row.name,
                    "resource": resource,
                    **_numbers(u),
                    "allocated": u.allocated,  # DRA devices held by claims; null where the status serves it
                    "source": "dra" if u.allocated is not None else "status",
                    # on this node: a device plugin's only where the status serves it
                    "device_plugin": u.allocated is None and viewer().runtime.device_plugins.owns(resource),
                    "drift": resource in row.drifted,
                    # shares (time-slicing, MPS): devices behind the slots; empty where not shared
                    "shares_per_device": (shared := row.sharing.get(resource)) and shared.replicas,
                    "physical_devices": shared and shared.physical,
                    "unavailable": u.unavailable,  # capacity above allocatable (a plugin's: unhealthy)
                }
            )
    return out


def export_json() -> Response:
    refuse_until_counted(UNTIL_COUNTED)
    grid, _, errors, _ = _grid()
    if errors:
        return jsonify({"errors": errors}), 422  # type: ignore[return-value]
    totals = {r: _numbers(u) for r, u in sorted(grid.totals.by_resource.items())}
    return json_body({"nodes": _records(grid), "totals": totals})


def export_csv() -> Response:
    refuse_until_counted(UNTIL_COUNTED)
    grid, _, errors, _ = _grid()
    if errors:
        return Response("; ".join(errors.values()) + "\n", status=422, mimetype="text/plain")
    fields = ["node", "resource", *(c.field for c in columns.numbers()), *CSV_AFTER_NUMBERS]
    return csv_response(_records(grid), fields, "extres-overview.csv")


def _heat_cells(rows: Iterable[NodeRow], resource: str) -> tuple[Markup, list[int]]:
    """The squares of the nodes advertising ``resource``, and of those whose pods still request it
    after it was removed (over-committed), each a link to its node titled with its numbers, as
    one piece of HTML, and how many fall in each band."""
    counts = [0] * len(HEAT_BANDS)
    parts = []
    node_url = url_for("nodes.detail", name="-")[:-1]
    for row in rows:
        u = row.usage.get(resource)
        if u is None or not (u.advertised or u.used > 0):
            continue
        b = heat_band(u.used, u.allocatable)
        counts[b] += 1
        name, numbers = escape(row.name), f"{u.used}/{u.allocatable}"
        parts.append(f'<a class=h{b} href="{node_url}{name}" title="{name} {numbers}"></a>')
    return Markup("".join(parts)), counts


def heat() -> str:
    """Every node as one small square per resource, coloured by the share requested: 5,000 nodes on
    one screen. Each square is a link to its node (reached by Tab; its title, read as its name and
    shown on hover, gives node, used and allocatable); the counts per band are in text above."""
    grid, filters, errors, memo = _grid()
    then = "Showing the first resource instead."
    resource = resource_arg(request.args, errors, "of", then, known=grid.all_resources)
    resource = resource or (grid.resources[0] if grid.resources else "")
    key = ("heat", filters, resource, viewer().may_read_devices)  # the grid differs by that right
    if (cells := memo.get(key)) is None:
        cells = memo[key] = _heat_cells(grid.rows, resource)
    counts = list(zip(HEAT_BANDS, cells[1], strict=True))
    said = {"grid": grid, "resource": resource, "cells": cells[0], "counts": counts}
    asked = {"errors": errors, "args": filter_args(request.args), "typed": typed("q", "selector")}
    return render_template("overview/heat.html", **said, **asked)
