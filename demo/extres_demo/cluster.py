"""Seed a demo cluster: nodes with extended resources, and workloads that the controllers turn
into pods (some of which cannot fit).

The first story is the classic walkthrough of extended resources: demo-node-4 advertises
``wgh/extended-cpu: 2`` and the Deployment ``nginx-deployment`` asks for 3, so its pod stays
Pending until the request is lowered to 2 (or a node advertises 3).

Two kinds of GPU sit side by side: demo-node-3 advertises ``nvidia.com/gpu`` in its status, as a
device plugin would; demo-node-5 and demo-node-6 have no GPU in their status, but a DRA driver
(``gpu.example.com``: the demo publishes its ResourceSlices, as the driver's kubelet plugin would)
offers four devices on each, and the DeviceClass ``example-gpu`` serves them as
``example.com/gpu`` (Kubernetes 1.34+ with DRAExtendedResource: on by default from 1.36).

demo-node-7's two GPUs are held by a notebook that leaves them idle, while the trainer on
demo-node-3 keeps its three busy: with Debian's prometheus installed the demo runs the
dcgm-exporter stand-in and a Prometheus scraping it, and the Idle GPUs page names the notebook.

demo-node-8 shares two GPUs four ways under MPS (``nvidia.com/gpu.shared: 8``, with the labels
NVIDIA's GPU feature discovery writes), and one of them is lost: 4 of its 8 shares unhealthy.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any

from kubernetes import client

from app.kube.api.errors import translate
from extres_demo import standin
from extres_demo.dcgm_standin import UTILIZATION_ANNOTATION
from extres_demo.standin import UNHEALTHY

log = logging.getLogger(__name__)

WALKTHROUGH = "wgh/extended-cpu"
SEEDER = "extres-demo"  # the field manager of what the demo creates, as the history names it
BASE = {"cpu": "8", "memory": "32Gi", "pods": "110"}
# demo-node-8 shares its 2 GPUs 4 ways under MPS, renamed (as NVIDIA's device plugin does with
# renameByDefault): nvidia.com/gpu.shared 8 beside nvidia.com/gpu 0, with the labels its GPU
# feature discovery writes (keys under the original name; NVIDIA/k8s-device-plugin
# internal/lm/resource.go). One of its GPUs is lost: the device plugin (the stand-in plays it,
# extres_demo.standin) reports its 4 shares unhealthy, so allocatable is 4.
SHARED_GPU = "nvidia.com/gpu.shared"
SHARED_LABELS = {
    "nvidia.com/gpu.count": "2",
    "nvidia.com/gpu.replicas": "4",
    "nvidia.com/gpu.sharing-strategy": "mps",
    "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB",
    "nvidia.com/mps.capable": "true",
}
LOST = {"demo-node-8": {SHARED_GPU: 4}}
NODES = [
    ("demo-node-1", {"zone": "a", "pool": "general"}, {"example.com/dongle": "4", "acme.io/fpga": "2"}),
    ("demo-node-2", {"zone": "a", "pool": "general"}, {"example.com/dongle": "2"}),
    ("demo-node-3", {"zone": "b", "pool": "gpu"}, {"nvidia.com/gpu": "4", "acme.io/fpga": "1"}),
    ("demo-node-4", {"zone": "b", "pool": "general"}, {WALKTHROUGH: "2"}),
    ("demo-node-5", {"zone": "c", "pool": "dra"}, {}),
    ("demo-node-6", {"zone": "c", "pool": "dra"}, {}),
    ("demo-node-7", {"zone": "b", "pool": "gpu"}, {"nvidia.com/gpu": "2"}),
    (
        "demo-node-8",
        {"zone": "b", "pool": "shared-gpu", **SHARED_LABELS},
        {"nvidia.com/gpu": "0", SHARED_GPU: "8"},
    ),
    ("demo-node-9", {"zone": "c", "pool": "dra-shared"}, {}),
]
DRA_DRIVER, DRA_RESOURCE, DRA_MODEL = "gpu.example.com", "example.com/gpu", "h100"
DRA_NODES = ("demo-node-5", "demo-node-6")
DRA_DEVICES = 4  # per node
# demo-node-9's two GPUs are shared through DRA (consumable capacity, on from Kubernetes 1.36): each
# may be allocated to several claims, a share taking 20 of its 80 GiB unless it asks (4 shares a
# GPU), as NVIDIA's DRA driver publishes GPUs with consumable shares; its own DeviceClass serves
# them as DRA_SHARED_RESOURCE
DRA_SHARED_NODE, DRA_SHARED_RESOURCE, DRA_SHARED_DEVICES = "demo-node-9", "example.com/gpu-share", 2
# kind, name, replicas, node (None: the scheduler decides), extended requests (= limits)
WORKLOADS: list[tuple[str, str, int, str | None, dict[str, str]]] = [
    ("Deployment", "nginx-deployment", 1, None, {WALKTHROUGH: "3"}),  # Pending: the walkthrough
    ("Deployment", "dongle-reader", 3, "demo-node-1", {"example.com/dongle": "1"}),
    ("Deployment", "dongle-writer", 1, "demo-node-2", {"example.com/dongle": "2"}),
    ("StatefulSet", "fpga-db", 1, "demo-node-1", {"acme.io/fpga": "1"}),
    ("Deployment", "trainer", 1, None, {"nvidia.com/gpu": "3"}),
    ("Deployment", "gpu-eval", 1, None, {"nvidia.com/gpu": "3"}),  # Pending: 1 GPU left, a device plugin's
    ("DaemonSet", "node-agent", 1, None, {}),
    ("Job", "nightly-report", 1, None, {}),  # runs, then completes
    ("Job", "big-dongle-job", 1, None, {"example.com/dongle": "3"}),  # Pending: no node has 3 free
    ("Deployment", "qubit-sim", 1, None, {"example.com/qubit": "1"}),  # Pending: no node has any
    ("Deployment", "inference", 2, None, {DRA_RESOURCE: "2"}),  # DRA devices, allocated by the scheduler
    ("Job", "finetune", 1, None, {DRA_RESOURCE: "5"}),  # Pending: no node has 5 devices
    ("StatefulSet", "notebook", 1, "demo-node-7", {"nvidia.com/gpu": "2"}),  # holds 2 GPUs, idle
    ("Deployment", "tutoring", 3, None, {DRA_SHARED_RESOURCE: "1"}),  # a share of a shared GPU each
]
# GPU utilization of each workload's pods, for the dcgm-exporter stand-in (extres_demo.dcgm_standin):
# the trainer (or gpu-eval, whichever the scheduler places) keeps its GPUs busy, the notebook
# holds two and idles (the Idle GPUs page shows it)
UTILIZATION = {"trainer": "70-95", "gpu-eval": "60-90", "notebook": "0-3"}
# the teams the GPU workloads' pods are labelled with (the GPU-hours page groups by them)
TEAM_LABEL = "team"
TEAMS = {"trainer": "research", "gpu-eval": "research", "notebook": "platform"}


def node_body(name: str, labels: dict[str, str], extended: dict[str, str]) -> client.V1Node:
    resources = {**BASE, **extended}
    lost = LOST.get(name, {})
    allocatable = {k: str(int(v) - lost[k]) if k in lost else v for k, v in resources.items()}
    annotations = {UNHEALTHY: json.dumps(lost)} if lost else None
    return client.V1Node(
        metadata=client.V1ObjectMeta(
            name=name, labels={"kubernetes.io/hostname": name, **labels}, annotations=annotations
        ),
        status=client.V1NodeStatus(capacity=dict(resources), allocatable=allocatable),
    )


def workload_body(kind: str, name: str, replicas: int, node: str | None, extended: dict[str, str]) -> Any:
    labels = {"app": name}
    pod_spec: dict[str, Any] = {
        "containers": [
            {
                "name": "main",
                "image": "nginx:1.29" if name.startswith("nginx") else "registry.example/demo:1",
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi", **extended}, "limits": extended},
            }
        ]
    }
    if node:
        pod_spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    meta: dict[str, Any] = {"labels": {**labels, TEAM_LABEL: TEAMS[name]} if name in TEAMS else labels}
    if name in UTILIZATION:
        meta["annotations"] = {UTILIZATION_ANNOTATION: UTILIZATION[name]}
    template = {"metadata": meta, "spec": pod_spec}
    spec: dict[str, Any] = {"selector": {"matchLabels": labels}, "template": template}
    if kind == "Job":
        pod_spec["restartPolicy"] = "Never"
        spec = {"template": template, "backoffLimit": 0}
    elif kind == "StatefulSet":
        spec |= {"replicas": replicas, "serviceName": name}
    elif kind != "DaemonSet":
        spec["replicas"] = replicas
    group = "batch/v1" if kind == "Job" else "apps/v1"
    return {"apiVersion": group, "kind": kind, "metadata": {"name": name, "labels": labels}, "spec": spec}


def _creators(api: client.ApiClient) -> dict[str, Callable[[str, Any], Any]]:
    apps, batch = client.AppsV1Api(api), client.BatchV1Api(api)
    return {
        "Deployment": apps.create_namespaced_deployment,
        "StatefulSet": apps.create_namespaced_stateful_set,
        "DaemonSet": apps.create_namespaced_daemon_set,
        "Job": batch.create_namespaced_job,
    }


def seed(api: client.ApiClient, namespace: str = "default") -> None:
    """Create the nodes and workloads; what exists already is left as it is."""
    core = client.CoreV1Api(api)
    create = _creators(api)
    for name, labels, extended in NODES:
        _unless_exists(core.create_node, node_body(name, labels, extended), field_manager=SEEDER)
    seed_dra(api)
    for kind, name, replicas, node, extended in WORKLOADS:
        _unless_exists(
            create[kind], namespace, workload_body(kind, name, replicas, node, extended), field_manager=SEEDER
        )


def seed_dra(api: client.ApiClient) -> bool:
    """The DeviceClass and the ResourceSlices; False where resource.k8s.io/v1 is not served."""
    dra = client.ResourceV1Api(api)
    model = f'device.attributes["{DRA_DRIVER}"].model == "{DRA_MODEL}"'
    try:
        _unless_exists(
            dra.create_device_class,
            {
                "metadata": {"name": "example-gpu"},
                "spec": {"extendedResourceName": DRA_RESOURCE, "selectors": [{"cel": {"expression": model}}]},
            },
        )
    except client.ApiException as exc:
        if exc.status == 404:
            log.info("this API server does not serve resource.k8s.io/v1: no DRA devices in the demo")
            return False
        raise
    for node in DRA_NODES:
        devices = [
            {"name": f"gpu-{i}", "attributes": {"model": {"string": DRA_MODEL}, "index": {"int": i}},
             "capacity": {"memory": {"value": "80Gi"}}}
            for i in range(DRA_DEVICES)
        ]  # fmt: skip
        body = {
            "metadata": {"name": f"{node}-{DRA_DRIVER}"},
            "spec": {
                "driver": DRA_DRIVER,
                "nodeName": node,
                "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                "devices": devices,
            },
        }
        _unless_exists(dra.create_resource_slice, body)
    _seed_shared(dra)
    return True


def _seed_shared(dra: client.ResourceV1Api) -> None:
    """demo-node-9's shared GPUs and the class serving them (an API server without consumable
    capacity drops ``allowMultipleAllocations``: the GPUs are then whole devices)."""
    model = f'device.attributes["{DRA_DRIVER}"].model == "{DRA_MODEL}-shared"'
    spec = {"extendedResourceName": DRA_SHARED_RESOURCE, "selectors": [{"cel": {"expression": model}}]}
    _unless_exists(dra.create_device_class, {"metadata": {"name": "example-gpu-shared"}, "spec": spec})
    memory = {"value": "80Gi", "requestPolicy": {"default": "20Gi", "validRange": {"min": "1Gi"}}}
    devices = [
        {"name": f"gpu-{i}", "allowMultipleAllocations": True, "capacity": {"memory": memory},
         "attributes": {"model": {"string": f"{DRA_MODEL}-shared"}, "index": {"int": i}}}
        for i in range(DRA_SHARED_DEVICES)
    ]  # fmt: skip
    pool = {"name": DRA_SHARED_NODE, "generation": 1, "resourceSliceCount": 1}
    body = {
        "metadata": {"name": f"{DRA_SHARED_NODE}-{DRA_DRIVER}"},
        "spec": {"driver": DRA_DRIVER, "nodeName": DRA_SHARED_NODE, "pool": pool, "devices": devices},
    }
    _unless_exists(dra.create_resource_slice, body)


def _unless_exists(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    try:
        fn(*args, **kwargs)
    except client.ApiException as exc:
        if exc.status != 409:
            raise


def run_standin(api: client.ApiClient, stop: threading.Event, interval: float = 2.0) -> threading.Thread:
    """Keep allocatable following capacity (extres_demo.standin) until ``stop`` is set."""
    core = client.CoreV1Api(api)

    def loop() -> None:
        while not stop.is_set():
            try:
                standin.sync_once(core)
            except Exception as exc:  # noqa: BLE001 - keep the stand-in alive across API hiccups
                log.warning("kubelet stand-in: %s", translate(exc).message)
            stop.wait(interval)

    thread = threading.Thread(target=loop, name="extres-kubelet-standin", daemon=True)
    thread.start()
    return thread
