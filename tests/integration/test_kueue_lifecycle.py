"""A lifecycle differential: the real Kueue of the test bed driven through a seeded random sequence
(GPU Jobs created, finished by their pods succeeding, deleted; the ClusterQueue's quota and how
much it may borrow from the other queue of its cohort changed;
GPU nodes added, lowered and removed), and after each step the dashboard's Pending and Queues
pages compared with Kueue's own status: the Workloads waiting for quota and how many more each
needs, who holds the quota with how much, reserved and in use per flavor and resource, admitted
and pending counts, the admitted list. Each step allows a settle time; the lag is printed (p50,
p95); a disagreement fails naming the seed and the step to replay (``EXTRES_LIFECYCLE_SEED``).

kwok plays the kubelets: a Job's pod runs until its ``extres.test/keep-running`` annotation is
taken off, then succeeds (the stage in kwok-stages.yaml), so "finished" is Kueue seeing its Job
complete, as on a real cluster."""

from __future__ import annotations

import os
import random
import re
import statistics
import time
from typing import Any

import pytest
from bs4 import BeautifulSoup
from kubernetes import client

from app import create_app
from app.web.process import of as process_of
from tests.helpers import browser, started
from tests.integration.test_kueue import GROUP, VERSION, custom, kueue_plane  # noqa: F401 - the fixture
from tests.kube_helpers import container, create_node

pytestmark = pytest.mark.kube
GPU = "nvidia.com/gpu"
NS, CQ, LQ, FLAVOR = "lifecycle", "lifecycle", "lifecycle", "lifecycle-gpu"
LENDER, COHORT = "lifecycle-lender", "lifecycle-pool"
LABEL = "extres.test/lifecycle"
STEPS = int(os.environ.get("EXTRES_LIFECYCLE_STEPS", "16"))
SETTLE = 45.0  # seconds a step may take to agree
STABLE = 3.5  # seconds Kueue's status stays the same before it counts as settled (kwok completes a pod in 3)
MORE = re.compile(r"insufficient unused quota for (\S+) in flavor (\S+), (\S+) more needed")


def job(name: str, gpus: int) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": LQ}},
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "template": {
                "metadata": {"annotations": {"extres.test/keep-running": "true"}},
                "spec": {"restartPolicy": "Never", "containers": [container(requests={GPU: str(gpus)})]},
            },
        },
    }


def conditions(w: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in (w.get("status") or {}).get("conditions") or ()}


def kueue_says(objects: client.CustomObjectsApi) -> dict[str, Any]:
    """What Kueue's own objects say, in the terms the pages show."""
    found = objects.list_namespaced_custom_object(GROUP, VERSION, NS, "workloads")["items"]
    waiting, holding = {}, {}
    for w in found:
        c, name = conditions(w), w["metadata"]["name"]
        reserved = c.get("QuotaReserved", {}).get("status")
        finished = c.get("Finished", {}).get("status") == "True"
        if reserved != "True" and not finished:
            more = MORE.search(c.get("QuotaReserved", {}).get("message", ""))
            waiting[name] = more.group(3) if more else ""
        admission = (w.get("status") or {}).get("admission")
        if admission and reserved == "True" and not finished and c.get("Evicted", {}).get("status") != "True":
            usage = admission["podSetAssignments"][0].get("resourceUsage", {})
            holding[name] = str(usage.get(GPU, ""))
    queue = objects.get_cluster_custom_object_status(GROUP, VERSION, "clusterqueues", CQ).get("status") or {}

    def total(key: str) -> str:
        for f in queue.get(key) or ():
            for r in f.get("resources") or ():
                if (f["name"], r["name"]) == (FLAVOR, GPU):
                    return str(r.get("total", ""))
        return "not reported"

    counts = (queue.get("admittedWorkloads"), queue.get("pendingWorkloads"))
    return {
        "waiting": waiting,
        "holders": sorted(holding.items())[:5],
        "admitted": sorted(holding)[:10],
        "reserved": total("flavorsReservation"),
        "used": total("flavorsUsage"),
        "counts": counts if None not in counts else None,
    }


def kueue_settled(objects: client.CustomObjectsApi, job_made: int) -> bool:
    """Until Kueue's status is the same over STABLE s (and the Job just made, if any, has its
    Workload): what the dashboard's lag is measured from."""
    deadline = time.monotonic() + SETTLE
    last, same_since = None, time.monotonic()
    while time.monotonic() < deadline:
        found = kueue_says(objects)
        names = objects.list_namespaced_custom_object(GROUP, VERSION, NS, "workloads")["items"]
        owned = any(
            o.get("name") == f"j{job_made}" for w in names for o in w["metadata"].get("ownerReferences", ())
        )
        if found != last or (job_made and not owned):
            last, same_since = found, time.monotonic()
        elif time.monotonic() - same_since >= STABLE:
            return True
        time.sleep(0.25)
    return False


def dashboard_says(web: Any) -> dict[str, Any]:
    pending = BeautifulSoup(web.get(f"/pending/?namespace={NS}").get_data(as_text=True), "html.parser")
    waiting, holders = {}, set()
    for card in pending.select("article.quota[data-workload]"):
        name = card["data-workload"].split("/", 1)[1]
        lacks = card.select_one("[data-lacks]")
        waiting[name] = lacks["data-more"] if lacks is not None else ""
        for h in card.select("[data-quota-holder]"):
            holders.add((h["data-quota-holder"].split("/", 1)[1], h["data-amount"]))
    queues = BeautifulSoup(web.get("/queues/").get_data(as_text=True), "html.parser")
    section = queues.select_one(f'[data-cluster-queue="{CQ}"]')
    said: dict[str, Any] = {"waiting": waiting, "holders": sorted(holders)}
    if section is None:
        return {**said, "admitted": None, "reserved": None, "used": None, "counts": None}
    row = section.select_one(f'tr[data-flavor="{FLAVOR}"][data-resource="{GPU}"]')
    counts = re.match(
        r"(\d+) admitted, (\d+) pending", section.select_one('[data-field="counts"]').get_text()
    )
    return {
        **said,
        "admitted": sorted(a["data-admitted"].split("/", 1)[1] for a in section.select("[data-admitted]")),
        "reserved": row.select_one('[data-field="reserved"]').get_text(),
        "used": row.select_one('[data-field="used"]').get_text(),
        "counts": (int(counts[1]), int(counts[2])) if counts else None,
    }


def agree(kueue: dict[str, Any], shown: dict[str, Any]) -> list[str]:
    """What the dashboard says otherwise than Kueue (empty: they agree). Holders are shown on the
    cards of Workloads short of unused quota only: compared where there is one."""
    compared = ("waiting", "admitted", "reserved", "used", "counts")
    out = [f"{k}: Kueue {kueue[k]!r}, dashboard {shown[k]!r}" for k in compared if kueue[k] != shown[k]]
    if any(more for more in kueue["waiting"].values()) and sorted(kueue["holders"]) != shown["holders"]:
        out.append(f"holders: Kueue {kueue['holders']!r}, dashboard {shown['holders']!r}")
    return out


def test_the_pages_agree_with_kueue_over_a_seeded_random_life(kueue_plane):  # noqa: F811
    plane, api = kueue_plane
    seed = int(os.environ.get("EXTRES_LIFECYCLE_SEED") or random.SystemRandom().randrange(10**6))
    rng = random.Random(seed)
    print(f"lifecycle seed {seed}")
    core, batch, objects = client.CoreV1Api(api), client.BatchV1Api(api), custom(api)
    core.create_namespace({"metadata": {"name": NS}})
    objects.create_cluster_custom_object(GROUP, VERSION, "resourceflavors", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "ResourceFlavor", "metadata": {"name": FLAVOR},
        "spec": {"nodeLabels": {LABEL: "true"}}})  # fmt: skip
    for name, quota in ((CQ, 4), (LENDER, 4)):  # in one cohort: the lender's quota may be borrowed
        objects.create_cluster_custom_object(GROUP, VERSION, "clusterqueues", {
            "apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterQueue", "metadata": {"name": name},
            "spec": {"namespaceSelector": {}, "cohortName": COHORT, "resourceGroups": [
                {"coveredResources": [GPU], "flavors": [{"name": FLAVOR, "resources": [
                    {"name": GPU, "nominalQuota": quota, "borrowingLimit": 0}]}]}]}})  # fmt: skip
    objects.create_namespaced_custom_object(GROUP, VERSION, NS, "localqueues", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "LocalQueue", "metadata": {"name": LQ},
        "spec": {"clusterQueue": CQ}})  # fmt: skip
    create_node(core, "lifecycle-gpu-0", {GPU: "4"}, labels={LABEL: "true"})
    app = started(create_app({"kubeconfig": str(plane.kubeconfig), "in_cluster": "false"}))
    app.config["TESTING"] = True
    web = browser(app)
    jobs: list[str] = []
    nodes = ["lifecycle-gpu-0"]
    made = 0
    lags: list[float] = []
    trace: list[str] = []
    try:
        for step in range(STEPS):
            kinds = ["create", "create", "finish", "delete", "quota", "node"] if jobs else ["create"]
            # the last two steps are fixed so that every life ends with a job waiting (a random
            # one may never make one wait): the quota squeezed to 2, then a job asking for 3
            kind = {STEPS - 2: "quota", STEPS - 1: "create"}.get(step) or rng.choice(kinds)
            last = step >= STEPS - 2
            if kind == "create":
                made += 1
                name = f"j{made}"
                batch.create_namespaced_job(NS, job(name, 3 if last else rng.randint(1, 3)))
                jobs.append(name)
                did = f"create {name}"
            elif kind == "finish":
                name = rng.choice(jobs)
                pods = core.list_namespaced_pod(NS, label_selector=f"job-name={name}").items
                for pod in pods:  # kwok's stage completes it once it may
                    core.patch_namespaced_pod(
                        pod.metadata.name,
                        NS,
                        {"metadata": {"annotations": {"extres.test/keep-running": None}}},
                    )
                did = f"finish {name} ({len(pods)} pod{'s' if len(pods) != 1 else ''})"
            elif kind == "delete":
                name = jobs.pop(rng.randrange(len(jobs)))
                batch.delete_namespaced_job(name, NS, propagation_policy="Background")
                did = f"delete {name}"
            elif kind == "quota":  # its nominal quota and how much it may borrow from the lender
                quota, borrow = (2, 0) if last else (rng.randint(2, 8), rng.randint(0, 4))
                limits = {"name": GPU, "nominalQuota": quota, "borrowingLimit": borrow}
                flavors = [{"name": FLAVOR, "resources": [limits]}]
                patch = {"spec": {"resourceGroups": [{"coveredResources": [GPU], "flavors": flavors}]}}
                objects.patch_cluster_custom_object(GROUP, VERSION, "clusterqueues", CQ, patch)
                did = f"quota {quota}, borrowing limit {borrow}"
            else:
                choice = rng.choice(["add", "lower", "remove"] if len(nodes) > 1 else ["add", "lower"])
                if choice == "add":
                    name = f"lifecycle-gpu-{len(nodes)}-{step}"
                    create_node(core, name, {GPU: str(rng.randint(2, 8))}, labels={LABEL: "true"})
                    nodes.append(name)
                elif choice == "lower":
                    name = rng.choice(nodes)
                    gpus = str(rng.randint(1, 3))
                    core.patch_node_status(
                        name, {"status": {"capacity": {GPU: gpus}, "allocatable": {GPU: gpus}}}
                    )
                else:
                    name = nodes.pop(rng.randrange(1, len(nodes)))
                    core.delete_node(name)
                did = f"node {choice} {name}"
            settled = kueue_settled(objects, made if kind == "create" else 0)
            began = time.monotonic()
            while True:
                truth = kueue_says(objects)
                differs = agree(truth, dashboard_says(web))
                if not differs:
                    lags.append(time.monotonic() - began)
                    trace.append(
                        f"{step} {did}: {len(truth['waiting'])} waiting, {len(truth['admitted'])} held"
                    )
                    break
                if time.monotonic() - began > SETTLE:
                    pytest.fail(
                        f"step {step} ({did}), seed {seed} (EXTRES_LIFECYCLE_SEED={seed} replays it): "
                        + "; ".join(differs)
                    )
                time.sleep(0.25)
            assert settled, f"step {step} ({did}): Kueue did not settle within {SETTLE} s"
    finally:
        process_of(app).local.stop()
    p95 = statistics.quantiles(lags, n=20)[18] if len(lags) > 1 else lags[0]
    print("\n".join(trace))
    print(f"lifecycle: {len(lags)} steps agreed, lag p50 {statistics.median(lags):.2f} s, p95 {p95:.2f} s")
    assert len(lags) == STEPS
    assert any(" 0 waiting" not in t for t in trace) and any(
        " 0 held" not in t for t in trace
    )  # not all idle
