"""Creating nodes and pods on the real API server, and reading numbers off pages."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from bs4 import BeautifulSoup
from kubernetes import client

from app.web.process import of as process_of
from extres_demo import standin
from tests.helpers import eventually

BASE = {"cpu": "4", "memory": "8Gi", "pods": "110"}


def create_node(
    core: client.CoreV1Api,
    name: str,
    extended: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    allocatable: dict[str, str] | None = None,
) -> None:
    capacity = {**BASE, **(extended or {})}
    body = client.V1Node(
        metadata=client.V1ObjectMeta(name=name, labels=labels or {}),
        status=client.V1NodeStatus(
            capacity=capacity,
            allocatable={**BASE, **(allocatable if allocatable is not None else extended or {})},
        ),
    )
    core.create_node(body)


def container(name: str = "main", requests: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    requests = requests or {}
    extended = {k: v for k, v in requests.items() if "/" in k}
    return {
        "name": name,
        "image": "registry.example/test:1",
        "resources": {"requests": requests, "limits": extended},
        **extra,
    }


def create_pod(
    core: client.CoreV1Api,
    name: str,
    node: str | None,
    requests: dict[str, str] | None = None,
    namespace: str = "default",
    **spec: Any,
) -> None:
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [container(requests=requests)], **spec},
    }
    if node:
        body["spec"]["nodeName"] = node
    core.create_namespaced_pod(namespace, body)


def workload(
    admin_api: client.ApiClient,
    kind: str,
    name: str,
    node: str,
    requests: dict[str, str],
    replicas: int = 1,
    namespace: str = "default",
    **pod_meta: Any,
) -> None:
    """A Deployment, StatefulSet or Job whose pods the controllers make, pinned to ``node``."""
    labels = {"app": name}
    template: dict[str, Any] = {
        "metadata": {"labels": labels, **pod_meta},
        "spec": {
            "nodeSelector": {"kubernetes.io/hostname": node},
            "containers": [container(requests=requests)],
        },
    }
    spec = {"replicas": replicas, "selector": {"matchLabels": labels}, "template": template}
    apps, batch = client.AppsV1Api(admin_api), client.BatchV1Api(admin_api)
    if kind == "Deployment":
        apps.create_namespaced_deployment(namespace, {"metadata": {"name": name}, "spec": spec})
    elif kind == "StatefulSet":
        apps.create_namespaced_stateful_set(
            namespace, {"metadata": {"name": name}, "spec": {**spec, "serviceName": name}}
        )
    else:
        template["spec"]["restartPolicy"] = "Never"
        batch.create_namespaced_job(namespace, {"metadata": {"name": name}, "spec": {"template": template}})


def set_pod_phase(core: client.CoreV1Api, name: str, phase: str, namespace: str = "default") -> None:
    """Write a pod's phase as its kubelet would (a test playing the kubelet's part). kwok starts a
    bound pod first: wait for that, so that kwok's write never lands after this one."""
    if core.read_namespaced_pod(name, namespace).spec.node_name:
        eventually(lambda: core.read_namespaced_pod_status(name, namespace).status.phase == "Running")
    core.patch_namespaced_pod_status(name, namespace, {"status": {"phase": phase}})


def grid_cells(html: str) -> dict[tuple[str, str, str], str]:
    """(node, resource, field) -> text, from the overview grid; node '*' is the totals row."""
    soup = BeautifulSoup(html, "html.parser")
    cells: dict[tuple[str, str, str], str] = {}
    for tr in soup.select("#grid tbody tr[data-node]"):
        for td in tr.select("td[data-resource]"):
            cells[(tr["data-node"], td["data-resource"], td.get("data-field", "none"))] = td.get_text(
                strip=True
            )
    for td in soup.select("#grid tfoot tr.totals td[data-resource]"):
        cells[("*", td["data-resource"], td["data-field"])] = td.get_text(strip=True)
    return cells


def node_cells(html: str) -> dict[tuple[str, str], str]:
    """(resource, field) -> text, from a node page's resource tables."""
    soup = BeautifulSoup(html, "html.parser")
    return {
        (tr["data-resource"], td["data-field"]): td.get_text(strip=True)
        for tr in soup.select("table.resources tr[data-resource]")
        for td in tr.select("td[data-field]")
    }


def ready(core: client.CoreV1Api, *names: str, timeout: float = 30.0) -> None:
    """Wait until kwok has made each node Ready and the node lifecycle controller has lifted its
    not-ready taint: until then the scheduler will not place a pod there."""

    def all_ready() -> bool:
        for name in names:
            node = core.read_node(name)
            conditions = {c.type: c.status for c in node.status.conditions or ()}
            if conditions.get("Ready") != "True" or any(
                t.key == "node.kubernetes.io/not-ready" for t in node.spec.taints or ()
            ):
                return False
        return True

    eventually(all_ready, timeout=timeout)


def kubelet_standin(core: client.CoreV1Api, *names: str) -> None:
    """Nodes Ready and untainted (kwok and the node lifecycle controller), and their extended
    capacity copied to allocatable, the one kubelet step kwok does not take (extres_demo.standin)."""
    ready(core, *names)
    for name in names:
        standin.sync_node(core, core.api_client.sanitize_for_serialization(core.read_node(name)))


def own_resource(uid: str, letter: str = "t") -> str:
    """An extended resource name no other test uses, so other tests' nodes never compete."""
    return f"{letter}{uid[-6:].strip('-')}.example.com/dongle".replace("--", "-")


def snapshot(core: client.CoreV1Api, node: str, settle: bool = True) -> tuple[str, dict[str, str]]:
    """A node's resourceVersion and capacity: equal before and after means nothing changed. Read
    once kwok has made the node Ready, so that its own writes are done (its next heartbeat is
    minutes away); ``settle=False`` on a bare control plane, where no kwok runs."""
    if settle:
        ready(core, node)
    n = core.read_node(node)
    return n.metadata.resource_version, n.status.capacity


@contextlib.contextmanager
def api_calls(app: Any) -> Iterator[list[tuple[str, str]]]:
    """The (method, url) of every API call this thread makes through the app's client meanwhile
    (the cache's watches use the same client from their own threads, and are not counted)."""
    rest = process_of(app).local.cluster.api.rest_client
    calls: list[tuple[str, str]] = []
    original = rest.request
    me = threading.get_ident()

    def counting(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() == me:
            calls.append((method, url))
        return original(method, url, *args, **kwargs)

    rest.request = counting
    try:
        yield calls
    finally:
        rest.request = original


def pending_card(web: Any, resource: str, key: str, timeout: float = 60) -> str:
    """The HTML of pending pod ``key``'s card (``namespace/name``) on the pending page filtered by
    ``resource``, once it is there (from just after its ``data-pod`` attribute)."""
    page = eventually(
        lambda: (
            (h := web.get(f"/pending/?resource={resource}").get_data(as_text=True))
            and f'data-pod="{key}"' in h
            and h
        ),
        timeout=timeout,
    )
    return page.split(f'data-pod="{key}"', 1)[1].split("</article>", 1)[0]


def unschedulable_message(core: client.CoreV1Api, name: str, namespace: str = "default") -> str | None:
    """The scheduler's Unschedulable message on a pod, once it has one (None before)."""
    pod = core.read_namespaced_pod(name, namespace)
    return next((c.message for c in pod.status.conditions or () if c.reason == "Unschedulable"), None)


# every DRA test's devices: one driver and a ``model`` attribute, so that each test's classes,
# reading every device on the shared control plane, never err on another's (kube-scheduler fails
# a pod whose class's selector errs on any device)
DRA_DRIVER = "gpu.example.com"


def publish(
    api: client.ApiClient,
    node: str,
    devices: int,
    model: str = "a100",
    tainted: tuple[int, ...] = (),
    shared: dict[str, Any] | None = None,
) -> None:
    """A ResourceSlice for ``node``'s pool, as a DRA driver's kubelet plugin would publish it;
    the devices ``tainted`` names carry a NoSchedule taint; ``shared``: every device may be
    allocated to several claims (consumable capacity), with these capacities."""
    taint = [{"key": "maintenance", "value": "yes", "effect": "NoSchedule"}]
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{DRA_DRIVER}"},
        "spec": {
            "driver": DRA_DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"gpu-{i}",
                    "attributes": {"model": {"string": model}, "index": {"int": i}},
                    **({"taints": taint} if i in tainted else {}),
                    **({"allowMultipleAllocations": True, "capacity": shared} if shared is not None else {}),
                }
                for i in range(devices)
            ],
        },
    }
    client.ResourceV1Api(api).create_resource_slice(body)


def device_class(api: client.ApiClient, name: str, resource: str, expression: str) -> None:
    """A DeviceClass serving ``resource`` (``extendedResourceName``) with one CEL selector."""
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"extendedResourceName": resource, "selectors": [{"cel": {"expression": expression}}]},
    }
    client.ResourceV1Api(api).create_device_class(body)
