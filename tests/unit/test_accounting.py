import pytest

from app.domain.accounting import (
    PER_CONTAINER,
    PER_SOURCE,
    Part,
    Reported,
    ResourceUsage,
    counts_on_node,
    extended_only,
    node_usage,
    pod_limits,
    pod_request_amounts,
    pod_requests,
    resize_rule,
)
from app.domain.totals import RunningTotals, Totals

D = "example.com/dongle"
F = "acme.io/fpga"


def c(requests=None, limits=None, **extra):
    return {"name": "c", "resources": {"requests": requests or {}, "limits": limits or {}}, **extra}


def test_sum_of_containers():
    spec = {"containers": [c({D: "1", "cpu": "100m"}), c({D: "2", "cpu": "1"})]}
    assert pod_requests(spec) == {D: 3, "cpu": 1100}


def test_init_container_max_rule():
    spec = {"containers": [c({D: "1"}), c({D: "1"})], "initContainers": [c({D: "3"}), c({D: "1"})]}
    assert pod_requests(spec) == {D: 3}  # max(1+1, max(3, 1))
    spec = {"containers": [c({D: "2"}), c({D: "2"})], "initContainers": [c({D: "3"})]}
    assert pod_requests(spec) == {D: 4}


def test_init_only_resource():
    spec = {"containers": [c({"cpu": "1"})], "initContainers": [c({D: "2"})]}
    assert pod_requests(spec) == {"cpu": 1000, D: 2}


def test_sidecars_add_to_containers_and_later_inits():
    spec = {
        "containers": [c({D: "1"})],
        "initContainers": [c({D: "1"}, restartPolicy="Always"), c({D: "3"})],
    }
    # sidecar (1) runs with the later init (3): peak 4; then containers 1 + sidecar 1 = 2
    assert pod_requests(spec) == {D: 4}


def test_overhead_is_added():
    spec = {"containers": [c({D: "1", "cpu": "1"})], "overhead": {"cpu": "250m", D: "1"}}
    assert pod_requests(spec) == {D: 2, "cpu": 1250}


def test_limits_default_requests():
    spec = {"containers": [c(limits={D: "2"})]}
    assert pod_requests(spec) == {D: 2}
    assert pod_limits(spec) == {D: 2}


def test_limits_ignore_requests_and_overhead_adds_only_to_set_limits():
    spec = {"containers": [c({"cpu": "1"}, {"cpu": "2"})], "overhead": {"cpu": "250m", "memory": "1Mi"}}
    assert pod_limits(spec) == {"cpu": 2250}  # PodLimits: no memory limit, so no memory overhead


def test_the_sidecar_running_sum_as_kube_scheduler_133_counts_it():
    """A sidecar asking 2, then a regular init container asking 4, then an app container asking 3:
    the init container runs beside the sidecar (2 + 4 = 6), the app beside it (2 + 3 = 5)."""
    spec = {
        "initContainers": [c({D: "2"}, restartPolicy="Always"), c({D: "4"})],
        "containers": [c({D: "3"})],
    }
    assert pod_requests(spec) == {D: 6}


def test_pod_level_resources_replace_cpu_memory_and_hugepages_never_extended():
    spec = {
        "resources": {"requests": {"cpu": "2", "hugepages-2Mi": "4Mi"}, "limits": {"memory": "1Gi"}},
        "containers": [c({"cpu": "500m", "memory": "128Mi", D: "1"}), c({"cpu": "500m", D: "2"})],
        "overhead": {"cpu": "100m"},
    }
    # cpu from the pod (+ overhead); memory from the pod's limit (defaulting); the dongles summed
    assert pod_requests(spec) == {"cpu": 2100, "memory": 2**30, "hugepages-2Mi": 4 * 2**20, D: 3}
    spec["resources"]["requests"][D] = "9"  # not a pod-level resource: ignored, as upstream does
    assert pod_requests(spec)[D] == 3


def resized(*reported, infeasible=False, rule=PER_SOURCE):
    """Two app containers asking 4 and 2 cpu in spec, with what the kubelet reports for each."""
    parts = [
        Part(({"cpu": "4"}, None), reported=reported[0]),
        Part(({"cpu": "2"}, None), reported=reported[1]),
    ]
    return pod_request_amounts(parts, None, infeasible=infeasible, rule=rule)["cpu"] // 1000


def test_a_resize_counts_the_larger_of_spec_and_what_the_kubelet_reports():
    # a's resize up from 1 is allocated but not yet actuated; b is shrinking from 5 to 2
    a = Reported(allocated={"cpu": "4"}, actuated={"cpu": "1"}, resources=True)
    b = Reported(allocated={"cpu": "5"}, actuated={"cpu": "5"}, resources=True)
    # 1.37: the largest of the sums (spec 6, actuated 6, allocated 9)
    assert resized(a, b, rule=PER_SOURCE) == 9
    # up to 1.36: each container's largest, summed (4 + 5)
    assert resized(a, b, rule=PER_CONTAINER) == 9
    a = Reported(allocated={"cpu": "1"}, actuated={"cpu": "1"}, resources=True)  # spec 4: growing
    b = Reported(allocated={"cpu": "5"}, actuated={"cpu": "5"}, resources=True)  # spec 2: shrinking
    assert resized(a, b, rule=PER_SOURCE) == 6  # max(4 + 2, 1 + 5, 1 + 5)
    assert resized(a, b, rule=PER_CONTAINER) == 9  # max(4, 1, 1) + max(2, 5, 5)


def test_an_infeasible_resize_leaves_the_spec_out():
    a = Reported(allocated={"cpu": "1"}, actuated={"cpu": "1"}, resources=True)
    b = Reported(allocated={"cpu": "2"}, actuated={"cpu": "2"}, resources=True)
    assert resized(a, b, infeasible=True, rule=PER_SOURCE) == 3
    assert resized(a, b, infeasible=True, rule=PER_CONTAINER) == 3
    assert resized(a, b, infeasible=False) == 6


def test_the_rule_follows_the_server_version():
    assert resize_rule(35) == resize_rule(36) == PER_CONTAINER
    assert resize_rule(37) == resize_rule(None) == PER_SOURCE


@pytest.mark.parametrize("rule", [PER_SOURCE, PER_CONTAINER])
def test_without_a_resize_the_spec_is_the_request(rule):
    same = Reported(allocated={"cpu": "4"}, actuated={"cpu": "4"}, resources=True)
    other = Reported(allocated={"cpu": "2"}, actuated={"cpu": "2"}, resources=True)
    assert resized(same, other, rule=rule) == 6
    assert resized(None, None, rule=rule) == 6


def test_zero_requests_dropped():
    assert pod_requests({"containers": [c({D: "0"})]}) == {}


def test_terminated_and_unbound_pods_do_not_count():
    assert counts_on_node("Running", "n1")
    assert counts_on_node("Pending", "n1")
    assert counts_on_node("Unknown", "n1")
    assert not counts_on_node("Succeeded", "n1")
    assert not counts_on_node("Failed", "n1")
    assert not counts_on_node("Pending", "")


def test_node_usage_and_free():
    usage = node_usage({D: 4}, {D: 3}, {D: 2, "acme.io/fpga": 1})
    assert usage[D] == ResourceUsage(4, 3, 2, True)
    assert usage[D].free == 1
    assert usage[D].percent == 67
    assert usage[D].meter_max == 3
    fpga = usage["acme.io/fpga"]
    assert not fpga.advertised
    assert fpga.free == -1
    assert fpga.overcommitted and fpga.over == 1
    assert fpga.percent is None  # nothing allocatable: no percentage, "over-committed by 1"
    assert fpga.meter_max == 1
    assert ResourceUsage(0, 0, 0).meter_max == 1
    assert ResourceUsage(0, 0, 0).percent is None and not ResourceUsage(0, 0, 0).overcommitted
    assert ResourceUsage(4, 4, 6).over == 2 and ResourceUsage(4, 4, 6).percent is None
    assert ResourceUsage(4, 4, 3, allocated=5).over == 1  # DRA: what claims hold counts


def test_totals():
    t = Totals.of(
        [
            node_usage({D: 4}, {D: 4}, {D: 1}),
            node_usage({D: 2}, {D: 2}, {D: 2}),
            node_usage({}, {}, {}),
            node_usage({}, {}, {F: 1}),  # requested where nobody advertises it
        ]
    )
    assert t.by_resource[D] == ResourceUsage(6, 6, 3, True)
    assert t.nodes_with == {D: 2}
    assert t.by_resource[F] == ResourceUsage(0, 0, 1, False, excess=1)
    assert t.by_resource[F].overcommitted
    assert t.nodes_over == {F: 1}


def test_totals_name_each_nodes_over_commitment_the_sums_would_hide():
    """One node over by 2 beside one with 2 free: the sums say 0 free, the totals say over by 2."""
    t = Totals.of([node_usage({D: 2}, {D: 2}, {D: 4}), node_usage({D: 4}, {D: 4}, {D: 2})])
    u = t.by_resource[D]
    assert (u.free, u.over, u.overcommitted, t.nodes_over) == (0, 2, True, {D: 1})
    running = RunningTotals()
    over = node_usage({D: 2}, {D: 2}, {D: 4})
    running.add(over)
    running.add(over, sign=-1)
    running.add(node_usage({D: 2}, {D: 2}, {D: 1}))
    assert running.totals().nodes_over == {} and not running.totals().by_resource[D].overcommitted
    assert (
        sum((node_usage({D: 2}, {D: 2}, {D: 4})[D], node_usage({D: 4}, {D: 4}, {})[D]), ResourceUsage()).over
        == 2
    )


def test_extended_only():
    assert extended_only({"cpu": 1, D: 2, "hugepages-2Mi": 3}) == {D: 2}
