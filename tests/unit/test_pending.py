import pytest

from app.domain.diagnosis import ShapeIndex, diagnose
from app.domain.fit import HostPort, NodeFacts, PodShape, Taint, Toleration
from app.domain.ownership import STATIC_OWNERSHIP
from app.domain.scheduler_message import parse_scheduler_message

D, F = "example.com/dongle", "acme.io/fpga"


def STATIC(resource: str, node: str):  # every resource set here, on every node
    return STATIC_OWNERSHIP


# Real messages, as kube-scheduler wrote them in several versions.
MESSAGES = [
    # 1.16-1.21 (recorded from kube-scheduler v1.20.2, which the tests ran until 1.37 replaced it)
    ("0/3 nodes are available: 3 Insufficient example.com/dongle.", 3, {D: 3}, [], None),
    (
        "0/4 nodes are available: 1 Insufficient cpu, 3 Insufficient example.com/dongle.",
        4,
        {"cpu": 1, D: 3},
        [],
        None,
    ),
    (
        "0/5 nodes are available: 2 node(s) didn't match node selector, 3 Insufficient example.com/dongle.",
        5,
        {D: 3},
        [(2, "node(s) didn't match node selector")],
        None,
    ),
    (
        "0/4 nodes are available: 4 node(s) had taint {node.kubernetes.io/not-ready: }, "
        "that the pod didn't tolerate.",
        4,
        {},
        [(4, "node(s) had taint {node.kubernetes.io/not-ready: }, that the pod didn't tolerate")],
        None,
    ),
    (
        "0/3 nodes are available: 1 Insufficient example.com/dongle, 1 node(s) had taint {a: b}, "
        "that the pod didn't tolerate, 1 node(s) were unschedulable.",
        3,
        {D: 1},
        [(1, "node(s) had taint {a: b}, that the pod didn't tolerate"), (1, "node(s) were unschedulable")],
        None,
    ),
    # 1.22-1.26: a preemption clause follows
    (
        "0/3 nodes are available: 3 Insufficient example.com/dongle. preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod.",
        3,
        {D: 3},
        [],
        "0/3 nodes are available: 3 No preemption victims found for incoming pod",
    ),
    # 1.27+: untolerated taint wording, and a doubled full stop at the end
    (
        "0/4 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
        "3 Insufficient example.com/dongle. preemption: 0/4 nodes are available: 1 Preemption is not helpful "
        "for scheduling, 3 No preemption victims found for incoming pod..",
        4,
        {D: 3},
        [(1, "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }")],
        "0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found "
        "for incoming pod",
    ),
    # 1.34+: the DynamicResources plugin's post-filter clause comes before preemption's
    (
        "0/3 nodes are available: 3 Insufficient example.com/dongle. no new claims to deallocate, "
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
        3,
        {D: 3},
        [],
        "0/3 nodes are available: 3 No preemption victims found for incoming pod",
    ),
    # 1.37.2, recorded by the walkthrough (a Deployment asking 3 wgh/extended-cpu of a node with 2)
    (
        "0/1 nodes are available: 1 Insufficient wgh/extended-cpu. preemption: 0/1 nodes are available: "
        "1 Preemption is not helpful for scheduling.",
        1,
        {"wgh/extended-cpu": 1},
        [],
        "0/1 nodes are available: 1 Preemption is not helpful for scheduling",
    ),
    # 1.34+ DRA: claims that cannot be allocated, beside an insufficient extended resource
    (
        "0/3 nodes are available: 1 Insufficient example.com/dongle, 2 cannot allocate all claims. "
        "no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful "
        "for scheduling.",
        3,
        {D: 1},
        [(2, "cannot allocate all claims")],
        "0/3 nodes are available: 3 Preemption is not helpful for scheduling",
    ),
    # 1.35.4, recorded by the walkthrough in the compatibility run (the agreement test's nodes
    # were there too): the 1.35 taint wording, and the DRA plugin's post-filter clause
    (
        "0/56 nodes are available: 16 node(s) had untolerated taint(s), 31 Insufficient wgh/extended-cpu, "
        "9 node(s) were unschedulable. no new claims to deallocate, preemption: 0/56 nodes are available: "
        "56 Preemption is not helpful for scheduling.",
        56,
        {"wgh/extended-cpu": 31},
        [(16, "node(s) had untolerated taint(s)"), (9, "node(s) were unschedulable")],
        "0/56 nodes are available: 56 Preemption is not helpful for scheduling",
    ),
    # 1.37.2, recorded by tests/integration/test_dra.py: a pod asking for a DRA-served extended
    # resource when every matching device is held (the message names no resource and no class)
    (
        "0/3 nodes are available: 3 cannot allocate all claims. preemption: 0/3 nodes are available: "
        "3 Preemption is not helpful for scheduling.",
        3,
        {},
        [(3, "cannot allocate all claims")],
        "0/3 nodes are available: 3 Preemption is not helpful for scheduling",
    ),
    (
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu, 2 Insufficient memory.",
        2,
        {"nvidia.com/gpu": 2, "memory": 2},
        [],
        None,
    ),
]


@pytest.mark.compat
@pytest.mark.parametrize(("message", "total", "insufficient", "others", "preemption"), MESSAGES)
def test_parse_real_scheduler_messages(message, total, insufficient, others, preemption):
    parsed = parse_scheduler_message(message)
    assert parsed.total_nodes == total
    assert parsed.insufficient == insufficient
    assert parsed.other_reasons == others
    assert parsed.preemption == preemption


@pytest.mark.compat
def test_a_message_cut_at_1024_characters_leaves_its_partial_reason_out():
    reasons = ", ".join(f"{i} Insufficient r{i}.example.com/dongle" for i in range(1, 60))
    message = f"0/5000 nodes are available: {reasons}"[:1020] + " ..."
    parsed = parse_scheduler_message(message)
    assert parsed.cut and parsed.total_nodes == 5000
    shown = dict(parsed.insufficient)
    whole_parts = len(message[:-4].split(": ", 1)[1].split(", ")) - 1  # the last one is cut short
    assert len(shown) == len(parsed.reasons) == whole_parts
    assert all(name.endswith(".example.com/dongle") for name in shown)  # no name cut short
    assert parsed.other_reasons == []
    whole = parse_scheduler_message("0/1 nodes are available: 1 Insufficient a.b/c.")
    assert not whole.cut and whole.insufficient == {"a.b/c": 1}


@pytest.mark.compat
def test_the_dra_post_filter_clause_is_kept_apart():
    parsed = parse_scheduler_message(
        "0/3 nodes are available: 3 Insufficient example.com/dongle. no new claims to deallocate, "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    assert parsed.post_filter == ("no new claims to deallocate",)
    assert parse_scheduler_message("0/1 nodes are available: 1 Insufficient x/y.").post_filter == ()


@pytest.mark.parametrize("message", ["no nodes available to schedule pods", "", "something new entirely"])
def test_unknown_messages_are_kept_not_guessed(message):
    parsed = parse_scheduler_message(message)
    assert parsed.total_nodes is None
    assert parsed.reasons == ()
    assert parsed.raw == message


def node(name, extended, requested=None, labels=None, **kw):
    """A roomy node with ``extended`` allocatable (and capacity), ``requested`` already taken."""
    alloc = {"cpu": 8000, "memory": 32 * 2**30, "pods": 110, **extended}
    return NodeFacts(
        name, labels or {}, alloc, {"pods": 0, **(requested or {})}, capacity=dict(extended), **kw
    )


def shape(requests, selector=None, **kw):
    return PodShape({"cpu": 100, **requests}, selector or {}, **kw)


def test_short_resource_gives_shortfall_and_suggestion():
    nodes = [node("a", {D: 3}, {D: 1}), node("b", {D: 3}, {D: 2}), node("c", {D: 1}), node("d", {})]
    d = diagnose(shape({D: 3}), nodes)
    assert d.kind == "short"
    [fit] = d.fits
    assert (fit.max_free, fit.best_node, fit.shortfall, fit.advertised_on) == (2, "a", 1, 3)
    assert fit.fit_with_shortfall == 1
    [s] = d.suggestions
    assert (s.node, s.resource, s.add, s.new_capacity) == ("a", D, 1, 4)
    assert s.text == f"add 1 {D} to a"


def test_unadvertised_resource_is_called_so():
    d = diagnose(shape({"example.com/qubit": 1}), [node("a", {D: 3})])
    assert d.kind == "unadvertised"
    assert d.fits[0].unadvertised


def test_a_pod_that_fits_somewhere_is_said_to_fit():
    d = diagnose(shape({D: 1}), [node("a", {D: 3})])
    assert (d.kind, d.feasible, d.suggestions) == ("fits", 1, [])


def test_node_selector_limits_the_candidates():
    nodes = [node("a", {D: 5}, labels={"pool": "x"}), node("b", {D: 1}, labels={"pool": "y"})]
    d = diagnose(shape({D: 2}, {"pool": "y"}), nodes)
    assert d.kind == "short"
    assert d.candidates == 1
    assert d.suggestions[0].node == "b"
    nowhere = diagnose(shape({D: 2}, {"pool": "z"}), nodes)
    assert nowhere.suggestions == [] and nowhere.why == [
        "no node matches the pod's node selector and affinity"
    ]


def test_several_resources_must_fit_on_one_node():
    nodes = [node("a", {D: 1, F: 0}), node("b", {D: 0, F: 1})]
    d = diagnose(shape({D: 1, F: 1}), nodes)
    assert d.kind == "short"  # each fits somewhere, never both on one node
    assert [(s.node, s.resource, s.add) for s in d.suggestions] == [("a", F, 1)]


def test_a_node_without_the_resource_is_never_named_while_one_with_it_is_full():
    gpu = "nvidia.com/gpu"
    # every GPU held on the one GPU node; nodes "a" (first by name) have none at all
    nodes = [node("a-cpu-only", {}), node("gpu-node", {gpu: 4}, {gpu: 4}), node("b-cpu-only", {})]
    d = diagnose(shape({gpu: 3}), nodes)
    assert d.kind == "short"
    [s] = d.suggestions
    assert (s.node, s.add, s.advertised) == ("gpu-node", 3, True)
    # over-committed there (free -1): still the node with GPUs, never one without
    d = diagnose(shape({gpu: 3}), [node("a-cpu-only", {}), node("gpu-node", {gpu: 4}, {gpu: 5})])
    assert [(s.node, s.add) for s in d.suggestions] == [("gpu-node", 4)]


def test_with_no_node_advertising_every_resource_asked_the_suggestion_says_what_is_new_there():
    nodes = [node("a", {D: 1, F: 0}), node("b", {D: 0})]
    d = diagnose(shape({D: 2, F: 1}), nodes)
    assert [(s.node, s.resource, s.add, s.advertised) for s in d.suggestions] == [
        ("a", F, 1, True),
        ("a", D, 1, True),
    ]
    d = diagnose(shape({D: 2, F: 1}), [node("b", {D: 0}), node("f", {F: 0})])
    assert [(s.node, s.resource, s.advertised) for s in d.suggestions] == [("b", F, False), ("b", D, True)]


def test_cordoned_and_tainted_nodes_are_never_suggested():
    taint = Taint("dedicated", "ml", "NoSchedule")
    nodes = [node("a", {D: 4}, unschedulable=True), node("b", {D: 1}), node("c", {D: 4}, taints=(taint,))]
    d = diagnose(shape({D: 2}), nodes)
    assert [s.node for s in d.suggestions] == ["b"]
    d = diagnose(shape({D: 2}), [nodes[2]])
    assert d.suggestions == [] and d.why == ["no node tolerates dedicated=ml:NoSchedule"]
    tolerant = shape({D: 2}, tolerations=(Toleration("dedicated", "Equal", "ml", "NoSchedule"),))
    assert diagnose(tolerant, [nodes[2]]).kind == "fits"


def test_no_suggestion_when_cpu_is_what_is_missing():
    d = diagnose(shape({D: 1, "cpu": 9000}), [node("a", {D: 0}), node("b", {D: 0})])
    assert d.suggestions == []
    assert d.why == ["no node has enough cpu free"]


def test_one_plan_for_several_pods_of_a_shape():
    nodes = [node("a", {D: 2}, {D: 1}), node("b", {D: 0}), node("c", {D: 1})]
    plan = diagnose(shape({D: 1}), nodes, wanted=5).plan
    # a and c take one each as they are; the three left are spread over the nodes that have
    # dongles, one a node each round: never all on a, and none on b, which has none at all
    steps = [(s.node, s.pods, dict(s.add)) for s in plan.steps]
    assert steps == [("a", 3, {D: 2}), ("c", 2, {D: 1})]
    assert plan.placed == 5 and plan.changes(STATIC) == [(D, 2, ["c"]), (D, 4, ["a"])]


def test_a_plan_can_be_capped_per_node_and_says_what_it_could_not_place():
    from app.domain.planner import plan as make_plan

    nodes = [node("a", {D: 0}), node("b", {D: 0})]
    capped = make_plan(shape({D: 1}), nodes, 7, per_node=2)
    assert {s.node: s.pods for s in capped.steps} == {"a": 2, "b": 2} and capped.placed == 4
    spread = make_plan(shape({D: 1}), nodes, 7)
    assert {s.node: s.pods for s in spread.steps} == {"a": 4, "b": 3} and spread.placed == 7


def test_the_plans_changes_give_each_node_what_its_step_says_never_more():
    """Three nodes taking two pods each (cpu), each 2 dongles short: x has 2 (all taken), y and z
    none. Two changes, x to 4 and y and z to 2, never the largest on all three (that would
    advertise devices that do not exist)."""
    nodes = [node("x", {D: 2}, {D: 2}), node("y", {D: 0}), node("z", {D: 0})]
    plan = diagnose(shape({D: 1, "cpu": 3000}), nodes, wanted=6).plan
    assert {s.node: (s.pods, dict(s.add)) for s in plan.adds} == {n: (2, {D: 2}) for n in "xyz"}
    assert plan.changes(STATIC) == [(D, 2, ["y", "z"]), (D, 4, ["x"])]


def test_a_shape_index_rechecks_only_changed_nodes():
    index = ShapeIndex(shape({D: 2}))
    nodes = [node("a", {D: 1}), node("b", {D: 0})]
    first = index.diagnose(nodes)
    assert first.kind == "short" and first.suggestions[0].node == "a"
    assert index.diagnose(list(nodes)) is first  # nothing changed: the same diagnosis
    nodes[1] = node("b", {D: 2})  # b got dongles
    assert index.diagnose(nodes).kind == "fits"
    assert index.diagnose(nodes[:1]).total == 1  # b went away


def test_a_plan_respects_other_resources_and_host_ports():
    ported = shape({D: 1}, host_ports=(HostPort(8080),))
    d = diagnose(ported, [node("a", {D: 0}), node("b", {D: 0})], wanted=3)
    assert d.plan.placed == 2  # one pod per node: the host port
    cpu_bound = shape({D: 1, "cpu": 3000})
    d = diagnose(cpu_bound, [node("a", {D: 0})], wanted=5)
    assert d.plan.placed == 2 and d.plan.steps[0].add == {D: 2}  # 8000m of cpu: two pods


def _random_node(rng, name):
    extended = {r: rng.randint(0, 4) for r in (D, F) if rng.random() < 0.8}
    requested = {r: rng.randint(0, v) for r, v in extended.items()}
    taints = (Taint("dedicated", "ml", "NoSchedule"),) if rng.random() < 0.1 else ()
    labels = {"pool": rng.choice("xy")}
    # capacity may exceed allocatable (reserved devices): the plan's targets read capacity
    capacity = {r: v + rng.choice((0, 0, 1)) for r, v in extended.items()}
    alloc = {"cpu": rng.choice((8000, 1000)), "memory": 32 * 2**30, "pods": 110, **extended}
    return NodeFacts(
        name, labels, alloc, {"pods": 0, **requested}, rng.random() < 0.05, taints, capacity=capacity
    )


@pytest.mark.parametrize("seed", range(60))
def test_a_kept_index_agrees_with_a_fresh_diagnosis_after_every_change(seed):
    """The index keeps its totals, orderings and per-resource maxima as node results come and go;
    after any sequence of changes, additions and removals it must say what a fresh one says."""
    import random

    rng = random.Random(seed)
    pod = shape({D: rng.randint(1, 4), F: rng.randint(0, 3)}, rng.choice([None, {"pool": "x"}]))
    nodes = {f"n{i}": _random_node(rng, f"n{i}") for i in range(12)}
    index, told = ShapeIndex(pod), ShapeIndex(pod)  # one reads every node, one is told the changes
    told.update(list(nodes.values()), 0)
    for step in range(1, 40):
        changes = {}
        for name in sorted({f"n{rng.randint(0, 15)}" for _ in range(rng.randint(1, 3))}):
            if name in nodes and rng.random() < 0.2:
                del nodes[name]
            else:
                nodes[name] = _random_node(rng, name)
            changes[name] = nodes.get(name)
        told.apply(changes, step)
        wanted = rng.randint(1, 6)
        fresh = diagnose(pod, list(nodes.values()), wanted)
        assert index.diagnose(list(nodes.values()), wanted, version=step) == fresh, (seed, step)
        assert told.diagnosis(wanted) == fresh, (seed, step)


def test_a_change_the_filters_do_not_see_still_renews_the_plan():
    """Capacity above allocatable (devices held back) changes what the plan sets, not any filter."""
    index = ShapeIndex(shape({D: 1}))
    before = NodeFacts("a", {}, {"cpu": 8000, "pods": 110, D: 2}, {"pods": 0, D: 2}, capacity={D: 2})
    after = NodeFacts("a", {}, {"cpu": 8000, "pods": 110, D: 2}, {"pods": 0, D: 2}, capacity={D: 3})
    assert index.diagnose([before], wanted=2, version=1).plan.changes(STATIC) == [(D, 4, ["a"])]
    assert index.diagnose([after], wanted=2, version=2).plan.changes(STATIC) == [(D, 5, ["a"])]


def test_a_smaller_request_that_fits_now_is_named_with_its_node():
    nodes = [node("a", {D: 4}, {D: 2}), node("b", {D: 4}, {D: 3}), node("c", {D: 1}, {D: 1})]
    d = diagnose(shape({D: 3}), nodes)
    assert d.kind == "short"
    assert [(x.resource, x.to, x.node) for x in d.lowerings] == [(D, 2, "a")]  # a has 2 free
    assert ShapeIndex(shape({D: 3})).advertising(D) == []  # nothing taken yet
    index = ShapeIndex(shape({D: 3}))
    index.update(nodes)
    assert index.advertising(D) == [("a", 2), ("b", 1), ("c", 0)]  # the most free first


def test_no_smaller_request_when_another_resource_is_short_there_too():
    nodes = [node("a", {D: 4, F: 1}, {D: 2, F: 1})]
    d = diagnose(shape({D: 3, F: 1}), nodes)
    assert d.lowerings == []  # a has 2 dongles free, but no fpga


def test_pods_with_anti_affinity_on_nodes_it_fits_are_named_not_weighed():
    pod = PodShape({D: 1})
    calm = NodeFacts("a", {}, {D: 2, "pods": 9}, {})
    repelling = NodeFacts("b", {}, {D: 2, "pods": 9}, {}, repelling=1)
    full = NodeFacts("c", {}, {D: 0, "pods": 9}, {}, repelling=3)  # not one it fits: not named
    index = ShapeIndex(pod)
    index.update([calm, repelling, full], 1)
    d = index.diagnosis()
    assert d.kind == "fits" and d.feasible == 2
    assert d.unmodelled == ("inter-pod anti-affinity of pods already on 1 of the 2 nodes it fits",)
    index.apply({"b": NodeFacts("b", {}, {D: 2, "pods": 9}, {})}, 2)  # that pod went away
    assert index.diagnosis().unmodelled == ()


def test_the_store_counts_pods_with_required_anti_affinity_per_node():
    from app.kube.state.store import Store

    store = Store()
    store.apply_node(
        {"metadata": {"name": "n1", "resourceVersion": "1"}, "status": {"allocatable": {D: "2"}}}
    )
    pod = {
        "metadata": {"name": "p", "namespace": "ns", "resourceVersion": "2"},
        "spec": {
            "nodeName": "n1",
            "containers": [{"name": "c"}],
            "affinity": {
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "x"}]}
            },
        },
        "status": {"phase": "Running"},
    }
    store.apply_pod(pod)
    assert [f.repelling for f in store.node_facts()] == [1]
    store.apply_pod(pod, deleted=True)
    assert [f.repelling for f in store.node_facts()] == [0]
