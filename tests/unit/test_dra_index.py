"""The DRA index takes a slice's change pool by pool (app/kube/state/dra_index.py): after any
sequence of slices coming, changing generation and going, what it counts per node is what
counting every slice again gives, and only the changed pool's nodes are said to move."""

from __future__ import annotations

import random

from app.domain.device_cel import Device
from app.domain.devices import ClassFacts, DeviceFacts, SliceFacts
from app.kube.state.dra_index import EVERY, DraIndex
from app.kube.wire.dra import ClassView, SliceView

GPU, R = "gpu.example.com", "example.com/gpu"


def slice_view(pool: int, part: int, generation: int, count: int, node: str) -> SliceView:
    devices = tuple(DeviceFacts(f"p{pool}-s{part}-d{k}", Device(GPU, (("k", k),), ())) for k in range(2))
    return SliceView(SliceFacts(f"pool{pool}-{part}", GPU, f"pool{pool}", generation, count, node, devices))


def counted(index: DraIndex) -> tuple[dict[str, list[str]], dict, list]:
    by_node = {n: sorted(s.name for s in found) for n, found in index._slices_by_node().items()}
    return by_node, dict(index._where), list(index.incomplete)


def test_slices_changed_one_by_one_are_counted_as_counting_them_all_again_would():
    rng = random.Random(7)
    index = DraIndex()
    index.put("deviceclasses", ClassView(ClassFacts("gpus", "t", R, ('device.driver == "gpu.example.com"',))))
    index._slices_by_node()
    for step in range(600):
        pool, part = rng.randrange(12), rng.randrange(3)
        name = ("", f"pool{pool}-{part}")
        if name in index.slices and rng.random() < 0.25:
            moved = index.put("resourceslices", index.slices[name], deleted=True)
        else:
            count = rng.choice((1, 2, 3))
            view = slice_view(pool, part, rng.randrange(1, 4), count, f"n{rng.randrange(5)}")
            moved = index.put("resourceslices", view)
        assert moved is not EVERY
        index.usage("n0", {})  # a page reads between events
        fresh = DraIndex()
        fresh.replace("resourceslices", list(index.slices.values()))
        assert counted(index) == counted(fresh), step


def test_a_rewrite_of_one_nodes_slice_moves_that_node_alone():
    index = DraIndex()
    for i in range(50):
        index.put("resourceslices", slice_view(i, 0, 1, 1, f"n{i}"))
    index._slices_by_node()
    assert index.put("resourceslices", slice_view(7, 0, 2, 1, "n7")) == frozenset({"n7"})


def test_shared_gpus_as_the_driver_publishes_them_and_the_scheduler_allocates_them():
    """A ResourceSlice as NVIDIA's DRA driver writes one with consumable shares (each GPU
    ``allowMultipleAllocations``, ``capacity.memory`` and ``capacity.shares`` with request
    policies) and claims as kube-scheduler allocates them (a ``shareID`` and the
    ``consumedCapacity`` per result), decoded by the cache's own decoders: one row per GPU with
    its claims and what they took; the class counts shares."""
    import msgspec

    from app.kube.state.dra_rows import node_devices
    from app.kube.wire.dra import ClaimView, ResourceClaim, ResourceSlice

    def gpu(i: int) -> dict:
        return {
            "name": f"gpu-{i}",
            "allowMultipleAllocations": True,
            "attributes": {"uuid": {"string": f"GPU-{i}"}},
            "capacity": {
                "memory": {
                    "value": "40Gi",
                    "requestPolicy": {"default": "10Gi", "validRange": {"min": "1Gi"}},
                },
                "shares": {"value": "4", "requestPolicy": {"default": "1", "validValues": ["1"]}},
            },
        }

    slice_json = {
        "metadata": {"name": "n1-gpus"},
        "spec": {
            "driver": GPU,
            "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
            "nodeName": "n1",
            "devices": [gpu(0), gpu(1)],
        },
    }

    def claim(name: str, device: str, memory: str) -> ClaimView:
        result = {
            "request": "r",
            "driver": GPU,
            "pool": "n1",
            "device": device,
            "shareID": f"uid-{name}",
            "consumedCapacity": {"memory": memory, "shares": "1"},
        }
        body = {
            "metadata": {"namespace": "ml", "name": name},
            "status": {
                "allocation": {"devices": {"results": [result]}},
                "reservedFor": [{"resource": "pods", "name": f"{name}-pod"}],
            },
        }
        return ClaimView.from_struct(msgspec.json.decode(msgspec.json.encode(body), type=ResourceClaim))

    index = DraIndex()
    index.put("deviceclasses", ClassView(ClassFacts("gpus", "t", R, ('device.driver == "gpu.example.com"',))))
    index.put(
        "resourceslices",
        SliceView.from_struct(msgspec.json.decode(msgspec.json.encode(slice_json), type=ResourceSlice)),
    )
    for c in (claim("a", "gpu-0", "10Gi"), claim("b", "gpu-0", "20Gi"), claim("c", "gpu-1", "10Gi")):
        index.put("resourceclaims", c)
    u = index.usage("n1", {})[R]
    # 4 shares a GPU by both capacities; gpu-0: 30 of 40 GiB taken (1 share left), gpu-1: 3 left
    assert (u.capacity, u.allocated, u.allocatable, u.free, u.lefts) == (8, 3, 7, 4, (3, 1))
    rows, _ = node_devices(index, "n1")
    first = rows[0]
    assert [c.name for c in first.claims] == ["a", "b"] and first.shares is not None
    assert (first.shares.shares, first.shares.total, first.shares.left) == (2, 4, 1)
    assert first.shares.taken["memory"] == 30 << 30 and first.shares.taken["shares"] == 2
    index.put("resourceclaims", claim("b", "gpu-0", "20Gi"), deleted=True)  # its job ended
    assert index.usage("n1", {})[R].lefts == (3, 3)


def test_a_device_taint_rule_taints_the_devices_it_picks_until_it_goes():
    """A DeviceTaintRule (resource.k8s.io/v1, 1.37) as the API sends it: its taint on the devices
    its selector picks, counted as the driver's own taints are; one without a selector picks none."""
    import msgspec

    from app.kube.state.dra_rows import node_devices
    from app.kube.wire.dra import DeviceTaintRule, TaintRuleView

    def rule(name: str, selector: dict | None, effect: str = "NoSchedule") -> TaintRuleView:
        spec = {"taint": {"key": "gpu.nvidia.com/xid", "value": "79", "effect": effect}}
        body = {
            "metadata": {"name": name},
            "spec": {**spec, **({"deviceSelector": selector} if selector is not None else {})},
        }
        return TaintRuleView.from_struct(msgspec.json.decode(msgspec.json.encode(body), type=DeviceTaintRule))

    index = DraIndex()
    index.put("deviceclasses", ClassView(ClassFacts("gpus", "t", R, ('device.driver == "gpu.example.com"',))))
    index.put("resourceslices", slice_view(0, 0, 1, 1, "n0"))
    assert (index.usage("n0", {})[R].allocatable, index.usage("n0", {})[R].tainted) == (2, 0)
    assert index.put("devicetaintrules", rule("none", None)) is EVERY  # no selector: no device
    assert index.usage("n0", {})[R].allocatable == 2
    index.put("devicetaintrules", rule("xid", {"driver": GPU, "device": "p0-s0-d1"}))
    index.put("devicetaintrules", rule("note", {"pool": "pool0"}, effect="None"))  # informational
    u = index.usage("n0", {})[R]
    assert (u.capacity, u.allocatable, u.tainted) == (2, 1, 1)
    rows = {r.device.name: r.device for (r,) in zip(node_devices(index, "n0")[0])}
    assert rows["p0-s0-d1"].taints == ("gpu.nvidia.com/xid=79:NoSchedule", "gpu.nvidia.com/xid=79:None")
    assert rows["p0-s0-d1"].rules == ("xid", "note") and rows["p0-s0-d0"].rules == ("note",)
    index.forget("devicetaintrules", ("", "xid"))  # the GPU recovered: the rule deleted
    assert index.usage("n0", {})[R].allocatable == 2


def test_claims_coming_changing_and_going_leave_holders_and_shares_as_counting_them_all_again():
    """Holders and shares are kept as claims come and go (a page after a claim event reads them
    without going through every claim): after any sequence, what counting every claim again gives."""
    from decimal import Decimal

    from app.kube.wire.dra import ClaimView

    rng = random.Random(11)
    index = DraIndex()

    def seen(i: DraIndex) -> tuple:
        shares = {d: sorted(sorted(s.items()) for s in v) for d, v in i.shares().items()}
        return set(i.held()), {d: [c.key for c in i.holders(d)] for d in i.held()}, shares

    for step in range(500):
        name = f"c{rng.randrange(20)}"
        if ("ns", name) in index.claims and rng.random() < 0.3:
            index.put("resourceclaims", index.claims[("ns", name)], deleted=True)
        else:
            devices = [(GPU, "p", f"d{rng.randrange(4)}") for _ in range(rng.randint(1, 2))]
            shares = tuple(
                (d, (("memory", Decimal(rng.randint(1, 4))),)) for d in devices if rng.random() < 0.7
            )
            index.put("resourceclaims", ClaimView("ns", name, tuple(devices), (), False, str(step), shares))
        fresh = DraIndex()
        fresh.replace("resourceclaims", list(index.claims.values()))
        assert seen(index) == seen(fresh), step
