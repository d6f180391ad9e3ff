"""The classic walkthrough of extended resources, end to end, on the real control plane.

A node advertises ``wgh/extended-cpu: 2`` through the dashboard; the Deployment
``nginx-deployment`` asks for 3 and the controllers make its pod, which the scheduler leaves
Pending; the pending page, the metric and the shipped alert's expression name the resource;
lowering the request to 2 rolls out a pod that binds and runs (kwok runs it); removing the
resource through the dashboard leaves the running pod over-committed.

The kubelet's one step that kwok does not take, copying the patched capacity into allocatable,
is played by ``kubelet_standin`` (extres_demo.standin); everything else is the real kube-apiserver,
kube-scheduler, kube-controller-manager and kwok.
"""

from __future__ import annotations

import pytest
import yaml
from kubernetes import client

from tests.helpers import eventually
from tests.kube_helpers import create_node, kubelet_standin, node_cells, ready
from tests.prometheus import ALERTS, Prometheus
from tests.serving import Server

# on every tested version: the message, the metric and the alert follow each scheduler's wording
pytestmark = [pytest.mark.kube, pytest.mark.scheduler, pytest.mark.compat]
R = "wgh/extended-cpu"


def deployment(amount: str) -> dict:
    return {
        "metadata": {"name": "nginx-deployment", "labels": {"app": "nginx"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {
                    "containers": [
                        {
                            "name": "nginx",
                            "image": "nginx:1.29",
                            "resources": {"requests": {R: amount}, "limits": {R: amount}},
                        }
                    ]
                },
            },
        },
    }


def pods(core: client.CoreV1Api, namespace: str) -> list[client.V1Pod]:
    return [p for p in core.list_namespaced_pod(namespace).items if not p.metadata.deletion_timestamp]


def pending_alert_expr() -> str:
    rules = yaml.safe_load(ALERTS.read_text())["groups"][0]["rules"]
    return next(r["expr"] for r in rules if r["alert"] == "ExtresPodsPendingForExtendedResource")


def test_the_extended_resource_walkthrough(web, core, admin_api, scheduler, uid, tmp_path):
    node, namespace = f"{uid}-worker", f"{uid}-walk"
    create_node(core, node)
    ready(core, node)
    core.create_namespace({"metadata": {"name": namespace}})
    apps = client.AppsV1Api(admin_api)

    # 1. the node advertises 2 through the dashboard (a JSON Patch of /status)
    resp = web.post(f"/changes/nodes/{node}/resources", data={"resource": R, "quantity": "2", "expected": ""})
    assert resp.status_code == 303
    kubelet_standin(core, node)  # allocatable follows capacity, as the kubelet would do
    assert core.read_node_status(node).status.allocatable[R] == "2"

    # 2. the controllers make nginx-deployment's pod; the scheduler leaves it Pending
    apps.create_namespaced_deployment(namespace, deployment("3"))

    def waiting() -> client.V1Pod:
        found = pods(core, namespace)
        assert len(found) == 1
        pod = found[0]
        assert pod.metadata.owner_references[0].kind == "ReplicaSet"
        conds = [c for c in pod.status.conditions or () if c.type == "PodScheduled"]
        assert len(conds) == 1  # not yet, while the scheduler has not tried it
        cond = conds[0]
        assert (cond.status, cond.reason) == ("False", "Unschedulable")
        assert f"Insufficient {R}" in cond.message
        return pod

    pod = eventually(waiting, timeout=60)

    # 3. the pending page, the metric and the alert's expression name wgh/extended-cpu as short
    def on_pending_page() -> bool:
        page = web.get("/pending/").get_data(as_text=True)
        assert pod.metadata.name in page and f"Insufficient {R}" in page
        return True

    eventually(on_pending_page)
    said = next(
        c.message
        for c in core.read_namespaced_pod(pod.metadata.name, pod.metadata.namespace).status.conditions
        if c.reason == "Unschedulable"
    )
    print(f"recorded: {said!r}")
    server = Server(scheduler)
    prometheus = Prometheus(tmp_path, f"127.0.0.1:{server.metrics_port}")
    try:
        series = f'extres_pending_pods{{reason="insufficient",resource="{R}"}}'
        eventually(lambda: sum(prometheus.query(series).values()) >= 1, timeout=60)
        fired = eventually(lambda: prometheus.query(pending_alert_expr()), timeout=30)
        assert R in [dict(labels)["resource"] for labels in fired]  # (other tests' pods wait too)
    finally:
        prometheus.stop()
        server.stop()

    # 4. a request of 2 rolls out a pod that binds to the node and runs
    apps.patch_namespaced_deployment("nginx-deployment", namespace, {"spec": deployment("2")["spec"]})

    def running() -> client.V1Pod:
        found = pods(core, namespace)
        assert len(found) == 1
        pod = found[0]
        assert (pod.spec.node_name, pod.status.phase) == (node, "Running")
        return pod

    eventually(running, timeout=90)
    eventually(lambda: node_cells(web.get(f"/nodes/{node}").get_data(as_text=True))[(R, "requested")] == "2")

    # 5. removing the resource through the dashboard: gone from capacity and allocatable, and the
    #    running pod is over-committed
    resp = web.post(f"/changes/nodes/{node}/resources/remove", data={"resource": R, "expected": "2"})
    assert resp.status_code == 303
    kubelet_standin(core, node)
    status = core.read_node_status(node).status
    assert R not in status.capacity and R not in status.allocatable

    def over_committed() -> bool:
        html = web.get(f"/nodes/{node}").get_data(as_text=True)
        cells = node_cells(html)
        assert (cells[(R, "requested")], cells[(R, "free")]) == ("2", "-2")
        assert 'class="num over"' in html
        return True

    eventually(over_committed)
    apps.delete_namespaced_deployment("nginx-deployment", namespace)
