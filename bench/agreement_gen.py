"""The agreement harness's generator: random nodes and pods, seeded (see bench/agreement.py).

Nodes: random cpu, memory, pods and two extended resources, labels (zone, pool, cores), taints
and cordons. Pods: requests with explicit zeros, containers with limits only, init containers and
sidecars, pod-level resources, node selectors, required node affinity with every operator and
values the scheduler cannot parse, tolerations, host ports, hostNetwork, RuntimeClasses, a
LimitRange namespace, the DRA-served resource, labels, required pod affinity and anti-affinity
and topology spread."""

from __future__ import annotations

import random
from typing import Any

D, F = "example.com/dongle", "acme.io/fpga"
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


def node_body(rng: random.Random, name: str, batch: str) -> dict[str, Any]:
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
    if rng.random() >= 0.85:  # most nodes become Ready; the others' kubelets report NotReady
        labels[NOT_READY_LABEL] = "true"
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


def slice_body(rng: random.Random, node: str) -> dict[str, Any]:
    """A ResourceSlice of 1-3 devices of G's driver on ``node``, as the driver would publish it."""
    spec = {
        "driver": G_DRIVER,
        "nodeName": node,
        "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
    }
    devices = [{"name": f"d{i}"} for i in range(rng.randint(1, 3))]
    return {"metadata": {"name": f"{node}-g"}, "spec": {**spec, "devices": devices}}


def partitioned_slices(rng: random.Random, node: str) -> list[dict[str, Any]]:
    """A GPU split as a driver would publish it (DRAPartitionableDevices, on from 1.36): a pool of
    two slices on ``node``, one with the counter set (8 memory units), one with some of its
    partitions (the whole GPU, halves, quarters), each consuming its share."""
    pool = {"name": f"{node}-part", "generation": 1, "resourceSliceCount": 2}
    base = {"driver": G_DRIVER, "nodeName": node, "pool": pool}
    counters = [{"name": "gpu0", "counters": {"memory": {"value": "8"}}}]
    sizes = [("whole", 8), ("h0", 4), ("h1", 4), ("q0", 2), ("q1", 2), ("q2", 2), ("q3", 2)]
    chosen = rng.sample(sizes, rng.randint(2, len(sizes)))
    devices = [
        {
            "name": name,
            "consumesCounters": [{"counterSet": "gpu0", "counters": {"memory": {"value": str(size)}}}],
        }
        for name, size in chosen
    ]
    return [
        {"metadata": {"name": f"{node}-counters"}, "spec": {**base, "sharedCounters": counters}},
        {"metadata": {"name": f"{node}-parts"}, "spec": {**base, "devices": devices}},
    ]


def consumable_slices(rng: random.Random, node: str) -> list[dict[str, Any]]:
    """GPUs several claims may share (DRAConsumableCapacity, on from 1.36) as a driver publishes
    them with consumable shares: a pool on ``node`` of 1-2 devices with ``allowMultipleAllocations``
    and a memory capacity of 8 units that a share takes 2 or 4 of by default, or all of without a
    request policy; sometimes a second capacity of 2-4 shares taking 1 each."""
    devices = []
    for i in range(rng.randint(1, 2)):
        memory: dict[str, Any] = {"value": "8"}
        if (default := rng.choice([2, 4, None])) is not None:
            memory["requestPolicy"] = {"default": str(default), "validRange": {"min": "1"}}
        capacity = {"memory": memory}
        if rng.random() < 0.4:
            capacity["shares"] = {
                "value": str(rng.randint(2, 4)),
                "requestPolicy": {"default": "1", "validValues": ["1"]},
            }
        devices.append({"name": f"s{i}", "allowMultipleAllocations": True, "capacity": capacity})
    spec = {
        "driver": G_DRIVER,
        "nodeName": node,
        "pool": {"name": f"{node}-share", "generation": 1, "resourceSliceCount": 1},
    }
    return [{"metadata": {"name": f"{node}-share"}, "spec": {**spec, "devices": devices}}]


def _zone_selector(batch: str, zone: str) -> dict[str, Any]:
    exprs = [
        {"key": "batch", "operator": "In", "values": [batch]},
        {"key": "zone", "operator": "In", "values": [zone]},
    ]
    return {"nodeSelectorTerms": [{"matchExpressions": exprs}]}


def shared_slices(rng: random.Random, batch: str, names: list[str]) -> list[dict[str, Any]]:
    """Slices whose devices several of the batch's nodes reach: one for a zone's nodes (a node
    selector), and one whose devices each name their own nodes (perDeviceNodeSelection: a node,
    a zone, or, rarely, every node)."""
    out = []
    pool = {"generation": 1, "resourceSliceCount": 1}
    if rng.random() < 0.35:
        devices = [{"name": f"z{i}"} for i in range(rng.randint(1, 2))]
        spec = {"driver": G_DRIVER, "nodeSelector": _zone_selector(batch, rng.choice("abc"))}
        body = {**spec, "pool": {"name": f"{batch}-zone", **pool}, "devices": devices}
        out.append({"metadata": {"name": f"{batch}-zone"}, "spec": body})
    if rng.random() < 0.25:
        devices = []
        for i in range(rng.randint(1, 3)):
            roll = rng.random()
            where: dict[str, Any]
            if roll < 0.45:
                where = {"nodeName": rng.choice(names)}
            elif roll < 0.9:
                where = {"nodeSelector": _zone_selector(batch, rng.choice("abc"))}
            else:
                where = {"allNodes": True}
            devices.append({"name": f"p{i}", **where})
        spec = {"driver": G_DRIVER, "perDeviceNodeSelection": True, "pool": {"name": f"{batch}-each", **pool}}
        out.append({"metadata": {"name": f"{batch}-each"}, "spec": {**spec, "devices": devices}})
    return out


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


def pod_body(
    rng: random.Random, name: str, batch: str, names: list[str], dra: bool = False
) -> dict[str, Any]:
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
        if req and rng.random() < 0.25:  # limits only: the API server defaults requests from them,
            return {"limits": {**req, **ext}}  # before LimitRanger fills what is still missing
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
