"""Jinja filters for quantities, ages and counted words."""

from __future__ import annotations

from datetime import UTC, datetime

from flask import Flask
from markupsafe import Markup, escape

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


def utc(timestamp: str) -> str:
    """An ISO 8601 time as ``2026-12-06 23:10 UTC`` (as given when it is not one)."""
    try:
        then = datetime.fromisoformat(timestamp.replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        return timestamp
    return then.strftime("%Y-%m-%d %H:%M UTC")


def counted(n: int, word: str, many: str = "") -> str:
    """``3 nodes``, ``1 node``: a number and its word, in the right number (``many`` when its
    plural is not the word with an s)."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"


def breakable(name: str) -> Markup:
    """A resource or node name that may wrap only after its dots and slashes (``example.com/<wbr>
    dongle``), never inside a word."""
    text = str(escape(name))
    return Markup(text.replace("/", "/<wbr>").replace(".", ".<wbr>"))


def register(app: Flask) -> None:
    app.jinja_env.filters["breakable"] = breakable
    app.jinja_env.filters["counted"] = counted
    app.jinja_env.filters["amount"] = lambda value, resource="": format_amount(resource, int(value))
    app.jinja_env.filters["age"] = age
    app.jinja_env.filters["duration"] = duration
    app.jinja_env.filters["utc"] = utc
