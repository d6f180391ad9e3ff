"""The demo's queues (with ``EXTRES_DEMO_QUEUES=1``: Kueue runs beside the demo cluster): a
ResourceFlavor for the GPU nodes (pool=gpu), a ClusterQueue with a nominal quota of 2
``nvidia.com/gpu``, LocalQueues in two namespaces, and three Jobs: one admitted and running, one
admitted that no node takes (the GPUs are held outside the queue), one waiting for quota."""

from __future__ import annotations

from typing import Any

from kubernetes import client

GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
GPU = "nvidia.com/gpu"
NAMESPACES = ("research", "prod")
# namespace, job, GPUs: research's first fits the free GPU, prod's is admitted but no node has 2
# free, research's second waits for the queue's quota
JOBS = (("research", "sweep-1", 1), ("prod", "serve-batch", 1), ("research", "sweep-2", 2))


def _create(call: Any, *args: Any) -> None:
    try:
        call(*args)
    except client.ApiException as exc:
        if exc.status != 409:  # there already (a demo started again on its state)
            raise


def seed_queues(api: client.ApiClient, quota: int = 2) -> None:
    """Kueue's objects and the Jobs in its queues (Kueue's manager must be running: its Job
    webhook refuses Jobs while it is down)."""
    core, batch, objects = client.CoreV1Api(api), client.BatchV1Api(api), client.CustomObjectsApi(api)
    kueue = f"{GROUP}/{VERSION}"
    flavor = {"apiVersion": kueue, "kind": "ResourceFlavor", "metadata": {"name": "gpu"},
              "spec": {"nodeLabels": {"pool": "gpu"}}}  # fmt: skip
    _create(objects.create_cluster_custom_object, GROUP, VERSION, "resourceflavors", flavor)
    flavors = [{"name": "gpu", "resources": [{"name": GPU, "nominalQuota": quota}]}]
    groups = [{"coveredResources": [GPU], "flavors": flavors}]
    queue = {"apiVersion": kueue, "kind": "ClusterQueue", "metadata": {"name": "gpu-team"},
             "spec": {"namespaceSelector": {}, "resourceGroups": groups}}  # fmt: skip
    _create(objects.create_cluster_custom_object, GROUP, VERSION, "clusterqueues", queue)
    for namespace in NAMESPACES:
        _create(core.create_namespace, {"metadata": {"name": namespace}})
        local = {"apiVersion": kueue, "kind": "LocalQueue", "metadata": {"name": "gpus"},
                 "spec": {"clusterQueue": "gpu-team"}}  # fmt: skip
        _create(objects.create_namespaced_custom_object, GROUP, VERSION, namespace, "localqueues", local)
    for namespace, name, gpus in JOBS:
        container = {"name": "main", "image": "registry.example/demo:1",
                     "resources": {"requests": {GPU: str(gpus)}, "limits": {GPU: str(gpus)}}}  # fmt: skip
        job = {
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": "gpus"}},
            "spec": {"suspend": True, "backoffLimit": 0, "template": {
                "metadata": {"annotations": {"extres.test/keep-running": "true"}},  # kwok: hold its GPUs
                "spec": {"restartPolicy": "Never", "containers": [container]}}},
        }  # fmt: skip
        _create(batch.create_namespaced_job, namespace, job)
