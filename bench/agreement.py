"""Does the fit model agree with the real kube-scheduler? Random clusters and pods, seeded.

    python bench/agreement.py [--cases 2000] [--seed N]
    EXTRES_KUBE_VERSION=1.35.4 python bench/agreement.py   # the older tested version
        # each starts its own control plane, with kwok and the real kube-scheduler

Each batch creates a few nodes with random allocatable (cpu, memory, pods and two extended
resources), labels, taints and cordons, then random pods one at a time: requests (explicit
zeros too) with init containers and sidecars, pod-level resources, node selectors, required
node affinity (several terms, matchFields, Gt/Lt on non-integers, values the API server takes
but the scheduler cannot parse), tolerations (empty keys, PreferNoSchedule taints), host ports
with protocols and IPs, hostNetwork pods, bound pods resized in place (the harness writes
the kubelet's part of the status by hand: kwok does not resize), RuntimeClasses with overhead
and scheduling, a namespace whose LimitRange gives default requests, and an extended resource
DRA devices serve (a DeviceClass maps it; the harness publishes ResourceSlices on some nodes,
as a driver would, and the scheduler allocates the pods' claims). The model reads each pod as the planner
reads a pasted manifest, admission applied (``app.domain.admission``). For every pod the
model predicts the feasible nodes from the dashboard's own cache (the same decoding and fit code
the pages use); then the pod is created and the real scheduler binds it or marks it
Unschedulable. Agreement: the scheduler's node is in the predicted set, and the set is empty
exactly when the scheduler says Unschedulable. Every pod carries a required affinity term on its
batch's label, so other nodes in the cluster never take part. A case the model cannot decide
(a feature it does not model) is counted, never dropped. kwok plays the kubelets: its nodes
report Ready (or NotReady, and are tainted so), and bound pods stay bound and keep their
resources, which is all the scheduler looks at.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kubernetes import client

from app.domain.accounting import resize_rule
from app.domain.fit import fits
from app.domain.manifest import Planned, parse_manifest
from app.domain.shape import ACROSS_NODES
from app.kube.api.admission_reads import AdmissionReads
from app.kube.api.cache import server_minor
from app.kube.state.store import Store
from app.kube.wire.decoders import Pod
from app.kube.wire.projections import PodView

D, F = "example.com/dongle", "acme.io/fpga"
NODES_PER_BATCH = 6
# Pods go to "default" (no LimitRange) or LIMITED, whose LimitRange gives containers default cpu
# and memory requests (limits far above any request, so none is refused); some name a RuntimeClass
# with an overhead, one of them with scheduling (a node selector and a toleration).
LIMITED = "extres-agree-limited"
RUNTIME_CLASSES = {
    "extres-agree-overhead": {"overhead": {"podFixed": {"cpu": "250m", "memory": "64Mi"}}},
    "extres-agree-gpu": {
        "overhead": {"podFixed": {"cpu": "100m"}},
        "scheduling": {
            "nodeSelector": {"pool": "gpu"},
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}],
        },
    },
}
# An extended resource DRA devices serve (1.34+; DRAExtendedResource on by default from 1.36): a
# DeviceClass maps it, some nodes get a ResourceSlice of 1-3 devices (published as a driver
# would), some pods ask for it; the scheduler creates and allocates their claims.
G, G_DRIVER, G_CLASS = "agree.example.com/gpu", "agree.example.com", "extres-agree-gpu"
LIMIT_RANGE = {
    "limits": [
        {
            "type": "Container",
            "default": {"cpu": "8", "memory": "16Gi"},
            "defaultRequest": {"cpu": "150m", "memory": "256Mi"},
        }
    ]
}
NOT_READY_LABEL = "extres.test/not-ready"  # kwok reports such a node NotReady (kwok-stages.yaml)
NOT_READY = "node.kubernetes.io/not-ready"


@dataclass
class Report:
    seed: int
    cases: int = 0
    agreed: int = 0
    undecided: int = 0
    undecided_by: dict[str, int] = field(default_factory=dict)  # what the model could not decide
    bound: int = 0
    replayed: int = 0  # cases that disagreed once and were run again on a settled cluster
    refused: list[str] = field(default_factory=list)  # pods the API server refused (not cases)
    dra_bound: int = 0  # cases asking for the DRA-served resource that the scheduler bound
    resized: int = 0  # bound pods then resized in place (the harness playing the kubelet)
    unschedulable: int = 0
    inter_pod: int = 0  # cases where inter-pod affinity or topology spread kept the pod off a node
    failures: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return (
            f"seed {self.seed}: {self.cases} cases, {self.agreed} agreed "
            f"({self.bound} bound, {self.unschedulable} unschedulable), {self.undecided} undecided, "
            f"{len(self.failures)} disagreed ({self.replayed} replayed once on a settled cluster); "
            f"undecided by {self.undecided_by or 'nothing'}; "
            f"{len(self.refused)} generated pods refused by the API server; "
            f"{self.dra_bound} bound with DRA devices; {self.resized} resized in place; "
            f"{self.inter_pod} kept off a node by inter-pod affinity or topology spread"
        )


def _node(rng: random.Random, name: str, batch: str) -> dict[str, Any]:
    alloc = {
        "cpu": rng.choice(["1", "2", "3500m"]),
        "memory": rng.choice(["2Gi", "4Gi"]),
        "pods": str(rng.randint(2, 6)),
    }
    for resource, top in ((D, 4), (F, 2)):
        if rng.random() < 0.8:
            alloc[resource] = str(rng.randint(top // 2, top))
    labels = {
        "batch": batch,
        "zone": rng.choice("abc"),
        "pool": rng.choice(["gpu", "general"]),
        "kubernetes.io/hostname": name,
    }
    if rng.random() < 0.7:
        labels["cores"] = rng.choice(["4", "8", "16", "many"])
    taints = []
    roll = rng.random()
    if roll < 0.15:
        taints.append({"key": "dedicated", "value": "ml", "effect": "NoSchedule"})
    elif roll < 0.25:
        taints.append({"key": "maintenance", "effect": "NoExecute"})
    elif roll < 0.32:
        taints.append({"key": "spot", "value": "yes", "effect": "PreferNoSchedule"})
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {"unschedulable": rng.random() < 0.12, "taints": taints or None},
        "status": {"capacity": alloc, "allocatable": alloc},
    }


def _requirement(rng: random.Random, names: list[str]) -> tuple[str, dict[str, Any]]:
    kind = rng.choice(
        [
            "zone-in",
            "pool-notin",
            "cores-gt",
            "cores-lt",
            "cores-exists",
            "cores-absent",
            "name",
            "unparsable",
        ]
    )
    if kind == "zone-in":
        return "matchExpressions", {"key": "zone", "operator": "In", "values": rng.sample("abc", 2)}
    if kind == "unparsable":  # the scheduler's term matches nothing; newer API servers refuse the
        # invalid label values at creation (counted as refused, not as cases), never "1_000"
        return "matchExpressions", rng.choice(
            [
                {"key": "zone", "operator": "In", "values": ["a b"]},
                {"key": "pool", "operator": "NotIn", "values": ["-gpu"]},
                {"key": "cores", "operator": "Gt", "values": ["-1"]},
                {"key": "cores", "operator": "Lt", "values": ["1_000"]},
            ]
        )
    if kind == "pool-notin":
        return "matchExpressions", {"key": "pool", "operator": "NotIn", "values": ["gpu"]}
    if kind in ("cores-gt", "cores-lt"):
        op = "Gt" if kind == "cores-gt" else "Lt"
        return "matchExpressions", {"key": "cores", "operator": op, "values": [rng.choice(["4", "8"])]}
    if kind == "cores-exists":
        return "matchExpressions", {"key": "cores", "operator": "Exists"}
    if kind == "cores-absent":
        return "matchExpressions", {"key": "cores", "operator": "DoesNotExist"}
    return "matchFields", {
        "key": "metadata.name",
        "operator": rng.choice(["In", "NotIn"]),
        "values": [rng.choice(names)],
    }


APPS = ("db", "web", "cache")
TOPOLOGIES = ("kubernetes.io/hostname", "zone")


def _selector(rng: random.Random, batch: str) -> dict[str, Any] | None:
    """Pods of an app, mostly of this batch only (pods of earlier batches stay placed); now and
    then every pod ({}), none (no selector) or a set expression."""
    roll = rng.random()
    if roll < 0.05:
        return None
    if roll < 0.1:
        return {}
    exprs = [
        {"key": "app", "operator": rng.choice(["In", "NotIn"]), "values": rng.sample(APPS, rng.randint(1, 2))}
    ]
    if rng.random() < 0.9:
        exprs.append({"key": "batch", "operator": "In", "values": [batch]})
    return {"matchExpressions": exprs}


def _inter_pod(rng: random.Random, spec: dict[str, Any], batch: str) -> None:
    """Required pod affinity and anti-affinity (hostname or zone, namespaces listed or every one
    ({}), matchLabelKeys and mismatchLabelKeys on a label of their own) and topology spread
    (DoNotSchedule and ScheduleAnyway, maxSkew, minDomains, node affinity and taint policies)."""
    required = "requiredDuringSchedulingIgnoredDuringExecution"
    for kind, chance in (("podAffinity", 0.12), ("podAntiAffinity", 0.15)):
        if rng.random() < chance:
            term: dict[str, Any] = {"topologyKey": rng.choice(TOPOLOGIES)}
            if (sel := _selector(rng, batch)) is not None:
                term["labelSelector"] = sel
                if rng.random() < 0.2:
                    term[rng.choice(["matchLabelKeys", "mismatchLabelKeys"])] = ["tier"]
            roll = rng.random()
            if roll < 0.1:
                term["namespaceSelector"] = {}
            elif roll < 0.2:
                term["namespaces"] = rng.sample(["default", LIMITED], rng.randint(1, 2))
            spec["affinity"][kind] = {required: [term]}
    if rng.random() < 0.15:
        constraint: dict[str, Any] = {
            "maxSkew": rng.randint(1, 2),
            "topologyKey": rng.choice(TOPOLOGIES),
            "whenUnsatisfiable": "DoNotSchedule" if rng.random() < 0.85 else "ScheduleAnyway",
        }
        if (sel := _selector(rng, batch)) is not None:
            constraint["labelSelector"] = sel
            if rng.random() < 0.2:
                constraint["matchLabelKeys"] = ["tier"]
        if rng.random() < 0.2 and constraint["whenUnsatisfiable"] == "DoNotSchedule":
            constraint["minDomains"] = rng.randint(2, 4)
        if rng.random() < 0.15:
            constraint["nodeAffinityPolicy"] = "Ignore"
        if rng.random() < 0.15:
            constraint["nodeTaintsPolicy"] = "Honor"
        spec["topologySpreadConstraints"] = [constraint]


def _pod(rng: random.Random, name: str, batch: str, names: list[str], dra: bool = False) -> dict[str, Any]:
    pod_level = rng.random() < 0.12  # cpu and memory asked at pod level (none per container)

    def resources() -> dict[str, Any]:
        req: dict[str, str] = {}
        if rng.random() < 0.7 and not pod_level:
            req["cpu"] = rng.choice(["100m", "250m", "500m", "1500m"])
        if rng.random() < 0.4 and not pod_level:
            req["memory"] = rng.choice(["256Mi", "1Gi", "3Gi"])
        ext = {}
        if rng.random() < 0.6:
            ext[D] = str(rng.randint(1, 2))
        elif rng.random() < 0.15:
            ext[D] = "0"  # an explicit zero
        if rng.random() < 0.2:
            ext[F] = "1"
        if dra and rng.random() < 0.25:
            ext[G] = str(rng.randint(1, 2))
        return {"requests": {**req, **ext}, "limits": ext}

    containers = [
        {"name": f"c{i}", "image": "registry.example/x:1", "resources": resources()}
        for i in range(rng.randint(1, 2))
    ]
    spec: dict[str, Any] = {"containers": containers, "terminationGracePeriodSeconds": 0}
    if pod_level:
        spec["resources"] = {
            "requests": {"cpu": rng.choice(["500m", "1", "2500m"]), "memory": rng.choice(["512Mi", "3Gi"])}
        }
    init = []
    if rng.random() < 0.3:
        init.append({"name": "init", "image": "registry.example/x:1", "resources": resources()})
    if rng.random() < 0.25:  # a sidecar: counted beside the app containers, before or after an init one
        sidecar = {
            "name": "side",
            "image": "registry.example/x:1",
            "restartPolicy": "Always",
            "resources": resources(),
        }
        init.insert(rng.randint(0, len(init)), sidecar)
    if init:
        spec["initContainers"] = init
    if rng.random() < 0.15:
        spec["runtimeClassName"] = rng.choice(sorted(RUNTIME_CLASSES))
    if rng.random() < 0.2:
        spec["nodeSelector"] = {"zone": rng.choice("abc")}
    batch_req = {"key": "batch", "operator": "In", "values": [batch]}
    terms = [{"matchExpressions": [batch_req]}]
    if rng.random() < 0.35:
        terms = []
        for _ in range(rng.randint(1, 2)):
            term: dict[str, list[Any]] = {"matchExpressions": [batch_req]}
            for _ in range(rng.randint(1, 2)):
                where, req = _requirement(rng, names)
                term.setdefault(where, []).append(req)
            terms.append(term)
    spec["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
    }
    tolerations = []
    for chance, toleration in (
        (0.4, {"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}),
        (0.15, {"key": "dedicated", "operator": "Equal", "value": "web"}),
        (0.2, {"key": "maintenance", "operator": "Exists"}),
        (0.08, {"operator": "Exists"}),
        (0.1, {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}),
        (0.1, {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}),
    ):
        if rng.random() < chance:
            tolerations.append(toleration)
    if tolerations:
        spec["tolerations"] = tolerations
    roll = rng.random()
    if roll < 0.15:
        port = {
            "containerPort": 80,
            "hostPort": rng.choice([8080, 8081]),
            "protocol": rng.choice(["TCP", "UDP"]),
        }
        if rng.random() < 0.4:
            port["hostIP"] = rng.choice(["127.0.0.1", "10.0.0.1", "0.0.0.0"])
        containers[0]["ports"] = [port]
    elif roll < 0.22:  # a hostNetwork pod's container ports are host ports
        spec["hostNetwork"] = True
        containers[0]["ports"] = [{"containerPort": rng.choice([8080, 9090]), "protocol": "TCP"}]
    labels = {"batch": batch, "app": rng.choice(APPS), "tier": rng.choice("ab")}
    _inter_pod(rng, spec, batch)
    # pod-level resources stay out of LIMITED: how a LimitRange meets them is not modelled
    namespace = LIMITED if rng.random() < 0.3 and not pod_level else "default"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": spec,
    }


def _outcome(core: client.CoreV1Api, name: str, ns: str, timeout: float = 30.0) -> str | None:
    """The node the scheduler bound the pod to, or None once it marked it Unschedulable."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pod = core.read_namespaced_pod(name, ns)
        if pod.spec.node_name:
            return str(pod.spec.node_name)
        for cond in pod.status.conditions or ():
            if cond.type == "PodScheduled" and cond.status == "False" and cond.reason == "Unschedulable":
                return None
        time.sleep(0.05)
    raise TimeoutError(f"the scheduler neither bound nor refused {name} in {timeout}s")


def _wait(check: Any, timeout: float = 15.0, what: Any = lambda: "") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the cache did not catch up: {what()}")
        time.sleep(0.02)


def admission_objects(api: client.ApiClient) -> None:
    """The RuntimeClasses, the LIMITED namespace with its LimitRange and the DeviceClass of G
    (made once, kept; no DeviceClass where resource.k8s.io/v1 is not served)."""
    core, node = client.CoreV1Api(api), client.NodeV1Api(api)
    selector = {"cel": {"expression": f'device.driver == "{G_DRIVER}"'}}
    device_class = {
        "metadata": {"name": G_CLASS},
        "spec": {"extendedResourceName": G, "selectors": [selector]},
    }
    try:
        client.ResourceV1Api(api).create_device_class(device_class)
    except client.ApiException as exc:
        if exc.status not in (404, 409):
            raise
    for make in (
        lambda: core.create_namespace({"metadata": {"name": LIMITED}}),
        lambda: core.create_namespaced_limit_range(
            LIMITED, {"metadata": {"name": "defaults"}, "spec": LIMIT_RANGE}
        ),
        *(
            lambda name=name, body=body: node.create_runtime_class(
                {"metadata": {"name": name}, "handler": "runc", **body}
            )
            for name, body in RUNTIME_CLASSES.items()
        ),
    ):
        try:
            make()
        except client.ApiException as exc:
            if exc.status != 409:
                raise


def _resizable(body: dict[str, Any]) -> bool:
    """A pod whose first container asks for cpu itself (not at pod level): its cpu can be resized."""
    spec = body["spec"]
    return "resources" not in spec and "cpu" in spec["containers"][0]["resources"].get("requests", {})


def _resize(api: client.ApiClient, store: Store, rng: random.Random, body: dict[str, Any]) -> bool:
    """Resize a bound pod's first container's cpu in place (False: the API server refused the
    resize), and play the kubelet's part by hand
    (kwok does not resize): report what it allocated and runs with, in progress, refused as
    Infeasible, or done. The scheduler then counts the larger of spec and what is reported
    (spec left out while Infeasible), as the model does; the next cases meet that."""
    core = client.CoreV1Api(api)
    name, ns, spec = body["metadata"]["name"], body["metadata"]["namespace"], body["spec"]
    first = spec["containers"][0]
    before = first["resources"]["requests"]
    _wait(lambda: core.read_namespaced_pod_status(name, ns).status.phase == "Running", timeout=30)

    def report(allocated: dict[str, str], actuated: dict[str, str], infeasible: bool = False) -> None:
        def one(c: dict[str, Any], this: bool) -> dict[str, Any]:
            asked = {**c["resources"].get("limits", {}), **c["resources"].get("requests", {})}
            return {
                "name": c["name"],
                "allocatedResources": allocated if this else asked,
                "resources": {"requests": actuated if this else asked},
            }

        status: dict[str, Any] = {
            "containerStatuses": [one(c, i == 0) for i, c in enumerate(spec["containers"])],
            "initContainerStatuses": [one(c, False) for c in spec.get("initContainers", ())],
        }
        if infeasible:
            status["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
        core.patch_namespaced_pod_status(
            name, ns, {"status": status}, _content_type="application/strategic-merge-patch+json"
        )

    report(before, before)  # running with what it asked
    new = rng.choice(["50m", "2"])
    try:
        core.patch_namespaced_pod_resize(
            name,
            ns,
            {"spec": {"containers": [{"name": first["name"], "resources": {"requests": {"cpu": new}}}]}},
        )
    except client.ApiException as exc:
        if exc.status not in (403, 422):  # refused at admission (1.37: more than the node's allocatable)
            raise
        return False
    after = {**before, "cpu": new}
    state = rng.choice(["in progress", "infeasible", "done"])
    report(before if state != "done" else after, after if state == "done" else before, state == "infeasible")
    wire = api.sanitize_for_serialization(core.read_namespaced_pod(name, ns))
    # what the cache will hold once it sees the last write, counted by the server's version's rule
    rule = resize_rule(server_minor(api))
    expected = PodView.from_struct(msgspec.convert(wire, Pod), rule=rule).requests
    _wait(lambda: (p := store.pods.get((ns, name))) is not None and p.requests == expected)
    return True


def _slices_seen(store: Store, nodes: list[str]) -> bool:
    return store.with_dra(lambda d: all(("", f"{n}-g") in d.slices for n in nodes))


def _claim_held(store: Store, pod: str) -> bool:
    """The claim the scheduler made for the pod holds its devices, as the cache sees it."""
    return store.with_dra(lambda d: any(pod in c.pods and c.held for c in d.claims.values()))


def _served(api: client.ApiClient) -> bool:
    try:
        client.ResourceV1Api(api).read_device_class(G_CLASS)
    except client.ApiException:
        return False
    return True


def predict(admission: AdmissionReads, body: dict[str, Any]) -> Planned:
    """The pod as admission will make it (LimitRange, RuntimeClass, default tolerations, a
    hostNetwork pod's ports, matchLabelKeys merged): the planner's reading of a pasted manifest."""
    return parse_manifest(json.dumps(body), admission.namespace)


def feasible(store: Store, planned: Planned) -> tuple[list[str], tuple[str, ...], bool]:
    """The nodes the model says the pod fits, as What-if decides it (inter-pod affinity and
    topology spread over the cache's pods), what it could not decide, and whether those two
    filters kept the pod off a node the others let it onto."""
    facts = store.node_facts()
    near = store.inter_pod(planned.shape, planned.namespace, planned.labels, planned.terms)
    weighed = near.applied(facts) if near is not None else facts
    unsure = tuple(u for u in planned.shape.unmodelled if u not in ACROSS_NODES)
    kept_off = any(
        fits(planned.shape, a) and not fits(planned.shape, b) for a, b in zip(facts, weighed, strict=True)
    )
    predicted = sorted(n.name for n in weighed if fits(planned.shape, n))
    return predicted, unsure + (near.undecided if near else ()), kept_off


def run(api: client.ApiClient, store: Store, cases: int, seed: int, prefix: str = "agree") -> Report:
    """``cases`` pods in batches of 25 over fresh nodes; the store must be watch-fed and synced."""
    rng = random.Random(seed)
    core = client.CoreV1Api(api)
    admission_objects(api)
    admission = AdmissionReads(api, 10.0)
    dra = _served(api)
    report = Report(seed)
    batch_no = 0
    while report.cases < cases:
        batch = f"{prefix}-{seed}-{batch_no}"
        batch_no += 1
        names = [f"{batch}-n{i}" for i in range(NODES_PER_BATCH)]
        nodes = [_node(rng, name, batch) for name in names]
        for body in nodes:
            if rng.random() >= 0.85:  # most nodes become Ready; the others' kubelets report NotReady
                body["metadata"].setdefault("labels", {})[NOT_READY_LABEL] = "true"
            core.create_node(body)
        published = [name for name in names if dra and rng.random() < 0.5]
        for name in published:
            devices = [{"name": f"d{i}"} for i in range(rng.randint(1, 3))]
            spec = {
                "driver": G_DRIVER,
                "nodeName": name,
                "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
            }
            client.ResourceV1Api(api).create_resource_slice(
                {"metadata": {"name": f"{name}-g"}, "spec": {**spec, "devices": devices}}
            )
        _wait(lambda published=published: _slices_seen(store, published))

        def settled(body: dict[str, Any]) -> bool:
            """kwok has reported the node Ready (or NotReady) and the node lifecycle controller
            has tainted a NotReady one (NoSchedule and NoExecute); the cache has seen it."""
            name = body["metadata"]["name"]
            view = store.node(name)
            if view is None:
                return False
            effects = {t.effect for t in view.taints if t.key == NOT_READY}
            if NOT_READY_LABEL in view.labels:
                return effects == {"NoSchedule", "NoExecute"}
            conditions = core.read_node_status(name).status.conditions or ()
            return not effects and any(c.type == "Ready" and c.status == "True" for c in conditions)

        def unsettled(nodes: list[dict[str, Any]] = nodes) -> str:
            """What the nodes still waited for show, for the timeout's message."""
            out = []
            for body in nodes:
                if not settled(body):
                    name = body["metadata"]["name"]
                    view = store.node(name)
                    taints = [f"{t.key}:{t.effect}" for t in view.taints] if view else "not in the cache"
                    ready = [
                        c.status
                        for c in core.read_node_status(name).status.conditions or ()
                        if c.type == "Ready"
                    ]
                    out.append(f"{name} (taints {taints}, Ready {ready})")
            return "; ".join(out)

        _wait(lambda nodes=nodes: all(map(settled, nodes)), timeout=30, what=unsettled)
        node_docs = [api.sanitize_for_serialization(core.read_node(x)) for x in names]

        def seen(doc: dict[str, Any]) -> bool:
            view = store.node(doc["metadata"]["name"])
            return view is not None and view.resource_version == doc["metadata"]["resourceVersion"]

        _wait(lambda node_docs=node_docs: all(map(seen, node_docs)))
        time.sleep(1.0)  # let the scheduler's own informers see the nodes too
        for i in range(min(25, cases - report.cases)):
            name = f"{batch}-p{i}"
            body = _pod(rng, name, batch, names, dra)
            ns = body["metadata"]["namespace"]
            planned = predict(admission, body)
            shape = planned.shape
            predicted, unsure, kept_off = feasible(store, planned)
            report.inter_pod += kept_off
            try:
                core.create_namespaced_pod(ns, body)
            except client.ApiException as exc:
                if exc.status != 422:
                    raise
                report.refused.append(f"{name}: {exc.body!r}"[:300])  # not a case: never scheduled
                continue
            actual = _outcome(core, name, ns)
            report.cases += 1
            agree = (actual is None and not predicted) or (actual is not None and actual in predicted)
            if not agree and not unsure:
                # Confirm on a settled cluster: the scheduler may still hold a pod the test just
                # deleted, or bind a pod it had marked Unschedulable a moment before. The same
                # pod again, after a pause, decides; a real disagreement of the model repeats.
                core.delete_namespaced_pod(name, ns, grace_period_seconds=0)
                _wait(lambda name=name, ns=ns: (ns, name) not in store.pods)
                time.sleep(2.0)
                again = {**body, "metadata": {**body["metadata"], "name": f"{name}-again"}}
                predicted, _, _ = feasible(store, planned)
                core.create_namespaced_pod(ns, again)
                actual = _outcome(core, f"{name}-again", ns)
                name = f"{name}-again"
                agree = (actual is None and not predicted) or (actual is not None and actual in predicted)
                report.replayed += 1
            if unsure:
                report.undecided += 1
                for why in unsure:
                    kind = why.split(" of ")[0]
                    report.undecided_by[kind] = report.undecided_by.get(kind, 0) + 1
            elif agree:
                report.agreed += 1
            else:
                report.failures.append(
                    yaml.safe_dump(
                        {
                            "seed": seed,
                            "predicted": predicted,
                            "scheduler": actual or "Unschedulable",
                            "message": _message(core, name, ns),
                            "pod": body,
                            "nodes": [_slim(d) for d in node_docs],
                            "node_requests": {n: store.requested_on(n) for n in names},
                        },
                        sort_keys=False,
                    )
                )
            if actual is None:
                report.unschedulable += 1
                core.delete_namespaced_pod(name, ns, grace_period_seconds=0)
                _wait(lambda name=name, ns=ns: (ns, name) not in store.pods)
            else:
                report.bound += 1
                _wait(
                    lambda name=name, actual=actual, ns=ns: (
                        (p := store.pods.get((ns, name))) is not None and p.node_name == actual
                    )
                )
                if rng.random() < 0.3 and _resizable(body) and _resize(api, store, rng, body):
                    report.resized += 1
                if G in shape.requests:  # the devices its claim holds are seen before the next case
                    report.dra_bound += 1
                    _wait(lambda name=name: _claim_held(store, name))
    return report


def _message(core: client.CoreV1Api, name: str, ns: str) -> str:
    try:
        pod = core.read_namespaced_pod(name, ns)
    except client.ApiException:
        return ""
    return " ".join(c.message or "" for c in pod.status.conditions or ())


def _slim(doc: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": doc["metadata"]["name"],
        "labels": doc["metadata"].get("labels"),
        "spec": doc.get("spec"),
        "allocatable": doc["status"].get("allocatable"),
    }


def main() -> None:
    from tempfile import mkdtemp

    from app.kube.api.cache import ClusterCache
    from app.kube.api.client import ClusterConfig, api_client, load_configuration
    from extres_demo import testenv

    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=random.SystemRandom().randrange(10**6))
    args = ap.parse_args()
    print(f"seed {args.seed}, kube {os.environ.get('EXTRES_KUBE_VERSION') or 'newest'}", flush=True)
    plane = testenv.start(Path(mkdtemp(prefix="extres-agree-")), scheduler=True)
    try:
        api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
        cache = ClusterCache(api)
        cache.start()
        assert cache.wait_synced(60)
        report = run(api, cache.store, args.cases, args.seed)
        for case in report.failures:
            print("---\n" + case)
        print(report)
        cache.stop()
        sys.exit(1 if report.failures else 0)
    finally:
        plane.stop()


if __name__ == "__main__":
    main()
