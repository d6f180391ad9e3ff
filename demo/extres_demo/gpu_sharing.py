"""GPUs shared by HAMi and by KAI Scheduler, published on kwok nodes as their components write
them, with this test bed's own code (the shapes were read from their public source: HAMi
@4707fb0, KAI-Scheduler @72de64f; app/domain/hami.py and app/domain/kai.py cite the files).

* HAMi's device plugin registers a node's GPUs in the node annotation
  ``hami.io/node-nvidia-register`` (a JSON array of ``{id, index, count, devmem, devcore, type,
  numa, mode, health}``) and advertises ``nvidia.com/gpu`` as the vGPUs (``count`` a GPU); the
  kubelet's part, the node's status, is played by hand here (kwok runs no device plugin). HAMi's
  scheduler patches what it gave a pod into ``hami.io/vgpu-devices-allocated`` (per container
  ``UUID,NVIDIA,MiB,cores:``, ``;`` after each), then binds it: so here, a pod named for
  HAMi's scheduler (no kube-scheduler takes it), patched, then bound through ``pods/binding``.
* KAI's binder makes a reservation pod in ``kai-resource-reservation`` asking ``nvidia.com/gpu:
  1``, labelled ``runai-gpu-group: <group>``, and binds the fraction pods (annotated
  ``gpu-fraction`` or ``gpu-memory``) to its node with the same label.
"""

from __future__ import annotations

import json
from typing import Any

from kubernetes import client

GPU = "nvidia.com/gpu"
HAMI_SCHEDULER = "hami-scheduler"
KAI_SCHEDULER = "kai-scheduler"
RESERVATION_NAMESPACE = "kai-resource-reservation"
GROUP_LABEL = "runai-gpu-group"


def hami_register(uuids: list[str], count: int = 10, mib: int = 40960, model: str = "NVIDIA-A100") -> str:
    """The register annotation HAMi's device plugin writes for GPUs ``uuids``."""
    return json.dumps(
        [
            {
                "id": uuid,
                "index": i,
                "count": count,
                "devmem": mib,
                "devcore": 100,
                "type": model,
                "numa": 0,
                "mode": "hami-core",
                "health": True,
            }
            for i, uuid in enumerate(uuids)
        ]
    )


def hami_node(core: client.CoreV1Api, node: str, uuids: list[str], count: int = 10) -> None:
    """``node``'s GPUs registered as HAMi's device plugin does; its status (the kubelet's part)
    advertises the vGPUs."""
    core.patch_node(
        node, {"metadata": {"annotations": {"hami.io/node-nvidia-register": hami_register(uuids, count)}}}
    )
    vgpus = str(count * len(uuids))
    core.patch_node_status(node, {"status": {"capacity": {GPU: vgpus}, "allocatable": {GPU: vgpus}}})


def _pod(name: str, namespace: str, scheduler: str, requests: dict[str, str], **meta: Any) -> Any:
    """A pod's body as its scheduler's client sends it (the client takes a dict for a V1Pod)."""
    container = {
        "name": "c",
        "image": "registry.example/x:1",
        "resources": {"requests": requests, "limits": requests},
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, **meta},
        "spec": {"schedulerName": scheduler, "containers": [container], "terminationGracePeriodSeconds": 0},
    }


def _bind(core: client.CoreV1Api, name: str, namespace: str, node: str) -> None:
    body: Any = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node}}  # fmt: skip
    core.create_namespaced_pod_binding(name, namespace, body, _preload_content=False)


def hami_pod(
    core: client.CoreV1Api,
    name: str,
    node: str,
    given: list[tuple[str, int, int]],
    namespace: str = "default",
) -> None:
    """A pod HAMi's scheduler placed: one vGPU on each GPU of ``given`` (uuid, MiB, cores)."""
    requests = {GPU: str(len(given)), "nvidia.com/gpumem": str(given[0][1])}
    core.create_namespaced_pod(namespace, _pod(name, namespace, HAMI_SCHEDULER, requests))
    allocated = "".join(f"{uuid},NVIDIA,{mib},{cores}:" for uuid, mib, cores in given) + ";"
    core.patch_namespaced_pod(
        name, namespace, {"metadata": {"annotations": {"hami.io/vgpu-devices-allocated": allocated}}}
    )
    _bind(core, name, namespace, node)


def kai_group(
    core: client.CoreV1Api,
    node: str,
    group: str,
    fractions: dict[str, dict[str, str]],
    namespace: str = "default",
) -> None:
    """A GPU KAI shares on ``node``: its reservation pod, and a pod per ``fractions`` entry (its
    name: its annotations, ``gpu-fraction`` or ``gpu-memory``), each bound there as KAI's binder
    binds them."""
    label = {"labels": {GROUP_LABEL: group}}
    reservation = f"gpu-reservation-{node}-{group}"[:63]
    core.create_namespaced_pod(
        RESERVATION_NAMESPACE, _pod(reservation, RESERVATION_NAMESPACE, KAI_SCHEDULER, {GPU: "1"}, **label)
    )
    _bind(core, reservation, RESERVATION_NAMESPACE, node)
    for name, said in fractions.items():
        core.create_namespaced_pod(
            namespace, _pod(name, namespace, KAI_SCHEDULER, {"cpu": "100m"}, annotations=said, **label)
        )
        _bind(core, name, namespace, node)


def reservation_namespace(core: client.CoreV1Api) -> None:
    """KAI's reservation namespace, made once."""
    try:
        namespace: Any = {"metadata": {"name": RESERVATION_NAMESPACE}}
        core.create_namespace(namespace)
    except client.ApiException as exc:
        if exc.status != 409:
            raise
