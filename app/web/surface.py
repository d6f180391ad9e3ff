"""What the HTTP surface is made of: a ``Page`` (a blueprint with the read rights its pages need and
when the app registers it) and a ``Route`` (one row of the route table, app/web/routes.py: its
view, path, methods, whether it writes, whether it is for editors, whether it is open, its
fragment and its place in the navigation). The table is the one declaration: the app registers
its rules from the rows, the request pipeline reads a route's row (``row``) for ``open`` and its
page's rights, the write guards run where the row says ``editors``, and the web tests walk it.

This module imports no view (the table does), so the pipeline and the htmx helpers can read a
row without importing every page."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, current_app

ROW = "extres_route"  # the attribute a view function carries its row in (Flask reads a view's own, too)


class Page(Blueprint):
    """A blueprint whose pages read the cluster: ``reads`` names the (verb, resource) pairs a user
    must hold to see them (``()``: none), checked on every request; ``when``: the app registers it
    always (""), only where writes are on ("writes"), only where they are off ("read-only"), or
    in token mode ("token"). The app refuses to start with a blueprint of any other kind."""

    def __init__(
        self, name: str, import_name: str, *, reads: Iterable[tuple[str, str]], when: str = "", **kw: Any
    ):
        super().__init__(name, import_name, **kw)
        self.reads = tuple(reads)
        self.when = when


@dataclass(frozen=True)
class Route:
    view: Callable[..., Any] | None  # None: a route Flask itself serves (its static files), named by ``own``
    page: Page | None
    path: str
    method: str = "GET"
    writes: bool = False  # changes the cluster (a node's status, through the writer)
    editors: bool = False  # a form or a write: the write guards run first (app.web.write_guards)
    open: bool = False  # answered to anyone, verified or not (probes, sign-in)
    fragment: str = ""  # the id of the live region htmx asks it for (a part of its page)
    nav: str = ""  # its label in the navigation ("" when it is not a section)
    badge: str = ""  # the viewer's count its nav label carries (pending, idle)
    shown_if: str = ""  # the viewer's flag that puts it in the nav (queues_on, usage_on, may_write)
    current: tuple[str, ...] = ()  # other endpoints of the same section (the nav marks it)
    also: tuple[str, ...] = ()  # other methods the same view answers (the read-only notice)
    defaults: tuple[tuple[str, str], ...] = ()  # the rule's default arguments
    own: str = ""  # the endpoint of a route Flask serves itself

    def __post_init__(self) -> None:
        if self.writes and not self.editors:
            raise ValueError(f"{self.endpoint}: a route that writes is for editors (the write guards)")

    @property
    def endpoint(self) -> str:
        if self.view is None or self.page is None:
            return self.own
        return f"{self.page.name}.{self.view.__name__}"

    @property
    def methods(self) -> tuple[str, ...]:
        return (self.method, *self.also)

    @property
    def reads(self) -> tuple[tuple[str, str], ...]:
        """What a user must be allowed to read to be shown it: its page's rights."""
        return self.page.reads if self.page is not None else ()


def declare(routes: Iterable[Route]) -> None:
    """Each row's rule on its page, and the row on its view (once, when the table is imported)."""
    for r in routes:
        if r.view is None or r.page is None:
            continue  # Flask's own
        extra: dict[str, Any] = {"defaults": dict(r.defaults)} if r.defaults else {}
        r.page.add_url_rule(r.path, view_func=r.view, methods=list(r.methods), **extra)
        setattr(r.view, ROW, r)


def row(endpoint: str | None) -> Route | None:
    """The row of the app's route ``endpoint`` (None: Flask's own static files, or no route)."""
    view = current_app.view_functions.get(endpoint or "")
    found: Route | None = getattr(view, ROW, None)
    return found


def fragment_of(endpoint: str | None) -> str:
    """The live region's id the route answers as a fragment ("" when it has none)."""
    found = row(endpoint)
    return found.fragment if found is not None else ""


def is_open(endpoint: str | None) -> bool:
    """Answered to anyone: an open row, or Flask's own static files (their row in the table)."""
    found = row(endpoint)
    return endpoint == STATIC.own or (found is not None and found.open)


STATIC = Route(None, None, "/static/<path:filename>", open=True, own="static")  # htmx, the stylesheet
