"""The Queues page and Pending's quota section in Chromium, with axe, at the three viewports the
other pages are checked at. Kueue's CRDs (v1beta2) on a bare plane of this module's own, with no
manager: the test writes the Workloads' and the ClusterQueue's status itself, playing Kueue's
part, in the shapes Kueue v0.17 writes (its quota above the flavor's nodes, one job admitted,
one waiting for quota)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client
from playwright.sync_api import expect

from app.kube.api.client import ClusterConfig, api_client, load_configuration
from extres_demo import testenv
from tests import kueue_crds
from tests.browser.pages import axe_context, violations_here
from tests.browser.test_accessibility import VIEWPORTS
from tests.kube_helpers import create_node
from tests.serving import Server

pytestmark = pytest.mark.browser
GPU = "nvidia.com/gpu"
GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
NOW = "2026-12-06T00:00:00Z"


def condition(kind: str, status: str, message: str = "") -> dict[str, str]:
    return {"type": kind, "status": status, "reason": "Pending" if status == "False" else kind,
            "message": message, "lastTransitionTime": NOW}  # fmt: skip


def seed(api: client.ApiClient) -> None:
    core, objects = client.CoreV1Api(api), client.CustomObjectsApi(api)
    create_node(core, "queued-gpu", {GPU: "4"}, labels={"pool": "gpu"})
    core.create_namespace({"metadata": {"name": "team-a"}})
    kind = f"{GROUP}/{VERSION}"
    objects.create_cluster_custom_object(GROUP, VERSION, "resourceflavors", {
        "apiVersion": kind, "kind": "ResourceFlavor", "metadata": {"name": "gpu"},
        "spec": {"nodeLabels": {"pool": "gpu"}}})  # fmt: skip
    objects.create_cluster_custom_object(GROUP, VERSION, "clusterqueues", {
        "apiVersion": kind, "kind": "ClusterQueue", "metadata": {"name": "team"},
        "spec": {"cohortName": "pool", "namespaceSelector": {}, "resourceGroups": [
            {"coveredResources": [GPU],
             "flavors": [{"name": "gpu", "resources": [{"name": GPU, "nominalQuota": 8}]}]}]}})  # fmt: skip
    used = [{"name": "gpu", "resources": [{"name": GPU, "total": "4", "borrowed": "0"}]}]
    status = {"flavorsReservation": used, "flavorsUsage": used, "pendingWorkloads": 1, "admittedWorkloads": 1}
    objects.patch_cluster_custom_object_status(GROUP, VERSION, "clusterqueues", "team", {"status": status})
    objects.create_namespaced_custom_object(GROUP, VERSION, "team-a", "localqueues", {
        "apiVersion": kind, "kind": "LocalQueue", "metadata": {"name": "q"},
        "spec": {"clusterQueue": "team"}})  # fmt: skip
    for name, gpus in (("job-running", 4), ("job-waiting", 6)):
        asks = {"name": "c", "image": "registry.example/x:1", "resources": {"requests": {GPU: str(gpus)}}}
        pod_set = {"name": "main", "count": 1, "template": {"spec": {"containers": [asks]}}}
        objects.create_namespaced_custom_object(GROUP, VERSION, "team-a", "workloads", {
            "apiVersion": kind, "kind": "Workload", "metadata": {"name": name},
            "spec": {"queueName": "q", "podSets": [pod_set]}})  # fmt: skip
    admission = {"clusterQueue": "team", "podSetAssignments": [
        {"name": "main", "count": 1, "flavors": {GPU: "gpu"}, "resourceUsage": {GPU: "4"}}]}  # fmt: skip
    admitted = [condition("QuotaReserved", "True"), condition("Admitted", "True")]
    write_status(objects, "job-running", {"conditions": admitted, "admission": admission})
    said = ("couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor "
            "gpu, 2 more needed")  # fmt: skip
    write_status(objects, "job-waiting", {"conditions": [condition("QuotaReserved", "False", said)]})


def write_status(objects: client.CustomObjectsApi, workload: str, status: dict[str, Any]) -> None:
    """What Kueue's manager would write of a Workload (none runs here)."""
    objects.patch_namespaced_custom_object_status(
        GROUP, VERSION, "team-a", "workloads", workload, {"status": status}
    )


@pytest.fixture(scope="module")
def queued(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    state = tmp_path_factory.mktemp("queues-pages")
    plane = testenv.start(state, bare=True)
    api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
    server: Server | None = None
    try:
        kueue_crds.install(api, VERSION)
        seed(api)
        server = Server(plane)
        yield server
    finally:
        if server is not None:
            server.stop()
        api.close()
        plane.stop(now=True)


@pytest.mark.parametrize(("width", "dark"), VIEWPORTS)
def test_the_queues_page_and_the_jobs_waiting_for_quota_have_no_accessibility_violations(
    browser: Any, queued: Server, axe: str, width: int, dark: bool
) -> None:
    context = axe_context(browser, width, dark)
    try:
        page = context.new_page()
        page.goto(queued.url + "/queues/")
        over = page.locator("[data-over]").first  # the quota above the flavor's nodes, flagged
        expect(page.locator('[data-cluster-queue="team"]')).to_be_visible(timeout=30_000)
        expect(over).to_be_visible()
        assert violations_here(page, axe) == [], "/queues/"
        page.goto(queued.url + "/pending/")
        expect(page.locator('[data-workload="team-a/job-waiting"] [data-lacks]')).to_be_visible(
            timeout=30_000
        )
        assert violations_here(page, axe) == [], "/pending/"
    finally:
        context.close()
