"""Counts per minute in a moving window, in memory, per process: the `limits` library (the one
Flask-Limiter is built on), loaded on the first count rather than at start (the worker serves
before any count is needed). Keys expire with their window, so memory is bounded by one minute's
keys."""

from __future__ import annotations

import threading
from typing import Any


class MovingWindow:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._limiter: Any = None
        self._items: dict[int, Any] = {}

    def _ready(self, per_minute: int) -> tuple[Any, Any]:
        with self._lock:
            if self._limiter is None:
                from limits.storage import MemoryStorage
                from limits.strategies import MovingWindowRateLimiter

                self._limiter = MovingWindowRateLimiter(MemoryStorage())
            item = self._items.get(per_minute)
            if item is None:
                from limits import RateLimitItemPerMinute

                item = self._items[per_minute] = RateLimitItemPerMinute(per_minute)
            return self._limiter, item

    def hit(self, per_minute: int, *keys: str) -> bool:
        """Count one for ``keys``; False when that is past ``per_minute`` in the last minute."""
        limiter, item = self._ready(per_minute)
        return bool(limiter.hit(item, *keys))

    def test(self, per_minute: int, *keys: str) -> bool:
        """Whether one more for ``keys`` would be within ``per_minute`` (nothing counted)."""
        limiter, item = self._ready(per_minute)
        return bool(limiter.test(item, *keys))
