"""htmx plumbing every page shares: the page or the fragment htmx asked for, redirects that
htmx follows as navigations, errors that never land inside a fragment, read rights declared on
each blueprint (app.web.surface), and the query arguments several pages take."""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Iterable, Mapping
from typing import Any

from flask import Response, render_template, request
from flask import redirect as flask_redirect
from flask_htmx import HTMX
from werkzeug.urls import iri_to_uri
from werkzeug.wrappers import Response as BaseResponse

from app.domain.names import resource_field
from app.web.surface import fragment_of

htmx = HTMX()


def wants(target: str) -> bool:
    """htmx asked for the fragment with this id (a poll, a filter), not a page, a boosted form
    or a history restore."""
    return bool(htmx) and not htmx.boosted and not htmx.history_restore_request and htmx.target == target


# In a live region's own poll URL (``since=``), replaced by its token before the HTML leaves.
# Random: a node or label that reads like it must not be taken for it; it never reaches a page.
POLL_MARK = f"poll-{secrets.token_hex(8)}"


def page_or_fragment(fragment_template: str, page_template: str, /, **context: Any) -> str | Response:
    """The fragment's template (the element whose id the route's row in app.web.surface names)
    when htmx asked for it, else the page's, which includes the same fragment; both see
    ``fragment`` (a bool).

    A live region polls its own URL with ``since=`` the token of what it shows: a digest of the
    fragment's HTML, so any change a reader could see gives a new one. A poll whose token is
    still the fragment's answers 204, and nothing is swapped. A page is rendered with its
    fragment's token (the fragment rendered once more for it: pages are fewer than polls)."""
    part = wants(fragment_of(request.endpoint))
    fragment = render_template(fragment_template, fragment=True, **context)
    token = _token(fragment)
    if not part:
        # a page carries its region's token too, so the first poll after it is a 204 when
        # nothing changed: it never re-renders (and so never resets) what the reader just got
        return render_template(page_template, fragment=False, **context).replace(POLL_MARK, token)
    if request.args.get("since") == token:
        return Response(status=204)
    return fragment.replace(POLL_MARK, token)


def _token(fragment: str) -> str:
    """The digest of what a region shows; it leaves the mark out, so every replica gives one
    fragment the same token."""
    return hashlib.blake2b(fragment.replace(POLL_MARK, "").encode(), digest_size=12).hexdigest()


def redirect(url: str, code: int = 303) -> BaseResponse:
    """A redirect; to a poll or a fragment request, an HX-Redirect, so the browser navigates
    instead of swapping the page it would be sent to (a sign-in form) into the fragment. A
    history restore (Back to a page htmx no longer holds) asks for a whole page: it is
    redirected as a browser is, and gets the page it lands on (an empty 204 would be swapped in
    as a blank page)."""
    url = iri_to_uri(url)  # a header carries ASCII: a path of any Unicode, percent-encoded
    if htmx and not htmx.boosted and not htmx.history_restore_request:
        response = Response(status=204)
        response.headers["HX-Redirect"] = url
        return response
    return flask_redirect(url, code=code)


def navigate(url: str) -> BaseResponse:
    """A whole-page navigation to ``url``, for an htmx request too (an HX-Redirect): after a
    sign-in or sign-out the session changed, so the page, its address and the CSRF token its body
    carries are made anew (a boosted form would keep the sign-in form's address)."""
    url = iri_to_uri(url)  # a header carries ASCII (a sign-in's next of any Unicode: 500 before)
    if htmx:
        response = Response(status=204)
        response.headers["HX-Redirect"] = url
        return response
    return flask_redirect(url, code=303)


def error_page(title: str, message: str, status: int) -> tuple[str, int, dict[str, str]]:
    """The error in the form the request asked for: JSON for ``*.json``, plain text for
    ``*.csv`` (a script or a spreadsheet reads it), else the error page; for a fragment request
    the page is told to replace the whole body, not the fragment (htmx swaps no 4xx/5xx by
    default; where it is configured to, this is where it goes)."""
    if request.path.endswith(".json"):
        body = json.dumps({"error": title, "message": message, "status": status})
        return body, status, {"Content-Type": "application/json"}
    if request.path.endswith(".csv"):
        return f"{title}: {message}\n", status, {"Content-Type": "text/plain; charset=utf-8"}
    headers = {"HX-Retarget": "body", "HX-Reswap": "innerHTML"} if htmx and not htmx.boosted else {}
    return render_template("error.html", title=title, message=message), status, headers


NODES_AND_PODS = (("list", "nodes"), ("list", "pods"))  # what the overview and most pages show


def resource_arg(
    args: Mapping[str, str],
    errors: dict[str, str],
    name: str = "resource",
    then: str = "",
    known: Iterable[str] | None = None,
) -> str:
    """An extended resource name from the query, or "" with a message naming it in ``errors``
    (``then``: what the page does instead, e.g. "Showing every resource."). With ``known``, a
    name not among them is refused too, with the known names it may have meant."""
    value, error = resource_field(args.get(name) or "", then=then, known=known)
    if error:
        errors[name] = error
    return value


def typed(*keys: str) -> dict[str, str]:
    """What the reader typed in the query's fields ``keys`` (the first of each; "" when not
    given), for a form to show back as typed, a wrong value too."""
    return {key: request.args.get(key, "") for key in keys}
