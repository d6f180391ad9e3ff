"""The overview: every node and extended resource, with totals."""

from __future__ import annotations

from flask import Blueprint, render_template, request

from app.domain.names import extended_resource_name_errors
from app.domain.overview import Filters, build_grid
from app.domain.selectors import Selector, SelectorError, parse_selector
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


@bp.get("/")
def index() -> str:
    state = State.get()
    filters, errors = parse_filters(request.args)
    cache = state.cluster.cache
    grid = build_grid(cache.node_list(), cache.requested_on, filters)
    from app.web import htmx

    fragment = bool(htmx) and htmx.target == "grid"
    return render_template(
        "overview/_grid.html" if fragment else "overview/index.html",
        fragment=fragment,
        grid=grid,
        filters=filters,
        errors=errors,
        selector_text=request.args.get("selector", ""),
        owns=state.device_plugins.owns,
    )
