"""A fake cluster for the web lane: a real Store, fed the JSON the API server would send, a stub
access checker and a fixed freshness. Writes go through the real NodeWriter to an API server
stand-in over the same nodes' JSON (tests/web/apiserver.py: JSON Patch applied, each request
recorded); what kube-apiserver itself accepts is tested against the real one, in
tests/integration."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.domain.admission import Namespace
from app.domain.capacity_log import Record
from app.domain.pod_details import PodDetails
from app.kube.api.access import Identity
from app.kube.api.capacity_log import Kept
from app.kube.api.errors import KubeError
from app.kube.api.freshness import Freshness, WatchCounters
from app.kube.api.revocations import Revocations
from app.kube.api.writer import NodeWriter
from app.kube.state.store import Store
from app.kube.wire.reading import Unreadable
from tests import builders
from tests.web.apiserver import ApiServerStandIn

LIVE = Freshness(synced=True, stale=False, age_seconds=0.0, error=None)
BASE = {"cpu": "4", "memory": "8Gi", "pods": "110"}
_versions = itertools.count(1)
ADMITTED = [
    {"key": f"node.kubernetes.io/{k}", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
    for k in ("not-ready", "unreachable")
]


@dataclass
class StubAccess:
    """Every identity the proxy or token names is accepted; ``denied`` lists the (verb, resource)
    pairs refused to everyone (a viewer: {("patch", "nodes")})."""

    denied: set[tuple[str, ...]] = field(default_factory=set)  # (verb, resource[, namespace])
    asked: list[tuple[str, str, str]] = field(default_factory=list)
    refused_tokens: set[str] = field(default_factory=set)  # tokens the "API server" does not accept
    accepted: set[str] = field(default_factory=set)  # tokens it accepted, as Access caches them
    fails: Exception | None = None  # what every check raises instead (the API server's refusal, or none)
    clients: list[str | None] = field(default_factory=list)  # the client key each authentication named

    def authenticate(self, identity: Identity, client: str | None = None) -> Identity | None:
        self.clients.append(client)
        if identity.mode == "token":
            if not identity.token or identity.token in self.refused_tokens:
                return None
            self.accepted.add(identity.token)
            return Identity(user="token-user", token=identity.token, mode="token")
        return identity if identity.known else None

    def accepted_lately(self, identity: Identity) -> bool:
        return identity.token in self.accepted

    def check(
        self, identity: Identity, verb: str, resource: str, subresource: str = "", namespace: str = ""
    ) -> bool:
        self.asked.append((verb, resource, subresource) if not namespace else (verb, resource, namespace))
        if self.fails is not None:
            raise self.fails
        return (
            identity.known
            and (verb, resource) not in self.denied
            and (verb, resource, namespace) not in self.denied
        )

    def allowed(self, identity: Identity, verb: str, resource: str, subresource: str = "") -> bool:
        return self.check(identity, verb, resource, subresource)

    def can_edit(self, identity: Identity) -> bool:
        return self.allowed(identity, "patch", "nodes", "status")


@dataclass
class StubCapacityLog:
    """The capacity history as read: the records given, filtered by day as the real one does."""

    records: list[Record] = field(default_factory=list)
    left_out: int = 0
    namespace: str = "default"
    prefix: str = "extres-history"
    keep_days: int = 31
    problem: str | None = None
    enabled: bool = True
    writes: bool = True

    def read(self, since: str = "", until: str = "") -> Kept:
        shown = [r for r in self.records if (not since or r.day >= since) and (not until or r.day <= until)]
        return Kept(sorted(shown, key=lambda r: r.when, reverse=True), self.left_out, False)


@dataclass
class StubAdmission:
    """What admission reads, per namespace (none: nothing to apply)."""

    namespaces: dict[str, Namespace] = field(default_factory=dict)

    def namespace(self, name: str) -> Namespace:
        return self.namespaces.get(name, Namespace())


@dataclass
class StubPodReads:
    """Each pod's details as the panel would read them (none given: a pod without conditions or
    Events); ``error``: what every read raises instead."""

    details_of: dict[tuple[str, str], PodDetails] = field(default_factory=dict)
    error: KubeError | None = None
    asked: list[tuple[str, str]] = field(default_factory=list)

    def details(self, namespace: str, name: str) -> PodDetails:
        self.asked.append((namespace, name))
        if self.error is not None:
            raise self.error
        return self.details_of.get((namespace, name), PodDetails())


@dataclass
class FakeCluster:
    store: Store = field(default_factory=Store)
    access: StubAccess = field(default_factory=StubAccess)
    capacity_log: StubCapacityLog = field(default_factory=StubCapacityLog)
    revocations: Revocations = field(default_factory=lambda: Revocations(None, None))  # in memory
    admission: StubAdmission = field(default_factory=lambda: StubAdmission())
    pods: StubPodReads = field(default_factory=StubPodReads)
    fresh: Freshness = LIVE
    unreadable: list[Unreadable] = field(default_factory=list)
    server: str = "https://fake.invalid"
    # the member Secrets this cluster keeps: (name, kubeconfig), or a KubeError their list raises
    member_secrets: list[tuple[str, bytes]] | Exception = field(default_factory=list)
    secrets_asked: list[tuple[str, str, int]] = field(default_factory=list)

    def start(self, first_sync_wait: float = 3.0) -> None:
        pass

    def member_kubeconfigs(self, namespace: str, selector: str, most: int) -> list[tuple[str, bytes]]:
        self.secrets_asked.append((namespace, selector, most))
        if isinstance(self.member_secrets, Exception):
            raise self.member_secrets
        return list(self.member_secrets)

    def freshness(self) -> Freshness:
        return self.fresh

    def unreadable_named(self) -> list[Unreadable]:
        return self.unreadable

    def watch_counters(self) -> dict[str, WatchCounters]:
        return {}

    dra: str = "absent"

    def dra_state(self) -> str:
        return self.dra

    objects: dict[str, dict[str, Any]] = field(default_factory=dict)  # each node's JSON, as sent
    apiserver: ApiServerStandIn | None = None  # made on the first write

    def writer_for(self, identity: Identity, who: Any = None) -> Any:
        """The real NodeWriter, talking to the stand-in; it feeds what it patched back to the store
        (read-your-writes) as the app's does."""
        if self.apiserver is None:
            self.apiserver = ApiServerStandIn(self.objects)
        return NodeWriter(self.apiserver, timeout=1, on_node=self.store.apply_node, who=who)  # type: ignore[arg-type]

    def history_of(self, member: str) -> Any:
        """A member's capacity history kept here: the stand-in's own (the port's ``history_of``)."""
        return self.capacity_log

    def close(self) -> None:
        pass

    # ---- feeding the store, as the watches would ----------------------
    def node(
        self,
        name: str,
        extended: dict[str, str] | None = None,
        *,
        allocatable: dict[str, str] | None = None,
        labels: dict[str, str] | None = None,
        taints: Iterable[dict[str, str]] = (),
        unschedulable: bool = False,
        annotations: dict[str, str] | None = None,
        ready: str = "True",
        conditions: Iterable[dict[str, str]] = (),
    ) -> None:
        """``conditions``: more than Ready (the pressures, NetworkUnavailable)."""
        self.objects[name] = obj = builders.node(
            name,
            {**BASE, **(extended or {})},
            allocatable={**BASE, **(allocatable if allocatable is not None else extended or {})},
            rv=next(_versions),
            labels=labels or {},
            annotations=annotations or {},
            taints=taints,
            unschedulable=unschedulable,
            conditions=[{"type": "Ready", "status": ready, "reason": "KubeletReady"}, *conditions],
        )
        self.store.apply_node(obj)

    def pod(
        self,
        name: str,
        node: str | None,
        requests: dict[str, str],
        *,
        namespace: str = "default",
        message: str | None = None,
        priority: int = 0,
        terminating: bool = False,
        owner: tuple[str, str] | None = None,
        labels: dict[str, str] | None = None,
        **spec: Any,
    ) -> None:
        """A pod bound to ``node`` and Running, or, with ``node`` None, Pending; ``message``: the
        scheduler's Unschedulable message. It carries the tolerations admission adds
        (DefaultTolerationSeconds), as every pod the API server returns does."""
        self.store.apply_pod(
            builders.pod(
                name,
                node,
                requests,
                namespace=namespace,
                rv=next(_versions),
                owner=owner,
                labels=labels,
                created="2026-12-01T10:00:00Z",
                terminating=terminating,
                unschedulable=message,
                tolerations=[*spec.pop("tolerations", []), *ADMITTED],
                priority=priority,
                **spec,
            )
        )


if TYPE_CHECKING:  # the stand-ins match the ports they stand in for (mypy reads this file)
    from app.kube.api.ports import AccessPort, ClusterPort

    _cluster: ClusterPort = FakeCluster()
    _access: AccessPort = StubAccess()
