"""The agreement harness's shrinking of a disagreement to a minimal case (the replays are the
real scheduler's in the harness; here a rule stands in for them)."""

from __future__ import annotations

from bench.agreement_cases import shrink, smaller


def case() -> dict:
    node = lambda i: {"metadata": {"name": f"b-n{i}"}, "spec": {}}  # noqa: E731
    pod = lambda name, node=None: {  # noqa: E731
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [{"name": "a"}, {"name": "b"}],
            "tolerations": [{"operator": "Exists"}],
            "affinity": {"nodeAffinity": {}, "podAntiAffinity": {}},
            **({"nodeName": node} if node else {}),
        },
    }
    return {
        "batch": "b",
        "nodes": [node(0), node(1), node(2)],
        "slices": [{"metadata": {"name": "b-n2-g"}, "spec": {"nodeName": "b-n2"}}],
        "placed": [pod("x", "b-n0"), pod("y", "b-n1")],
        "pod": pod("p"),
    }


def test_each_smaller_case_drops_one_thing_and_keeps_the_node_affinity():
    steps = smaller(case())
    assert len(steps) == 2 + 1 + 1 + 1 + 1  # a placed pod, tolerations, anti-affinity, a container, b-n2
    assert all(s["pod"]["spec"]["affinity"].get("nodeAffinity") == {} for s in steps)
    without_n2 = [s for s in steps if len(s["nodes"]) == 2]
    assert [n["metadata"]["name"] for n in without_n2[0]["nodes"]] == ["b-n0", "b-n1"]
    assert without_n2[0]["slices"] == []  # its slice goes with it


def test_shrinking_keeps_only_what_the_disagreement_needs():
    """Here the "disagreement" needs the placed pod y and the pod's anti-affinity."""

    def disagrees(c: dict) -> bool:
        return (
            any(p["metadata"]["name"] == "y" for p in c["placed"])
            and "podAntiAffinity" in c["pod"]["spec"]["affinity"]
        )

    small = shrink(case(), disagrees)
    assert [p["metadata"]["name"] for p in small["placed"]] == ["y"]
    assert "tolerations" not in small["pod"]["spec"] and len(small["pod"]["spec"]["containers"]) == 1
    assert [n["metadata"]["name"] for n in small["nodes"]] == ["b-n1"]


def test_shrinking_stops_at_its_budget():
    calls = []
    shrink(case(), lambda c: calls.append(1) is None, budget=3)
    assert len(calls) == 3
