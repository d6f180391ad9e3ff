"""The agreement harness's side of the cluster: the objects admission reads, waiting for the
scheduler's outcome and the cache, playing the kubelet's part of an in-place resize by hand
(kwok does not resize), and the DRA slices and claims as the cache sees them."""

from __future__ import annotations

import random
import time
from typing import Any

import msgspec
from kubernetes import client

from app.domain.accounting import resize_rule
from app.kube.api.watch_wire import server_minor
from app.kube.state.store import Store
from app.kube.wire.decoders import Pod
from app.kube.wire.projections import PodView
from bench.agreement_gen import (
    G_CLASS,
    G_DRIVER,
    LIMIT_RANGE,
    LIMITED,
    NOT_READY,
    NOT_READY_LABEL,
    RUNTIME_CLASSES,
    G,
)


def outcome(core: client.CoreV1Api, name: str, ns: str, timeout: float = 30.0) -> str | None:
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


def wait(check: Any, timeout: float = 15.0, what: Any = lambda: "") -> None:
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


def resizable(body: dict[str, Any]) -> bool:
    """A pod whose first container asks for cpu itself (not at pod level): its cpu can be resized."""
    spec = body["spec"]
    return "resources" not in spec and "cpu" in spec["containers"][0]["resources"].get("requests", {})


def resize(api: client.ApiClient, store: Store, rng: random.Random, body: dict[str, Any]) -> bool:
    """Resize a bound pod's first container's cpu in place (False: the API server refused the
    resize), and play the kubelet's part by hand
    (kwok does not resize): report what it allocated and runs with, in progress, refused as
    Infeasible, or done. The scheduler then counts the larger of spec and what is reported
    (spec left out while Infeasible), as the model does; the next cases meet that."""
    core = client.CoreV1Api(api)
    name, ns, spec = body["metadata"]["name"], body["metadata"]["namespace"], body["spec"]
    first = spec["containers"][0]
    before = first["resources"]["requests"]
    wait(lambda: core.read_namespaced_pod_status(name, ns).status.phase == "Running", timeout=30)

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
    wait(lambda: (p := store.objects.pod(ns, name)) is not None and p.requests == expected)
    return True


def slices_seen(store: Store, names: list[str]) -> bool:
    return store.devices.read(lambda d: all(("", n) in d.slices for n in names))


def claim_held(store: Store, pod: str) -> bool:
    """The claim the scheduler made for the pod holds its devices, as the cache sees it."""
    return store.devices.read(lambda d: any(pod in c.pods and c.held for c in d.claims.values()))


def served(api: client.ApiClient) -> bool:
    try:
        client.ResourceV1Api(api).read_device_class(G_CLASS)
    except client.ApiException:
        return False
    return True


def message(core: client.CoreV1Api, name: str, ns: str) -> str:
    try:
        pod = core.read_namespaced_pod(name, ns)
    except client.ApiException:
        return ""
    return " ".join(c.message or "" for c in pod.status.conditions or ())


def make_nodes(
    api: client.ApiClient, store: Store, nodes: list[dict[str, Any]], slices: list[dict[str, Any]]
) -> None:
    """Create the nodes and their slices; wait until kwok has reported each Ready (or NotReady,
    and the node lifecycle controller has tainted it, NoSchedule and NoExecute) and the cache has
    seen each as it is now, then a moment for the scheduler's own informers."""
    core, resource = client.CoreV1Api(api), client.ResourceV1Api(api)
    for body in nodes:
        core.create_node(body)
    for body in list(slices):
        try:
            resource.create_resource_slice(body)
        except client.ApiException as exc:
            # per-device node selection and counter sets need DRAPartitionableDevices (on from
            # 1.36): where it is off, the slice is not made (its pool then stays incomplete)
            partitionable = any(body["spec"].get(k) for k in ("perDeviceNodeSelection", "sharedCounters"))
            if exc.status != 422 or not partitionable:
                raise
            slices.remove(body)
    wait(lambda: slices_seen(store, [s["metadata"]["name"] for s in slices]))

    def settled(body: dict[str, Any]) -> bool:
        name = body["metadata"]["name"]
        view = store.objects.node(name)
        if view is None:
            return False
        effects = {t.effect for t in view.taints if t.key == NOT_READY}
        if NOT_READY_LABEL in view.labels:
            return effects == {"NoSchedule", "NoExecute"}
        conditions = core.read_node_status(name).status.conditions or ()
        return not effects and any(c.type == "Ready" and c.status == "True" for c in conditions)

    def unsettled() -> str:
        """What the nodes still waited for show, for the timeout's message."""
        out = []
        for body in nodes:
            if not settled(body):
                name = body["metadata"]["name"]
                view = store.objects.node(name)
                taints = [f"{t.key}:{t.effect}" for t in view.taints] if view else "not in the cache"
                ready = [
                    c.status for c in core.read_node_status(name).status.conditions or () if c.type == "Ready"
                ]
                out.append(f"{name} (taints {taints}, Ready {ready})")
        return "; ".join(out)

    wait(lambda: all(map(settled, nodes)), timeout=60, what=unsettled)
    docs = [api.sanitize_for_serialization(core.read_node(b["metadata"]["name"])) for b in nodes]

    def seen(doc: dict[str, Any]) -> bool:
        view = store.objects.node(doc["metadata"]["name"])
        return view is not None and view.resource_version == doc["metadata"]["resourceVersion"]

    wait(lambda: all(map(seen, docs)))
    time.sleep(1.0)  # let the scheduler's own informers see the nodes too


def remove_nodes(
    api: client.ApiClient, store: Store, nodes: list[dict[str, Any]], slices: list[dict[str, Any]]
) -> None:
    core, resource = client.CoreV1Api(api), client.ResourceV1Api(api)
    for body in slices:
        resource.delete_resource_slice(body["metadata"]["name"])
    for body in nodes:
        core.delete_node(body["metadata"]["name"])
    wait(lambda: not any(store.objects.node(b["metadata"]["name"]) for b in nodes))
