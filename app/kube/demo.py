"""Seed a demo cluster: nodes with extended resources, pods that use them, pods that cannot fit."""

from __future__ import annotations

import logging
import threading

from kubernetes import client

from app.kube import standin
from app.kube.errors import translate

log = logging.getLogger(__name__)

BASE = {"cpu": "8", "memory": "32Gi", "pods": "110"}
NODES = [
    ("demo-node-1", {"zone": "a", "pool": "general"}, {"example.com/dongle": "4", "acme.io/fpga": "2"}),
    ("demo-node-2", {"zone": "a", "pool": "general"}, {"example.com/dongle": "2"}),
    ("demo-node-3", {"zone": "b", "pool": "gpu"}, {"nvidia.com/gpu": "4", "acme.io/fpga": "1"}),
    ("demo-node-4", {"zone": "b", "pool": "general"}, {}),
]
PODS = [  # name, node (None: let the scheduler decide), requests
    ("dongle-reader-1", "demo-node-1", {"example.com/dongle": "2"}),
    ("dongle-reader-2", "demo-node-1", {"example.com/dongle": "1"}),
    ("dongle-reader-3", "demo-node-2", {"example.com/dongle": "2"}),
    ("fpga-job", "demo-node-1", {"acme.io/fpga": "1"}),
    ("trainer", "demo-node-3", {"nvidia.com/gpu": "3"}),
    ("web", "demo-node-4", {}),
    ("big-dongle-job", None, {"example.com/dongle": "3"}),
    ("quantum-job", None, {"example.com/qubit": "1"}),
]


def node_body(name: str, labels: dict[str, str], extended: dict[str, str]) -> client.V1Node:
    resources = {**BASE, **extended}
    return client.V1Node(
        metadata=client.V1ObjectMeta(name=name, labels={"kubernetes.io/hostname": name, **labels}),
        status=client.V1NodeStatus(capacity=dict(resources), allocatable=dict(resources)),
    )


def pod_body(name: str, node: str | None, requests: dict[str, str]) -> client.V1Pod:
    res = {"cpu": "100m", "memory": "64Mi", **requests}
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={"app": name.rsplit("-", 1)[0]}),
        spec=client.V1PodSpec(
            node_name=node,
            containers=[
                client.V1Container(
                    name="main",
                    image="registry.example/demo:1",
                    resources=client.V1ResourceRequirements(requests=res, limits=dict(requests)),
                )
            ],
        ),
    )


def seed(api: client.ApiClient, namespace: str = "default") -> None:
    core = client.CoreV1Api(api)
    for name, labels, extended in NODES:
        try:
            core.create_node(node_body(name, labels, extended))
        except client.ApiException as exc:
            if exc.status != 409:
                raise
    for name, node, requests in PODS:
        try:
            core.create_namespaced_pod(namespace, pod_body(name, node, requests))
        except client.ApiException as exc:
            if exc.status != 409:
                raise


def run_standin(api: client.ApiClient, stop: threading.Event, interval: float = 2.0) -> threading.Thread:
    """Keep the kubelet stand-in going in the background until ``stop`` is set."""
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
