"""The free a job can use (app/domain/room.py): cordoned, NotReady and tainted nodes left out with
why, the largest block on one node, and pods of a few sizes that fit now."""

from __future__ import annotations

from app.domain.fit import NOT_READY, NodeFacts, Taint
from app.domain.room import room

GPU = "nvidia.com/gpu"


def node(name: str, allocatable: int, requested: int = 0, **extra: object) -> NodeFacts:
    return NodeFacts(name, {}, {GPU: allocatable, "pods": 110}, {GPU: requested, "pods": 0}, **extra)  # type: ignore[arg-type]


def test_free_is_arithmetic_and_schedulable_leaves_out_what_a_plain_pod_cannot_use():
    nodes = [
        node("a", 8, 5),  # 3 free
        node("b", 8, 6),  # 2 free
        node("cordoned", 8, unschedulable=True),
        node("down", 4, taints=(Taint(NOT_READY, "", "NoSchedule"),)),
        node("gpu-only", 8, 4, taints=(Taint("nvidia.com/gpu", "present", "NoSchedule"),)),
        node("full", 8, 8),
    ]
    [found] = room(nodes, [GPU]).values()
    assert (found.free, found.schedulable) == (3 + 2 + 8 + 4 + 4, 5)
    assert (found.largest, found.largest_node) == (3, "a")
    assert found.excluded == {"cordoned": ["cordoned"], "NotReady": ["down"],
                              "tainted nvidia.com/gpu=present:NoSchedule": ["gpu-only"]}  # fmt: skip
    assert dict(found.fits) == {1: 5, 2: 2, 4: 0, 8: 0}  # two 2-GPU pods fit, no 4-GPU one


def test_a_not_ready_no_execute_taint_alone_is_tolerated_as_an_admitted_pod_tolerates_it():
    quiet = node("quiet", 4, taints=(Taint(NOT_READY, "", "NoExecute"),))  # default tolerations: 300 s
    [found] = room([quiet], [GPU]).values()
    assert found.schedulable == 4 and found.excluded == {}


def test_the_pod_count_limits_what_fits():
    crowded = NodeFacts("crowded", {}, {GPU: 8, "pods": 2}, {GPU: 0, "pods": 1})
    [found] = room([crowded], [GPU]).values()
    assert dict(found.fits) == {1: 1, 2: 1, 4: 1, 8: 1}
