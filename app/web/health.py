"""Liveness and readiness."""

from __future__ import annotations

from flask import Blueprint

from app.web.state import State

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz() -> tuple[str, int]:
    """The process answers; no API call."""
    return "ok\n", 200


@bp.get("/readyz")
def readyz() -> tuple[str, int]:
    """Ready when the cache has synced and its watches are open."""
    fresh = State.get().freshness()
    if fresh.synced and not fresh.stale:
        return "ok\n", 200
    return f"not ready: {fresh.error or 'cache not synced'}\n", 503
