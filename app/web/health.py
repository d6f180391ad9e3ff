"""Liveness and readiness."""

from __future__ import annotations

from app.web.hx import Page
from app.web.services import Services

bp = Page("health", __name__, reads=())


@bp.get("/healthz")
def healthz() -> tuple[str, int]:
    """The process answers; no API call."""
    return "ok\n", 200


@bp.get("/readyz")
def readyz() -> tuple[str, int]:
    """Ready when the cache has synced and its watches are open. Objects that could not be read
    are named in the detail; they leave the rest live, so they do not make the app unready."""
    state = Services.get()
    fresh = state.freshness()
    detail = ""
    if fresh.unreadable:
        named = "".join(f"  {problem}\n" for problem in state.unreadable_named())
        detail = f"{fresh.unreadable_text} (left out):\n{named}"
    if fresh.synced and not fresh.stale:
        return "ok\n" + detail, 200
    return f"not ready: {fresh.error or 'cache not synced'}\n" + detail, 503
