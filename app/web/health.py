"""Liveness and readiness."""

from __future__ import annotations

from app.runtime import reads
from app.web.surface import Page
from app.web.viewer import viewer

bp = Page("health", __name__, reads=())


def healthz() -> tuple[str, int]:
    """The process answers; no API call."""
    return "ok\n", 200


def readyz() -> tuple[str, int]:
    """Ready when the cache has synced and its watches are open. Anyone may ask, so the answer
    names no object and repeats nothing the API server said: the log has those. Objects that
    could not be read are counted; they leave the rest live, so they do not make the app unready."""
    fresh = reads.freshness(viewer().runtime)
    detail = f"{fresh.unreadable_text} (left out; the log names them)\n" if fresh.unreadable else ""
    if fresh.synced and not fresh.stale:
        return "ok\n" + detail, 200
    if not fresh.synced:
        return "not ready: the cache has not synced\n" + detail, 503
    return "not ready: the API server cannot be reached or is not ready\n" + detail, 503
