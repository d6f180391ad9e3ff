"""Values computed from the store, kept while the version they were made at holds: the rendered
grids (app/web/render_cache.py) and Kueue's reads (app/kube/state/queues.py)."""

from __future__ import annotations

from typing import Any


class VersionedMemo:
    """Values computed from the store, kept until the version they were made at moves (at most
    ``limit``)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._kept: tuple[object, dict[Any, Any]] = (-1, {})  # one attribute: swapped atomically

    def at(self, version: object) -> dict[Any, Any]:
        kept_version, values = self._kept
        if kept_version != version or len(values) >= self.limit:
            values = {}
            self._kept = (version, values)
        return values
