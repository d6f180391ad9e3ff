from app.domain.workloads import Holder, group, sort_rows
from app.kube.wire.decoders import OwnerRef
from app.kube.wire.projections import Owner, workload

D = "example.com/dongle"


def test_a_replicaset_named_by_its_deployment_resolves_to_the_deployment():
    rs = [OwnerRef("ReplicaSet", "web-5d8f7c", True)]
    assert workload(rs, {"pod-template-hash": "5d8f7c"}) == Owner("Deployment", "web")
    assert workload(rs, {}) == Owner("ReplicaSet", "web-5d8f7c")  # a ReplicaSet of its own
    assert workload(rs, {"pod-template-hash": "other"}) == Owner("ReplicaSet", "web-5d8f7c")
    assert workload(None, None) == Owner("Pod", "")
    both = [OwnerRef("Node", "n1", None), OwnerRef("StatefulSet", "db", True)]
    assert workload(both, {}) == Owner("StatefulSet", "db")  # the controller reference wins
    assert workload([OwnerRef("Job", "backup-29412345", True)], {}) == Owner("CronJob", "backup")
    assert workload([OwnerRef("Job", "train-1", True)], {}) == Owner("Job", "train-1")


def test_grouping_sums_counts_and_shares():
    holders = [
        Holder("a", "Deployment", "web", "n1", "2026-01-02T00:00:00Z", {D: 2}, "web-1"),
        Holder("a", "Deployment", "web", "n2", "2026-01-01T00:00:00Z", {D: 2}, "web-2"),
        Holder("b", "Pod", "", "n2", "2026-01-03T00:00:00Z", {D: 1, "acme.io/fpga": 1}, "solo"),
        Holder("b", "Pod", "", "n1", "2026-01-03T00:00:00Z", {D: 3}, "other"),
    ]
    rows = group(holders, {D: 10})
    web = next(r for r in rows if r.name == "web")
    assert (web.pods, web.requested, web.share, web.oldest, web.nodes) == (
        2,
        4,
        0.4,
        "2026-01-01T00:00:00Z",
        {"n1", "n2"},
    )
    assert sorted(web.members) == [("web-1", "n1", 2), ("web-2", "n2", 2)]  # the group opens to them
    fpga = next(r for r in rows if r.resource == "acme.io/fpga")
    assert (fpga.workload, fpga.share) == ("Pod/solo", 0.0)  # no allocatable total known
    bare = sorted((r.workload, r.requested) for r in rows if r.kind == "Pod" and r.resource == D)
    assert bare == [("Pod/other", 3), ("Pod/solo", 1)]  # bare pods one by one, not lumped
    by_ns = group(holders, {D: 10}, by="namespace")
    assert sorted((r.resource, r.namespace, r.requested) for r in by_ns) == [
        ("acme.io/fpga", "b", 1),
        (D, "a", 4),
        (D, "b", 4),
    ]
    assert [r.requested for r in sort_rows(rows, "requested", True)] == [4, 3, 1, 1]
    assert [r.resource for r in sort_rows(rows, "resource", False)] == ["acme.io/fpga", D, D, D]
