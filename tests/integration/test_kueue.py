"""Real Kueue (sigs.k8s.io/kueue, built from Go modules by kube-testenv) on a control plane of its
own (its Job webhook refuses Jobs while the manager is down, so it shares no plane with other
tests), with kube-scheduler and kwok as the GPU node's kubelet. Kueue itself says who waits for
quota: a ClusterQueue with a nominal nvidia.com/gpu quota admits one Job and holds the next, with
no pod at all, naming how many more it needs."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from app.kube.api.client import ClusterConfig, api_client, load_configuration
from app.web.process import of as process_of
from extres_demo import kueue, testenv
from tests.helpers import started
from tests.kube_helpers import container, create_node

pytestmark = pytest.mark.kube
GPU = "nvidia.com/gpu"
GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"


@pytest.fixture(scope="module")
def kueue_plane(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[testenv.ControlPlane, client.ApiClient]]:
    state = tmp_path_factory.mktemp("kueue-plane")
    plane = testenv.start(state, scheduler=True)
    api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
    manager = None
    try:
        manager = kueue.start(plane, Path(state) / "kueue", api)
        yield plane, api
    finally:
        if manager is not None:
            manager.stop()
        api.close()
        plane.stop(now=True)


def pending_page(plane: testenv.ControlPlane, url: str, expected: str | Callable[[Any], bool]) -> Any:
    """The dashboard's page at ``url`` (served on this plane, as its admin) once it shows
    ``expected`` (a CSS selector, or what a check of the parsed page holds true of)."""
    from bs4 import BeautifulSoup

    from app import create_app
    from tests.helpers import browser, eventually

    app = started(create_app({"kubeconfig": str(plane.kubeconfig), "in_cluster": "false"}))
    app.config["TESTING"] = True
    web = browser(app)
    try:

        def shown() -> Any:
            found = BeautifulSoup(web.get(url).get_data(as_text=True), "html.parser")
            shows = expected(found) if callable(expected) else bool(found.select(expected))
            return found if shows else None

        return eventually(shown, timeout=30)
    finally:
        process_of(app).local.stop()


def custom(api: client.ApiClient) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(api)


def until(check: Any, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def gpu_job(name: str, gpus: int) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": "team-a"}},
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "suspend": True,
            "template": {
                # kwok completes a Job's pod after 3 s unless told to keep it running (its quota held)
                "metadata": {"annotations": {"extres.test/keep-running": "true"}},
                "spec": {"restartPolicy": "Never", "containers": [container(requests={GPU: str(gpus)})]},
            },
        },
    }


def workload_of(api: client.ApiClient, job: str, namespace: str = "team-a") -> dict[str, Any] | None:
    found = custom(api).list_namespaced_custom_object(GROUP, VERSION, namespace, "workloads")["items"]
    owned = [w for w in found if any(o.get("name") == job for o in w["metadata"].get("ownerReferences", ()))]
    return owned[0] if owned else None


def condition(workload: dict[str, Any] | None, kind: str) -> dict[str, Any]:
    for c in ((workload or {}).get("status") or {}).get("conditions") or ():
        if c["type"] == kind:
            return c
    return {}


def test_a_job_past_its_queues_gpu_quota_waits_with_no_pod_and_kueue_names_the_shortfall(kueue_plane):
    plane, api = kueue_plane
    core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
    create_node(core, "gpu-node", {GPU: "8"}, labels={"extres.test/gpu": "true"})
    core.create_namespace({"metadata": {"name": "team-a"}})
    objects = custom(api)
    objects.create_cluster_custom_object(
        GROUP, VERSION, "resourceflavors",
        {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ResourceFlavor", "metadata": {"name": "gpu"},
         "spec": {"nodeLabels": {"extres.test/gpu": "true"}}},
    )  # fmt: skip
    objects.create_cluster_custom_object(
        GROUP, VERSION, "clusterqueues",
        {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterQueue", "metadata": {"name": "team"},
         "spec": {"namespaceSelector": {}, "resourceGroups": [
             {"coveredResources": [GPU],
              "flavors": [{"name": "gpu", "resources": [{"name": GPU, "nominalQuota": 4}]}]}
         ]}},
    )  # fmt: skip
    objects.create_namespaced_custom_object(
        GROUP, VERSION, "team-a", "localqueues",
        {"apiVersion": f"{GROUP}/{VERSION}", "kind": "LocalQueue", "metadata": {"name": "team-a"},
         "spec": {"clusterQueue": "team"}},
    )  # fmt: skip
    batch.create_namespaced_job("team-a", gpu_job("first", 3))
    admitted = until(lambda: condition(workload_of(api, "first"), "Admitted").get("status") == "True")
    assert admitted, workload_of(api, "first")
    batch.create_namespaced_job("team-a", gpu_job("second", 2))
    waiting = until(lambda: condition(workload_of(api, "second"), "QuotaReserved").get("message"))
    assert waiting, workload_of(api, "second")
    reserved = condition(workload_of(api, "second"), "QuotaReserved")
    assert reserved["status"] == "False" and "insufficient unused quota" in reserved["message"]
    assert f"{GPU} in flavor gpu" in reserved["message"] and "1 more needed" in reserved["message"]
    assert batch.read_namespaced_job("second", "team-a").spec.suspend is True  # no pod at all
    assert not core.list_namespaced_pod("team-a", label_selector="job-name=second").items

    def reserved_gpus() -> list[dict[str, Any]]:
        queue = objects.get_cluster_custom_object_status(GROUP, VERSION, "clusterqueues", "team")
        return (queue.get("status") or {}).get("flavorsReservation") or []

    assert until(
        lambda: (
            reserved_gpus() == [{"name": "gpu", "resources": [{"name": GPU, "total": "3", "borrowed": "0"}]}]
        )
    )
    pods = until(lambda: core.list_namespaced_pod("team-a", label_selector="job-name=first").items)
    assert pods and pods[0].spec.node_selector == {"extres.test/gpu": "true"}  # the flavor's nodeLabels
    # the dashboard says the same, from its watched Workloads and LocalQueues
    # (Workloads and LocalQueues are listed apart: wait for both)
    listed = pending_page(plane, "/pending/?namespace=team-a", '[data-workload] [data-field="cluster-queue"]')
    wait = listed.select_one(f'[data-workload="team-a/{workload_of(api, "second")["metadata"]["name"]}"]')
    lacks = wait.select_one("[data-lacks]")
    assert (lacks["data-lacks"], lacks["data-flavor"], lacks["data-more"]) == (
        GPU,
        "gpu",
        "1",
    )  # Kueue's "1 more"
    assert wait.select_one('[data-field="cluster-queue"]').get_text() == "team"
    [holder] = wait.select("[data-quota-holder]")
    first = workload_of(api, "first")["metadata"]["name"]
    assert holder["data-quota-holder"] == f"team-a/{first}" and holder["data-amount"] == "3"
    assert "insufficient unused quota" in wait.select_one(".scheduler q").get_text()
    # the first one done, the second is admitted in its turn
    batch.delete_namespaced_job("first", "team-a", propagation_policy="Background")
    assert until(lambda: condition(workload_of(api, "second"), "Admitted").get("status") == "True")


def test_a_pod_kueue_gates_is_pending_on_the_dashboard_with_the_gate_and_who_lifts_it(kueue_plane):
    """Kueue's pod integration gates a plain pod until its Workload is admitted: the API server
    says PodScheduled=False, SchedulingGated, and no scheduler looks at it; the Pending page
    lists it, gated, in Kueue's words, and counts it in the navigation."""
    plane, api = kueue_plane
    core, objects = client.CoreV1Api(api), custom(api)
    core.create_namespace({"metadata": {"name": "team-b"}})
    objects.create_cluster_custom_object(
        GROUP, VERSION, "clusterqueues",
        {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterQueue", "metadata": {"name": "small"},
         "spec": {"namespaceSelector": {}, "resourceGroups": [
             {"coveredResources": [GPU],
              "flavors": [{"name": "gpu", "resources": [{"name": GPU, "nominalQuota": 1}]}]}
         ]}},
    )  # fmt: skip
    objects.create_namespaced_custom_object(
        GROUP, VERSION, "team-b", "localqueues",
        {"apiVersion": f"{GROUP}/{VERSION}", "kind": "LocalQueue", "metadata": {"name": "team-b"},
         "spec": {"clusterQueue": "small"}},
    )  # fmt: skip
    pod = {
        "metadata": {"name": "notebook", "labels": {"kueue.x-k8s.io/queue-name": "team-b"}},
        "spec": {"containers": [container(requests={GPU: "2"})]},
    }
    core.create_namespaced_pod("team-b", pod)
    held = core.read_namespaced_pod("notebook", "team-b")
    gates = [g.name for g in held.spec.scheduling_gates or ()]
    assert "kueue.x-k8s.io/admission" in gates  # and, with v0.17's defaults, its topology gate
    waiting = until(lambda: condition(workload_of(api, "notebook", "team-b"), "QuotaReserved").get("message"))
    assert waiting and "insufficient quota" in waiting.replace("unused ", "")
    page = pending_page(  # the pod and its Workload (the two are listed and watched apart)
        plane,
        "/pending/?namespace=team-b",
        lambda p: bool(
            p.select('[data-gated-pod="team-b/notebook"]') and p.select("[data-workload] [data-lacks]")
        ),
    )
    item = page.select_one('[data-gated-pod="team-b/notebook"]')
    assert [g["data-gate"] for g in item.select("[data-gate]")] == gates  # as the API server has them
    assert "Kueue lifts it once the pod's Workload is admitted" in item.get_text()
    assert not page.select("article.pending[data-pod]")  # not judged by a scheduler
    lacks = page.select_one("[data-workload] [data-lacks]")  # and its Workload waits, for good:
    assert lacks["data-more"] == "" and "Can never fit in flavor gpu" in lacks.get_text()  # 2 > quota 1


def test_the_queues_page_puts_every_queues_quota_beside_the_nodes_its_flavor_selects(kueue_plane):
    """Kueue's ClusterQueues as Kueue reports them (nominal quota, reserved), and what the
    dashboard adds: the flavor's quota over every queue beside the allocatable of the nodes its
    labels select, quota past that flagged, GPUs on nodes no flavor selects named."""
    plane, api = kueue_plane
    core, objects = client.CoreV1Api(api), custom(api)
    objects.create_cluster_custom_object(
        GROUP, VERSION, "clusterqueues",
        {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterQueue", "metadata": {"name": "big"},
         "spec": {"namespaceSelector": {}, "resourceGroups": [
             {"coveredResources": [GPU],
              "flavors": [{"name": "gpu", "resources": [{"name": GPU, "nominalQuota": 12}]}]}
         ]}},
    )  # fmt: skip
    create_node(core, "gpu-unlabelled", {GPU: "2"})
    nominal = sum(
        int(r["nominalQuota"])
        for q in objects.list_cluster_custom_object(GROUP, VERSION, "clusterqueues")["items"]
        for g in q["spec"]["resourceGroups"]
        for f in g["flavors"]
        for r in f["resources"]
        if f["name"] == "gpu" and r["name"] == GPU
    )
    page = pending_page(plane, "/queues/", '[data-cluster-queue="big"]')
    row = page.select_one(f'#flavor-capacity tr[data-flavor="gpu"][data-resource="{GPU}"]')
    assert row.select_one('[data-field="nominal"]').get_text() == str(nominal)
    assert row.select_one('[data-field="capacity"]').get_text() == "8"  # the one labelled node
    assert row.select_one("[data-over]")["data-over"] == str(nominal - 8)
    assert page.select_one(f'[data-unqueued="{GPU}"]').get_text().startswith("2 ")
    team = objects.get_cluster_custom_object_status(GROUP, VERSION, "clusterqueues", "team")
    reserved = {r["name"]: r["total"] for f in team["status"]["flavorsReservation"] for r in f["resources"]}
    shown = page.select_one(f'[data-cluster-queue="team"] tr[data-resource="{GPU}"] [data-field="reserved"]')
    assert shown.get_text() == reserved[GPU]  # as Kueue reports it
    # the metrics say the same (what the chart's ExtresQueueQuotaAboveCapacity alert reads)
    from app import create_app
    from tests.helpers import eventually

    app = started(create_app({"kubeconfig": str(plane.kubeconfig), "in_cluster": "false"}))
    try:
        app.test_client().get("/")
        metrics = process_of(app).local.metrics
        over = f'extres_kueue_quota_over_capacity{{flavor="gpu",resource="{GPU}"}} {float(nominal - 8)}'
        eventually(lambda: over in metrics.exposition().decode(), timeout=30)
        text = metrics.exposition().decode()
        assert (
            f'extres_kueue_quota{{cluster_queue="team",flavor="gpu",kind="nominal",resource="{GPU}"}} 4.0'
            in text
        )
    finally:
        process_of(app).local.stop()


def test_a_job_kueue_admits_that_no_node_takes_reads_the_quota_admits_it_and_the_nodes_do_not(kueue_plane):
    """A queue's quota (8) on a flavor whose one node has 2 GPUs admits a 3-GPU Job; its pod,
    sent to that node by the flavor's labels, is left Unschedulable by kube-scheduler. The
    Pending card quotes kube-scheduler and says Kueue admitted it."""
    plane, api = kueue_plane
    core, objects = client.CoreV1Api(api), custom(api)
    create_node(core, "small-gpu", {GPU: "2"}, labels={"extres.test/small": "true"})
    core.create_namespace({"metadata": {"name": "team-c"}})
    objects.create_cluster_custom_object(
        GROUP, VERSION, "resourceflavors",
        {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ResourceFlavor", "metadata": {"name": "small"},
         "spec": {"nodeLabels": {"extres.test/small": "true"}}},
    )  # fmt: skip
    objects.create_cluster_custom_object(
        GROUP, VERSION, "clusterqueues",
        {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterQueue", "metadata": {"name": "roomy"},
         "spec": {"namespaceSelector": {}, "resourceGroups": [
             {"coveredResources": [GPU],
              "flavors": [{"name": "small", "resources": [{"name": GPU, "nominalQuota": 8}]}]}
         ]}},
    )  # fmt: skip
    objects.create_namespaced_custom_object(
        GROUP, VERSION, "team-c", "localqueues",
        {"apiVersion": f"{GROUP}/{VERSION}", "kind": "LocalQueue", "metadata": {"name": "team-a"},
         "spec": {"clusterQueue": "roomy"}},
    )  # fmt: skip
    client.BatchV1Api(api).create_namespaced_job("team-c", gpu_job("wide", 3))
    assert until(lambda: condition(workload_of(api, "wide", "team-c"), "Admitted").get("status") == "True")

    def unschedulable() -> list[Any]:
        pods = core.list_namespaced_pod("team-c", label_selector="job-name=wide").items
        return [p for p in pods if any(c.reason == "Unschedulable" for c in p.status.conditions or ())]

    [pod] = until(unschedulable)
    # the pods and Kueue's Workloads are listed and watched apart: wait for the card and its Workload
    card_of = f'article[data-pod="team-c/{pod.metadata.name}"]'
    page = pending_page(plane, "/pending/?namespace=team-c", f"{card_of} [data-admitted-in]")
    card = page.select_one(card_of)
    assert card.select_one("[data-admitted-in]")["data-admitted-in"] == "roomy"
    assert "Insufficient nvidia.com/gpu" in card.select_one(".scheduler q").get_text()


def test_the_demos_queues_admit_one_job_and_hold_another(kueue_plane):
    """What EXTRES_DEMO_QUEUES=1 seeds (extres_demo.demo_queues), on real Kueue: a quota of 2
    GPUs admits the 1-GPU jobs and holds the 2-GPU one, with Kueue's words on the dashboard."""
    from extres_demo import demo_queues

    plane, api = kueue_plane
    create_node(client.CoreV1Api(api), "demo-gpu", {GPU: "4"}, labels={"pool": "gpu"})
    demo_queues.seed_queues(api)
    assert until(
        lambda: condition(workload_of(api, "sweep-1", "research"), "Admitted").get("status") == "True"
    )
    assert until(
        lambda: condition(workload_of(api, "serve-batch", "prod"), "Admitted").get("status") == "True"
    )
    waits = until(lambda: condition(workload_of(api, "sweep-2", "research"), "QuotaReserved").get("message"))
    assert "insufficient unused quota for nvidia.com/gpu in flavor gpu, 2 more needed" in waits
    page = pending_page(plane, "/pending/?namespace=research", "[data-workload] [data-lacks]")
    assert page.select_one("[data-workload] [data-lacks]")["data-more"] == "2"


def test_a_queue_that_borrows_from_its_cohort_shows_what_kueue_says_it_borrowed(kueue_plane):
    """Two ClusterQueues in one cohort: one lends its 4 GPUs, the other has none of its own and
    may borrow 4; a 3-GPU Job in the second is admitted by borrowing, and the Queues page shows
    the reservation and the borrowed part as Kueue's status has them."""
    plane, api = kueue_plane
    core, objects = client.CoreV1Api(api), custom(api)
    create_node(core, "cohort-node", {GPU: "4"}, labels={"extres.test/cohort": "true"})
    core.create_namespace({"metadata": {"name": "team-d"}})
    objects.create_cluster_custom_object(
        GROUP, VERSION, "resourceflavors",
        {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ResourceFlavor", "metadata": {"name": "pooled"},
         "spec": {"nodeLabels": {"extres.test/cohort": "true"}}},
    )  # fmt: skip
    for name, quota in (
        ("lender", {"nominalQuota": 4}),
        ("borrower", {"nominalQuota": 0, "borrowingLimit": 4}),
    ):
        objects.create_cluster_custom_object(
            GROUP, VERSION, "clusterqueues",
            {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterQueue", "metadata": {"name": name},
             "spec": {"cohortName": "pool", "namespaceSelector": {}, "resourceGroups": [
                 {"coveredResources": [GPU],
                  "flavors": [{"name": "pooled", "resources": [{"name": GPU, **quota}]}]}
             ]}},
        )  # fmt: skip
    objects.create_namespaced_custom_object(
        GROUP, VERSION, "team-d", "localqueues",
        {"apiVersion": f"{GROUP}/{VERSION}", "kind": "LocalQueue", "metadata": {"name": "team-a"},
         "spec": {"clusterQueue": "borrower"}},
    )  # fmt: skip
    client.BatchV1Api(api).create_namespaced_job("team-d", gpu_job("borrowing", 3))
    assert until(
        lambda: condition(workload_of(api, "borrowing", "team-d"), "Admitted").get("status") == "True"
    )

    def reservation() -> dict[str, str]:
        status = objects.get_cluster_custom_object_status(GROUP, VERSION, "clusterqueues", "borrower")
        found = [
            r for f in (status.get("status") or {}).get("flavorsReservation") or () for r in f["resources"]
        ]
        return next((r for r in found if r["name"] == GPU and r["total"] == "3"), {})

    kueue_says = until(reservation)
    assert kueue_says == {"name": GPU, "total": "3", "borrowed": "3"}
    cell = f'[data-cluster-queue="borrower"] tr[data-resource="{GPU}"] [data-field="borrowed"]'
    page = pending_page(
        plane, "/queues/", lambda p: p.select_one(cell) and p.select_one(cell).get_text() != "0"
    )
    row = page.select_one(f'[data-cluster-queue="borrower"] tr[data-resource="{GPU}"]')
    assert row.select_one('[data-field="reserved"]').get_text() == kueue_says["total"]
    assert row.select_one('[data-field="borrowed"]').get_text() == kueue_says["borrowed"]
    assert page.select_one('[data-cluster-queue="borrower"] h3').get_text().count("pool") == 1  # its cohort
    # a Job in the lending queue now waits: what it lacks is held by the borrower, in the queue of
    # its cohort, with the amount Kueue's status gives
    objects.create_namespaced_custom_object(
        GROUP, VERSION, "team-d", "localqueues",
        {"apiVersion": f"{GROUP}/{VERSION}", "kind": "LocalQueue", "metadata": {"name": "lending"},
         "spec": {"clusterQueue": "lender"}},
    )  # fmt: skip
    job = gpu_job("lenders-own", 2)
    job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "lending"
    client.BatchV1Api(api).create_namespaced_job("team-d", job)
    said = until(lambda: condition(workload_of(api, "lenders-own", "team-d"), "QuotaReserved").get("message"))
    assert "insufficient unused quota for nvidia.com/gpu in flavor pooled, 1 more needed" in said
    name = workload_of(api, "lenders-own", "team-d")["metadata"]["name"]
    page = pending_page(
        plane, "/pending/?namespace=team-d", f'[data-workload="team-d/{name}"] [data-quota-holder]'
    )
    [holder] = page.select(f'[data-workload="team-d/{name}"] [data-quota-holder]')
    borrowing = workload_of(api, "borrowing", "team-d")["metadata"]["name"]
    assert holder["data-quota-holder"] == f"team-d/{borrowing}"
    assert holder.select_one('[data-field="holder-queue"]').get_text() == "borrower"
    assert holder.get_text().split("(")[0].strip().endswith(f": {kueue_says['total']}")


def visibility(api: client.ApiClient, cluster_queue: str) -> dict[str, Any] | None:
    """Kueue's visibility API's pending workloads of ``cluster_queue`` (None where not served)."""
    try:
        return custom(api).get_cluster_custom_object(
            "visibility.kueue.x-k8s.io", "v1beta2", "clusterqueues", f"{cluster_queue}/pendingworkloads"
        )
    except client.ApiException as exc:
        if exc.status in (404, 503):
            return None
        raise


def test_each_waiting_jobs_place_in_line_is_what_kueues_visibility_api_says(kueue_plane):
    """A queue of one GPU holds one Job and two wait; the Pending page gives each its place in
    the ClusterQueue and the LocalQueue as the visibility API (served through the API server,
    as an aggregated API) lists them."""
    plane, api = kueue_plane
    core, objects = client.CoreV1Api(api), custom(api)
    create_node(core, "line-node", {GPU: "1"}, labels={"extres.test/line": "true"})
    core.create_namespace({"metadata": {"name": "team-e"}})
    objects.create_cluster_custom_object(
        GROUP, VERSION, "resourceflavors",
        {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ResourceFlavor", "metadata": {"name": "line"},
         "spec": {"nodeLabels": {"extres.test/line": "true"}}},
    )  # fmt: skip
    objects.create_cluster_custom_object(
        GROUP, VERSION, "clusterqueues",
        {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterQueue", "metadata": {"name": "line"},
         "spec": {"namespaceSelector": {}, "resourceGroups": [
             {"coveredResources": [GPU],
              "flavors": [{"name": "line", "resources": [{"name": GPU, "nominalQuota": 1}]}]}
         ]}},
    )  # fmt: skip
    objects.create_namespaced_custom_object(
        GROUP, VERSION, "team-e", "localqueues",
        {"apiVersion": f"{GROUP}/{VERSION}", "kind": "LocalQueue", "metadata": {"name": "team-a"},
         "spec": {"clusterQueue": "line"}},
    )  # fmt: skip
    batch = client.BatchV1Api(api)
    batch.create_namespaced_job("team-e", gpu_job("holds", 1))
    assert until(lambda: condition(workload_of(api, "holds", "team-e"), "Admitted").get("status") == "True")
    for name in ("next", "after"):
        batch.create_namespaced_job("team-e", gpu_job(name, 1))
        time.sleep(1.1)  # creation times a second apart: Kueue's order (same priority) is by it
    if visibility(api, "line") is None and until(lambda: visibility(api, "line"), timeout=30) is None:
        pytest.skip(
            "Kueue's visibility API is not served here (the test bed found no address of this machine)"
        )
    listed = until(
        lambda: len((visibility(api, "line") or {}).get("items") or ()) == 2 and visibility(api, "line")
    )
    assert listed, visibility(api, "line")
    # its serving certificate is the test bed's own, in the manager's folder (never /visibility)
    assert (plane.state_dir / "kueue" / "visibility" / "apiserver.crt").is_file()
    kueue_says = {
        (i["metadata"]["name"], i["positionInClusterQueue"], i["positionInLocalQueue"])
        for i in listed["items"]
    }
    assert {place for _, place, _ in kueue_says} == {0, 1}

    def placed(page: Any) -> bool:
        return len(page.select("[data-workload] [data-field=position]")) == 2

    page = pending_page(plane, "/pending/?namespace=team-e", placed)
    shown = set()
    for card in page.select("[data-workload]"):
        spot = card.select_one("[data-field=position]")
        name = card["data-workload"].split("/", 1)[1]
        shown.add((name, int(spot["data-in-cluster-queue"]), int(spot["data-in-local-queue"])))
        assert ("Next in line" in spot.get_text()) == (spot["data-in-cluster-queue"] == "0")
    assert shown == kueue_says
