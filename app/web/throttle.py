"""A small per-key rate limit, bounded in memory (sign-in attempts per client address)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict


class Throttle:
    """At most ``limit`` events per ``window`` seconds per key; the least recent keys forgotten
    past ``keys`` (so a flood of addresses costs bounded memory)."""

    def __init__(self, limit: int, window: float = 60.0, keys: int = 4096) -> None:
        self.limit, self.window, self.keys = limit, window, keys
        self._seen: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()

    def allow(self, key: str) -> bool:
        now = time.monotonic()
        with self._lock:
            times = [t for t in self._seen.pop(key, []) if now - t < self.window]
            allowed = len(times) < self.limit
            if allowed:
                times.append(now)
            self._seen[key] = times
            while len(self._seen) > self.keys:
                self._seen.popitem(last=False)
        return allowed
