"""What pods of one template share is computed once: a pod differing from a remembered one in any
part its requests or placement read gets its own answer, whatever was read before it."""

import json
from typing import Any

import pytest

from app.domain.accounting import PER_CONTAINER, PER_SOURCE
from app.kube.wire.pod_template import MEMO_SIZE, _amounted
from app.kube.wire.reading import PODS, readers


def pod(name: str, *, node: str = "n1", statuses: Any = None, conditions: Any = None, **spec: Any) -> bytes:
    """A pod of two containers (4 and 2 cpu), as the API server lists it."""
    body = {
        "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "4", "example.com/dongle": "1"}}},
            {"name": "b", "resources": {"requests": {"cpu": "2"}}},
        ],
        "nodeName": node,
        **spec,
    }
    status = {"phase": "Running", "containerStatuses": statuses, "conditions": conditions}
    return json.dumps({"metadata": {"name": name, "namespace": "d"}, "spec": body, "status": status}).encode()


def report(a: str, b: str, actuated_a: str | None = None) -> list[dict[str, Any]]:
    """What the kubelet reports during a resize: allocated ``a`` and ``b``; actuated as allocated
    unless ``actuated_a`` says otherwise for ``a``."""
    return [
        {"name": "a", "allocatedResources": {"cpu": a}, "resources": {"requests": {"cpu": actuated_a or a}}},
        {"name": "b", "allocatedResources": {"cpu": b}, "resources": {"requests": {"cpu": b}}},
    ]


def cpu(raw: bytes, rule: str = PER_SOURCE) -> int:
    view, _, problem = readers(rule)["pods"].one(raw)
    assert problem is None and view is not None
    return view.requests["cpu"] // 1000


def test_a_resize_is_its_own_answer_beside_a_steady_pod_of_the_same_spec():
    steady = pod("steady", statuses=report("4", "2"))
    growing = pod("growing", statuses=report("4", "5"))  # b resized 2 -> 5, allocated
    assert cpu(steady) == 6
    assert cpu(growing) == 9  # the largest of the sums: allocated 4 + 5
    assert cpu(steady) == 6  # read again after the resize: still its own


def test_the_kubelets_report_counts_only_on_a_bound_pod():
    assert cpu(pod("bound", statuses=report("4", "5"))) == 9
    assert cpu(pod("unbound", node="", statuses=report("4", "5"))) == 6


def test_an_infeasible_resize_and_the_servers_rule_are_part_of_the_answer():
    statuses = report("1", "5")  # a growing 1 -> 4 (spec), b shrinking 5 -> 2 (spec)
    infeasible = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
    assert cpu(pod("p", statuses=statuses)) == 6  # max(4 + 2, 1 + 5)
    assert cpu(pod("p", statuses=statuses), rule=PER_CONTAINER) == 9  # max(4, 1) + max(2, 5)
    assert cpu(pod("p", statuses=statuses, conditions=infeasible)) == 6  # 1 + 5, the spec left out
    assert cpu(pod("p", statuses=report("1", "2"), conditions=infeasible)) == 3


def test_sidecars_and_overhead_change_the_answer_for_the_same_containers():
    init = [{"name": "i", "resources": {"requests": {"cpu": "1"}}}]
    assert cpu(pod("plain", initContainers=init)) == 6  # max(6, 1)
    sidecar = [{**init[0], "restartPolicy": "Always"}]
    assert cpu(pod("sidecar", initContainers=sidecar)) == 7
    assert cpu(pod("overhead", initContainers=sidecar, overhead={"cpu": "2"})) == 9


def test_placement_differs_where_the_template_does_and_is_shared_where_it_does_not():
    toleration = [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
    one, two = (PODS.one(pod(name, tolerations=toleration))[0] for name in ("one", "two"))
    plain = PODS.one(pod("plain"))[0]
    assert one is not None and two is not None and plain is not None
    assert one.placement is two.placement and one.placement.tolerations[0].key == "gpu"
    assert plain.placement.tolerations == ()
    ports = [{"name": "a", "ports": [{"containerPort": 80, "hostPort": 8080}]}]
    ported = PODS.one(pod("ported", initContainers=ports))[0]  # a plain init container: no port held
    sidecar = PODS.one(pod("sidecar", initContainers=[{**ports[0], "restartPolicy": "Always"}]))[0]
    assert ported is not None and sidecar is not None
    assert ported.placement.host_ports == ()
    assert [h.port for h in sidecar.placement.host_ports] == [8080]


def test_a_bad_quantity_is_never_remembered_as_an_answer():
    bad = pod("bad", containers=[{"name": "a", "resources": {"requests": {"cpu": "0.5.5"}}}])
    view, _, problem = PODS.one(bad)
    assert problem is None and view is not None and view.requests == {}  # logged, counted as nothing
    assert cpu(pod("good")) == 6


@pytest.mark.parametrize("extra", [0, 10])
def test_the_memo_is_bounded(extra: int):
    for i in range(MEMO_SIZE + extra):
        one = [{"name": f"c{i}", "resources": {"requests": {"cpu": "1"}}}]
        PODS.one(pod(f"p{i}", containers=one))
    assert _amounted.cache_info().currsize <= MEMO_SIZE


def test_a_pod_of_unusual_size_is_counted_and_not_remembered():
    many = [{"name": f"c{i:05}", "resources": {"requests": {"example.com/dongle": "1"}}} for i in range(2000)]
    _amounted.cache_clear()
    view, _, problem = PODS.one(pod("huge", containers=many))
    assert problem is None and view is not None
    assert view.requests == {"example.com/dongle": 2000}
    assert _amounted.cache_info().currsize == 0  # its ~100 KB key is not kept
