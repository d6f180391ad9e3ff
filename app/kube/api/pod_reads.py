"""One pod's details for its panel, read when the panel is asked for (never for a list): the pod
itself (conditions, claims) and the newest Events about it. Two GETs, each bounded in time and
decoded into slim structs; the Events are optional (a user's failure to read them, or an API
server that refuses, leaves the rest)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import msgspec

from app.domain.pod_details import MAX_EVENTS, Claim, Condition, Event, ExtendedClaim, PodDetails, bounded
from app.kube.api import paths, raw
from app.kube.api.errors import KubeError, translate
from app.kube.wire.decoders import Meta
from app.kube.wire.projections import workload

if TYPE_CHECKING:
    from kubernetes import client

log = logging.getLogger(__name__)


class _Condition(msgspec.Struct, rename="camel"):
    type: str = ""
    status: str = ""
    reason: str | None = None
    message: str | None = None
    last_transition_time: str | None = None


class _ClaimRef(msgspec.Struct, rename="camel"):
    name: str = ""
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class _ClaimStatus(msgspec.Struct, rename="camel"):
    name: str = ""
    resource_claim_name: str | None = None


class _RequestMapping(msgspec.Struct, rename="camel"):
    container_name: str = ""
    resource_name: str = ""
    request_name: str = ""


class _ExtendedClaimStatus(msgspec.Struct, rename="camel"):
    request_mappings: list[_RequestMapping] | None = None
    resource_claim_name: str = ""


class _Spec(msgspec.Struct, rename="camel"):
    resource_claims: list[_ClaimRef] | None = None


class _Status(msgspec.Struct, rename="camel"):
    conditions: list[_Condition] | None = None
    resource_claim_statuses: list[_ClaimStatus] | None = None
    extended_resource_claim_status: _ExtendedClaimStatus | None = None


class _Pod(msgspec.Struct):
    metadata: Meta = msgspec.field(default_factory=Meta)
    spec: _Spec = msgspec.field(default_factory=_Spec)
    status: _Status = msgspec.field(default_factory=_Status)


class _Source(msgspec.Struct):
    component: str | None = None


class _Event(msgspec.Struct, rename="camel"):
    type: str | None = None
    reason: str | None = None
    message: str | None = None
    count: int | None = None
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    event_time: str | None = None
    source: _Source | None = None
    reporting_controller: str | None = None


class _Events(msgspec.Struct):
    items: list[_Event] = msgspec.field(default_factory=list)


POD = msgspec.json.Decoder(_Pod)
EVENTS = msgspec.json.Decoder(_Events)


class PodReads:
    def __init__(self, api: client.ApiClient, timeout: float) -> None:
        self.api = api
        self.timeout = timeout

    def details(self, namespace: str, name: str) -> PodDetails:
        """The pod's details; raises KubeError (NotFound when it is gone)."""
        path = paths.path("v1", "namespaces", namespace, "pods", name)
        try:
            pod = POD.decode(raw.body(raw.get(self.api, path, {}, self.timeout)))
        except msgspec.DecodeError as exc:
            raise KubeError("The pod as the API server sent it could not be read.", detail=str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - every failure becomes a KubeError, in words
            raise translate(exc) from None
        made = {c.name: c.resource_claim_name or "" for c in pod.status.resource_claim_statuses or ()}
        claims = tuple(
            Claim(c.name, c.resource_claim_name or made.get(c.name, ""))
            for c in pod.spec.resource_claims or ()
        )
        conditions = tuple(
            Condition(c.type, c.status, c.reason or "", bounded(c.message), c.last_transition_time or "")
            for c in pod.status.conditions or ()
        )
        events, problem = self._events(namespace, name)
        owner = workload(pod.metadata.owner_references, pod.metadata.labels)
        named = f"{owner.kind}/{owner.name}" if owner.name else ""
        return PodDetails(conditions, claims, events, problem, named, _extended(pod.status))

    def _events(self, namespace: str, name: str) -> tuple[tuple[Event, ...], str]:
        query = {"fieldSelector": f"involvedObject.kind=Pod,involvedObject.name={name}", "limit": 500}
        try:
            path = paths.path("v1", "namespaces", namespace, "events")
            found = EVENTS.decode(raw.body(raw.get(self.api, path, query, self.timeout)))
        except msgspec.DecodeError:
            return (), "the Events could not be read"
        except Exception as exc:  # noqa: BLE001 - the rest of the panel stands without them
            err: KubeError = translate(exc)
            log.info("events of %s/%s not read: %s", namespace, name, err.message)
            return (), err.message
        events = [
            Event(
                e.type or "",
                e.reason or "",
                bounded(e.message),
                e.count or 1,
                e.first_timestamp or e.event_time or "",
                e.last_timestamp or e.event_time or e.first_timestamp or "",
                (e.source.component if e.source else None) or e.reporting_controller or "",
            )
            for e in found.items
        ]
        events.sort(key=lambda e: e.last, reverse=True)
        return tuple(events[:MAX_EVENTS]), ""


MAX_MAPPINGS = 64


def _extended(status: _Status) -> ExtendedClaim | None:
    """The claim the scheduler made for the pod's DRA-served extended resources, if any."""
    found = status.extended_resource_claim_status
    if found is None or not found.resource_claim_name:
        return None
    mappings = tuple(
        (m.container_name[:63], m.resource_name[:253], m.request_name[:63])
        for m in (found.request_mappings or ())[:MAX_MAPPINGS]
    )
    return ExtendedClaim(found.resource_claim_name[:253], mappings)
