from app.domain.accounting import (
    ResourceUsage,
    Totals,
    counts_on_node,
    extended_only,
    node_usage,
    pod_requests,
)

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
    assert pod_requests(spec, "limits") == {D: 2}


def test_limits_ignore_requests():
    spec = {"containers": [c({"cpu": "1"}, {"cpu": "2"})]}
    assert pod_requests(spec, "limits") == {"cpu": 2000}


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
    assert fpga.overcommitted
    assert fpga.percent == 100
    assert fpga.meter_max == 1
    assert ResourceUsage(0, 0, 0).meter_max == 1


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
    assert t.by_resource[F] == ResourceUsage(0, 0, 1, False)
    assert t.by_resource[F].overcommitted


def test_extended_only():
    assert extended_only({"cpu": 1, D: 2, "hugepages-2Mi": 3}) == {D: 2}
