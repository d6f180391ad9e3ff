"""What every request goes through before its view, as named steps in a fixed order: each reads
and sets ``g`` (request id, client, identity, verified), and may answer (a redirect, an error)
or end the pipeline early (``DONE``: an open endpoint, or no such route). ``run`` takes them
in order; each is testable alone in a request context."""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Callable
from typing import Any

from flask import abort, g, request, session, url_for
from werkzeug.wrappers import Response

from app.base import logs
from app.domain.addresses import Network
from app.domain.hosts import allowed
from app.domain.hosts import host_allowed as hosts_answer
from app.kube.api.access import Identity
from app.settings.config import Settings
from app.web import clusters, process, security, surface
from app.web.hx import redirect
from app.web.viewer import viewer

log = logging.getLogger("extres.security")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
PROBES = frozenset({"/healthz", "/readyz"})  # their paths: any method gets its usual answer
DONE = object()  # a step's answer: the request needs nothing more before its view
# a trusted proxy's X-Request-Id is kept when it looks like one; anyone else's is replaced
_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")

Step = Callable[[], Any]  # None: go on; DONE: stop here; a Response: answer with it


def _here() -> str:
    """This request's address on the site, to come back to after signing in: a member's path
    with its prefix, no lone "?"."""
    return request.script_root + request.full_path.removesuffix("?")


def done(_error: BaseException | None = None) -> None:
    """After a request: the cluster its log lines named is let go (its thread serves others)."""
    token = g.pop("logged_cluster", None)
    if token is not None:
        logs.CLUSTER.reset(token)


def run(steps: tuple[tuple[str, Step], ...]) -> Response | None:
    for _, step in steps:
        outcome = step()
        if outcome is DONE:
            return None
        if outcome is not None:
            answer: Response = outcome
            return answer
    return None


def pipeline(settings: Settings, networks: list[Network], tokens: Any) -> tuple[tuple[str, Step], ...]:
    """The steps, named, in the order they run."""
    mode = settings.auth_mode
    hosts = allowed(settings.allowed_hosts, settings.host)
    forwarders = security.networks(settings.forwarders)  # believed for the client's address only

    def host_allowed() -> Response | None:
        """A Host the dashboard is not served under (DNS rebinding: another site's page, its name
        pointed here) is refused before any other work (a write refused so leaves an audit line);
        the probes answer any (the kubelet names the pod's address), and say nothing of the
        cluster."""
        if request.path in PROBES or hosts_answer(request.headers.get("Host", ""), hosts):
            return None
        if request.method not in SAFE_METHODS:
            security.refused("a Host not allowed", 403)
        return Response(
            "This dashboard is not served under that host name (EXTRES_ALLOWED_HOSTS); nothing was done.\n",
            status=403,
            mimetype="text/plain",
        )

    def marked() -> None:
        """The request's id (a trusted proxy's, else made here) and client; nobody, unverified."""
        g.verified = False
        g.identity = Identity(mode=mode)  # nobody, until the request says who it is
        sent = (
            request.headers.get("X-Request-Id", "") if security.trusted(request.remote_addr, networks) else ""
        )
        g.request_id = sent if _REQUEST_ID.fullmatch(sent) else secrets.token_hex(8)
        # what this request logs names its cluster (reset when it ends: a thread serves many)
        g.logged_cluster = logs.CLUSTER.set(request.environ.get("extres.cluster") or process.of().local.name)
        forwarded = request.headers.get("X-Forwarded-For", "")
        g.client = security.client_address(request.remote_addr, forwarded, networks, forwarders)
        g.client_key = security.client_key(
            request.remote_addr, request.headers, networks, g.client, forwarders
        )

    def claimed() -> None:
        """Who the request says it is (headers, a bearer token, the session's token; on a member
        cluster's page only the token of that cluster's own sign-in): 400 when the identity
        headers cannot be taken as they are."""
        member = clusters.asked()
        kept = tokens.token(session, member)
        try:
            g.identity = security.identity_from(
                settings, networks, request.headers, request.remote_addr, kept, bool(member)
            )
        except security.IdentityError as exc:
            log.warning("refused identity headers from %s: %s", request.remote_addr, exc)
            abort(400, description=str(exc))

    def open_or_unrouted() -> object | None:
        """Health, static files and the sign-in form are open; no such page (or not with this
        method) is a 404 or 405 before any other check."""
        return DONE if surface.is_open(request.endpoint) or request.routing_exception is not None else None

    def signed_in() -> Response | None:
        if g.identity.known:
            return None
        if mode == "token" and request.method in SAFE_METHODS:
            return redirect(url_for("auth.login_form", next=_here()), code=302)
        abort(401, description="Sign in through the dashboard's authentication proxy to use it.")

    def authenticated() -> Response | None:
        """The API server accepts who the request says it is (a TokenReview, cached)."""
        verified_who = viewer().runtime.cluster.access.authenticate(g.identity, g.client_key)
        if verified_who is not None:
            g.identity = verified_who
            return None
        g.identity = Identity(mode=mode)
        if "Authorization" not in request.headers and session.get("token"):
            session.clear()  # the API server no longer accepts the token kept at sign-in
            log.info("dropped a session whose token the API server refuses")
            if request.method in SAFE_METHODS:
                return redirect(url_for("auth.login_form", next=_here()), code=302)
        abort(401, description="The API server did not accept this token. Sign in again.")

    def may_read_the_page() -> None:
        """What the page shows, the user may read (impersonate and token modes); then verified."""
        route = surface.row(request.endpoint)
        if route is None:  # every route has its row (app.web.routes); never serve one unchecked
            abort(403, description="This page declares no read rights, so it is not shown.")
        if mode != "service-account":
            who, access = g.identity, viewer().runtime.cluster.access
            for verb, resource in route.reads:
                if not access.check(who, verb, resource):
                    abort(403, description=f"{who.label} may not {verb} {resource}, which this page shows.")
        g.verified = True

    def same_origin() -> None:
        if request.method not in SAFE_METHODS and not security.same_origin():
            security.refused("another site", 403)
            abort(403, description="This form was sent from another site; nothing was changed.")

    def csrf() -> None:
        if request.method not in SAFE_METHODS and not security.csrf_ok():
            security.refused("no valid CSRF token", 400)
            abort(
                400,
                description="This form did not carry a valid CSRF token (it may have expired). "
                "Reload the page and try again; nothing was changed.",
            )

    return (
        ("marked", marked),
        ("host_allowed", host_allowed),
        ("claimed", claimed),
        ("open_or_unrouted", open_or_unrouted),
        ("signed_in", signed_in),
        ("authenticated", authenticated),
        ("may_read_the_page", may_read_the_page),
        ("same_origin", same_origin),
        ("csrf", csrf),
    )
