"""Kueue over the dashboard's life and its objects' lives, on a bare control plane with Kueue's own
CRDs and no manager: the test writes the Workloads' and ClusterQueue's status itself, playing
Kueue's part (the shapes Kueue v0.17 writes: a finished Job's Workload keeps ``status.admission``
beside ``Finished=True``). Kueue is installed after the dashboard started, and removed while it
runs: it is watched, then forgotten, without a restart. A ClusterQueue Kueue has not reported on
reads "not reported", a flavor it names that does not exist selects nothing, and a finished
Workload holds no quota."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from bs4 import BeautifulSoup
from kubernetes import client

from app import create_app
from app.kube.api import add_ons
from app.kube.api.client import ClusterConfig, api_client, load_configuration
from app.web.process import of as process_of
from extres_demo import testenv
from tests import kueue_crds
from tests.helpers import browser, eventually, started
from tests.kube_helpers import create_node

pytestmark = pytest.mark.kube
GPU = "nvidia.com/gpu"
GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
KUEUE_API = f"{GROUP}/{VERSION}"
WHEN = "2026-12-07T00:00:00Z"


@pytest.fixture(scope="module")
def bare_plane(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[testenv.ControlPlane, client.ApiClient]]:
    plane = testenv.start(tmp_path_factory.mktemp("kueue-life"), bare=True)
    api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
    try:
        yield plane, api
    finally:
        api.close()
        plane.stop(now=True)


def condition(kind: str, status: str, message: str = "") -> dict[str, str]:
    return {"type": kind, "status": status, "reason": "Test", "message": message, "lastTransitionTime": WHEN}


def workload(objects: client.CustomObjectsApi, name: str, gpus: int, status: dict[str, Any]) -> None:
    container = {"name": "c", "image": "registry.example/x:1", "resources": {"requests": {GPU: str(gpus)}}}
    pod_set = {"name": "main", "count": 1, "template": {"spec": {"containers": [container]}}}
    objects.create_namespaced_custom_object(GROUP, VERSION, "team-a", "workloads", {
        "apiVersion": KUEUE_API, "kind": "Workload", "metadata": {"name": name},
        "spec": {"queueName": "q", "podSets": [pod_set]}})  # fmt: skip
    objects.patch_namespaced_custom_object_status(
        GROUP, VERSION, "team-a", "workloads", name, {"status": status}
    )


def admitted(gpus: int, *more: dict[str, str]) -> dict[str, Any]:
    assignment = {"name": "main", "count": 1, "flavors": {GPU: "gpu"}, "resourceUsage": {GPU: str(gpus)}}
    return {
        "admission": {"clusterQueue": "team", "podSetAssignments": [assignment]},
        "conditions": [condition("QuotaReserved", "True"), condition("Admitted", "True"), *more],
    }


def test_kueue_installed_late_is_seen_and_a_finished_job_holds_nothing_then_removed_is_forgotten(
    bare_plane, monkeypatch
):
    plane, api = bare_plane
    monkeypatch.setattr(add_ons, "KUEUE_REDISCOVER", 0.5)  # 30 s in service
    core, objects = client.CoreV1Api(api), client.CustomObjectsApi(api)
    create_node(core, "gpu-1", {GPU: "4"}, labels={"pool": "gpu"})
    create_node(core, "gpu-2", {GPU: "4"})  # no flavor selects it
    core.create_namespace({"metadata": {"name": "team-a"}})
    app = started(create_app({"kubeconfig": str(plane.kubeconfig), "in_cluster": "false"}))
    app.config["TESTING"] = True
    web = browser(app)

    def page(url: str, shows: Any) -> Any:
        def shown() -> Any:
            found = BeautifulSoup(web.get(url).get_data(as_text=True), "html.parser")
            return found if shows(found) else None

        return eventually(shown, timeout=30)

    try:
        page("/queues/", lambda p: p.select_one("p.empty") is not None)  # not installed (yet)
        kueue_crds.install(api, VERSION)
        objects.create_cluster_custom_object(GROUP, VERSION, "resourceflavors", {
            "apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": "gpu"},
            "spec": {"nodeLabels": {"pool": "gpu"}}})  # fmt: skip
        flavors = [{"name": f, "resources": [{"name": GPU, "nominalQuota": 4}]} for f in ("gpu", "ghost")]
        objects.create_cluster_custom_object(GROUP, VERSION, "clusterqueues", {
            "apiVersion": KUEUE_API, "kind": "ClusterQueue", "metadata": {"name": "team"},
            "spec": {"namespaceSelector": {}, "resourceGroups": [
                {"coveredResources": [GPU], "flavors": flavors}]}})  # fmt: skip
        objects.create_namespaced_custom_object(GROUP, VERSION, "team-a", "localqueues", {
            "apiVersion": KUEUE_API, "kind": "LocalQueue", "metadata": {"name": "q"},
            "spec": {"clusterQueue": "team"}})  # fmt: skip

        # the ClusterQueue before Kueue has written its status: nothing reads as 0
        def seen(p: Any) -> bool:  # the queue, and the flavor it names once its watch has it
            gpu = p.select_one(f'#flavor-capacity tr[data-flavor="gpu"][data-resource="{GPU}"]')
            return p.select_one('[data-cluster-queue="team"]') is not None and (
                gpu is not None and gpu.select_one("[data-missing-flavor]") is None
            )

        queues = page("/queues/", seen)
        team = queues.select_one('[data-cluster-queue="team"]')
        assert "not reported" in team.select_one('[data-field="counts"]').get_text()
        row = team.select_one(f'tr[data-flavor="gpu"][data-resource="{GPU}"]')
        assert [row.select_one(f'[data-field="{f}"]').get_text() for f in ("reserved", "used")] == [
            "not reported",
            "not reported",
        ]
        ghost = queues.select_one(f'#flavor-capacity tr[data-flavor="ghost"][data-resource="{GPU}"]')
        assert ghost.select_one("[data-missing-flavor]") is not None
        assert ghost.select_one('[data-field="capacity"]').get_text() == "0"  # never "every node": 8
        assert queues.select_one(f'[data-unqueued="{GPU}"]').get_text().startswith("4 ")  # gpu-2's

        # a running Job's Workload holds 2; a finished one keeps its admission and holds nothing
        workload(objects, "running", 2, admitted(2))
        workload(objects, "done", 2, admitted(2, condition("Finished", "True")))
        lacking = (
            "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in "
            "flavor gpu, 1 more needed"
        )
        workload(objects, "waits", 3, {"conditions": [condition("QuotaReserved", "False", lacking)]})
        pending = page(
            "/pending/?namespace=team-a", lambda p: p.select_one("[data-quota-holder]") is not None
        )
        holders = [
            h["data-quota-holder"]
            for h in pending.select('[data-workload="team-a/waits"] [data-quota-holder]')
        ]
        assert holders == ["team-a/running"]
        queues = page("/queues/", lambda p: p.select_one("[data-admitted]") is not None)
        assert [a["data-admitted"] for a in queues.select("[data-admitted]")] == ["team-a/running"]

        # Kueue removed: forgotten, and watched again once it is back
        extensions = client.ApiextensionsV1Api(api)
        for kind in kueue_crds.KINDS:
            extensions.delete_custom_resource_definition(f"{kind}.{GROUP}")
        page("/queues/", lambda p: p.select_one("p.empty") is not None)
        eventually(lambda: not extensions.list_custom_resource_definition().items, timeout=30)
        cache = process_of(app).local.cluster.cache
        eventually(lambda: cache.kueue == "absent", timeout=30)  # once the group is gone
        kueue_crds.install(api, VERSION)
        objects.create_cluster_custom_object(GROUP, VERSION, "resourceflavors", {
            "apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": "back"}})  # fmt: skip
        eventually(lambda: cache.kueue == "served", timeout=30)
        page("/queues/", lambda p: p.select_one('[data-flavor="back"], #queues') is not None)
    finally:
        process_of(app).local.stop()
