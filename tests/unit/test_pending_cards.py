"""The Pending page's cards as data (app.domain.pending_cards): one card per workload and shape,
holders lowest priority first then oldest with what preemption frees, quota holders that cannot
run themselves."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.domain import pending_cards


@dataclass(frozen=True)
class Owner:
    kind: str
    name: str


@dataclass(frozen=True)
class Pod:
    namespace: str
    name: str
    owner: Owner | None = None
    shape: str = "a"
    priority: int = 0
    created: str = "2026-12-07T10:00:00Z"
    requests: dict[str, int] = field(default_factory=dict)


@dataclass
class Card:
    pod: Pod
    others: list[Pod] = field(default_factory=list)


def test_the_pods_of_one_workload_and_shape_share_a_card_and_a_lone_pod_has_its_own():
    web = Owner("ReplicaSet", "web")
    pods = [
        Pod("d", "w1", web),
        Pod("d", "w2", web),
        Pod("d", "w3", web, shape="b"),
        Pod("d", "lone"),
        Pod("e", "w4", web),
    ]
    cards = pending_cards.grouped(pods, Card, lambda c: c.others)
    assert [(c.pod.name, [o.name for o in c.others]) for c in cards] == [
        ("w1", ["w2"]),  # same namespace, workload and shape
        ("w3", []),  # another shape
        ("lone", []),  # no workload
        ("w4", []),  # another namespace
    ]


def test_holders_come_lowest_priority_first_then_oldest_with_what_preemption_frees():
    g = "nvidia.com/gpu"
    on_node = [
        Pod("d", "high", priority=100, requests={g: 2}),
        Pod("d", "new", priority=0, created="2026-12-07T12:00:00Z", requests={g: 1}),
        Pod("d", "old", priority=0, created="2026-12-07T09:00:00Z", requests={g: 1}),
        Pod("d", "cpu-only", requests={"cpu": 1}),
    ]
    found = pending_cards.held(Pod("d", "asker", priority=50), g, "n1", 0, 4, 2, on_node, [])
    assert [p.name for p in found.holders] == ["old", "new", "high"]
    assert found.preemptible == 2 and found.preemption_helps and not found.unresolvable


def test_a_quota_holder_that_cannot_run_is_found_with_one_of_its_pods():
    job = Owner("Job", "train")
    waiting = [Pod("t", "train-0", job), Pod("t", "train-1", job), Pod("t", "other", Owner("Job", "x"))]
    found = pending_cards.stuck([("t", "Job", "train"), ("t", "Job", "runs")], waiting)
    assert {k: p.name for k, p in found.items()} == {("t", "Job", "train"): "train-0"}
    assert pending_cards.stuck([], waiting) == {}
