"""DRA-served extended resources: which class serves a name, complete pools, CEL selectors,
allocated devices, and what stays unknown."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from app.domain import device_cel
from app.domain.device_cel import Device, Unknown, Version, compile_error
from app.domain.devices import ClassFacts, DeviceFacts, SliceFacts, complete, serving
from app.domain.dra_usage import DraUsage, class_usage, node_usage
from app.domain.selector_answers import Answers
from app.domain.shares import Capacity, left, pods_fitting

HERE = Answers()  # evaluated in this process, as a store's default
matches = HERE.matches

GPU = "gpu.example.com"


def gpu(name: str, model: str = "a100", memory: str = "80Gi", shared: bool = False) -> DeviceFacts:
    return DeviceFacts(
        name, Device(GPU, (("model", model), (f"{GPU}/index", 0)), (("memory", memory),)), shared=shared
    )


def test_selectors_read_driver_attributes_and_capacity():
    d = gpu("g0").device
    assert matches((f'device.driver == "{GPU}"',), d)
    assert matches(
        (f'device.attributes["{GPU}"].model == "a100"', f'device.attributes["{GPU}"].index == 0'), d
    )
    assert matches((f'device.capacity["{GPU}"].memory.compareTo(quantity("40Gi")) >= 0',), d)
    assert not matches((f'device.capacity["{GPU}"].memory.isGreaterThan(quantity("100Gi"))',), d)
    assert not matches(('device.driver == "other"', "1/0 == 1"), d)  # the first false decides
    assert matches((f'device.attributes["{GPU}"].exists(name, name == "model")',), d)


def test_version_attributes_compare_as_semantic_versions():
    d = Device(GPU, (("driverVersion", Version("1.10.0")),), ())
    v = f'device.attributes["{GPU}"].driverVersion'
    assert matches((f'{v}.isGreaterThan(semver("1.9.0"))',), d)  # 10 > 9: not compared as text
    assert matches((f'{v}.compareTo(semver("v1.10", true)) == 0', f"{v}.minor() == 10"), d)
    assert not matches((f'{v}.isLessThan(semver("1.2.0"))',), d)
    assert matches(('isSemver("1.2.3") && !isSemver("1.2") && isSemver("1.2", true)',), d)
    with pytest.raises(Unknown):  # a version that is not one: unknown, not a miss
        matches((f"{v}.major() == 1",), Device(GPU, (("driverVersion", Version("one")),), ()))


@pytest.mark.parametrize(
    "expression",
    [
        'device.attributes["x.io"].y == 1',
        "device.driver ==",
        '"a"',
        'semver("1.0.0").isLessThan(quantity("2"))',
        'semver("1.0")',
    ],
)
def test_a_selector_that_cannot_be_decided_is_unknown(expression):
    with pytest.raises(Unknown):
        matches((expression,), gpu("g0").device)


def test_a_selector_that_does_not_compile_is_named():
    assert compile_error("device.driver ==") and compile_error('device.driver == "x"') is None


def test_the_class_created_last_serves_a_name_and_the_others_are_shadowed():
    old = ClassFacts("a-old", "2026-01-01T00:00:00Z", "example.com/gpu")
    new = ClassFacts("z-new", "2026-02-01T00:00:00Z", "example.com/gpu")
    twin = ClassFacts("b-twin", "2026-02-01T00:00:00Z", "example.com/gpu")
    s = serving([old, new, twin])
    assert s.by_name["example.com/gpu"].name == "b-twin"  # same second: the first by name
    assert s.shadowed["example.com/gpu"] == ("z-new", "a-old")
    assert s.by_name["deviceclass.resource.kubernetes.io/a-old"] is old  # every class: its implicit name


def test_only_the_newest_complete_generation_of_a_pool_counts():
    def piece(name: str, generation: int, count: int) -> SliceFacts:
        return SliceFacts(name, GPU, "node-1", generation, count, "node-1", (gpu(name),))

    kept, incomplete = complete([piece("s1", 1, 1), piece("s2", 2, 2)])
    assert kept == [] and incomplete == [(GPU, "node-1")]  # generation 2 needs two slices
    kept, incomplete = complete([piece("s1", 1, 1), piece("s2", 2, 2), piece("s3", 2, 2)])
    assert [s.name for s in kept] == ["s2", "s3"] and incomplete == []


def test_a_nodes_usage_counts_matching_devices_and_those_claims_hold():
    cls = ClassFacts(
        "gpus", "2026-01-01T00:00:00Z", "example.com/gpu", (f'device.attributes["{GPU}"].model == "a100"',)
    )
    devices = (gpu("g0"), gpu("g1"), gpu("g2", model="t4"))
    node = [SliceFacts("s", GPU, "node-1", 1, 1, "node-1", devices)]
    usage = node_usage(node, serving([cls]), frozenset({(GPU, "node-1", "g1"), (GPU, "node-1", "g2")}), HERE)
    implicit = "deviceclass.resource.kubernetes.io/gpus"
    assert usage["example.com/gpu"] == DraUsage(2, 1, aliases=(implicit,))  # one pool, two names
    assert usage[implicit] == DraUsage(2, 1, alias_of="example.com/gpu")
    assert serving([cls]).aliases == {implicit: "example.com/gpu"}


def test_a_class_shown_under_its_extended_name_counts_requests_of_its_implicit_name_there():
    """4 devices of one class: one resource of 4, never 4 + 4; a pod asking by the implicit name
    counts under the extended name."""
    from app.domain.overview import node_row
    from app.kube.wire.projections import NodeView

    cls = ClassFacts("gpus", "2026-01-01T00:00:00Z", "example.com/gpu")
    node = [SliceFacts("s", GPU, "node-1", 1, 1, "node-1", tuple(gpu(f"g{i}") for i in range(4)))]
    dra = node_usage(node, serving([cls]), frozenset({(GPU, "node-1", "g0"), (GPU, "node-1", "g1")}), HERE)
    view = NodeView("node-1", {}, {}, {}, {}, "1", False, "", {})
    implicit = "deviceclass.resource.kubernetes.io/gpus"
    row = node_row(view, {"example.com/gpu": 1, implicit: 1}, dra)
    assert set(row.usage) == {"example.com/gpu"} and row.aliases == {"example.com/gpu": (implicit,)}
    u = row.usage["example.com/gpu"]
    assert (u.capacity, u.allocatable, u.requested, u.allocated) == (4, 4, 2, 2)
    alone = ClassFacts("tpus", "2026-01-01T00:00:00Z")  # no extended name: its implicit name is its own
    dra = node_usage(node, serving([alone]), frozenset(), HERE)
    assert set(node_row(view, {}, dra).usage) == {"deviceclass.resource.kubernetes.io/tpus"}


def test_unlimited_shares_and_undecidable_selectors_make_the_numbers_unknown():
    bad = ClassFacts("bad", "t", "example.com/bad", ('device.attributes["nope.io"].x == 1',))
    node = [SliceFacts("s", GPU, "p", 1, 1, "n", (gpu("g0"),))]
    assert "nope.io" in node_usage(node, serving([bad]), frozenset(), HERE)["example.com/bad"].unknown
    # shared, and no capacity limits its shares: any number of claims may hold it
    shared = [SliceFacts("s", GPU, "p", 1, 1, "n", (gpu("g0", shared=True),))]
    plain = ClassFacts("all", "t", "example.com/all")
    unknown = node_usage(shared, serving([plain]), frozenset(), HERE)["example.com/all"].unknown
    assert (
        unknown
        == "device g0 of gpu.example.com: any number of claims may share it (no capacity limits its shares)"
    )
    partitioned = replace(
        gpu("g0", shared=True), capacities=SHARES, consumes=((("gpu-0", "memory"), Decimal(1)),)
    )
    both = [SliceFacts("s", GPU, "p", 1, 1, "n", (partitioned,))]
    assert (
        "consumes counters (not modelled)"
        in node_usage(both, serving([plain]), frozenset(), HERE)["example.com/all"].unknown
    )


SHARES = (Capacity("memory", Decimal(40 << 30), Decimal(10 << 30)), Capacity("shares", Decimal(8)))


def test_a_shared_device_counts_the_shares_that_fit_it_and_those_held():
    """Two GPUs of 40 GiB whose shares take 10 GiB each unless they ask (4 shares each), one of
    them tainted; a capacity without a default is taken whole by a share that asks none. Each
    capacity limits the shares alone, and the least wins, as the allocator reads them."""
    four = (Capacity("memory", Decimal(40 << 30), Decimal(10 << 30)),)
    g0 = replace(gpu("g0", shared=True), capacities=four)
    g1 = replace(gpu("g1", shared=True), capacities=four, taints=("gpu.nvidia.com/xid=79:NoSchedule",))
    node = [SliceFacts("s", GPU, "p", 1, 1, "n", (g0, g1))]
    cls = ClassFacts("gpus", "t", "nvidia.com/gpu")
    ten, twenty = {"memory": Decimal(10 << 30)}, {"memory": Decimal(20 << 30)}
    held = {(GPU, "p", "g0"): [ten, twenty], (GPU, "p", "g1"): [ten]}  # one claim asked 20 GiB
    u = node_usage(node, serving([cls]), frozenset(held), HERE, shares=held)["nvidia.com/gpu"]
    # 8 shares fit the two empty; 3 held; g0 has 10 GiB left (1 share), g1's 3 left are tainted
    assert (u.capacity, u.allocated, u.tainted, u.allocatable, u.free) == (8, 3, 3, 4, 1)
    assert u.lefts == (1,)
    whole = (Capacity("memory", Decimal(40 << 30), Decimal(10 << 30)), Capacity("shares", Decimal(8)))
    alone = [SliceFacts("s", GPU, "p", 1, 1, "n", (replace(g0, capacities=whole),))]
    u = node_usage(alone, serving([cls]), frozenset(), HERE, shares={})["nvidia.com/gpu"]
    assert (u.capacity, u.free) == (1, 1)  # a share asking no "shares" takes all 8 of them


def test_the_shares_left_and_the_pods_they_fit():
    cost = (Capacity("memory", Decimal(40), Decimal(10)), Capacity("cores", Decimal(100), Decimal(0)))
    assert left(cost, {}) == 4 and left(cost, {"memory": Decimal(35)}) == 0
    assert left((), {}) is None and left((Capacity("cores", Decimal(100), Decimal(0)),), {}) is None
    assert left(cost, {"memory": Decimal(50)}) == 0  # over-taken: none, never negative
    # pods of 2 take one share on each of 2 distinct devices
    assert pods_fitting([4], 2) == 0 and pods_fitting([4, 4], 2) == 4 and pods_fitting([4, 1, 1], 2) == 2
    assert pods_fitting([3, 3, 3], 3) == 3 and pods_fitting([5, 1], 1) == 6 and pods_fitting([], 1) == 0


def test_a_name_the_nodes_allocatable_advertises_is_the_status_s_and_the_rest_dras():
    from app.domain.dra_usage import on_node

    dra = {"a.io/x": DraUsage(4, 1), "b.io/y": DraUsage(2), "c.io/z": DraUsage(unknown="a selector")}
    here = on_node({"a.io/x": 2}, dra)
    assert here.both == {"a.io/x"}  # a device plugin advertises it: the scheduler counts that
    assert dict(here.served) == {"b.io/y": DraUsage(2)}
    assert dict(here.unknown) == {"c.io/z": "a selector"}


def test_a_free_device_a_taint_repels_is_not_allocatable_and_a_held_one_still_counts():
    def tainted(name: str, effect: str) -> DeviceFacts:
        return DeviceFacts(name, gpu(name).device, taints=(f"maintenance=yes:{effect}",))

    cls = ClassFacts("gpus", "t", "example.com/gpu")
    devices = (gpu("g0"), tainted("g1", "NoSchedule"), tainted("g2", "NoExecute"), tainted("g3", "None"))
    slices = [SliceFacts("s", GPU, "n1", 1, 1, "n1", devices)]
    held = frozenset({(GPU, "n1", "g2")})  # tainted after it was allocated: still held
    usage = class_usage(cls, slices, held, HERE)
    assert (usage.capacity, usage.allocatable, usage.allocated, usage.free) == (4, 3, 1, 2)


LONG_LIST = ",".join(str(i) for i in range(100))


@pytest.mark.parametrize(
    ("expression", "driver", "why"),
    [
        # a million iterations: past the runtime's budget, said so, never a hang
        (
            f"[{LONG_LIST}].all(x, [{LONG_LIST}].all(y, [{LONG_LIST}].all(z, x + y + z >= 0)))",
            GPU,
            "too costly",
        ),
        ("duration(device.driver) > duration('1s')", "1" * 40 + "x", "fails on a device"),
    ],
)
def test_a_hostile_selector_is_unknown_at_once(expression, driver, why):
    before = device_cel.TOO_COSTLY.count
    with pytest.raises(Unknown, match=why):
        matches((expression,), Device(driver, (), ()))
    assert device_cel.TOO_COSTLY.count == before + (why == "too costly")


def test_a_selector_past_the_budget_on_a_few_devices_is_not_evaluated_again():
    expression = f"[{LONG_LIST}].all(x, [{LONG_LIST}].all(y, [{LONG_LIST}].all(z, x < 1000)))"
    before = device_cel.TOO_COSTLY.count
    for i in range(10):  # ten unlike devices
        with pytest.raises(Unknown, match="too costly"):
            matches((expression,), Device(GPU, (("index", i),), ()))
    assert device_cel.TOO_COSTLY.count == before + device_cel.Costly.GIVE_UP


def test_a_backtracking_pattern_is_decided_in_linear_time():
    """RE2: a pattern that takes a backtracking engine exponential time over 40 characters."""
    assert not matches(('device.driver.matches("^(a+)+$")',), Device("a" * 40 + "b", (), ()))
    assert matches(('device.driver.matches("^(x+x+)+y$")',), Device("x" * 40 + "y", (), ()))


def test_the_store_decides_selectors_before_its_lock_so_pages_only_read_answers(monkeypatch):
    from app.kube.state.store import Store
    from app.kube.wire.dra import ClassView, SliceView

    store = Store()
    facts = ClassFacts("gpus", "t", "example.com/gpu", (f'device.attributes["{GPU}"].model == "a100"',))
    store.devices.put("deviceclasses", ClassView(facts))
    made = tuple(gpu(f"g{i}", memory=f"{i + 1}Gi") for i in range(3))  # three unlike devices
    store.devices.put("resourceslices", SliceView(SliceFacts("n1-s", GPU, "n1", 1, 1, "n1", made)))

    def evaluating(*_):
        raise AssertionError("a selector evaluated under the store's lock")

    monkeypatch.setattr(device_cel, "_matches", evaluating)
    assert store.devices.read(lambda dra: dra.usage("n1", {}))["example.com/gpu"].capacity == 3


def test_partitioned_devices_count_as_many_as_fit_the_counters_left_together():
    """A GPU of 8 memory units and 7 slices, published as a driver would: a whole GPU (8), two
    halves (4 each) and four quarters (2 each). Nothing held: at most four at once (the
    quarters). One half held: 4 left, two quarters more. Another class's hold counts too."""
    from decimal import Decimal

    from app.domain.counters import most_at_once

    def part(name: str, memory: int) -> DeviceFacts:
        return DeviceFacts(
            name, Device(GPU, (("model", "a100"),), ()), consumes=((("gpu0", "memory"), Decimal(memory)),)
        )

    parts = (part("whole", 8), part("h0", 4), part("h1", 4), *(part(f"q{i}", 2) for i in range(4)))
    counters = SliceFacts("c", GPU, "p", 1, 2, "n", (), counters=((("gpu0", "memory"), Decimal(8)),))
    node = [counters, SliceFacts("s", GPU, "p", 1, 2, "n", parts)]
    cls = ClassFacts("all", "t", "example.com/all")
    u = node_usage(node, serving([cls]), frozenset(), HERE)["example.com/all"]
    assert (u.capacity, u.allocatable, u.free) == (7, 4, 4)
    u = node_usage(node, serving([cls]), frozenset({(GPU, "p", "h0")}), HERE)["example.com/all"]
    assert (u.allocated, u.free, u.allocatable) == (1, 2, 3)
    quarters = ClassFacts(
        "q", "t", "example.com/q", ('device.attributes["gpu.example.com"].model == "a100"',)
    )
    u = node_usage(node, serving([quarters]), frozenset({(GPU, "p", "whole")}), HERE)["example.com/q"]
    assert u.free == 0  # the whole GPU is held (through another class): nothing is left
    # a device consuming a counter no set defines never fits; the search has a budget
    assert most_at_once([{("x", "m"): Decimal(1)}], {}) == 0
    import pytest

    from app.domain.counters import TooMany

    with pytest.raises(TooMany):
        most_at_once([{("s", "m"): Decimal(1)}] * 40, {("s", "m"): Decimal(20)}, steps=100)


def test_a_pod_asking_for_more_devices_than_have_shares_left_does_not_fit_whatever_the_free_sum():
    """Shares left (3, 0): three free in all, yet a pod asking for 2 takes one share on each of two
    devices, and only one has any: it does not fit; pods asking for 1 fit three times."""
    from app.domain.fit import NodeFacts, PodShape, how_many, resource_failures

    R = "nvidia.com/gpu"

    node = NodeFacts("n", {}, {R: 8, "pods": 110}, {R: 5}, spread={R: (3, 0)})
    assert node.free(R) == 3
    two, one = PodShape(requests={R: 2}), PodShape(requests={R: 1})
    assert [f.reason for f in resource_failures(two, node)] == [f"Insufficient {R}"]
    assert (how_many(two, node), how_many(one, node)) == (0, 3)
