"""Jinja filters for quantities and ages."""

from __future__ import annotations

from datetime import UTC, datetime

from flask import Flask

from app.domain.quantity import format_amount


def age(timestamp: str) -> str:
    if not timestamp:
        return ""
    try:
        then = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return timestamp
    return duration((datetime.now(UTC) - then).total_seconds())


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    s = int(max(0, seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= size:
            return f"{s // size}{unit}"
    return f"{s}s"


def register(app: Flask) -> None:
    app.jinja_env.filters["amount"] = lambda value, resource="": format_amount(resource, int(value))
    app.jinja_env.filters["age"] = age
    app.jinja_env.filters["duration"] = duration
