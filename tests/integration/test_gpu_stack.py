"""The GPU stack as run-ai/fake-gpu-operator publishes it on kwok nodes (extres_demo.gpu_stack:
the device plugin's status write, MIG profiles, NVIDIA-shaped ResourceSlices of gpu.nvidia.com and
its DeviceClass with extendedResourceName nvidia.com/gpu), on each tested version: a
device-plugin pool, a MIG pool, a DRA-only node and a node served by both. Who serves
nvidia.com/gpu is read per node, as kube-scheduler decides it there, and every number agrees
with kubectl and with the scheduler's own placement.

The device plugin's write of node status is the kubelet's part, played by hand (kwok runs no
device plugins), as the simulator itself does."""

from __future__ import annotations

import csv
import html
import io
import json
import subprocess

import pytest
from bs4 import BeautifulSoup

from app.kube.api import raw
from extres_demo import gpu_stack
from tests.helpers import eventually
from tests.kube_helpers import create_node, create_pod, grid_cells, pending_card, ready, unschedulable_message

pytestmark = [pytest.mark.kube, pytest.mark.compat, pytest.mark.scheduler]
GPU = gpu_stack.GPU
MIG_1G, MIG_3G = "nvidia.com/mig-1g.10gb", "nvidia.com/mig-3g.40gb"


@pytest.fixture(scope="module")
def stack(admin_api, core, scheduler, request):
    """Four GPU nodes and the DeviceClass; removed with the module."""
    base = f"gpu-{abs(hash(request.module.__name__)) % 10_000}"
    nodes = {"plugin": f"{base}-plugin", "mig": f"{base}-mig", "dra": f"{base}-dra", "both": f"{base}-both"}
    for name in nodes.values():
        create_node(core, name, {}, labels={"kubernetes.io/hostname": name, "extres-test": base})
    ready(core, *nodes.values())
    gpu_stack.device_class(admin_api)
    gpu_stack.device_plugin(admin_api, nodes["plugin"], 8)
    gpu_stack.gpu_labels(admin_api, nodes["plugin"], 8)
    gpu_stack.device_plugin(admin_api, nodes["mig"], 2, {MIG_1G: 7, MIG_3G: 2})  # mixed: 2 whole GPUs
    gpu_stack.dra_driver(admin_api, nodes["dra"], 8)
    gpu_stack.device_plugin(admin_api, nodes["both"], 4)
    gpu_stack.dra_driver(admin_api, nodes["both"], 4)
    yield nodes
    gpu_stack.remove(admin_api, list(nodes.values()))
    for name in nodes.values():
        core.delete_node(name)


def cells(web, base: str) -> dict:
    return grid_cells(web.get(f"/?q={base}").get_data(as_text=True))


def test_who_serves_nvidia_gpu_is_read_per_node(stack, web, core, control_plane):
    base = stack["plugin"].rsplit("-", 1)[0]
    shown = eventually(lambda: (c := cells(web, base)).get((stack["dra"], GPU, "capacity")) and c, timeout=30)
    assert shown[(stack["plugin"], GPU, "capacity")] == "8"
    assert shown[(stack["dra"], GPU, "capacity")] == "8DRA"  # eight devices of gpu.nvidia.com
    assert shown[(stack["both"], GPU, "capacity")] == "4"  # the status serves it there
    assert (
        shown[(stack["mig"], MIG_1G, "capacity")] == "7" and shown[(stack["mig"], MIG_3G, "capacity")] == "2"
    )
    # the export: a device plugin's only where the status serves it
    rows = list(csv.DictReader(io.StringIO(web.get(f"/export.csv?q={base}").get_data(as_text=True))))
    by = {(r["node"], r["resource"]): r for r in rows}
    assert (by[(stack["dra"], GPU)]["source"], by[(stack["dra"], GPU)]["device_plugin"]) == ("dra", "False")
    assert (by[(stack["plugin"], GPU)]["source"], by[(stack["plugin"], GPU)]["device_plugin"]) == (
        "status",
        "True",
    )
    assert by[(stack["mig"], MIG_1G)]["device_plugin"] == "True"
    # the header says what serves the column node by node
    header = BeautifulSoup(web.get(f"/?q={base}").get_data(as_text=True), "html.parser")
    badge = header.select_one(f'th[data-resource="{GPU}"] [data-sources]')["data-sources"]
    assert badge == "DRA on 1 node, device plugin on 3 nodes", badge
    # node pages: a DRA badge on the DRA-only node, never "device plugin"; both on the node with both
    dra_row = BeautifulSoup(
        web.get(f"/nodes/{stack['dra']}").get_data(as_text=True), "html.parser"
    ).select_one(f'tr[data-resource="{GPU}"]')
    assert "device plugin" not in dra_row.get_text(" ") and dra_row.select_one('[data-source="dra"]')
    both_row = BeautifulSoup(
        web.get(f"/nodes/{stack['both']}").get_data(as_text=True), "html.parser"
    ).select_one(f'tr[data-resource="{GPU}"]')
    assert "device plugin" in both_row.get_text(" ") and "the node's status wins here" in both_row.get_text(
        " "
    )
    # every status number as kubectl reads it
    out = subprocess.run(
        [str(control_plane.kubectl), "--kubeconfig", str(control_plane.kubeconfig), "get", "nodes", "-ojson"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    kubectl = {n["metadata"]["name"]: n["status"]["allocatable"] for n in json.loads(out)["items"]}
    for key in ("plugin", "mig", "both"):
        node = stack[key]
        for resource, value in kubectl[node].items():
            if "/" in resource and (node, resource, "allocatable") in shown:
                assert shown[(node, resource, "allocatable")] == value, (node, resource)


@pytest.mark.parametrize("which", ["plugin", "mig", "dra"])
def test_every_write_of_a_device_backed_resource_is_refused_and_the_node_is_unchanged(
    stack, web, core, which
):
    node = stack[which]
    resource = MIG_1G if which == "mig" else GPU
    eventually(lambda: web.get(f"/nodes/{node}").status_code == 200)
    before = core.read_node(node).metadata.resource_version
    for url, form in [
        (f"/changes/nodes/{node}/resources", {"resource": resource, "quantity": "16", "expected": ""}),
        (f"/changes/nodes/{node}/resources/remove", {"resource": resource, "expected": "8"}),
        ("/changes/bulk/preview", {"action": "set", "resource": resource, "quantity": "1", "nodes": node}),
    ]:
        resp = web.post(url, data=form)
        text = html.unescape(resp.get_data(as_text=True))
        assert resp.status_code == 422, (url, resp.status_code)
        said = "DRA" if which == "dra" else "device plugin"
        assert said in text and ("device plugin" not in text or which != "dra"), (url, text[:400])
        if "remove" in url:  # a refusal states what the node has now
            now = {"plugin": "has 8 now", "mig": "has 7 now", "dra": "has none of it"}[which]
            assert f"{node}'s status {now}" in text, text[-600:]
    assert core.read_node(node).metadata.resource_version == before


def test_the_device_plugins_writes_are_in_the_history_under_its_name(stack, web, admin_api):
    node = stack["plugin"]
    eventually(lambda: web.get(f"/nodes/{node}").status_code == 200)
    gpu_stack.device_plugin(admin_api, node, 7)  # a GPU gone bad: the plugin advertises one less
    page = eventually(
        lambda: (
            (h := web.get(f"/history/?node={node}&resource={GPU}").get_data(as_text=True))
            and "8 → 7" in h
            and h
        ),
        timeout=30,
    )
    assert gpu_stack.DEVICE_PLUGIN_MANAGER in page
    gpu_stack.device_plugin(admin_api, node, 8)


def test_a_pod_short_of_gpus_on_a_dra_node_gets_dra_advice_and_every_holder(stack, web, core, admin_api, uid):
    """The scheduler places a pod with an explicit ResourceClaim of 2 GPUs and a pod asking for 4
    nvidia.com/gpu on the DRA node's 8 devices, then leaves a third asking for 5 Pending; its card
    speaks of the DeviceClass's devices there and names both holders: the pod by its request,
    the claim with the pod it is for."""
    on_dra = {"kubernetes.io/hostname": stack["dra"]}
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": f"{uid}-claim", "namespace": "default"},
        "spec": {
            "devices": {
                "requests": [{"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}]
            }
        },
    }
    raw.call(
        admin_api, "POST", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims", 30, payload=claim
    )
    claimer = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{uid}-claimer"},
        "spec": {
            "nodeSelector": on_dra,
            "resourceClaims": [{"name": "gpus", "resourceClaimName": f"{uid}-claim"}],
            "containers": [
                {
                    "name": "main",
                    "image": "registry.example/test:1",
                    "resources": {"claims": [{"name": "gpus"}]},
                }
            ],
        },
    }
    core.create_namespaced_pod("default", claimer)
    assert eventually(
        lambda: core.read_namespaced_pod(f"{uid}-claimer", "default").spec.node_name, timeout=60
    )
    create_pod(core, f"{uid}-held", None, {GPU: "4"}, node_selector=on_dra)
    placed = eventually(lambda: core.read_namespaced_pod(f"{uid}-held", "default").spec.node_name, timeout=60)
    assert placed == stack["dra"]
    create_pod(core, f"{uid}-wait", None, {GPU: "5"}, node_selector=on_dra)

    said = eventually(lambda: unschedulable_message(core, f"{uid}-wait"), timeout=60)
    print(f"scheduler: {said!r}")
    card = pending_card(web, GPU, f"default/{uid}-wait", timeout=30)
    text = BeautifulSoup(card, "html.parser").get_text(" ", strip=True)
    assert "its device plugin advertises them" not in text
    assert (
        f"{stack['dra']} would need 3 more {GPU}; DRA devices of DeviceClass gpu.nvidia.com serve it" in text
    )
    assert f'data-holder="default/{uid}-held"' in card
    assert f'data-holder-claim="default/{uid}-claim"' in card and f"default/{uid}-claimer" in text
    assert "/changes/nodes/" not in card  # no form that would refuse


def test_what_if_speaks_in_devices_on_each_node(stack, web):
    """Eight GPUs a pod, four pods, limited to the stack's nodes: each step on a GPU node says
    how many devices are there, held and still needed, never a capacity to set; the MIG node,
    with 2 whole GPUs, asks for devices too; no link to a change that would be refused."""
    base = stack["plugin"].rsplit("-", 1)[0]
    page = BeautifulSoup(
        web.get(f"/plan/?requests={GPU}%3D8&selector=extres-test%3D{base}&replicas=4").get_data(as_text=True),
        "html.parser",
    )
    steps = {tr["data-node"]: tr for tr in page.select("table.plan-steps tr[data-node]")}
    print({n: tr.get_text(" ", strip=True) for n, tr in steps.items()})
    assert not page.select("a[data-plan-link]") and page.select("[data-devices-needed]")
    for node, tr in steps.items():
        text = tr.get_text(" ", strip=True)
        assert "capacity" not in tr.select_one('[data-field="capacity"]').get_text() or "devices" in text, (
            text
        )
        needed = tr.select_one("[data-devices-needed]")
        if needed is not None:
            there = int(text.split(" there")[0].rsplit("(", 1)[1])
            expected = {stack["plugin"]: 8, stack["dra"]: 8, stack["both"]: 4, stack["mig"]: 2}[node]
            assert there == expected, (node, text)
    assert len(page.select("[data-plan-owner]")) <= 2  # one notice per owner kind, not per step


def test_a_pod_short_of_a_mig_profile_is_advised_in_that_profile(stack, web, core, uid):
    on_mig = {"kubernetes.io/hostname": stack["mig"]}
    create_pod(core, f"{uid}-mig", None, {MIG_1G: "8"}, node_selector=on_mig)  # the node has 7
    card = pending_card(web, MIG_1G, f"default/{uid}-mig")
    text = BeautifulSoup(card, "html.parser").get_text(" ", strip=True)
    assert "Insufficient nvidia.com/mig-1g.10gb" in text  # the scheduler's words
    assert f"{stack['mig']} would need 1 more {MIG_1G}" in text and "MIG 1g.10gb instances" in text, text
    assert "/changes/nodes/" not in card
