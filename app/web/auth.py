"""Token mode: paste a bearer token; it is checked, then kept encrypted in the HttpOnly session.
Each cluster has its own sign-in (``/c/<name>/login``): the token is checked by that cluster's
API server and kept in that cluster's session (app.web.sessions), never sent to another. The
sign-out list every replica checks is kept in the dashboard's own cluster, for every cluster's
sessions."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import UTC, datetime

from flask import g, render_template, request, session, url_for
from werkzeug.wrappers import Response

from app.base import audit
from app.kube.api.access import Identity
from app.kube.api.errors import Busy, KubeError
from app.kube.api.ports import RevocationPort
from app.web import clusters, process, security
from app.web.bulk_start import job_owner
from app.web.hx import navigate
from app.web.security import csrf_ok, csrf_token, identity, safe_next, same_origin
from app.web.surface import Page
from app.web.viewer import viewer

log = logging.getLogger(__name__)
bp = Page("auth", __name__, reads=(), when="token")
# The session cookie carries the token encrypted: past ~2,600 characters the cookie passes the
# 4 KB browsers keep, and they drop it silently. Longer tokens go through the proxy's header.
MAX_TOKEN = 2600


def login_form() -> str:
    csrf_token()
    return render_template("auth/login.html", error="", next=_next(request.args.get("next")))


def login() -> Response | tuple[str, int, dict[str, str]]:
    """Check the pasted token (``_verified``); sign in, or say why not and change nothing (the
    refusal's history entry is the sign-in form's GET URL: Back, Forward, Reload never re-send)."""
    token = request.form.get("token", "").strip()
    target = _next(request.form.get("next"))
    verified, error, status = _verified(token)
    if verified is None:
        audit.record("sign_in_refused", security.who(), reason=error, status=status)
        again = {"HX-Push-Url": url_for("auth.login_form", next=target)}
        return render_template("auth/login.html", error=error, next=target), status, again
    process.of().sessions().sign_in(session, token, clusters.asked())
    # the session is not yet this user's: name them as the API server did
    audit.record("signed_in", replace(security.who(), user=verified.user, groups=verified.groups))
    session.permanent = True  # the cookie ends with the session's absolute lifetime
    return navigate(target)


def _next(asked: str | None) -> str:
    """Where a sign-in leads: a path on this site, else this cluster's overview."""
    return safe_next(asked, home=f"{request.script_root}/")


def _verified(token: str) -> tuple[Identity | None, str, int]:
    """The token's user, or why it may not sign in now and the status to answer with: the form,
    the token's length, the sign-in limits (a token accepted lately passes them), a full
    sign-out list, the TokenReview budget, the API server's answer (a refusal is counted)."""
    sign_ins, cluster = process.of().limits.sign_ins, viewer().runtime.cluster
    client = g.client_key  # through the trusted proxies; None when the address is not known
    offered = Identity(token=token[:MAX_TOKEN], mode="token")
    digest = (offered.key[3] or "") if token else ""
    if not same_origin() or not csrf_ok():
        return None, "The form expired; try again.", 401
    if not token:
        return None, "Token: paste a bearer token.", 401
    if len(token) > MAX_TOKEN:
        return (
            None,
            (
                f"Token: longer than {MAX_TOKEN:,} characters, too long for a browser to keep in its "
                "cookie. Sign in through the authentication proxy instead (its header carries it)."
            ),
            401,
        )
    if (wait := sign_ins.spent(client, digest)) and not cluster.access.accepted_lately(offered):
        return None, wait, 429
    if paused := _revocations().full():  # its sign-out could not be kept
        return None, paused, 503
    try:
        verified = _accepted(offered)
    except Busy as exc:  # the budget for tokens not seen lately is spent
        return None, exc.message, 429
    if verified is None:
        sign_ins.failed(client, digest)
        return None, "Token: the API server did not accept this token, or it may not list nodes.", 401
    return verified, "", 200


def _accepted(who: Identity) -> Identity | None:
    """The token's user, when the API server accepts the token and lets it list nodes."""
    access = viewer().runtime.cluster.access
    verified = access.authenticate(who, g.client_key)
    return verified if verified is not None and access.allowed(verified, "list", "nodes") else None


def logout() -> Response | tuple[str, int]:
    """Ends the session here and, through the shared revocation list, on every replica: a copy
    of the cookie stops working too. When the list cannot be written, the page says so."""
    acting = security.who()
    for key, job in process.of().bulk.cancel_owned(job_owner()):  # their jobs stop with them
        audit.record(
            "bulk_cancelled", acting, resource=job.resource, action=job.action, job=key, reason="signed out"
        )
    if (error := _revoked_everywhere(acting)) is not None:
        return render_template("auth/login.html", error=error, next="/"), 503
    return navigate(url_for("overview.index"))


def _revocations() -> RevocationPort:
    """The sign-out list: the local cluster's, whichever cluster the session signed in to."""
    local = process.of().local
    return local.cluster.revocations


def _revoked_everywhere(acting: audit.Who) -> str | None:
    """End this browser's session and record it for the other replicas (audited); what to tell
    the user when the record could not be written."""
    ended = process.of().sessions().sign_out(session)
    if ended is None:
        return None
    try:
        _revocations().revoke(*ended)
    except KubeError as exc:
        log.warning("sign-out of %s not recorded: %s", identity().label, exc.message)
        audit.record("signed_out", acting, reason="not recorded for other replicas", status=503)
        until = datetime.fromtimestamp(ended[1], UTC).strftime("%Y-%m-%d %H:%M UTC")
        return (
            "Signed out in this browser, but the sign-out could not be recorded on the server (the "
            f"API server did not answer). A copy of this session's cookie stays valid until {until}."
        )
    audit.record("signed_out", acting)
    return None
