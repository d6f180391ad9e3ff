"""What the cache knows about its own state: each kind's watch status, the counters /metrics
shows, and the freshness every page and /readyz report (live, or stale since when and why)."""

from __future__ import annotations

from dataclasses import dataclass

from app.kube.state import kinds


@dataclass
class KindStatus:
    synced: bool = False
    connected: bool = False
    last_ok: float = 0.0  # monotonic time of the last successful contact
    error: str | None = None
    forbidden: bool = False  # the error is the API server refusing the app's own account
    relists: int = 0
    restarts: int = 0  # watches reopened after a failure


@dataclass(frozen=True)
class WatchCounters:
    relists: int  # full lists: the first sync and each relist
    restarts: int  # watches reopened after a failure
    unreadable: int  # objects that could not be decoded, each time one was read


@dataclass(frozen=True)
class Freshness:
    synced: bool
    stale: bool
    age_seconds: float | None
    error: str | None
    unreadable: tuple[tuple[str, int], ...] = ()  # (kind, objects left out because unreadable)
    forbidden: bool = False  # the API server refuses the app's own reads (a missing right)
    # pods counted so far while the first list of pods is under way and what nodes offer is
    # known: pages show capacity, with requested and free marked as still counting; else None
    counting: int | None = None

    @property
    def unreadable_text(self) -> str:
        """ "1 pod could not be read", "2 pods and 1 node could not be read", or ""."""
        parts = [f"{n} {kinds.kind(k).one}{'s' if n != 1 else ''}" for k, n in self.unreadable]
        if not parts:
            return ""
        listed = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
        return f"{listed} could not be read"


def missing_right(kind: str) -> str:
    """What a 403 on the cache's list or watch of ``kind`` means, and what grants it."""
    return (
        f"The dashboard's own account may not list and watch {kinds.kind(kind).rbac} (the API "
        "server answered 403). "
        "The Helm chart's ClusterRole extres-viewer grants it (get, list and watch on nodes, pods "
        "and resourcequotas), bound to the account the dashboard runs as."
    )
