"""Writing extended resources to nodes: one guarded JSON Patch per node, an Event, a log line.

Writes are never retried: a failure is reported to the user as it happened.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson

from app.base import audit
from app.domain import changes
from app.domain.capacity_log import attributed
from app.domain.quantity import QuantityError, parse_count
from app.kube.api import paths, raw
from app.kube.api.errors import (
    TEST_FAILED,
    Conflict,
    Invalid,
    KubeError,
    NotFound,
    conflict_words,
    http_status,
    refused,
    translate,
)
from app.kube.wire.managed_fields import managed

if TYPE_CHECKING:
    from kubernetes import client

FIELD_MANAGER = "extres"
EVENT_REASON = "ExtendedResourceChanged"
EVENT_LABELS = {"app.kubernetes.io/managed-by": FIELD_MANAGER}
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outcome:
    """What happened (or, in a dry run, would happen) on one node."""

    node: str
    resource: str
    action: str  # "set" | "remove" | "reapply"
    old: int | None
    new: int | None
    ok: bool
    message: str
    dry_run: bool = False
    status: int = 200  # the HTTP status that fits: 409 changed, 403 refused, 404, 422, 503


def _node_path(name: str) -> str:
    return paths.path("v1", "nodes", name)


class NodeWriter:
    def __init__(
        self,
        api: client.ApiClient,
        *,
        timeout: float = 10.0,
        on_node: Callable[[Mapping[str, Any]], None] | None = None,
        on_error: Callable[[str, str], None] | None = None,
        event_namespace: str = "default",
        who: audit.Who | None = None,
        on_changed: Callable[[str, str, int | None, int | None, str, str], None] | None = None,
    ) -> None:
        self.api = api
        self.event_namespace = event_namespace
        self.who = who or audit.Who()  # who and from where, for every audit line
        self.timeout = timeout
        self.on_node = on_node  # read-your-writes: feed the patched node to the cache
        self.on_error = on_error  # (operation, error kind), for /metrics
        # (node, resource, before, after, user, the node's resourceVersion): the capacity history
        self.on_changed = on_changed

    # ---- API calls ---------------------------------------------------------
    def get(self, name: str) -> dict[str, Any]:
        try:
            node: dict[str, Any] = raw.call(self.api, "GET", _node_path(name), self.timeout)
        except Exception as exc:
            err = translate(exc)
            if isinstance(err, NotFound):
                raise NotFound(f"There is no node named {name!r}.") from exc
            raise err from exc
        return node

    def patch(self, name: str, ops: changes.Patch, dry_run: bool) -> dict[str, Any]:
        query = {"fieldManager": FIELD_MANAGER, **({"dryRun": "All"} if dry_run else {})}
        try:
            node: dict[str, Any] = raw.call(
                self.api,
                "PATCH",
                _node_path(name) + "/status",
                self.timeout,
                query=query,
                payload=list(ops),
                content_type=raw.JSON_PATCH,
            )
        except Exception as exc:
            err = translate(exc)
            if isinstance(err, Invalid) and not err.causes and any(op.get("op") == "test" for op in ops):
                # Kubernetes answers a failed JSON Patch test with a bare 422 Invalid (no causes).
                raise Conflict(TEST_FAILED, 422, reason=Conflict.TEST) from exc
            raise err from exc
        if not dry_run and self.on_node is not None:
            self.on_node(node)
        return node

    def event(self, node: Mapping[str, Any], actor: str, message: str) -> None:
        """Record the change as an Event on the node; a failure here is logged, not raised."""
        meta = node.get("metadata") or {}
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        text = f"{actor}: {message}"
        body: Any = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "generateName": f"{meta.get('name', 'node')}.extres.",
                "namespace": self.event_namespace,
                "labels": EVENT_LABELS,
            },
            "involvedObject": {
                "apiVersion": "v1",
                "kind": "Node",
                "name": meta.get("name"),
                "uid": meta.get("uid"),
            },
            "reason": EVENT_REASON,
            "message": text,
            "type": "Normal",
            "source": {"component": FIELD_MANAGER},
            "reportingComponent": FIELD_MANAGER,
            "reportingInstance": socket.gethostname(),
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        try:
            path = paths.path("v1", "namespaces", self.event_namespace, "events")
            raw.call(
                self.api, "POST", path, self.timeout, query={"fieldManager": FIELD_MANAGER}, payload=body
            )
        except Exception as exc:  # noqa: BLE001
            log.warning("could not record an Event for node %s: %s", meta.get("name"), translate(exc).message)

    # ---- operations -----------------------------------------------------------
    def set(
        self, name: str, resource: str, count: int, expected: int | None, actor: str, dry_run: bool = False
    ) -> Outcome:
        return self._run(name, resource, "set", count, expected, actor, dry_run)

    def remove(
        self, name: str, resource: str, expected: int | None, actor: str, dry_run: bool = False
    ) -> Outcome:
        return self._run(name, resource, "remove", None, expected, actor, dry_run)

    def reapply(
        self,
        name: str,
        actor: str,
        refuse: Callable[[str, int], str | None],
        dry_run: bool = False,
    ) -> list[Outcome]:
        """Write the desired state back where capacity drifted from it. The annotation is data on
        the node that anyone allowed to patch nodes can write: each entry is checked by ``refuse``
        (the rules of the forms) and an entry it refuses is reported, never written."""
        node = self.get(name)
        desired = changes.parse_desired(_annotations(node).get(changes.DESIRED_ANNOTATION))
        outcomes = []
        for d in changes.drift(desired, _capacity(node)):
            if problem := refuse(d.resource, d.desired):
                message = f"the desired state asks for {d.resource}={d.desired}, which is refused: {problem}"
                log.warning("reapply on %s: %s", name, message)
                outcomes.append(
                    Outcome(name, d.resource, "reapply", d.actual, d.desired, False, message, dry_run, 422)
                )
                continue
            outcomes.append(self._run(name, d.resource, "reapply", d.desired, d.actual, actor, dry_run))
        return outcomes

    def _run(
        self,
        name: str,
        resource: str,
        action: str,
        new: int | None,
        expected: int | None,
        actor: str,
        dry_run: bool,
    ) -> Outcome:
        old: int | None = expected
        try:
            node = self.get(name)
            raw = ((node.get("status") or {}).get("capacity") or {}).get(resource)
            old = _count(raw)
            meta = node.get("metadata") or {}
            annotations = meta.get("annotations")
            rv = str(meta.get("resourceVersion", ""))
            desired = changes.parse_desired((annotations or {}).get(changes.DESIRED_ANNOTATION))
            there = (
                raw is None and resource not in desired
                if action == "remove"
                else old == new and desired.get(resource) == new
            )
            if old != expected and there:  # moved, to what was asked (the same change applied since)
                said = f"{resource} is already {_show(new)} (changed to that since you loaded it)"
                return Outcome(name, resource, action, old, new, True, f"{said}; nothing changed", dry_run)
            if old != expected:
                seen = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                by, at = attributed(managed(orjson.dumps(node)), "capacity", resource, seen)
                raise Conflict(changes.moved(resource, name, expected, old, by, at), reason=Conflict.MOVED)
            if action == "remove":
                if raw is None:
                    raise NotFound(f"{resource} is not advertised on {name}; nothing to remove.")
                ops = changes.remove_patch(
                    resource, raw_current=raw, resource_version=rv, annotations=annotations
                )
            else:
                assert new is not None
                if there:  # e.g. a bulk change run again
                    return Outcome(
                        name,
                        resource,
                        action,
                        old,
                        new,
                        True,
                        f"{resource} is already {new}; nothing changed",
                        dry_run,
                    )
                ops = changes.set_patch(
                    resource, new, raw_current=raw, resource_version=rv, annotations=annotations
                )
            patched = self.patch(name, ops, dry_run)
        except KubeError as err:
            if self.on_error is not None:
                self.on_error(f"{action} nodes/status", type(err).__name__)
            message = conflict_words(name, err) if isinstance(err, Conflict) else err.message
            status = http_status(err)
            if not dry_run:
                said = "refused" if refused(err) else "failed"
                self._audit(said, name, resource, action, old, new, status=status, reason=message)
            return Outcome(name, resource, action, old, new, False, message, dry_run, status)
        summary = f"{resource} {_show(old)} → {_show(new)}"
        verb = "would change" if dry_run else "changed"
        outcome = Outcome(name, resource, action, old, new, True, f"{verb} {summary}", dry_run)
        if not dry_run:
            if self.on_changed is not None and old != new:
                version = str((patched.get("metadata") or {}).get("resourceVersion", ""))
                self.on_changed(name, resource, old, new, actor, version)
            self.event(patched, actor, f"{action} {summary}")
            self._audit("changed", name, resource, action, old, new)
        return outcome

    def _audit(
        self, outcome: str, node: str, resource: str, action: str, old: Any, new: Any, **details: Any
    ) -> None:
        """The write's one audit line, as the acting user."""
        audit.record(
            outcome, self.who, node=node, resource=resource, old=old, new=new, action=action, **details
        )


def _annotations(node: Mapping[str, Any]) -> dict[str, str]:
    return dict((node.get("metadata") or {}).get("annotations") or {})


def _capacity(node: Mapping[str, Any]) -> dict[str, int]:
    out = {}
    for k, v in ((node.get("status") or {}).get("capacity") or {}).items():
        c = _count(v)
        if c is not None:
            out[k] = c
    return out


def _count(raw: Any) -> int | None:
    if raw is None:
        return None
    try:
        return parse_count(str(raw))
    except QuantityError:
        return None


def _show(value: int | None) -> str:
    return "absent" if value is None else str(value)
