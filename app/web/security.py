"""Who is asking, CSRF protection and the security headers on every response."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import secrets
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote, urlsplit

from flask import Flask, current_app, g, request, session
from werkzeug.wrappers import Response

from app.base import audit
from app.domain import addresses
from app.domain.addresses import Network
from app.kube.api.access import Identity
from app.settings.config import Settings
from app.settings.identity_headers import REPEATED
from app.web import process
from app.web.sessions import ClusterSessions, TokenSession

log = logging.getLogger("extres.security")
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
)


# a dashboard needs none of the browser's powerful features
# (only features Chromium knows: an unknown one is a console error on every page)
PERMISSIONS = "camera=(), microphone=(), geolocation=(), payment=(), usb=(), display-capture=()"


networks = addresses.networks


def trusted(addr: str | None, networks: Sequence[Network]) -> bool:
    return addresses.trusted(addr or "", networks)


def client_key(
    remote_addr: str | None,
    headers: Any,
    networks: Sequence[Network],
    client: str,
    forwarders: Sequence[Network] = (),
) -> str | None:
    """What the client's limits count against (its address, an IPv6 /64), or None when its
    address is not known: a peer that is neither a trusted proxy nor a forwarder but forwards for
    others (it sends X-Forwarded-For, Forwarded or X-Real-IP: an ingress named in neither) would
    make all its users one client, so a stranger could spend the limit of every user behind it."""
    forwarded = any(headers.get(h) for h in ("X-Forwarded-For", "Forwarded", "X-Real-IP"))
    if forwarded and not (trusted(remote_addr, networks) or trusted(remote_addr, forwarders)):
        return None
    return addresses.limit_key(client)


class IdentityError(Exception):
    """The request's identity headers cannot be taken as they are."""


def identity_from(
    settings: Settings,
    networks: Sequence[Network],
    headers: Any,
    remote_addr: str | None,
    session_token: str | None,
    member: bool = False,
) -> Identity:
    """Who the request says it is (not yet verified: see ``check_request``). ``member``: the
    request is about a member cluster, where token mode reads only the token of that cluster's
    own sign-in (an Authorization header may carry another cluster's: it is not sent there)."""
    mode = settings.auth_mode
    if mode == "service-account":
        return Identity(mode=mode)
    if mode == "impersonate":
        users = headers.getlist(settings.user_header)
        groups_sent = headers.getlist(settings.groups_header)
        if not trusted(remote_addr, networks):
            if users or groups_sent:
                log.warning("ignored identity headers from untrusted address %s (%r)", remote_addr, users)
            return Identity(mode=mode)
        repeated = headers.get(REPEATED) or len(users) > 1 or len(groups_sent) > 1
        if repeated or any("," in u for u in users):  # a server may have merged two user headers
            raise IdentityError("The request carries an identity header more than once; it is refused.")
        user = users[0].strip() if users else ""
        groups = tuple(sorted({x.strip() for x in (groups_sent or [""])[0].split(",") if x.strip()}))
        if any(name.startswith("system:") for name in (user, *groups)):
            raise IdentityError("The dashboard never acts as a system: user or group.")
        return Identity(user=user or None, groups=groups, mode=mode)
    header = "" if member else headers.get("Authorization", "")
    token = header[7:].strip() if header.lower().startswith("bearer ") else session_token
    return Identity(token=token or None, mode=mode)


def identity() -> Identity:
    found: Identity = g.identity
    return found


def verified() -> bool:
    """Whether this request's user was verified and may read what the pages show."""
    return bool(g.get("verified"))


def csrf_for(secret: str, nonce: str, who: Identity) -> str:
    """A CSRF token: the session's nonce, bound to the identity by an HMAC."""
    mac = hmac.new(secret.encode(), f"csrf|{nonce}|{who.key!r}".encode(), hashlib.sha256).hexdigest()
    return f"{nonce}.{mac}"


def _secret() -> str:
    key = current_app.secret_key or ""
    return key.decode() if isinstance(key, bytes) else key


def _secrets() -> list[str]:
    """The key, then the previous ones still accepted (``EXTRES_PREVIOUS_SECRET_KEYS``)."""
    return [_secret(), *current_app.config["EXTRES"].previous_secret_keys]


def request_id() -> str:
    """This request's id: a trusted proxy's X-Request-Id, or one made here; on every audit line and
    in the response's X-Request-Id header."""
    return str(g.get("request_id", ""))


def refused(reason: str, status: int) -> None:
    """An audit line for a write refused before it reached the API server."""
    audit.record("refused", who(), reason=reason, status=status, method=request.method, path=request.path)


def who() -> audit.Who:
    """Who is acting, for the audit trail: the user and groups once verified (never as merely
    claimed), the client address through the trusted proxies, the request id."""
    found: Identity | None = g.get("identity")
    trusted = found is not None and verified()
    return audit.Who(
        user=found.user if trusted and found is not None else None,
        groups=found.groups if trusted and found is not None else (),
        client=str(g.get("client", "")),
        request_id=request_id(),
        cluster=request.environ.get("extres.cluster") or process.of().local.name,
    )


MAX_HOPS = 32  # X-Forwarded-For entries read, from the right


def client_address(
    remote_addr: str | None,
    forwarded_for: str,
    networks: Sequence[Network],
    forwarders: Sequence[Network] = (),
) -> str:
    """The client as seen through the trusted proxies: the peer, unless it is a trusted proxy or
    a forwarder; then X-Forwarded-For read from the right, past every trusted proxy, to the first
    address that is not one. A forwarder is believed for the one entry it adds (the rightmost),
    never for those it was sent: the walk goes on only past trusted proxies. An entry that is not
    an address stops the walk at the proxy that sent it."""
    addr = remote_addr or ""
    if not (trusted(addr, networks) or trusted(addr, forwarders)):
        return addr
    for hop in reversed([h.strip() for h in forwarded_for.split(",")][-MAX_HOPS:]):
        try:
            ipaddress.ip_address(hop)
        except ValueError:
            return addr
        addr = hop
        if not trusted(hop, networks):
            return hop
    return addr


def csrf_token() -> str:
    nonce = session.get("csrf")
    if not nonce:
        nonce = session["csrf"] = secrets.token_urlsafe(24)
    return csrf_for(_secret(), str(nonce), identity())


def csrf_ok() -> bool:
    """The request carries the session's CSRF token for this identity (form field, or the header
    htmx sends)."""
    sent = request.form.get("csrf_token") or request.headers.get("X-CSRF-Token", "")
    nonce = session.get("csrf", "")
    if not sent or not nonce:
        return False
    who = identity()
    sent_bytes = sent.encode("utf-8", "surrogatepass")  # any Unicode: compare_digest takes ASCII str only
    return any(hmac.compare_digest(sent_bytes, csrf_for(key, nonce, who).encode()) for key in _secrets())


def same_origin() -> bool:
    """A non-GET request comes from this site's own pages: Origin (when sent) names this host,
    and Sec-Fetch-Site (when sent) says same-origin or a direct navigation."""
    origin = request.headers.get("Origin")
    if origin is not None and urlsplit(origin).netloc != request.host:
        return False
    return request.headers.get("Sec-Fetch-Site", "same-origin") in ("same-origin", "none")


def safe_next(target: str | None, home: str = "/") -> str:
    """Where to go after signing in: only a path on this site, else ``home``. Browsers drop tabs and
    newlines and read a backslash as a slash, so any of those, or control characters, refuse it."""
    target = target or home
    decoded = unquote(target)
    if (
        not target.startswith("/")
        or target.startswith("//")
        or any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 or ch == "\\" for ch in decoded)
        or decoded.startswith("//")
        or urlsplit(target).netloc
        or urlsplit(target).scheme
    ):
        return home
    return target


def init_app(app: Flask, settings: Settings) -> None:
    app.config.update(
        MAX_CONTENT_LENGTH=settings.max_request_bytes,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SECURE=settings.cookie_secure,
        SESSION_COOKIE_SAMESITE="Strict",
        # __Host-: only ever set by this exact host over HTTPS, for the whole site (no Domain)
        SESSION_COOKIE_NAME="__Host-extres_session" if settings.cookie_secure else "extres_session",
        SESSION_COOKIE_PATH="/",
    )
    # a member cluster's session: its own cookie, sent under its own prefix only (app.web.sessions)
    member_cookie = "__Secure-extres_member" if settings.cookie_secure else "extres_member"
    app.session_interface = ClusterSessions(member_cookie)
    app.jinja_env.globals["csrf_token"] = csrf_token
    app.jinja_env.globals["verified"] = verified
    runtime = process.of(app).local
    process.of(app).tokens = TokenSession(
        settings.secret_key,
        settings.session_idle_minutes * 60,
        settings.session_max_hours * 3600,
        previous=settings.previous_secret_keys,
        revoked=lambda session_id: runtime.cluster.revocations.revoked(session_id),
    )
    app.permanent_session_lifetime = settings.session_max_hours * 3600

    @app.after_request
    def security_headers(response: Response) -> Response:
        h = response.headers
        if "request_id" in g:
            h["X-Request-Id"] = g.request_id
        if settings.cookie_secure:
            h.setdefault("Strict-Transport-Security", "max-age=31536000")
        h.setdefault("Content-Security-Policy", CSP)
        h.setdefault("X-Frame-Options", "DENY")
        h.setdefault("X-Content-Type-Options", "nosniff")
        h.setdefault("Referrer-Policy", "same-origin")
        h.setdefault("Cross-Origin-Opener-Policy", "same-origin")
        h.setdefault("Permissions-Policy", PERMISSIONS)
        if request.endpoint != "static":
            h.setdefault("Cache-Control", "no-store")
        return response
