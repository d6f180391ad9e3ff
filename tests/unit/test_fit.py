"""The fit model's filters, edge case by edge case (kube-scheduler semantics, unchanged since v1.20)."""

import pytest

from app.domain.accounting import pod_requests
from app.domain.fit import (
    HostPort,
    NodeFacts,
    PodShape,
    Requirement,
    Taint,
    Term,
    Toleration,
    failures,
    fits,
    how_many,
)

D = "example.com/dongle"


def node(name="n", labels=None, alloc=None, requested=None, **kw):
    return NodeFacts(
        name,
        labels or {},
        {"cpu": 4000, "memory": 8 * 2**30, "pods": 110, **(alloc or {})},
        {"pods": 0, **(requested or {})},
        **kw,
    )


def plugins(pod, n):
    return [f.plugin for f in failures(pod, n)]


# ---- TaintToleration ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("toleration", "taint", "ok"),
    [
        (Toleration("k", "Equal", "v", "NoSchedule"), Taint("k", "v", "NoSchedule"), True),
        (Toleration("k", "Equal", "w", "NoSchedule"), Taint("k", "v", "NoSchedule"), False),
        (Toleration("k", "Equal", "", "NoSchedule"), Taint("k", "", "NoSchedule"), True),  # empty value
        (Toleration("k", "", "v", ""), Taint("k", "v", "NoExecute"), True),  # "" operator is Equal
        (Toleration("k", "Exists", "", ""), Taint("k", "anything", "NoExecute"), True),
        (Toleration("", "Exists", "", ""), Taint("any-key", "v", "NoSchedule"), True),  # Exists without key
        (Toleration("", "Exists", "", "NoExecute"), Taint("any-key", "v", "NoSchedule"), False),
        (Toleration("k", "Exists", "", "NoSchedule"), Taint("k", "v", "NoExecute"), False),
        (Toleration("other", "Exists", "", ""), Taint("k", "v", "NoSchedule"), False),
    ],
)
def test_tolerations(toleration, taint, ok):
    pod = PodShape({}, tolerations=(toleration,))
    assert fits(pod, node(taints=(taint,))) is ok


def test_prefer_no_schedule_taints_do_not_filter():
    assert fits(PodShape({}), node(taints=(Taint("k", "v", "PreferNoSchedule"),)))
    assert plugins(PodShape({}), node(taints=(Taint("k", "v", "NoExecute"),))) == ["TaintToleration"]


# ---- NodeUnschedulable --------------------------------------------------------------
def test_cordoned_nodes_take_only_pods_that_tolerate_it():
    cordoned = node(unschedulable=True)
    assert plugins(PodShape({}), cordoned) == ["NodeUnschedulable"]
    tolerant = PodShape({}, tolerations=(Toleration("node.kubernetes.io/unschedulable", "Exists"),))
    assert fits(tolerant, cordoned)


# ---- NodeAffinity -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("req", "labels", "ok"),
    [
        (Requirement("zone", "In", ("a", "b")), {"zone": "b"}, True),
        (Requirement("zone", "In", ("a",)), {}, False),
        (Requirement("zone", "NotIn", ("a",)), {}, True),  # absent counts as not in
        (Requirement("zone", "NotIn", ("a",)), {"zone": "a"}, False),
        (Requirement("gpu", "Exists"), {"gpu": ""}, True),
        (Requirement("gpu", "DoesNotExist"), {"gpu": ""}, False),
        (Requirement("cores", "Gt", ("8",)), {"cores": "16"}, True),
        (Requirement("cores", "Gt", ("8",)), {"cores": "8"}, False),
        (Requirement("cores", "Lt", ("8",)), {"cores": "4"}, True),
        (Requirement("cores", "Gt", ("8",)), {"cores": "sixteen"}, False),  # not an integer: no match
        (Requirement("cores", "Gt", ("eight",)), {"cores": "16"}, False),
        (Requirement("cores", "Lt", ("8", "9")), {"cores": "4"}, False),  # Gt/Lt take one value
    ],
)
def test_match_expressions(req, labels, ok):
    pod = PodShape({}, affinity=(Term((req,)),))
    assert fits(pod, node(labels=labels)) is ok


def test_terms_are_ored_and_requirements_anded():
    a, b = Requirement("zone", "In", ("a",)), Requirement("pool", "In", ("gpu",))
    pod = PodShape({}, affinity=(Term((a, b)), Term((Requirement("zone", "In", ("c",)),))))
    assert fits(pod, node(labels={"zone": "a", "pool": "gpu"}))
    assert not fits(pod, node(labels={"zone": "a"}))
    assert fits(pod, node(labels={"zone": "c"}))


def test_match_fields_on_the_node_name_and_empty_terms():
    pod = PodShape({}, affinity=(Term(fields=(Requirement("metadata.name", "In", ("n1",)),)),))
    assert fits(pod, node("n1")) and not fits(pod, node("n2"))
    assert not fits(PodShape({}, affinity=(Term(),)), node())  # an empty term selects nothing
    assert not fits(PodShape({}, affinity=()), node())  # no terms: nothing matches


def test_node_selector_and_affinity_both_apply():
    pod = PodShape({}, {"zone": "a"}, affinity=(Term((Requirement("pool", "Exists"),)),))
    assert fits(pod, node(labels={"zone": "a", "pool": "x"}))
    assert plugins(pod, node(labels={"zone": "a"})) == ["NodeAffinity"]
    assert plugins(pod, node(labels={"pool": "x"})) == ["NodeAffinity"]


# ---- NodeName and NodePorts ---------------------------------------------------------
def test_node_name():
    assert plugins(PodShape({}, node_name="other"), node("n")) == ["NodeName"]
    assert fits(PodShape({}, node_name="n"), node("n"))


@pytest.mark.parametrize(
    ("mine", "taken", "ok"),
    [
        (HostPort(80), HostPort(80), False),
        (HostPort(80, "UDP"), HostPort(80), True),
        (HostPort(80, "TCP", "10.0.0.1"), HostPort(80, "TCP", "10.0.0.2"), True),
        (HostPort(80, "TCP", "10.0.0.1"), HostPort(80, "TCP", "0.0.0.0"), False),
        (HostPort(80), HostPort(80, "TCP", "10.0.0.2"), False),  # no IP: every IP
        (HostPort(81), HostPort(80), True),
    ],
)
def test_host_ports(mine, taken, ok):
    assert fits(PodShape({}, host_ports=(mine,)), node(host_ports=[taken])) is ok


# ---- NodeResourcesFit ---------------------------------------------------------------
def test_every_requested_resource_is_checked():
    n = node(alloc={D: 2, "hugepages-2Mi": 4 * 2**21, "ephemeral-storage": 10}, requested={D: 1, "cpu": 3500})
    assert fits(PodShape({D: 1, "cpu": 500}), n)
    reasons = [f.reason for f in failures(PodShape({D: 2, "cpu": 600, "hugepages-2Mi": 5 * 2**21}), n)]
    assert reasons == ["Insufficient cpu", f"Insufficient {D}", "Insufficient hugepages-2Mi"]
    assert [f.reason for f in failures(PodShape({"ephemeral-storage": 11}), n)] == [
        "Insufficient ephemeral-storage"
    ]
    assert [f.reason for f in failures(PodShape({"acme.io/fpga": 1}), n)] == ["Insufficient acme.io/fpga"]


def test_pods_count():
    full = node(alloc={"pods": 3}, requested={"pods": 3})
    assert [f.reason for f in failures(PodShape({}), full)] == ["Too many pods"]
    assert how_many(PodShape({}), node(alloc={"pods": 3}, requested={"pods": 1})) == 2


def test_an_overcommitted_cpu_blocks_only_pods_that_ask_for_cpu():
    """Since 1.27 (kubernetes#116408) a resource is checked only when the pod asks for it."""
    over = node(alloc={D: 1}, requested={"cpu": 5000})  # allocatable cpu 4000: over-committed
    assert fits(PodShape({}), over)  # asks for nothing: only the pods count
    assert fits(PodShape({D: 1}), over)  # asks for a dongle only: cpu is not checked
    assert fits(PodShape({D: 1, "cpu": 0}), over)  # an explicit 0 is not a request either
    assert [f.reason for f in failures(PodShape({D: 1, "cpu": 100}), over)] == ["Insufficient cpu"]
    assert how_many(PodShape({D: 1}), over) == 1


def test_init_containers_larger_than_the_sum_and_overhead():
    spec = {
        "containers": [
            {"resources": {"requests": {"cpu": "1", D: "1"}}},
            {"resources": {"requests": {"cpu": "1"}}},
        ],
        "initContainers": [{"resources": {"requests": {"cpu": "3", D: "2"}}}],
        "overhead": {"cpu": "250m"},
    }
    requests = pod_requests(spec)
    assert requests == {"cpu": 3250, D: 2}
    assert not fits(PodShape(requests), node(alloc={D: 1}))
    assert fits(PodShape(requests), node(alloc={D: 2}))
    assert not fits(PodShape(requests), node(alloc={D: 2}, requested={"cpu": 800}))


def test_how_many_more_pods_fit():
    n = node(alloc={D: 5}, requested={D: 1})
    assert how_many(PodShape({D: 2, "cpu": 1000}), n) == 2
    assert how_many(PodShape({D: 2, "cpu": 1000}), n, {D: 10}) == 4  # then cpu: 4000m
    assert how_many(PodShape({D: 1}, host_ports=(HostPort(9),)), n) == 1


def test_admission_adds_the_not_ready_and_unreachable_tolerations_unless_covered():
    from app.domain.fit import NOT_READY, UNREACHABLE, admitted_tolerations

    not_ready = Taint(NOT_READY, "", "NoExecute")
    assert any(t.tolerates(not_ready) for t in admitted_tolerations(()))
    assert [t.key for t in admitted_tolerations(())] == [NOT_READY, UNREACHABLE]
    own = Toleration(NOT_READY, "Exists", "", "NoExecute")
    assert admitted_tolerations((own,)) == (own, Toleration(UNREACHABLE, "Exists", "", "NoExecute"))
    everything = Toleration("", "Exists", "", "")
    assert admitted_tolerations((everything,)) == (everything,)
    # a NoSchedule toleration of not-ready does not cover the NoExecute taint
    no_schedule = Toleration(NOT_READY, "Exists", "", "NoSchedule")
    assert len(admitted_tolerations((no_schedule,))) == 3


@pytest.mark.parametrize(
    ("requirement", "labels", "matched"),
    [
        # values the API server accepts but labels.NewRequirement refuses: the term matches nothing
        (Requirement("zone", "In", ("a b",)), {"zone": "a b"}, False),
        (Requirement("zone", "NotIn", ("-a",)), {"zone": "b"}, False),
        (Requirement("cores", "Gt", ("-1",)), {"cores": "4"}, False),  # "-1" is no label value
        (Requirement("cores", "Gt", ("1_0",)), {"cores": "40"}, False),  # ParseInt refuses "1_0"
        (Requirement("cores", "Lt", ("٣",)), {"cores": "1"}, False),  # ASCII digits only
        (Requirement("cores", "Exists", ("x",)), {"cores": "1"}, False),  # Exists takes no values
        (Requirement("bad key!", "Exists"), {"bad key!": "1"}, False),
        # the node's label is read by ParseInt too
        (Requirement("cores", "Gt", ("4",)), {"cores": "1_000"}, False),
        (Requirement("cores", "Gt", ("4",)), {"cores": " 8"}, False),
        (Requirement("cores", "Gt", ("4",)), {"cores": "+8"}, True),
        (Requirement("cores", "Lt", ("4",)), {"cores": "-8"}, True),
        (Requirement("cores", "Gt", ("4",)), {"cores": "many"}, False),
        (Requirement("zone", "In", ("a", "")), {"zone": ""}, True),  # the empty value is valid
    ],
)
def test_requirements_match_as_the_scheduler_parses_them(requirement, labels, matched):
    term = Term((requirement,))
    assert term.matches("n1", labels) is matched
    assert (
        Term((requirement,), (Requirement("metadata.name", "In", ("n1",)),)).matches("n1", labels) is matched
    )


def test_a_term_the_scheduler_cannot_parse_leaves_the_other_terms():
    bad = Term((Requirement("zone", "In", ("a b",)),))
    good = Term((Requirement("zone", "In", ("b",)),))
    pod = PodShape({}, affinity=(bad, good))
    assert fits(pod, NodeFacts("n1", {"zone": "b"}, {"pods": 5}, {}))
    assert not fits(pod, NodeFacts("n1", {"zone": "a b"}, {"pods": 5}, {}))
    two = Term(fields=(Requirement("metadata.name", "In", ("n1", "n2")),))  # matchFields: one value
    assert not two.matches("n1", {})
