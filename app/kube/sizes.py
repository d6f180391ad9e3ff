"""How much the cache holds: object counts and an estimate of their bytes."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CacheSize:
    nodes: int
    pods: int
    quotas: int
    estimated_bytes: int

    def __str__(self) -> str:
        return (
            f"{self.nodes} nodes, {self.pods} pods, {self.quotas} quotas, "
            f"~{self.estimated_bytes / 2**20:.1f} MiB"
        )


def deep_size(obj: Any, seen: set[int]) -> int:
    """Bytes held by ``obj`` and what it refers to, each object counted once (``seen``)."""
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    size = sys.getsizeof(obj)
    if isinstance(obj, dict):
        size += sum(deep_size(k, seen) + deep_size(v, seen) for k, v in obj.items())
    elif isinstance(obj, list | tuple | set | frozenset):
        size += sum(deep_size(v, seen) for v in obj)
    elif hasattr(obj, "__slots__"):
        size += sum(deep_size(getattr(obj, s), seen) for s in obj.__slots__ if hasattr(obj, s))
    return size
