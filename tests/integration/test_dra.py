"""Extended resources served by DRA devices, on the newest control plane: the test publishes
ResourceSlices through the API as a driver would (no driver runs), the real kube-scheduler
allocates devices to a pod asking for the class's extended resource, and kwok runs the pod.
Every number the overview shows is checked against a count made here from the API objects."""

from __future__ import annotations

import pytest
from kubernetes import client

from app.web.process import of as process_of
from tests.helpers import eventually
from tests.kube_helpers import (
    DRA_DRIVER,
    create_node,
    create_pod,
    device_class,
    grid_cells,
    pending_card,
    publish,
    ready,
    unschedulable_message,
)

pytestmark = [pytest.mark.kube, pytest.mark.scheduler]


def allocated_on(api: client.ApiClient, node: str) -> int:
    """Devices of ``node``'s pool that claims hold, counted from the claims themselves."""
    claims = client.ResourceV1Api(api).list_resource_claim_for_all_namespaces().items
    return sum(
        1
        for c in claims
        if c.status and c.status.allocation
        for r in c.status.allocation.devices.results or ()
        if r.pool == node and r.driver == DRA_DRIVER and not r.admin_access
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
    device_class(admin_api, f"{uid}-a100", resource, f'device.attributes["{DRA_DRIVER}"].model == "a100"')

    def cells() -> dict:
        return grid_cells(web.get(f"/?q={uid}").get_data(as_text=True))

    shown = eventually(lambda: (c := cells()).get((a, resource, "capacity")) and c)
    assert shown[(a, resource, "capacity")] == "4DRA"  # four a100s on a; b's t4s do not match
    assert shown[(a, resource, "free")] == "4"
    assert (b, resource, "capacity") not in shown
    implicit = f"deviceclass.resource.kubernetes.io/{uid}-a100"
    assert not [k for k in shown if k[1] == implicit]  # the same four devices: an alias, not a pool
    assert f'data-alias="{implicit}"' in web.get(f"/?q={uid}").get_data(as_text=True)

    create_pod(core, f"{uid}-p", None, {resource: "3"})
    pod = eventually(lambda: core.read_namespaced_pod(f"{uid}-p", "default").spec.node_name, timeout=60)
    assert pod == a
    assert eventually(lambda: allocated_on(admin_api, a) == 3, timeout=30)
    after = eventually(lambda: (c := cells()).get((a, resource, "free")) == "1" and c, timeout=30)
    assert after[(a, resource, "requested")] == "3"  # the pod's request
    assert after[(a, resource, "free")] == str(4 - allocated_on(admin_api, a))
    assert after[("*", resource, "capacity")] == "4DRA"
    # a pod asking by the class's implicit name takes the last device of the same pool, and is
    # counted under the one resource
    create_pod(core, f"{uid}-q", None, {implicit: "1"})
    assert eventually(lambda: core.read_namespaced_pod(f"{uid}-q", "default").spec.node_name, timeout=60) == a
    assert eventually(lambda: allocated_on(admin_api, a) == 4, timeout=30)
    full = eventually(lambda: (c := cells()).get((a, resource, "free")) == "0" and c, timeout=30)
    assert full[(a, resource, "requested")] == "4" and not [k for k in full if k[1] == implicit]


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
    device_class(admin_api, f"{uid}-any", resource, f'device.attributes["{DRA_DRIVER}"].model == "{model}"')
    eventually(
        lambda: (node, resource, "capacity") in grid_cells(web.get(f"/?q={uid}").get_data(as_text=True))
    )
    create_pod(core, f"{uid}-holder", None, {resource: "2"})
    assert eventually(lambda: core.read_namespaced_pod(f"{uid}-holder", "default").spec.node_name, timeout=60)
    create_pod(core, f"{uid}-waiting", None, {resource: "1"})

    said = eventually(lambda: unschedulable_message(core, f"{uid}-waiting"), timeout=60)
    print(f"recorded: {said!r}")
    card = pending_card(web, resource, f"default/{uid}-waiting", timeout=30)
    assert 'data-kind="short"' in card[:200]
    assert f'data-holder="default/{uid}-holder"' in card
    assert "/changes/nodes/" not in card


def test_every_dra_number_agrees_with_a_count_from_the_api_objects(admin_api, core, web, app, scheduler, uid):
    """Two classes match the same devices, one with ``extendedResourceName`` and one served only
    by its implicit name; a Deployment's pod asks for the first, a bare pod for the second. Every
    figure of the overview, the /devices page, the node page, the workloads page, the export and
    /metrics is checked against a count made here from the claims the scheduler wrote. A second
    node advertises the name in its status as well: flagged, and its status's numbers shown."""
    resource = f"k{uid[-6:].strip('-')}.example.com/gpu".replace("--", "-")
    a, b = f"{uid}-a", f"{uid}-b"
    create_node(core, a, {}, labels={"kubernetes.io/hostname": a})
    create_node(core, b, {resource: "2"}, labels={"kubernetes.io/hostname": b})
    ready(core, a, b)
    model = f"m{uid[-8:]}"
    publish(admin_api, a, 3, model=model)
    publish(admin_api, b, 2, model=model)
    match = f'device.attributes["{DRA_DRIVER}"].model == "{model}"'
    device_class(admin_api, f"{uid}-gpu", resource, match)
    plain = f"{uid}-plain"
    client.ResourceV1Api(admin_api).create_device_class(
        {"metadata": {"name": plain}, "spec": {"selectors": [{"cel": {"expression": match}}]}}
    )
    implicit = f"deviceclass.resource.kubernetes.io/{plain}"
    eventually(lambda: (a, implicit, "capacity") in grid_cells(web.get(f"/?q={uid}").get_data(as_text=True)))

    from tests.kube_helpers import workload

    workload(admin_api, "Deployment", f"{uid}-dep", a, {resource: "2"})
    create_pod(core, f"{uid}-bare", None, {implicit: "1"}, nodeSelector={"kubernetes.io/hostname": a})
    assert eventually(lambda: allocated_on(admin_api, a) == 3, timeout=60)
    claims = [
        c
        for c in client.ResourceV1Api(admin_api).list_resource_claim_for_all_namespaces().items
        if c.status and c.status.allocation and c.status.allocation.devices.results[0].pool == a
    ]
    holders = {
        r.device: f"{c.metadata.namespace}/{c.metadata.name}"
        for c in claims
        for r in c.status.allocation.devices.results
    }
    assert len(holders) == 3 and all(
        c.metadata.annotations.get("resource.kubernetes.io/extended-resource-claim") == "true" for c in claims
    )

    cells = eventually(
        lambda: (
            (c := grid_cells(web.get(f"/?q={uid}").get_data(as_text=True))).get((a, resource, "free")) == "0"
            and c
        ),
        timeout=30,
    )
    # on a: three devices, all held (by claims of either class); requested is the pod's own ask
    assert (cells[(a, resource, "capacity")], cells[(a, resource, "requested")]) == ("3DRA", "2")
    assert (cells[(a, implicit, "capacity")], cells[(a, implicit, "requested")]) == ("3DRA", "1")
    assert cells[(a, implicit, "free")] == str(3 - allocated_on(admin_api, a))
    # on b the status serves the name: its numbers, and the flag
    assert cells[(b, resource, "capacity")] == "2"
    overview = web.get(f"/?q={uid}").get_data(as_text=True)
    assert f'data-both="{resource}"' in overview

    from bs4 import BeautifulSoup

    devices = BeautifulSoup(web.get("/devices/").get_data(as_text=True), "html.parser")
    row = devices.select_one(f'tr[data-class="{uid}-gpu"]')
    fields = {td["data-field"]: td.get_text(strip=True) for td in row.select("td[data-field]")}
    held = allocated_on(admin_api, a) + allocated_on(admin_api, b)
    assert fields == {"devices": "5", "allocated": str(held), "free": str(5 - held)}
    assert [s["data-serves"] for s in devices.select(f'tr[data-class="{plain}"] [data-serves]')] == [implicit]

    node = BeautifulSoup(web.get(f"/nodes/{a}").get_data(as_text=True), "html.parser")
    shown = {
        tr["data-device"]: tr.select_one('[data-field="claim"]').get_text(" ", strip=True)
        for tr in node.select("#node-devices tr[data-device]")
    }
    assert {d: said.split(" for ")[0] for d, said in shown.items()} == holders
    assert any(said.endswith(f" for {uid}-bare") for said in shown.values())

    table = BeautifulSoup(web.get(f"/workloads/?resource={resource}").get_data(as_text=True), "html.parser")
    dep = table.select_one(f'tr[data-workload="Deployment/{uid}-dep"]')
    assert dep is not None and dep.select_one('[data-field="requested"]').get_text(strip=True) == "2"

    [record] = [
        r
        for r in web.get(f"/export.json?q={uid}").get_json()["nodes"]
        if (r["node"], r["resource"]) == (a, resource)
    ]
    assert (record["source"], record["capacity"], record["allocated"]) == (
        "dra",
        3,
        allocated_on(admin_api, a),
    )
    text = process_of(app).local.metrics.exposition().decode()
    assert f'extres_node_extended_resource_allocated{{node="{a}",resource="{resource}"}} 3.0' in text


def test_a_tainted_device_is_not_given_to_an_extended_resource_request(admin_api, core, web, scheduler, uid):
    """One of two devices carries a NoSchedule taint: the overview counts one allocatable, and
    the scheduler agrees (a pod asking for two stays Pending, one asking for one runs)."""
    resource = f"t{uid[-6:].strip('-')}.example.com/gpu".replace("--", "-")
    node = f"{uid}-n"
    create_node(core, node, {}, labels={"kubernetes.io/hostname": node})
    ready(core, node)
    model = f"m{uid[-8:]}"
    publish(admin_api, node, 2, model=model, tainted=(1,))
    device_class(admin_api, f"{uid}-c", resource, f'device.attributes["{DRA_DRIVER}"].model == "{model}"')
    cells = eventually(
        lambda: (
            (c := grid_cells(web.get(f"/?q={uid}").get_data(as_text=True))).get((node, resource, "capacity"))
            and c
        )
    )
    assert (cells[(node, resource, "capacity")], cells[(node, resource, "allocatable")]) == ("2DRA", "1")
    pin = {"kubernetes.io/hostname": node}
    create_pod(core, f"{uid}-two", None, {resource: "2"}, nodeSelector=pin)
    create_pod(core, f"{uid}-one", None, {resource: "1"}, nodeSelector=pin)
    assert eventually(lambda: core.read_namespaced_pod(f"{uid}-one", "default").spec.node_name, timeout=60)

    def unschedulable() -> bool:
        pod = core.read_namespaced_pod(f"{uid}-two", "default")
        return any(c.reason == "Unschedulable" for c in pod.status.conditions or ())

    assert eventually(unschedulable, timeout=60)
    assert core.read_namespaced_pod(f"{uid}-two", "default").spec.node_name is None
    assert allocated_on(admin_api, node) == 1


def test_a_selector_the_api_server_accepts_but_past_the_budget_is_unknown_too_costly(
    admin_api, core, web, uid
):
    """27,000 iterations: within the API server's cost limit (it accepts the class), past the CEL
    runtime's budget here: shown as unknown, "too costly", never a hang or a guess."""
    resource = f"h{uid[-6:].strip('-')}.example.com/gpu".replace("--", "-")
    node = f"{uid}-h"
    create_node(core, node, {}, labels={"kubernetes.io/hostname": node})
    publish(admin_api, node, 2)
    numbers = ",".join(str(i) for i in range(30))
    heavy = f"[{numbers}].all(x, [{numbers}].all(y, [{numbers}].all(z, x + y + z >= 0)))"
    device_class(admin_api, f"{uid}-heavy", resource, heavy)

    def unknown() -> str:
        html = web.get(f"/?q={uid}").get_data(as_text=True)
        assert f'data-resource="{resource}" data-unknown' in html
        return html

    try:
        html = eventually(unknown, timeout=30)
        assert "too costly" in html
        assert "too costly" in web.get("/devices/").get_data(as_text=True)
    finally:  # a class over every device: later tests' grids would carry its column
        client.ResourceV1Api(admin_api).delete_device_class(f"{uid}-heavy")


def test_a_device_taint_rule_keeps_its_devices_from_requests_until_it_is_deleted(
    admin_api, core, web, scheduler, uid
):
    """A DeviceTaintRule (resource.k8s.io/v1, Kubernetes 1.37) taints one of two devices by its
    driver, pool and name, as an operator or a health controller writes one (NVIDIA's
    ``gpu.nvidia.com/xid``): the overview counts one allocatable and the node page names the
    rule; the scheduler agrees (a pod asking for two waits). Deleted, the device is free again,
    the waiting pod runs."""
    resource = f"r{uid[-6:].strip('-')}.example.com/gpu".replace("--", "-")
    node, model = f"{uid}-n", f"m{uid[-8:]}"
    create_node(core, node, {}, labels={"kubernetes.io/hostname": node})
    ready(core, node)
    publish(admin_api, node, 2, model=model)
    device_class(admin_api, f"{uid}-c", resource, f'device.attributes["{DRA_DRIVER}"].model == "{model}"')
    rules = client.CustomObjectsApi(admin_api)
    rule = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": f"{uid}-xid"},
        "spec": {
            "deviceSelector": {"driver": DRA_DRIVER, "pool": node, "device": "gpu-1"},
            "taint": {"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"},
        },
    }
    rules.create_cluster_custom_object("resource.k8s.io", "v1", "devicetaintrules", rule)

    def cells() -> dict:
        return grid_cells(web.get(f"/?q={uid}").get_data(as_text=True))

    shown = eventually(lambda: (c := cells()).get((node, resource, "allocatable")) == "1" and c, timeout=30)
    assert shown[(node, resource, "capacity")] == "2DRA"
    from bs4 import BeautifulSoup

    page = BeautifulSoup(web.get(f"/nodes/{node}").get_data(as_text=True), "html.parser")
    tainted = page.select_one('#node-devices tr[data-device="gpu-1"]')
    assert (
        "gpu.nvidia.com/xid=79:NoSchedule" in tainted.get_text()
        and f"{uid}-xid" in tainted.select_one("[data-rules]").get_text()
    )
    create_pod(core, f"{uid}-two", None, {resource: "2"}, nodeSelector={"kubernetes.io/hostname": node})
    assert eventually(lambda: unschedulable_message(core, f"{uid}-two"), timeout=60)
    rules.delete_cluster_custom_object("resource.k8s.io", "v1", "devicetaintrules", f"{uid}-xid")
    assert eventually(lambda: cells().get((node, resource, "allocatable")) == "2", timeout=30)
    assert (
        eventually(lambda: core.read_namespaced_pod(f"{uid}-two", "default").spec.node_name, timeout=90)
        == node
    )
