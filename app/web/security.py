"""Who is asking, CSRF protection and the security headers on every response."""

from __future__ import annotations

import hmac
import ipaddress
import logging
import secrets
from collections.abc import Iterable

from flask import Flask, abort, g, redirect, request, session, url_for
from werkzeug.wrappers import Response

from app.config import Settings
from app.kube.access import Identity

log = logging.getLogger("extres.security")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
OPEN_ENDPOINTS = frozenset(
    {"health.healthz", "health.readyz", "metrics.metrics", "static", "auth.login", "auth.login_form"}
)
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
)


def _networks(entries: Iterable[str]) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(e.strip(), strict=False) for e in entries if e.strip()]


def _trusted(addr: str | None, networks: list) -> bool:
    try:
        ip = ipaddress.ip_address(addr or "")
    except ValueError:
        return False
    return any(ip in net for net in networks)


def resolve_identity(settings: Settings, networks: list) -> Identity:
    mode = settings.auth_mode
    if mode == "service-account":
        return Identity(mode=mode)
    if mode == "impersonate":
        user = request.headers.get(settings.user_header, "").strip()
        groups_raw = request.headers.get(settings.groups_header, "")
        if not _trusted(request.remote_addr, networks):
            if user or groups_raw:
                log.warning(
                    "ignored identity headers from untrusted address %s (user %r)", request.remote_addr, user
                )
            return Identity(mode=mode)
        groups = tuple(sorted({x.strip() for x in groups_raw.split(",") if x.strip()}))
        return Identity(user=user or None, groups=groups, mode=mode)
    header = request.headers.get("Authorization", "")
    token = header[7:].strip() if header.lower().startswith("bearer ") else session.get("token")
    return Identity(token=token or None, mode=mode)


def identity() -> Identity:
    found: Identity = g.identity
    return found


def csrf_token() -> str:
    token = session.get("csrf")
    if not token:
        token = session["csrf"] = secrets.token_urlsafe(32)
    return str(token)


def csrf_ok() -> bool:
    """The request carries the session's CSRF token (form field, or the header htmx sends)."""
    sent = request.form.get("csrf_token") or request.headers.get("X-CSRF-Token", "")
    return bool(sent) and hmac.compare_digest(sent, session.get("csrf", ""))


def init_app(app: Flask, settings: Settings) -> None:
    networks = _networks(settings.trusted_proxies)
    app.config.update(
        MAX_CONTENT_LENGTH=settings.max_request_bytes,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SECURE=settings.cookie_secure,
        SESSION_COOKIE_SAMESITE="Strict",
        SESSION_COOKIE_NAME="extres_session",
    )
    app.jinja_env.globals["csrf_token"] = csrf_token

    @app.before_request
    def check_request() -> Response | None:
        g.identity = resolve_identity(settings, networks)
        if request.endpoint in OPEN_ENDPOINTS:
            return None
        if not g.identity.known:
            if settings.auth_mode == "token" and request.method in SAFE_METHODS:
                return redirect(url_for("auth.login_form", next=request.full_path))
            abort(401, description="Sign in through the dashboard's authentication proxy to use it.")
        if request.method not in SAFE_METHODS and not csrf_ok():
            abort(
                400,
                description="This form did not carry a valid CSRF token (it may have expired). "
                "Reload the page and try again; nothing was changed.",
            )
        return None

    @app.after_request
    def security_headers(response: Response) -> Response:
        h = response.headers
        h.setdefault("Content-Security-Policy", CSP)
        h.setdefault("X-Frame-Options", "DENY")
        h.setdefault("X-Content-Type-Options", "nosniff")
        h.setdefault("Referrer-Policy", "same-origin")
        h.setdefault("Cross-Origin-Opener-Policy", "same-origin")
        if request.endpoint != "static":
            h.setdefault("Cache-Control", "no-store")
        return response
