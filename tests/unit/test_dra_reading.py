"""DRA objects read one at a time: a bad one is named and left out, the others are kept; a slice
never keeps more devices than the API allows."""

from __future__ import annotations

import orjson

from app.kube.wire.dra import MAX_DEVICES
from app.kube.wire.reading import READERS


def slice_json(name: str, devices: list) -> dict:
    spec = {
        "driver": "gpu.example.com",
        "nodeName": "n1",
        "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
    }
    return {"metadata": {"name": name, "resourceVersion": "1"}, "spec": {**spec, "devices": devices}}


def test_a_bad_slice_is_named_and_the_rest_read():
    good = slice_json(
        "good", [{"name": "g0", "attributes": {"model": {"string": "a100"}, "index": {"int": 0}}}]
    )
    bad = slice_json("bad", [{"name": "g0", "attributes": {"model": {"int": "not a number"}}}])
    page = READERS["resourceslices"].page(orjson.dumps({"metadata": {}, "items": [good, bad]}))
    assert [v.facts.name for v in page.views] == ["good"]
    assert [(u.name, u.kind) for u in page.unreadable] == [("bad", "resourceslices")]
    [view] = page.views
    assert dict(view.facts.devices[0].device.attributes) == {"model": "a100", "index": 0}


def test_a_slice_keeps_at_most_the_devices_the_api_allows():
    devices = [{"name": f"g{i}"} for i in range(MAX_DEVICES + 50)]
    view, _, problem = READERS["resourceslices"].one(orjson.dumps(slice_json("big", devices)))
    assert problem is None and len(view.facts.devices) == MAX_DEVICES
