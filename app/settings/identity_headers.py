"""Identity headers sent more than once: the server marks them (gunicorn's pre_request, in
app.serving), the app refuses the request (app.web.security). One module both read, so neither
imports the other."""

from __future__ import annotations

from typing import Any

from app.settings.config import Settings

REPEATED = "X-Extres-Repeated-Header"


def mark_repeated_identity_headers(settings: Settings, req: Any) -> None:
    """WSGI merges a repeated header into one value, so the app could not tell two
    X-Forwarded-Groups headers from one: name each identity header sent more than once in a
    header of our own, which makes the app refuse the request."""
    names = [name for name, _ in req.headers]
    for header in (settings.user_header, settings.groups_header):
        if names.count(header.upper()) > 1:
            req.headers.append((REPEATED.upper(), header))
