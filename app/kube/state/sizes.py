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


def estimate(*kinds: list[Any], sample: int = 200) -> CacheSize:
    """Counts of nodes, pods and quotas, and bytes estimated from a sample of each kind (shared
    request dicts and interned strings are counted once per sample)."""
    total = 0
    for views in kinds:
        if views:
            step = max(1, len(views) // sample)
            picked = views[::step]
            seen: set[int] = set()
            total += sum(deep_size(v, seen) for v in picked) * len(views) // len(picked)
    return CacheSize(len(kinds[0]), len(kinds[1]), len(kinds[2]), total)
