"""The overview's query: its filters parsed from the query string, with a message per field that
is wrong (named as the form names it). Pure: the web layer hands in the request's arguments."""

from __future__ import annotations

from typing import Protocol

from app.domain import columns
from app.domain.names import extended_resource_name_errors
from app.domain.overview import Filters
from app.domain.selectors import Selector, SelectorError, parse_selector


class Args(Protocol):
    """A query string's arguments (werkzeug's MultiDict is one)."""

    def getlist(self, key: str) -> list[str]: ...


def _first(args: Args, key: str, default: str = "") -> str:
    """The first value given for ``key``, as a form sends one."""
    values = args.getlist(key)
    return values[0] if values else default


def parse_query(args: Args) -> tuple[Filters, dict[str, str]]:
    """Filters from the query string, and a message per bad field."""
    errors: dict[str, str] = {}
    q = _first(args, "q").strip()[:253]
    resources = tuple(sorted({r.strip() for r in args.getlist("resource") if r.strip()}))
    for name in resources:
        problems = extended_resource_name_errors(name)
        if problems:
            errors["resource"] = f"Resource {name!r} {problems[0]}."
    text = _first(args, "selector").strip()
    selector = Selector()
    if text:
        try:
            selector = parse_selector(text)
        except SelectorError as exc:
            errors["selector"] = f"Label selector: {exc}."
    if errors.get("resource"):
        resources = ()
    free_at_least = None
    free_of, at_least = _first(args, "free").strip(), _first(args, "min").strip()
    if at_least or free_of:
        if not free_of or (problems := extended_resource_name_errors(free_of)):
            errors["min"] = (
                "Free at least: choose the resource."
                if not free_of
                else f"Free at least: resource {free_of[:80]!r} {problems[0]}."
            )
        elif not (at_least.isascii() and at_least.isdigit()) or len(at_least) > 12:
            errors["min"] = f"Free at least: {at_least[:20]!r} is not a whole number of 0 or more."
        else:
            free_at_least = (free_of, int(at_least))
    sort, descending = None, _first(args, "order", "asc") == "desc"
    if text := _first(args, "sort").strip():
        name, _, resource = text.partition(":")
        if name == "name" and not resource:
            pass
        elif name not in [c.field for c in columns.numbers()] or extended_resource_name_errors(resource):
            fields = ", ".join(c.field for c in columns.numbers())
            errors["sort"] = (
                f"Sort by {text[:80]!r}: use name, or one of {fields} and a resource "
                "(free:example.com/dongle)."
            )
        else:
            sort = (name, resource)
    filters = Filters(
        q=q,
        resources=resources,
        selector=selector,
        free_at_least=free_at_least,
        sort=sort,
        descending=descending,
    )
    return filters, errors
