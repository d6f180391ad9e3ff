"""The pods behind the numbers: every pod name links to its panel (owner workload, node,
extended requests and limits, claims, conditions, the scheduler's Events and why it waited),
and a node page shows its conditions besides Ready."""

from __future__ import annotations

import json

from app.domain.pod_details import Claim, Condition, Event, PodDetails
from app.kube.api.errors import NotFound, Unavailable
from tests.helpers import browser, page

D = "example.com/dongle"
WAITED = "0/3 nodes are available: 3 Insufficient example.com/dongle. preemption: 0/3 nodes are available."


def test_the_panel_says_who_owns_the_pod_what_it_asks_and_why_it_waited(client, cluster):
    cluster.node("n1", {D: "2"})
    cluster.pod("train-7f9c-x2", "n1", {D: "2"}, namespace="ml", owner=("Job", "train"))
    cluster.pods.details_of[("ml", "train-7f9c-x2")] = PodDetails(
        conditions=(
            Condition("PodScheduled", "True", "", "", "2026-12-06T10:00:00Z"),
            Condition("Ready", "True"),
        ),
        claims=(Claim("gpu", "train-7f9c-x2-gpu-abcde"),),
        events=(
            Event(
                "Normal",
                "Scheduled",
                "Successfully assigned ml/train-7f9c-x2 to n1",
                1,
                "t2",
                "2026-12-06T10:00:00Z",
                "default-scheduler",
            ),
            Event(
                "Warning",
                "FailedScheduling",
                WAITED,
                4,
                "2026-12-06T09:00:00Z",
                "2026-12-06T09:50:00Z",
                "default-scheduler",
            ),
        ),
        owner="Job/train",
    )
    panel = page(client, "/pods/ml/train-7f9c-x2")
    facts = {
        dt.get_text(): dd
        for dt, dd in zip(panel.select("dl.facts dt"), panel.select("dl.facts dd"), strict=True)
    }
    assert facts["Workload"].get_text() == "Job/train"
    assert facts["Workload"].a["href"] == "/workloads/?namespace=ml"  # its workload, a link
    assert facts["Node"].a["href"] == "/nodes/n1" and facts["Phase"].get_text() == "Running"
    row = panel.select_one(f'#pod-extended tr[data-resource="{D}"]')
    assert (
        row.select_one('[data-field="requested"]').get_text() == "2"
        and row.select_one('[data-field="limit"]').get_text() == "2"
    )
    assert (
        panel.select_one('[data-claim="gpu"]').get_text(" ", strip=True)
        == "gpu : ResourceClaim ml/train-7f9c-x2-gpu-abcde"
    )
    assert [li["data-condition"] for li in panel.select("ul.conditions li")] == ["PodScheduled", "Ready"]
    [waited] = panel.select("ol.pending-history li")
    assert WAITED in waited.get_text() and "(4 times since" in waited.get_text()
    assert [tr["data-reason"] for tr in panel.select("#pod-events tbody tr")] == [
        "Scheduled",
        "FailedScheduling",
    ]
    assert panel.get_text().count(WAITED) == 1  # the scheduler's words said once, under Why it waited


def test_every_pod_name_links_to_its_panel(client, cluster):
    cluster.node("n1", {D: "2"})
    cluster.pod("holder", "n1", {D: "2"}, owner=("Deployment", "holders"))
    cluster.pod("waiting", None, {D: "1"}, message=f"0/1 nodes are available: 1 Insufficient {D}.")
    node = page(client, "/nodes/n1")
    assert node.select_one('#node-pods tr[data-pod="default/holder"] a.pod')["href"] == "/pods/default/holder"
    pending = page(client, "/pending/")
    assert "/pods/default/waiting" in {a["href"] for a in pending.select("a.pod")}
    workloads = page(client, "/workloads/")
    assert workloads.select_one('[data-member="holder"] a.pod')["href"] == "/pods/default/holder"
    remove = page(client, f"/changes/nodes/n1/resources/remove?resource={D}")
    assert remove.select_one('[data-holder="default/holder"] a.pod')["href"] == "/pods/default/holder"


def test_a_pod_gone_is_404_and_details_that_cannot_be_read_leave_the_rest(client, cluster):
    cluster.node("n1", {D: "2"})
    cluster.pod("p", "n1", {D: "1"})
    cluster.pods.error = NotFound('pods "gone" not found')
    assert client.get("/pods/default/gone").status_code == 404
    cluster.pods.error = Unavailable("Could not talk to the API server (the connection failed).")
    panel = page(client, "/pods/default/p")
    assert "could not be read: Could not talk to the API server" in panel.select_one(".banner").get_text()
    assert panel.select_one('[data-field="node"]').get_text() == "n1"  # the cache's view still shown


def test_the_node_page_shows_its_conditions_besides_ready(client, cluster):
    cluster.node(
        "n1",
        {D: "2"},
        conditions=[
            {"type": "MemoryPressure", "status": "True", "reason": "KubeletHasInsufficientMemory"},
            {"type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure"},
            {"type": "NetworkUnavailable", "status": "Unknown", "reason": "NodeStatusUnknown"},
        ],
    )
    state = page(client, "/nodes/n1").select_one(".node-state")
    shown = {
        b["data-condition"]: (b["data-status"], "warn" in b["class"])
        for b in state.select("[data-condition]")
    }
    assert shown == {
        "MemoryPressure": ("True", True),
        "DiskPressure": ("False", False),
        "NetworkUnavailable": ("Unknown", True),
    }
    assert "KubeletHasInsufficientMemory" in state.get_text()


def test_a_name_no_pod_can_have_is_never_sent_to_the_api_server(client, cluster):
    """The names go into the API request's path and field selector: a "?", a "%", a comma or an
    upper-case letter there is a 404 without a call."""
    for path in (
        "/pods/default/x%3Fwatch=true",
        "/pods/default/a,involvedObject.kind=Node",
        "/pods/Default/p",
        "/pods/default/" + "p" * 254,
        "/pods/%2E%2E/p",
    ):
        assert client.get(path).status_code == 404, path
    assert cluster.pods.asked == []


def test_a_pod_is_shown_only_to_who_may_get_pods_in_its_namespace(make_app, cluster):
    """The panel's Events are read with the app's identity, so the user's own right to get pods
    in that namespace is asked first (namespaced), and no right to list Events is needed."""
    cluster.node("n1", {D: "2"})
    cluster.pod("p", "n1", {D: "1"})
    web = browser(make_app(auth_mode="token"))
    assert web.post("/login", data={"token": "t", "next": "/"}).status_code == 303
    cluster.access.denied = {("list", "events"), ("get", "pods", "default")}
    refused = web.get("/pods/default/p")
    assert refused.status_code == 403 and "may not get pods in namespace default" in refused.get_data(
        as_text=True
    )
    cluster.access.denied = {("list", "events")}
    assert web.get("/pods/default/p").status_code == 200
    assert ("get", "pods", "default") in cluster.access.asked


def test_the_panel_names_the_claim_the_scheduler_made_for_its_dra_served_extended_resources(client, cluster):
    from app.domain.pod_details import ExtendedClaim

    cluster.node("n1", {"example.com/gpu": "0"})
    cluster.pod("infer-0", "n1", {"example.com/gpu": "2"}, namespace="ml")
    made = ExtendedClaim(
        "infer-0-extended-resources-x7k2p", (("main", "example.com/gpu", "container-0-request-0"),)
    )
    cluster.pods.details_of[("ml", "infer-0")] = PodDetails(extended_claim=made)
    panel = page(client, "/pods/ml/infer-0")
    said = " ".join(panel.select_one("[data-extended-claim]").get_text().split())
    assert said == (
        "Its extended resources DRA devices serve are held through ResourceClaim "
        "ml/infer-0-extended-resources-x7k2p, which the scheduler made for it: example.com/gpu of "
        "container main (request container-0-request-0)."
    )
    # the claim as the cache holds it: the devices it holds, and what a share took of a shared one
    from decimal import Decimal

    from app.kube.wire.dra import ClaimView

    gpu = ("gpu.nvidia.com", "n1", "gpu-0")
    held = ClaimView("ml", made.claim, (gpu, ("gpu.nvidia.com", "n1", "gpu-1")), ("infer-0",), True, "",
                     ((gpu, (("memory", Decimal(10 << 30)),)),))  # fmt: skip
    cluster.store.devices.put("resourceclaims", held)
    said = " ".join(page(client, "/pods/ml/infer-0").select_one("[data-extended-claim]").get_text().split())
    assert said.endswith(
        "It holds gpu-0 of pool n1 (gpu.nvidia.com), gpu-1 of pool n1 (gpu.nvidia.com); "
        "a share of gpu-0 (memory 10Gi)."
    )


def test_the_extended_resource_claim_status_is_read_as_the_api_server_writes_it():
    from app.kube.api.pod_reads import POD, _extended

    status = {
        "extendedResourceClaimStatus": {
            "resourceClaimName": "infer-0-extended-resources-x7k2p",
            "requestMappings": [
                {
                    "containerName": "main",
                    "resourceName": "example.com/gpu",
                    "requestName": "container-0-request-0",
                }
            ],
        }
    }
    pod = POD.decode(json.dumps({"metadata": {"name": "infer-0"}, "status": status}).encode())
    found = _extended(pod.status)
    assert found is not None and found.claim == "infer-0-extended-resources-x7k2p"
    assert found.mappings == (("main", "example.com/gpu", "container-0-request-0"),)
    assert _extended(POD.decode(b'{"status": {}}').status) is None
