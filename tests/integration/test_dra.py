"""Extended resources served by DRA devices, on the newest control plane: the test publishes
ResourceSlices through the API as a driver would (no driver runs), the real kube-scheduler
allocates devices to a pod asking for the class's extended resource, and kwok runs the pod.
Every number the overview shows is checked against a count made here from the API objects."""

from __future__ import annotations

import pytest
from kubernetes import client

from tests.conftest import eventually
from tests.kube_helpers import create_node, create_pod, grid_cells, ready

pytestmark = [pytest.mark.kube, pytest.mark.scheduler]
DRIVER = "gpu.example.com"


def publish(api: client.ApiClient, node: str, devices: int, model: str = "a100") -> None:
    """A ResourceSlice for ``node``'s pool, as a DRA driver's kubelet plugin would publish it."""
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {"name": f"gpu-{i}", "attributes": {"model": {"string": model}, "index": {"int": i}}}
                for i in range(devices)
            ],
        },
    }
    client.ResourceV1Api(api).create_resource_slice(body)


def device_class(api: client.ApiClient, name: str, resource: str, expression: str) -> None:
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"extendedResourceName": resource, "selectors": [{"cel": {"expression": expression}}]},
    }
    client.ResourceV1Api(api).create_device_class(body)


def allocated_on(api: client.ApiClient, node: str) -> int:
    """Devices of ``node``'s pool that claims hold, counted from the claims themselves."""
    claims = client.ResourceV1Api(api).list_resource_claim_for_all_namespaces().items
    return sum(
        1
        for c in claims
        if c.status and c.status.allocation
        for r in c.status.allocation.devices.results or ()
        if r.pool == node and r.driver == DRIVER and not r.admin_access
    )


def test_a_dra_served_resource_is_counted_per_node_as_the_scheduler_allocates_it(
    admin_api, core, web, scheduler, uid
):
    resource = f"g{uid[-6:].strip('-')}.example.com/gpu".replace("--", "-")
    a, b = f"{uid}-a", f"{uid}-b"
    for name in (a, b):
        create_node(core, name, {}, labels={"kubernetes.io/hostname": name})
    ready(core, a, b)
    publish(admin_api, a, 4)
    publish(admin_api, b, 2, model="t4")
    device_class(admin_api, f"{uid}-a100", resource, f'device.attributes["{DRIVER}"].model == "a100"')

    def cells() -> dict:
        return grid_cells(web.get(f"/?q={uid}").get_data(as_text=True))

    shown = eventually(lambda: (c := cells()).get((a, resource, "capacity")) and c)
    assert shown[(a, resource, "capacity")] == "4DRA"  # four a100s on a; b's t4s do not match
    assert shown[(a, resource, "free")] == "4"
    assert (b, resource, "capacity") not in shown
    implicit = f"deviceclass.resource.kubernetes.io/{uid}-a100"
    assert shown[(a, implicit, "capacity")] == "4DRA"

    create_pod(core, f"{uid}-p", None, {resource: "3"})
    pod = eventually(lambda: core.read_namespaced_pod(f"{uid}-p", "default").spec.node_name, timeout=60)
    assert pod == a
    assert eventually(lambda: allocated_on(admin_api, a) == 3, timeout=30)
    after = eventually(lambda: (c := cells()).get((a, resource, "free")) == "1" and c, timeout=30)
    assert after[(a, resource, "requested")] == "3"  # the pod's request
    assert after[(a, resource, "free")] == str(4 - allocated_on(admin_api, a))
    assert after[("*", resource, "capacity")] == "4DRA"
