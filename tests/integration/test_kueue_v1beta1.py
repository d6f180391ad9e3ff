"""A cluster whose Kueue serves only kueue.x-k8s.io/v1beta1 (Kueue before 0.15): Kueue's own CRDs,
cut to that version, on a bare control plane. No Kueue manager runs: the test writes the
Workload's and ClusterQueue's status itself, playing Kueue's part, in the words Kueue v0.17's
flavor assigner uses. The dashboard finds the version by discovery and reads a ClusterQueue's
cohort under v1beta1's name for it (``spec.cohort``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client

from app.kube.api.client import ClusterConfig, api_client, load_configuration
from extres_demo import testenv
from tests import kueue_crds
from tests.integration.test_kueue import custom, pending_page
from tests.kube_helpers import create_node

pytestmark = pytest.mark.kube
GPU = "nvidia.com/gpu"
GROUP, VERSION = "kueue.x-k8s.io", "v1beta1"


@pytest.fixture(scope="module")
def old_kueue(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[testenv.ControlPlane, client.ApiClient]]:
    state = tmp_path_factory.mktemp("kueue-v1beta1")
    plane = testenv.start(state, bare=True)
    api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
    try:
        kueue_crds.install(api, VERSION)
        yield plane, api
    finally:
        api.close()
        plane.stop(now=True)


def test_a_kueue_serving_only_v1beta1_is_read_with_its_cohort_and_its_waiting_job(old_kueue):
    plane, api = old_kueue
    core, objects = client.CoreV1Api(api), custom(api)
    create_node(core, "old-gpu", {GPU: "4"}, labels={"pool": "gpu"})
    core.create_namespace({"metadata": {"name": "team-a"}})
    kueue_api = f"{GROUP}/{VERSION}"
    objects.create_cluster_custom_object(GROUP, VERSION, "resourceflavors", {
        "apiVersion": kueue_api, "kind": "ResourceFlavor", "metadata": {"name": "gpu"},
        "spec": {"nodeLabels": {"pool": "gpu"}}})  # fmt: skip
    objects.create_cluster_custom_object(GROUP, VERSION, "clusterqueues", {
        "apiVersion": kueue_api, "kind": "ClusterQueue", "metadata": {"name": "team"},
        "spec": {"cohort": "pool", "namespaceSelector": {}, "resourceGroups": [
            {"coveredResources": [GPU],
             "flavors": [{"name": "gpu", "resources": [{"name": GPU, "nominalQuota": 2}]}]}]}})  # fmt: skip
    objects.create_namespaced_custom_object(GROUP, VERSION, "team-a", "localqueues", {
        "apiVersion": kueue_api, "kind": "LocalQueue", "metadata": {"name": "q"},
        "spec": {"clusterQueue": "team"}})  # fmt: skip
    pod_set = {"name": "main", "count": 1, "template": {"spec": {"containers": [
        {"name": "c", "image": "registry.example/x:1", "resources": {"requests": {GPU: "3"}}}]}}}  # fmt: skip
    objects.create_namespaced_custom_object(GROUP, VERSION, "team-a", "workloads", {
        "apiVersion": kueue_api, "kind": "Workload", "metadata": {"name": "job-big"},
        "spec": {"queueName": "q", "podSets": [pod_set]}})  # fmt: skip
    said = (
        "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor gpu, "
        "previously considered podsets requests (0) + current podset request (3) > maximum capacity (2)"
    )
    status = {"conditions": [{"type": "QuotaReserved", "status": "False", "reason": "Pending",
                              "message": said, "lastTransitionTime": "2026-12-06T00:00:00Z"}]}  # fmt: skip
    objects.patch_namespaced_custom_object_status(
        GROUP, VERSION, "team-a", "workloads", "job-big", {"status": status}
    )
    page = pending_page(plane, "/pending/?namespace=team-a", "[data-workload] [data-lacks]")
    lacks = page.select_one('[data-workload="team-a/job-big"] [data-lacks]')
    assert (lacks["data-lacks"], lacks["data-flavor"], lacks["data-more"]) == (GPU, "gpu", "")
    assert "at most 2" in lacks.get_text()  # Kueue's maximum capacity, quoted
    queues = pending_page(plane, "/queues/", '[data-cluster-queue="team"]')
    heading = queues.select_one('[data-cluster-queue="team"] h3').get_text()
    assert "pool" in heading  # the cohort, from v1beta1's spec.cohort
