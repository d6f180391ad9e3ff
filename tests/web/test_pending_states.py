"""Pending beyond kube-scheduler's verdict: a pod held by scheduling gates is listed with each
gate and who lifts it (Kueue's by name), counted in the navigation, and never diagnosed as short;
a pod of another scheduler is quoted as that scheduler's words, Volcano's message parsed like
kube-scheduler's."""

from __future__ import annotations

from bs4 import BeautifulSoup

D = "example.com/dongle"
GPU = "nvidia.com/gpu"


def page(client, url: str = "/pending/") -> BeautifulSoup:
    answer = client.get(url)
    assert answer.status_code == 200
    return BeautifulSoup(answer.get_data(as_text=True), "html.parser")


def test_a_gated_pod_is_listed_with_its_gates_and_who_lifts_them(client, cluster):
    cluster.node("n1", {GPU: "8"})
    gates = [{"name": "kueue.x-k8s.io/admission"}, {"name": "example.com/my-gate"}]
    cluster.pod("train", None, {GPU: "2"}, namespace="team-a", schedulingGates=gates)
    listed = page(client)
    [item] = listed.select("[data-gated-pod]")
    assert item["data-gated-pod"] == "team-a/train"
    assert [g["data-gate"] for g in item.select("[data-gate]")] == [
        "kueue.x-k8s.io/admission",
        "example.com/my-gate",
    ]
    assert "Kueue lifts it once the pod's Workload is admitted" in item.get_text()
    assert f"{GPU}: 2" in item.get_text()
    assert not listed.select("article.pending")  # no scheduler has judged it: nothing diagnosed
    assert listed.select_one("[data-gated]")["data-gated"] == "1"
    nav = page(client, "/").select_one('nav a[href="/pending/"]').get_text()
    assert "1" in nav  # counted as pending


def test_a_gated_pod_is_filtered_like_the_others(client, cluster):
    cluster.node("n1", {GPU: "8", D: "1"})
    cluster.pod("train", None, {GPU: "2"}, namespace="team-a", schedulingGates=[{"name": "g.example/x"}])
    assert not page(client, "/pending/?namespace=team-b").select("[data-gated-pod]")
    assert not page(client, f"/pending/?resource={D}").select("[data-gated-pod]")
    assert page(client, f"/pending/?resource={GPU}").select("[data-gated-pod]")


def test_another_schedulers_words_are_quoted_as_its_own(client, cluster):
    cluster.node("n1", {GPU: "1"})
    message = f"0/1 nodes are unavailable: 1 Insufficient {GPU}."  # Volcano's FitErrors wording
    cluster.pod("vc-job-0", None, {GPU: "2"}, message=message, schedulerName="volcano")
    cluster.pod("plain", None, {GPU: "2"}, message=f"0/1 nodes are available: 1 Insufficient {GPU}.")
    listed = page(client)
    volcano = listed.select_one('article[data-pod="default/vc-job-0"] .scheduler')
    assert volcano["data-scheduler"] == "volcano" and "(not kube-scheduler)" in volcano.get_text()
    plain = listed.select_one('article[data-pod="default/plain"] .scheduler')
    assert not plain.has_attr("data-scheduler") and plain.get_text().startswith("Scheduler:")


def test_volcanos_message_is_parsed_as_kube_schedulers_is():
    from app.domain.scheduler_message import parse_scheduler_message

    parsed = parse_scheduler_message(
        f"0/3 nodes are unavailable: 1 node(s) resource fit failed, 2 Insufficient {GPU}."
    )
    assert parsed.total_nodes == 3 and parsed.insufficient == {GPU: 2}
    assert parsed.other_reasons == [(1, "node(s) resource fit failed")]


def test_a_job_waiting_for_quota_says_how_much_more_and_who_holds_it(client, cluster):
    from app.domain.queues import Condition, Workload
    from app.kube.wire.kueue import LocalQueueView, WorkloadView

    cluster.node("n1", {GPU: "8"})
    queues = cluster.store.queues
    queues.put("localqueues", LocalQueueView("team-a", "q", "team"))
    said = "couldn't assign flavors to pod set main: "
    said += "insufficient unused quota for nvidia.com/gpu in flavor a100, 2 more needed"
    waiting = {"QuotaReserved": Condition("False", "Pending", said)}
    waits = Workload("team-a", "job-b-1", "q", ("Job", "b"), waiting, requests={GPU: "4"})
    reserved = {"QuotaReserved": Condition("True", "", "")}
    holds = Workload("team-a", "job-a-1", "q", ("Job", "a"), reserved, "team", {("a100", GPU): "6"})
    queues.put("workloads", WorkloadView(waits))
    queues.put("workloads", WorkloadView(holds))
    listed = page(client)
    [card] = listed.select("[data-workload]")
    assert card["data-workload"] == "team-a/job-b-1" and "Job b" in card.select_one("h3").get_text()
    lacks = card.select_one("[data-lacks]")
    assert (lacks["data-flavor"], lacks["data-more"]) == ("a100", "2") and "Needs 2 more" in lacks.get_text()
    assert [h["data-quota-holder"] for h in card.select("[data-quota-holder]")] == ["team-a/job-a-1"]
    assert card.select_one(".scheduler q").get_text() == said  # Kueue's own words
    assert listed.select_one("[data-quota-waits]")["data-quota-waits"] == "1"
    assert not page(client, "/pending/?namespace=team-b").select("[data-workload]")


def test_a_holder_that_cannot_run_itself_is_marked_and_linked_to_its_stuck_pod(client, cluster):
    """Job a holds the quota job b waits for, but a's own pod finds no node: the quota is held
    by something that is not running. Job c holds some too, and runs."""
    from app.domain.queues import Condition, Workload
    from app.kube.wire.kueue import LocalQueueView, WorkloadView

    cluster.node("n1", {GPU: "2"})
    queues = cluster.store.queues
    queues.put("localqueues", LocalQueueView("team-a", "q", "team"))
    said = "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in "
    said += "flavor a100, 2 more needed"
    waits = Workload("team-a", "job-b-1", "q", ("Job", "b"), {"QuotaReserved": Condition("False", "", said)})
    reserved = {"QuotaReserved": Condition("True", "", "")}
    for job, gpus in (("a", "4"), ("c", "2")):
        held = {("a100", GPU): gpus}
        queues.put(
            "workloads",
            WorkloadView(Workload("team-a", f"job-{job}-1", "q", ("Job", job), reserved, "team", held)),
        )
    queues.put("workloads", WorkloadView(waits))
    message = f"0/1 nodes are available: 1 Insufficient {GPU}."
    cluster.pod("a-x1", None, {GPU: "4"}, namespace="team-a", message=message, owner=("Job", "a"))
    cluster.pod("c-x1", "n1", {GPU: "2"}, namespace="team-a", owner=("Job", "c"))
    card = page(client).select_one('[data-workload="team-a/job-b-1"]')
    holders = {h["data-quota-holder"]: h for h in card.select("[data-quota-holder]")}
    assert sorted(holders) == ["team-a/job-a-1", "team-a/job-c-1"]
    stuck = holders["team-a/job-a-1"].select_one("[data-holder-cannot-run]")
    assert stuck["data-holder-cannot-run"] == "team-a/a-x1" and "cannot run" in stuck.get_text()
    assert stuck.select_one("a")["href"] == "/pods/team-a/a-x1"
    assert holders["team-a/job-c-1"].select_one("[data-holder-cannot-run]") is None
    assert holders["team-a/job-c-1"].select_one("a")["href"] == "/workloads/?namespace=team-a"


def test_without_kueue_nothing_about_queues_appears(client, cluster):
    cluster.node("n1", {GPU: "8"})
    listed = page(client)
    assert not listed.select("#quota") and "Kueue" not in listed.get_text()


def test_a_pod_kueue_admitted_that_no_node_takes_says_the_quota_admits_it_and_the_nodes_do_not(
    client, cluster
):
    from app.domain.queues import Condition, Workload
    from app.kube.wire.kueue import WorkloadView

    cluster.node("n1", {GPU: "1"})
    message = f"0/1 nodes are available: 1 Insufficient {GPU}."
    cluster.pod("train-x1", None, {GPU: "2"}, namespace="team-a", message=message, owner=("Job", "train"))
    reserved = {
        "QuotaReserved": Condition("True", "QuotaReserved", ""),
        "Admitted": Condition("True", "", ""),
    }
    admitted = Workload(
        "team-a", "job-train-1", "q", ("Job", "train"), reserved, "team", {("a100", GPU): "2"}
    )
    cluster.store.queues.put("workloads", WorkloadView(admitted))
    card = page(client).select_one('article[data-pod="team-a/train-x1"]')
    note = card.select_one("[data-admitted-in]")
    assert note["data-admitted-in"] == "team" and "the quota admits it, the nodes do not" in note.get_text()
    cluster.pod("other", None, {GPU: "2"}, namespace="team-a", message=message, owner=("Job", "other"))
    assert not page(client).select_one('article[data-pod="team-a/other"] [data-admitted-in]')


# KAI's words, as its source writes them (NVIDIA/KAI-Scheduler @72de64f): the pod condition's
# message from pkg/scheduler/api/common_info/pod_errors.go ``TasksFitErrors.Error`` (a histogram
# of per-node reasons joined by ". \n"), the node-pool prefix of default_status_updater.go, and
# the queue messages of pkg/scheduler/api/unschedule_info.go
KAI_NODES = (
    "Node-Pool 'default': no nodes with enough resources were found: 2 node(s) didn't have enough "
    f"resources: GPUs. \n1 node(s) didn't have enough resources: {D}. \n1 node(s) didn't have enough "
    "resources: GPU memory."
)
KAI_OVER_QUOTA = (
    "Non-preemptible workload is over quota. Workload requested 4 GPUs, but team-a quota is 2 GPUs, "
    "while 1 GPUs are already allocated for non-preemptible pods. Use a preemptible workload to go over "
    "quota."
)
KAI_LIMIT = (
    "team-b quota has reached the allowable limit of GPUs. Limit is 8 GPUs, currently 8 GPUs allocated "
    "and workload requested 2 GPUs"
)


def test_kais_node_reasons_are_read_in_its_words():
    from app.domain.scheduler_message import parse_scheduler_message

    parsed = parse_scheduler_message(KAI_NODES)
    assert parsed.node_pool == "default" and parsed.total_nodes is None  # KAI does not count the nodes
    assert parsed.insufficient == {GPU: 2, D: 1}  # its "GPUs" is nvidia.com/gpu
    assert parsed.other_reasons == [(1, "node(s) didn't have enough resources: GPU memory")]
    bare = parse_scheduler_message("no nodes with enough resources were found")
    assert bare.reasons == () and bare.raw == "no nodes with enough resources were found"


def test_kais_queue_quota_refusals_name_the_queue_and_the_numbers():
    from app.domain.scheduler_message import parse_scheduler_message

    over = parse_scheduler_message(KAI_OVER_QUOTA).queue_quota
    assert over is not None and (over.queue, over.asked, over.quota, over.used, over.limit) == (
        "team-a", "4", "2", "1", False,
    )  # fmt: skip
    limit = parse_scheduler_message(KAI_LIMIT).queue_quota
    assert limit is not None and (limit.queue, limit.quota, limit.used, limit.asked, limit.limit) == (
        "team-b", "8", "8", "2", True,
    )  # fmt: skip
    unknown = parse_scheduler_message("Unable to schedule podgroup")  # KAI's default: quoted, not parsed
    assert unknown.queue_quota is None and unknown.reasons == ()
    assert unknown.raw == "Unable to schedule podgroup"


def test_a_kai_pod_is_quoted_as_kais_and_its_queue_named(client, cluster):
    cluster.node("n1", {GPU: "1"})
    cluster.pod("kai-nodes", None, {GPU: "2"}, message=KAI_NODES, schedulerName="kai-scheduler")
    cluster.pod("kai-quota", None, {GPU: "4"}, message=KAI_OVER_QUOTA, schedulerName="kai-scheduler")
    listed = page(client)
    nodes = listed.select_one('article[data-pod="default/kai-nodes"]')
    said = nodes.select_one(".scheduler")
    assert said["data-scheduler"] == "kai-scheduler" and "(not kube-scheduler)" in said.get_text()
    assert said.select_one("q").get_text() == KAI_NODES
    quota = listed.select_one('article[data-pod="default/kai-quota"] [data-kai-queue]')
    assert quota["data-kai-queue"] == "team-a"
    assert "asks for 4 GPUs" in quota.get_text() and "quota is 2" in quota.get_text()
