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


def test_a_pod_short_of_dra_devices_is_diagnosed_as_the_scheduler_says(admin_api, core, web, scheduler, uid):
    """The scheduler leaves a pod asking for more devices than are free Pending; the pending
    page reads its message, finds it short on the node with devices, names who holds them, and
    offers no form (the driver publishes the devices)."""
    resource = f"h{uid[-6:].strip('-')}.example.com/gpu".replace("--", "-")
    node = f"{uid}-n"
    create_node(core, node, {}, labels={"kubernetes.io/hostname": node})
    ready(core, node)
    model = f"m{uid[-8:]}"  # only this test's devices: other tests' nodes publish other models
    publish(admin_api, node, 2, model=model)
    device_class(admin_api, f"{uid}-any", resource, f'device.attributes["{DRIVER}"].model == "{model}"')
    eventually(
        lambda: (node, resource, "capacity") in grid_cells(web.get(f"/?q={uid}").get_data(as_text=True))
    )
    create_pod(core, f"{uid}-holder", None, {resource: "2"})
    assert eventually(lambda: core.read_namespaced_pod(f"{uid}-holder", "default").spec.node_name, timeout=60)
    create_pod(core, f"{uid}-waiting", None, {resource: "1"})

    def message() -> str | None:
        pod = core.read_namespaced_pod(f"{uid}-waiting", "default")
        return next((c.message for c in pod.status.conditions or () if c.reason == "Unschedulable"), None)

    said = eventually(message, timeout=60)
    print(f"recorded: {said!r}")
    page = eventually(
        lambda: (
            (h := web.get(f"/pending/?resource={resource}").get_data(as_text=True))
            and f'data-pod="default/{uid}-waiting"' in h
            and h
        ),
        timeout=30,
    )
    card = page.split(f'data-pod="default/{uid}-waiting"', 1)[1].split("</article>", 1)[0]
    assert 'data-kind="short"' in page.split(f'data-pod="default/{uid}-waiting"', 1)[1][:200]
    assert f'data-holder="default/{uid}-holder"' in card
    assert "/changes/nodes/" not in card
