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
