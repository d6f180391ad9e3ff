"""The fleet: every cluster's extended resources side by side, and their totals over the clusters
whose figures are current. A cluster that cannot be reached keeps its last figures, said to be
from when they were read, and is left out of the totals (said); one whose account may not read
a kind says "no access", never 0."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from app.domain.gpu_sharing import Physical
from app.domain.room import Room
from app.domain.strip import Entry

LIVE, STALE, UNREACHABLE, NO_ACCESS, COUNTING, NOT_SHOWN, REFUSED = (
    "live", "stale", "unreachable", "no access", "counting", "not shown", "refused",
)  # fmt: skip
LAST_SHOWN = (LIVE, STALE, UNREACHABLE, REFUSED)  # the states whose figures are shown (the last ones)
COUNTED = (LIVE, STALE)  # the states whose figures go into the fleet's totals


@dataclass(frozen=True)
class ClusterState:
    name: str
    state: str  # one of the above
    said: str = ""  # in words, for the page (why, since when)
    figures_from: datetime | None = None  # when the figures shown were last current
    quota_waiting: int = 0  # jobs waiting for Kueue quota (no pod yet)
    idle_gpus: int | None = None  # GPUs held by idle pods (None: usage not read there)
    short: str = ""  # the state in a few words, for the table ("unreachable since 13:26 UTC")

    @property
    def counted(self) -> bool:
        return self.state in COUNTED


STALE_FOR = 15.0  # seconds a cluster's watches may be reconnecting before it reads "unreachable"


class Contact(Protocol):
    """What a cluster's freshness says of the contact with it (app.kube.api.freshness.Freshness)."""

    @property
    def synced(self) -> bool: ...
    @property
    def stale(self) -> bool: ...
    @property
    def age_seconds(self) -> float | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def forbidden(self) -> bool: ...
    @property
    def too_large(self) -> bool: ...


def state_of(name: str, fresh: Contact, now: datetime, waiting: int, idle: int | None) -> ClusterState:
    """A cluster's state from its contact (the figures' age, the last error), with the jobs
    waiting for quota and the GPUs held idle there: no access, refused, unreachable (past a grace
    for reconnecting watches), counting, stale or live; since when, in words and in short."""
    at = now - timedelta(seconds=fresh.age_seconds) if fresh.age_seconds is not None else None
    if fresh.forbidden:
        return ClusterState(name, NO_ACCESS, f"no access: {fresh.error}", at)
    if fresh.too_large:  # it answers, more than is read of one answer: asked again, backing off
        said = f"refused: its answers are too large, asked again less and less often: {fresh.error}"
        return ClusterState(name, REFUSED, said, at, waiting, idle, "refused: answer too large")
    lost = fresh.stale and fresh.error and (fresh.age_seconds is None or fresh.age_seconds > STALE_FOR)
    if lost:
        since = f" since {at:%Y-%m-%d %H:%M:%S} UTC, figures from then" if at else ", no figures yet"
        short = f"unreachable since {at:%H:%M} UTC" if at else "unreachable, no figures yet"
        return ClusterState(name, UNREACHABLE, f"unreachable{since}: {fresh.error}", at, waiting, idle, short)
    if not fresh.synced:
        return ClusterState(name, COUNTING, "counting: pods are still being counted", at)
    return ClusterState(name, STALE if fresh.stale else LIVE, "", at, waiting, idle)


@dataclass(frozen=True)
class FleetRow:
    cluster: str
    resource: str
    capacity: int
    allocatable: int
    requested: int
    free: int  # allocatable minus requested, over the nodes with some free
    usable: int  # of that, on nodes a pod asking for it may be placed on (app.domain.room)
    largest: int  # the most free on one such node: the largest job that fits now
    waiting: int  # unschedulable pods asking for it
    physical: int | None = None  # devices behind it where it is shared (None: not shared)
    slots: int | None = None  # the shares they are advertised as


def rows_of(
    cluster: str, strip: Iterable[Entry], room: Mapping[str, Room], physical: Mapping[str, Physical]
) -> list[FleetRow]:
    """One cluster's rows, a resource each, from its strip, what a job can use, and its shares."""
    out = []
    for e in strip:
        r = room.get(e.resource)
        p = physical.get(e.resource)
        out.append(
            FleetRow(
                cluster,
                e.resource,
                e.allocatable + e.unavailable,
                e.allocatable,
                e.requested,
                r.free if r else max(0, e.allocatable - e.requested),
                r.schedulable if r else 0,
                r.largest if r else 0,
                e.waiting,
                p.whole + p.shared if p and p.nodes else None,
                p.slots if p and p.nodes else None,
            )
        )
    return out


@dataclass(frozen=True)
class Total:
    resource: str
    capacity: int
    allocatable: int
    requested: int
    free: int
    usable: int
    largest: int  # the largest job that fits on one node of any counted cluster
    waiting: int
    clusters: int  # counted clusters that have it


def totals(rows: Iterable[FleetRow], states: Iterable[ClusterState]) -> list[Total]:
    """Per resource, the sums over the clusters whose figures are current (``COUNTED``)."""
    counted = {s.name for s in states if s.counted}
    by: dict[str, list[FleetRow]] = {}
    for row in rows:
        if row.cluster in counted:
            by.setdefault(row.resource, []).append(row)
    return [
        Total(
            resource,
            sum(r.capacity for r in rs),
            sum(r.allocatable for r in rs),
            sum(r.requested for r in rs),
            sum(r.free for r in rs),
            sum(r.usable for r in rs),
            max(r.largest for r in rs),
            sum(r.waiting for r in rs),
            len(rs),
        )
        for resource, rs in sorted(by.items())
    ]


@dataclass(frozen=True)
class FleetQuery:
    resources: tuple[str, ...] = ()  # none: every resource
    clusters: tuple[str, ...] = ()  # none: every cluster


def parse(
    args: Mapping[str, list[str]], known_resources: Iterable[str], known_clusters: Iterable[str]
) -> tuple[FleetQuery, dict[str, str]]:
    """The fleet page's filters (``resource`` and ``cluster``, each repeatable), and a message per
    field for names it does not know (left out, the rest kept)."""
    errors: dict[str, str] = {}
    chosen: dict[str, tuple[str, ...]] = {}
    for field, known in (("resource", set(known_resources)), ("cluster", set(known_clusters))):
        asked = [v.strip()[:253] for v in args.get(field, []) if v.strip()][:100]
        unknown = [v for v in asked if v not in known]
        if unknown:
            errors[field] = (
                f"{field.capitalize()}: {unknown[0]!r} is not one of the fleet's; showing the others."
            )
        chosen[field] = tuple(dict.fromkeys(v for v in asked if v in known))
    return FleetQuery(chosen["resource"], chosen["cluster"]), errors


def chosen(rows: Iterable[FleetRow], query: FleetQuery) -> list[FleetRow]:
    return [
        r
        for r in rows
        if (not query.resources or r.resource in query.resources)
        and (not query.clusters or r.cluster in query.clusters)
    ]


FREE_SHOWN = 3  # resources whose fleet-wide free count heads the page


def free_first(totals: Iterable[Total]) -> list[Total]:
    """The totals the Fleet page's first line gives the free count of: GPUs first (an admin's
    question is the fleet's free GPUs), then the rest by name, at most FREE_SHOWN."""
    return sorted(totals, key=lambda t: ("gpu" not in t.resource.lower(), t.resource))[:FREE_SHOWN]
