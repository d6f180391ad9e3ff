"""What the cache knows about its own state: each kind's watch status, the counters /metrics
shows, and the freshness every page and /readyz report (live, or stale since when and why)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from app.kube.state import kinds


@dataclass
class KindStatus:
    synced: bool = False
    connected: bool = False
    last_ok: float = 0.0  # monotonic time of the last successful contact
    lost_at: float | None = None  # when contact was first lost after it (None: not lost)
    error: str | None = None
    forbidden: bool = False  # the error is the API server refusing the app's own account
    too_large: bool = False  # the error is its answer, refused for its size
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
    too_large: bool = False  # its answers are refused for their size (a member's server, hostile)
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


class Statuses:
    """Each watched kind's status, under a lock of its own: the watch threads mark it, pages and
    /metrics read copies."""

    def __init__(self, kinds: Iterable[str]) -> None:
        self._lock = threading.Lock()
        self._of = {kind: KindStatus() for kind in kinds}
        self._optional: set[str] = set()

    def __getitem__(self, kind: str) -> KindStatus:
        """A copy of ``kind``'s status."""
        with self._lock:
            return replace(self._of[kind])

    def __contains__(self, kind: str) -> bool:
        with self._lock:
            return kind in self._of

    def add(self, kind: str, optional: bool = False) -> None:
        """``kind`` is watched from now on (the DRA kinds, once the API server says it serves them).
        ``optional``: an add-on's kind (Kueue's), counted and reported, but never what decides
        whether the cache is synced or fresh: an add-on whose webhook fails (its lists answer
        500) must not hold every page and form of the dashboard."""
        with self._lock:
            self._of[kind] = KindStatus()
            if optional:
                self._optional.add(kind)

    def drop(self, kind: str) -> None:
        """``kind`` is no longer watched (the app may not read it)."""
        with self._lock:
            self._of.pop(kind, None)

    def mark(
        self,
        kind: str,
        *,
        connected: bool,
        error: str | None = None,
        synced: bool | None = None,
        forbidden: bool = False,
        too_large: bool = False,
    ) -> None:
        with self._lock:
            st = self._of[kind]
            # an answer refused for its size stands, said, until contact, whatever failed since
            # (a read refused for want of room among the members' answers)
            stands = st.too_large and not connected and not too_large
            st.connected = connected
            st.error = st.error if stands else error
            st.forbidden = forbidden
            st.too_large = too_large or stands
            if synced is not None:
                st.synced = st.synced or synced
            if connected:
                st.last_ok, st.lost_at = time.monotonic(), None
            elif st.lost_at is None:
                st.lost_at = time.monotonic()

    def listed(self, kind: str) -> None:
        """A (re)list of ``kind`` is in: synced, and counted."""
        self.mark(kind, connected=True, synced=True)
        with self._lock:
            self._of[kind].relists += 1

    def restarted(self, kind: str, error: str, forbidden: bool, too_large: bool = False) -> None:
        """The watch of ``kind`` broke with ``error`` and is to be reopened."""
        self.mark(kind, connected=False, error=error, forbidden=forbidden, too_large=too_large)
        with self._lock:
            self._of[kind].restarts += 1

    def synced(self, *kinds: str) -> bool:
        """Whether each kind named (every kind, when none is) has been listed."""
        with self._lock:
            return all(
                s.synced for k, s in self._of.items() if (k in kinds if kinds else k not in self._optional)
            )

    def counters(self, failures: Mapping[str, int]) -> dict[str, WatchCounters]:
        with self._lock:
            of = self._of.items()
            return {kind: WatchCounters(s.relists, s.restarts, failures.get(kind, 0)) for kind, s in of}

    def freshness(
        self,
        not_ready: str | None,
        last_ready: float | None,
        unreadable: tuple[tuple[str, int], ...],
        counting: Callable[[], int | None],
    ) -> Freshness:
        """Live while every watch is open and the API server says it is ready (``not_ready`` is
        None); otherwise stale, with the error to show and the age of the figures: since contact
        was first lost after the last success (a quiet watch's last event may be long before),
        None while some kind was never in contact."""
        with self._lock:
            statuses = [replace(s) for k, s in self._of.items() if k not in self._optional]
        synced = all(s.synced for s in statuses)
        if synced and all(s.connected for s in statuses) and not_ready is None:
            return Freshness(synced=True, stale=False, age_seconds=0.0, error=None, unreadable=unreadable)
        lost = [s.lost_at or s.last_ok for s in statuses if not s.connected]
        if not_ready is not None and last_ready is not None:  # never asked before: the watches' contact
            lost.append(last_ready)
        contact = [s.last_ok for s in statuses]
        since = min(lost or contact) if all(contact) and (lost or contact) else None
        age = time.monotonic() - since if since else None
        refused = next((s for s in statuses if s.forbidden), None)
        large = next((s for s in statuses if s.too_large and not s.connected), None)
        error = not_ready or next(
            (s.error for s in (refused, large, *statuses) if s is not None and s.error), None
        )
        return Freshness(
            synced=synced,
            stale=True,
            age_seconds=age,
            error=error,
            unreadable=unreadable,
            forbidden=refused is not None and not_ready is None,
            too_large=large is not None and refused is None and not_ready is None,
            counting=None if synced else counting(),
        )


def missing_right(kind: str) -> str:
    """What a 403 on the cache's list or watch of ``kind`` means, and what grants it."""
    return (
        f"The dashboard's own account may not list and watch {kinds.kind(kind).rbac} (the API "
        "server answered 403). "
        "The Helm chart's ClusterRole extres-viewer grants it (get, list and watch on nodes, pods "
        "and resourcequotas), bound to the account the dashboard runs as."
    )
