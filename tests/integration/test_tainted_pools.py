"""What a job can use on GPU pools tainted as clouds taint them, checked against kube-scheduler
placing real pods, on a control plane of this module's own with the ExtendedResourceToleration
admission plugin on (as GKE runs it). Pools: two nodes tainted ``nvidia.com/gpu=present:NoSchedule``
(GKE's default), one ``sku=gpu:NoSchedule`` (AKS), one ``dedicated=ml:NoSchedule`` (a team's), one
untainted. Every pod asking for a GPU carries AKS's toleration in its own spec; none carries the
team's; the admission plugin adds the GPU's. The strip counts the GKE, AKS and untainted pools,
leaves the team's out by name, says what it assumed, and the scheduler then binds exactly as many
4-GPU pods as the strip says fit."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from bs4 import BeautifulSoup
from kubernetes import client

from app import create_app
from app.kube.api.client import ClusterConfig, api_client, load_configuration
from app.web.process import of as process_of
from extres_demo import testenv
from tests.helpers import browser, eventually, started
from tests.kube_helpers import create_node, create_pod, ready

pytestmark = [pytest.mark.kube, pytest.mark.scheduler, pytest.mark.compat]

GPU = "nvidia.com/gpu"
AKS = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}


@pytest.fixture(scope="module")
def gke_plane(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[testenv.ControlPlane, client.CoreV1Api]]:
    plane = testenv.start(
        tmp_path_factory.mktemp("tainted-pools"), scheduler=True, admission=("ExtendedResourceToleration",)
    )
    api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
    try:
        yield plane, client.CoreV1Api(api)
    finally:
        api.close()
        plane.stop(now=True)


def taint(core: client.CoreV1Api, node: str, key: str, value: str) -> None:
    core.patch_node(node, {"spec": {"taints": [{"key": key, "value": value, "effect": "NoSchedule"}]}})


def gpu_pod(core: client.CoreV1Api, name: str, gpus: int, node: str | None = None) -> None:
    create_pod(core, name, node, {GPU: str(gpus)}, tolerations=[AKS])


def test_tainted_gpu_pools_count_for_pods_that_tolerate_them_as_the_scheduler_places_them(gke_plane):
    plane, core = gke_plane
    pools = {"gke-a": GPU, "gke-b": GPU, "aks": "sku", "team": "dedicated", "plain": ""}
    for name in pools:
        create_node(core, name, {GPU: "4"}, labels={"pool": name})
    ready(core, *pools, timeout=60)
    taint(core, "gke-a", GPU, "present")
    taint(core, "gke-b", GPU, "present")
    taint(core, "aks", "sku", "gpu")
    taint(core, "team", "dedicated", "ml")
    gpu_pod(core, "holder", 1, node="aks")  # 3 free left on aks
    gpu_pod(core, "plain-holder", 2, node="plain")  # 2 free left on plain
    # the admission plugin gave the pod the GPU pool's toleration
    tolerations = core.read_namespaced_pod("holder", "default").spec.tolerations
    assert any((t.key, t.operator, t.effect) == (GPU, "Exists", "NoSchedule") for t in tolerations)

    app = started(create_app({"kubeconfig": str(plane.kubeconfig), "in_cluster": "false"}))
    app.config["TESTING"] = True
    web = browser(app)
    try:

        def strip_room() -> Any:
            page = BeautifulSoup(web.get("/").get_data(as_text=True), "html.parser")
            found = page.select_one(f'.strip [data-room="{GPU}"]')
            shown = found.select_one('[data-field="free"]') if found is not None else None
            return found if shown is not None and shown.get_text() == "17" else None

        room = eventually(strip_room, timeout=30)
        schedulable = room.select_one('[data-field="schedulable"]')
        assert schedulable.get_text() == "13"  # gke-a 4 + gke-b 4 + aks 3 + plain 2
        assumed = schedulable["data-assumed"].split("; ")
        assert assumed == [f"{GPU}:NoSchedule op=Exists", "sku=gpu:NoSchedule"]
        assert "assumed tolerations" in schedulable["title"]
        excluded = {s["data-excluded"]: (s["data-count"], s["title"]) for s in room.select("[data-excluded]")}
        assert excluded == {"tainted dedicated=ml:NoSchedule": ("1", "team")}
        assert room.select_one('[data-field="largest"]').get_text() == "4"
        fits = {int(s["data-fits"]): int(s["data-count"]) for s in room.select("[data-fits]")}
        assert fits == {1: 13, 2: 6, 4: 2}
    finally:
        process_of(app).local.stop()

    # the scheduler: two of three 4-GPU pods bound (on the GKE pool), the third left Pending
    for i in range(3):
        gpu_pod(core, f"four-{i}", 4)

    def settled() -> list[str] | None:
        pods = [core.read_namespaced_pod(f"four-{i}", "default") for i in range(3)]
        waiting = [p for p in pods if any(c.reason == "Unschedulable" for c in p.status.conditions or ())]
        bound = sorted(p.spec.node_name for p in pods if p.spec.node_name)
        return bound if len(bound) + len(waiting) == 3 else None

    assert eventually(settled, timeout=30) == ["gke-a", "gke-b"]
