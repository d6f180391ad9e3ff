"""The free a job can use (app/domain/room.py): cordoned, NotReady and tainted nodes left out with
why, the largest block on one node, and pods of a few sizes that fit now."""

from __future__ import annotations

from app.domain.fit import NOT_READY, NodeFacts, Taint, Toleration, extended_resource_tolerations
from app.domain.room import room, shared_tolerations

GPU = "nvidia.com/gpu"


def node(name: str, allocatable: int, requested: int = 0, **extra: object) -> NodeFacts:
    return NodeFacts(name, {}, {GPU: allocatable, "pods": 110}, {GPU: requested, "pods": 0}, **extra)  # type: ignore[arg-type]


def test_free_is_arithmetic_and_schedulable_leaves_out_what_a_pod_asking_for_it_cannot_use():
    nodes = [
        node("a", 8, 5),  # 3 free
        node("b", 8, 6),  # 2 free
        node("cordoned", 8, unschedulable=True),
        node("down", 4, taints=(Taint(NOT_READY, "", "NoSchedule"),)),
        node("dedicated", 8, 4, taints=(Taint("dedicated", "ml", "NoSchedule"),)),
        node("full", 8, 8),
    ]
    [found] = room(nodes, [GPU]).values()
    assert (found.free, found.schedulable) == (3 + 2 + 8 + 4 + 4, 5)
    assert (found.largest, found.largest_node) == (3, "a")
    assert found.excluded == {"cordoned": ["cordoned"], "NotReady": ["down"],
                              "tainted dedicated=ml:NoSchedule": ["dedicated"]}  # fmt: skip
    assert dict(found.fits) == {1: 5, 2: 2, 4: 0, 8: 0}  # two 2-GPU pods fit, no 4-GPU one


def test_a_pool_tainted_with_the_resources_own_name_is_usable_as_extended_resource_toleration_admits():
    # GKE taints its GPU pools nvidia.com/gpu=present:NoSchedule; the admission plugin gives every
    # pod asking for nvidia.com/gpu a toleration of that key (Exists, NoSchedule)
    pool = [node(f"gpu-{i}", 8, 2, taints=(Taint(GPU, "present", "NoSchedule"),)) for i in range(3)]
    [found] = room(pool, [GPU]).values()
    assert (found.free, found.schedulable, found.excluded) == (18, 18, {})
    assert (found.largest, dict(found.fits)[4]) == (6, 3)
    assert [str(t) for t in found.assumed] == ["nvidia.com/gpu:NoSchedule op=Exists"]
    # a NoExecute taint of that key is not what the plugin tolerates
    evicting = node("evicting", 8, taints=(Taint(GPU, "present", "NoExecute"),))
    [found] = room([evicting], [GPU]).values()
    assert found.excluded == {"tainted nvidia.com/gpu=present:NoExecute": ["evicting"]}


def test_tolerations_every_pod_asking_for_it_carries_are_assumed_and_said():
    sku = Toleration("sku", "Equal", "gpu", "NoSchedule")
    team = Toleration("dedicated", "Equal", "ml", "NoSchedule")
    not_ready = Toleration(NOT_READY, "Exists", "", "NoExecute")  # every admitted pod's: not said
    carried = shared_tolerations(
        [
            ((GPU,), (sku, team, not_ready)),
            ((GPU, "example.com/dongle"), (not_ready, sku)),  # no team toleration: not shared
            (("example.com/dongle",), ()),
        ]
    )
    assert carried == {GPU: (sku, not_ready), "example.com/dongle": ()}
    aks = node("aks", 4, taints=(Taint("sku", "gpu", "NoSchedule"),))
    team_pool = node("team", 4, taints=(Taint("dedicated", "ml", "NoSchedule"),))
    [found] = room([aks, team_pool], [GPU], carried).values()
    assert (found.schedulable, found.largest_node) == (4, "aks")
    assert found.excluded == {"tainted dedicated=ml:NoSchedule": ["team"]}
    assert [str(t) for t in found.assumed] == ["nvidia.com/gpu:NoSchedule op=Exists", "sku=gpu:NoSchedule"]
    # no pod asks for it yet: only the admission plugin's toleration is assumed
    [found] = room([aks], [GPU]).values()
    assert found.schedulable == 0 and found.excluded == {"tainted sku=gpu:NoSchedule": ["aks"]}


def test_the_admission_plugin_tolerates_extended_names_only():
    added = extended_resource_tolerations(
        ["cpu", GPU, "deviceclass.resource.kubernetes.io/gpu", GPU, "a.io/b"]
    )
    assert [t.key for t in added] == ["a.io/b", GPU]
    assert {(t.operator, t.effect) for t in added} == {("Exists", "NoSchedule")}
    assert str(Toleration("", "Exists")) == "op=Exists"
    assert str(Toleration("k", "Equal", "v", "")) == "k=v"


def test_a_not_ready_no_execute_taint_alone_is_tolerated_as_an_admitted_pod_tolerates_it():
    quiet = node("quiet", 4, taints=(Taint(NOT_READY, "", "NoExecute"),))  # default tolerations: 300 s
    [found] = room([quiet], [GPU]).values()
    assert found.schedulable == 4 and found.excluded == {}


def test_the_pod_count_limits_what_fits():
    crowded = NodeFacts("crowded", {}, {GPU: 8, "pods": 2}, {GPU: 0, "pods": 1})
    [found] = room([crowded], [GPU]).values()
    assert dict(found.fits) == {1: 1, 2: 1, 4: 1, 8: 1}


def test_pods_of_more_than_one_share_are_never_counted_where_mps_or_gke_sharing_refuses_them():
    mps = {
        "nvidia.com/gpu.replicas": "4",
        "nvidia.com/gpu.sharing-strategy": "mps",
        "nvidia.com/gpu.count": "2",
    }
    gke = {
        "cloud.google.com/gke-gpu-sharing-strategy": "time-sharing",
        "cloud.google.com/gke-max-shared-clients-per-gpu": "4",
    }
    sliced = {
        "nvidia.com/gpu.replicas": "4",
        "nvidia.com/gpu.sharing-strategy": "time-slicing",
        "nvidia.com/gpu.count": "2",
    }
    nodes = [
        NodeFacts(name, labels, {GPU: 8, "pods": 110}, {GPU: 0, "pods": 0}, capacity={GPU: 8})
        for name, labels in (("mps", mps), ("gke", gke), ("sliced", sliced))
    ]
    [found] = room(nodes, [GPU]).values()
    assert dict(found.fits) == {1: 24, 2: 4, 4: 2, 8: 1}  # 2-share pods on the time-sliced node alone
