"""What the pod panel shows beyond the cache's view of a pod (pure): its conditions, the claims
it names, and the Events about it, the scheduler's among them (why it waited)."""

from __future__ import annotations

from dataclasses import dataclass

MAX_EVENTS = 50  # the newest, per pod
MAX_TEXT = 1000  # characters of a message kept


@dataclass(frozen=True)
class Condition:
    type: str
    status: str
    reason: str = ""
    message: str = ""
    since: str = ""  # RFC 3339


@dataclass(frozen=True)
class Event:
    type: str  # Normal or Warning
    reason: str  # Scheduled, FailedScheduling, ...
    message: str
    count: int
    first: str  # RFC 3339
    last: str
    source: str  # the component that reported it (default-scheduler, kubelet, ...)

    @property
    def waited(self) -> bool:
        """The scheduler's word that the pod could not be placed (the Pending history)."""
        return self.reason == "FailedScheduling"


@dataclass(frozen=True)
class Claim:
    name: str  # the pod's name for it
    claim: str  # the ResourceClaim's name ("" until made from a template)


@dataclass(frozen=True)
class ExtendedClaim:
    """The ResourceClaim the scheduler made for the pod's extended resources DRA devices serve
    (its ``status.extendedResourceClaimStatus``): the claim, and per container and resource the
    request in it."""

    claim: str
    mappings: tuple[tuple[str, str, str], ...]  # (container, resource, request)


@dataclass(frozen=True)
class PodDetails:
    conditions: tuple[Condition, ...] = ()
    claims: tuple[Claim, ...] = ()
    events: tuple[Event, ...] = ()  # newest first
    events_error: str = ""  # why the Events could not be read, if they could not
    owner: str = ""  # its workload, "Kind/name" (a ReplicaSet's Deployment), "" for a bare pod
    extended_claim: ExtendedClaim | None = None  # DRA serving its extended resources (1.34+)

    @property
    def pending_history(self) -> tuple[Event, ...]:
        return tuple(e for e in self.events if e.waited)


def bounded(text: str | None) -> str:
    return (text or "")[:MAX_TEXT]
