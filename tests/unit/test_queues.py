"""Jobs waiting for Kueue's quota (app/domain/queues.py, app/kube/wire/kueue.py): Kueue's words
read as it writes them (sigs.k8s.io/kueue v0.17 flavorassigner), holders from the admitted
Workloads of the same ClusterQueue and its cohort, and a Workload of odd shape read as far as it can be."""

from __future__ import annotations

import json

from app.domain.queues import Condition, Workload, shortfalls, waiting
from app.kube.wire.reading import READERS

GPU = "nvidia.com/gpu"


def test_kueues_two_shortfalls_are_read_from_its_message():
    message = (
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor "
        "a100, 3 more needed, insufficient quota for cpu in flavor default, previously considered podsets "
        "requests (0) + current podset request (9) > maximum capacity (8)"
    )
    [unused, never] = shortfalls(message)
    assert (unused.resource, unused.flavor, unused.more, unused.never) == (GPU, "a100", "3", "")
    assert (never.resource, never.flavor, never.more, never.never) == ("cpu", "default", "", "8")
    assert shortfalls("the ClusterQueue is inactive") == [] and shortfalls("x" * 100_000) == []


def workload(
    name: str, queue: str, reserved: str, message: str = "", cq: str = "", gpus: str = ""
) -> Workload:
    conditions = {"QuotaReserved": Condition(reserved, "Pending" if reserved != "True" else "", message)}
    usage = {("a100", GPU): gpus} if gpus else {}
    return Workload("team-a", name, queue, ("Job", name), conditions, cq, usage, {GPU: gpus or "2"})


def test_a_waiting_workload_is_told_who_holds_its_quota():
    lacking = "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu "
    lacking += "in flavor a100, 1 more needed"
    every = [
        workload("held-1", "q", "True", cq="team", gpus="3"),
        workload("held-2", "other-q", "True", cq="elsewhere", gpus="4"),
        workload("waits", "q", "False", lacking),
    ]
    [wait] = waiting(every, {("team-a", "q"): "team", ("team-a", "other-q"): "elsewhere"})
    assert wait.workload.name == "waits" and wait.cluster_queue == "team"
    assert [(h.name, h.amount) for h in wait.holders[("a100", GPU)]] == [("held-1", "3")]


def test_the_holders_of_a_cohorts_quota_include_the_other_queues_of_that_cohort_after_its_own():
    lacking = "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu "
    lacking += "in flavor a100, 2 more needed"
    every = [
        workload("lender-job", "l", "True", cq="lender", gpus="4"),
        workload("own-job", "q", "True", cq="team", gpus="1"),
        workload("stranger", "s", "True", cq="other-cohort", gpus="8"),
        workload("waits", "q", "False", lacking),
    ]
    queues = {("team-a", "q"): "team", ("team-a", "l"): "lender", ("team-a", "s"): "other-cohort"}
    cohorts = {"team": "pool", "lender": "pool", "other-cohort": "elsewhere"}
    [wait] = waiting(every, queues, cohorts)
    held = [(h.name, h.cluster_queue, h.amount) for h in wait.holders[("a100", GPU)]]
    assert held == [("own-job", "team", "1"), ("lender-job", "lender", "4")]
    [alone] = waiting(every, queues)  # no cohort known: its own queue only
    assert [h.name for h in alone.holders[("a100", GPU)]] == ["own-job"]


def test_a_clusterqueue_of_kueue_v1beta1_names_its_cohort_as_that_version_does():
    reader = READERS["clusterqueues"]
    old = {"apiVersion": "kueue.x-k8s.io/v1beta1", "metadata": {"name": "cq"}, "spec": {"cohort": "pool"}}
    new = {"apiVersion": "kueue.x-k8s.io/v1beta2", "metadata": {"name": "cq"}, "spec": {"cohortName": "pool"}}
    for doc in (old, new):
        view, _, problem = reader.one(json.dumps(doc).encode())
        assert problem is None and view.queue.cohort == "pool"


def test_a_workload_of_odd_shape_is_read_as_far_as_it_can_be():
    reader = READERS["workloads"]
    odd = {
        "metadata": {"name": "w", "namespace": "n"},
        "status": {"conditions": [{"type": "QuotaReserved", "status": "False", "message": "m" * 10_000}],
                   "admission": {"clusterQueue": "cq", "podSetAssignments": [{"name": "main"}]}},
    }  # fmt: skip
    view, _, problem = reader.one(json.dumps(odd).encode())
    assert problem is None and view.workload.waiting_for_quota and view.workload.usage == {}
    assert len(view.workload.conditions["QuotaReserved"].message) == 1024
    bad = {"metadata": {"name": "w", "namespace": "n"}, "status": {"conditions": "not a list"}}
    view, _, problem = reader.one(json.dumps(bad).encode())
    assert view is None and problem is not None  # named as unreadable, never a crash


def test_quota_past_the_flavors_nodes_and_gpus_no_queue_can_use_are_found():
    from app.domain.queues import ClusterQueue, Quota, report

    queues = [
        ClusterQueue("a", "", (Quota("h100", GPU, "8"), Quota("h100", "cpu", "6")), {("h100", GPU): "3"}, {}),
        ClusterQueue("b", "co", (Quota("h100", GPU, "6"),), {}, {}),
    ]
    nodes = [({"gpu": "h100"}, {GPU: 8}), ({"gpu": "h100"}, {GPU: 4}), ({"gpu": "a10"}, {GPU: 2}), ({}, {})]
    found = report(queues, {"h100": (("gpu", "h100"),)}, [], nodes)
    [capacity] = found.capacity  # extended resources only: cpu is not compared here
    assert (capacity.nominal, capacity.capacity, capacity.over) == (14, 12, 2)
    assert found.unqueued == {GPU: 2}
    assert [q.name for q in found.queues] == ["a", "b"] and found.queues[0].rows[0].reserved == "3"


def finished(w: Workload, kind: str = "Finished") -> Workload:
    return Workload(
        w.namespace, w.name, w.queue, w.owner, {**w.conditions, kind: Condition("True", "", "")},
        w.cluster_queue, w.usage, w.requests,
    )  # fmt: skip


def test_a_finished_or_evicted_workload_keeps_its_admission_but_holds_no_quota():
    from app.domain.queues import ClusterQueue, Quota, report

    lacking = "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu "
    lacking += "in flavor a100, 1 more needed"
    running = workload("running", "q", "True", cq="team", gpus="2")
    done = finished(workload("done", "q", "True", cq="team", gpus="3"))  # Kueue keeps status.admission
    evicted = finished(workload("evicted", "q", "True", cq="team", gpus="1"), "Evicted")
    withdrawn = workload("withdrawn", "q", "False", cq="team", gpus="1")  # reservation taken back
    every = [running, done, evicted, withdrawn, workload("waits", "q", "False", lacking)]
    assert [w.holds_quota for w in every] == [True, False, False, False, False]
    waits = waiting(every, {("team-a", "q"): "team"})
    assert [w.workload.name for w in waits] == ["waits", "withdrawn"]  # taken back: it waits again
    assert [h.name for h in waits[0].holders[("a100", GPU)]] == ["running"]
    queue = ClusterQueue("team", "", (Quota("a100", GPU, "4"),), {}, {})
    [summary] = report([queue], {"a100": ()}, every, []).queues
    assert [w.name for w in summary.workloads] == ["running"]


def test_a_queue_kueue_has_not_reported_on_and_a_flavor_that_does_not_exist_say_so():
    from app.domain.queues import ClusterQueue, Quota, report

    reader = READERS["clusterqueues"]
    doc = {"metadata": {"name": "new"}, "spec": {"resourceGroups": [{"coveredResources": [GPU],
           "flavors": [{"name": "ghost", "resources": [{"name": GPU, "nominalQuota": 8}]}]}]}}  # fmt: skip
    view, _, problem = reader.one(json.dumps(doc).encode())
    assert problem is None and (view.queue.pending, view.queue.admitted) == (None, None)
    nodes = [({"gpu": "h100"}, {GPU: 8}), ({}, {GPU: 4})]
    found = report([view.queue, ClusterQueue("a", "", (Quota("h100", GPU, "8"),), {}, {})],
                   {"h100": (("gpu", "h100"),)}, [], nodes)  # fmt: skip
    ghost = next(c for c in found.capacity if c.flavor == "ghost")
    assert (ghost.missing, ghost.capacity, ghost.over) == (True, 0, 0)  # selects nothing, never "every node"
    assert found.unqueued == {GPU: 4}  # the unlabelled node's GPUs: no queue can hand them out
    row = next(q for q in found.queues if q.name == "new").rows[0]
    assert (row.reserved, row.used) == ("", "")  # not reported, never 0


def test_a_pod_kueue_gates_for_a_waiting_workload_is_counted_once():
    from app.domain.queues import KUEUE_ADMISSION_GATE, waiting_counts

    by_pod = Workload("team-a", "pod-x-1", "q", ("Pod", "x"), {}, "", {}, {})  # Kueue's pod integration
    by_job = Workload("team-a", "job-y-1", "q", ("Job", "y"), {}, "", {}, {})
    gated = [
        ("team-a", "x", ("", ""), (KUEUE_ADMISSION_GATE,)),  # counted with by_pod
        ("team-a", "y-abc", ("Job", "y"), (KUEUE_ADMISSION_GATE,)),  # counted with by_job
        ("team-b", "x", ("", ""), (KUEUE_ADMISSION_GATE,)),  # another namespace's pod of that name
        ("team-a", "z", ("", ""), ("example.com/other-gate",)),
    ]
    counts = waiting_counts(5, gated, [by_pod, by_job])
    assert (counts.unschedulable, counts.quota, counts.gated, counts.gated_for_quota) == (5, 2, 2, 2)
    assert counts.total == 9  # 11 before: each Kueue-gated pod counted beside its Workload
