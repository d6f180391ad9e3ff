"""The GPU stack people run, published on kwok nodes the way run-ai/fake-gpu-operator (0.2.0,
Apache-2.0) publishes it, written with this test bed's own code: the shapes were read from the
simulator's public source; nothing of it is copied or built here.

What the simulator publishes, and so what this does:

* its kwok device plugin merge-patches a node's status: ``nvidia.com/gpu`` (the GPU count) and
  its "other devices" (MIG profiles such as ``nvidia.com/mig-1g.10gb``) in both capacity and
  allocatable, as its own field manager (``DEVICE_PLUGIN_MANAGER``): the kubelet's part, played
  by hand here as kwok does not run device plugins;
* its status updater labels the node ``nvidia.com/gpu.product``, ``nvidia.com/gpu.count`` and
  ``nvidia.com/gpu.memory`` (MiB);
* its kwok DRA plugin publishes one ResourceSlice per node, ``kwok-<node>-gpu``, driver
  ``gpu.nvidia.com``, pool named after the node, one device per GPU named by its lower-cased
  UUID, with attributes ``uuid`` and ``model`` (unqualified) and ``gpu.nvidia.com/type`` = "gpu",
  ``gpu.nvidia.com/uuid``, ``gpu.nvidia.com/productName``, and capacity ``memory`` in bytes;
* its chart's DeviceClass ``gpu.nvidia.com`` selects ``device.driver == 'gpu.nvidia.com' &&
  device.attributes['gpu.nvidia.com'].type == 'gpu'`` and, on resource.k8s.io/v1, names
  ``extendedResourceName: nvidia.com/gpu``, as NVIDIA's DRA driver does.
"""

from __future__ import annotations

import hashlib
from typing import Any

from kubernetes import client

from app.kube.api import raw

DRIVER = "gpu.nvidia.com"
GPU = "nvidia.com/gpu"
DEVICE_CLASS = "gpu.nvidia.com"
DEVICE_PLUGIN_MANAGER = "kwok-gpu-device-plugin"  # the simulator's client names itself so
PRODUCT = "NVIDIA-H100-80GB-HBM3"
MEMORY_MIB = 81_559  # an H100 80GB's memory as nvidia-smi reports it
MERGE_PATCH = "application/merge-patch+json"
SELECTOR = f"device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].type == 'gpu'"


def gpu_uuid(node: str, index: int) -> str:
    """A GPU's UUID, stable per node and index (the simulator draws random ones)."""
    h = hashlib.sha1(f"{node}/{index}".encode()).hexdigest()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def device_plugin(api: client.ApiClient, node: str, gpus: int, others: dict[str, int] | None = None) -> None:
    """The device plugin's status write (the kubelet's part, by hand): ``gpus`` and the other
    devices (MIG profiles) in capacity and allocatable, as one merge patch of ``/status``."""
    counts = {GPU: str(gpus), **{k: str(v) for k, v in (others or {}).items()}}
    patch = {"status": {"capacity": counts, "allocatable": counts}}
    path, query = f"/api/v1/nodes/{node}/status", {"fieldManager": DEVICE_PLUGIN_MANAGER}
    raw.call(api, "PATCH", path, 30, query=query, payload=patch, content_type=MERGE_PATCH)


def gpu_labels(
    api: client.ApiClient, node: str, gpus: int, product: str = PRODUCT, memory_mib: int = MEMORY_MIB
) -> None:
    """The status updater's labels of a GPU node."""
    labels = {"nvidia.com/gpu.product": product, "nvidia.com/gpu.count": str(gpus)}
    labels["nvidia.com/gpu.memory"] = str(memory_mib)
    body = {"metadata": {"labels": labels}}
    raw.call(api, "PATCH", f"/api/v1/nodes/{node}", 30, payload=body, content_type=MERGE_PATCH)


def slice_body(node: str, gpus: int, product: str = PRODUCT, memory_mib: int = MEMORY_MIB) -> dict[str, Any]:
    """The kwok DRA plugin's ResourceSlice of one node."""
    devices = []
    for i in range(gpus):
        uuid = gpu_uuid(node, i)
        devices.append(
            {
                "name": uuid.lower(),
                "attributes": {
                    "uuid": {"string": uuid},
                    "model": {"string": product},
                    f"{DRIVER}/type": {"string": "gpu"},
                    f"{DRIVER}/uuid": {"string": uuid},
                    f"{DRIVER}/productName": {"string": product},
                },
                "capacity": {"memory": {"value": str(memory_mib * 1024 * 1024)}},
            }
        )
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"kwok-{node}-gpu"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def dra_driver(
    api: client.ApiClient, node: str, gpus: int, product: str = PRODUCT, memory_mib: int = MEMORY_MIB
) -> None:
    """The kwok DRA plugin publishing a node's GPUs, through the API as a driver does."""
    body = slice_body(node, gpus, product, memory_mib)
    raw.call(api, "POST", "/apis/resource.k8s.io/v1/resourceslices", 30, payload=body)


def device_class(api: client.ApiClient) -> None:
    """The DeviceClass ``gpu.nvidia.com`` serving ``nvidia.com/gpu`` (created once; there already: kept)."""
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": DEVICE_CLASS},
        "spec": {"selectors": [{"cel": {"expression": SELECTOR}}], "extendedResourceName": GPU},
    }
    try:
        raw.call(api, "POST", "/apis/resource.k8s.io/v1/deviceclasses", 30, payload=body)
    except client.ApiException as exc:
        if exc.status != 409:
            raise


def remove(api: client.ApiClient, nodes: list[str]) -> None:
    """The slices of ``nodes`` and the DeviceClass, gone (a test's clean-up)."""
    for path in [f"/apis/resource.k8s.io/v1/resourceslices/kwok-{n}-gpu" for n in nodes] + [
        f"/apis/resource.k8s.io/v1/deviceclasses/{DEVICE_CLASS}"
    ]:
        try:
            raw.call(api, "DELETE", path, 30)
        except client.ApiException as exc:
            if exc.status != 404:
                raise
