"""A fuzz test of what a cluster may send: nodes, pods, DeviceClasses, ResourceSlices and
ResourceClaims with hostile values (numbers of thousands of digits, deep nesting, long strings,
odd Unicode, wrong types) as raw watch events through the cache's own decoding and store, then
every page rendered over that store. Nothing raises, no page answers 500: an object that cannot
be read is left out and named, never a crash. (The same objects through a real API server and a
served worker: tests/integration/test_hostile_cluster.py.)"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kubernetes import client

from app import create_app
from app.kube.api.cache import ClusterCache
from app.kube.api.watch_wire import EVENT
from app.kube.wire.reading import readers
from app.web.process import of as process_of
from tests.helpers import browser
from tests.web.fake import FakeCluster

D = "example.com/dongle"
DRIVER = "gpu.example.com"
BIG = "9" * 5000
ODD_TEXT = ["\u202e\ufeff", "\U0001f600" * 50, "\x00", "a" * 70_000, "<script>x</script>", "\uff13"]
ODD_NUMBER = [BIG, f"1e{BIG}", f"-{BIG}", "1e999", "9e18", "0.5", "NaN", "\u0663", "", "1Ki", "3"]
PAGES = ["/", "/pending/", "/devices/", "/plan/?requests=example.com/dongle%3D1", "/workloads/",
         "/history/", "/heat", "/export.csv", "/export.json", "/nodes/n0", "/nodes/n1"]  # fmt: skip


DEEP = "__deep__"  # replaced in the event's bytes by a deeply nested list (json.dumps would recurse)
# 1,500 here: Hypothesis holds Python's recursion limit near 2,000 while it runs a test; the
# 9,000-deep object (the API server keeps up to 10,000) is the test after this one
DEEP_JSON = b"[" * 1500 + b'"x"' + b"]" * 1500


values = st.one_of(
    st.sampled_from(ODD_NUMBER),
    st.sampled_from(ODD_TEXT),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.just(DEEP),
    st.none(),
    st.booleans(),
    st.dictionaries(st.sampled_from(["a", D, "cpu"]), st.sampled_from(ODD_NUMBER), max_size=3),
    st.lists(st.sampled_from(ODD_TEXT), max_size=3),
)


def node(name: str, draw: Any) -> dict[str, Any]:
    capacity = {"cpu": "4", "memory": "8Gi", "pods": "110", D: draw(values)}
    return {
        "metadata": {
            "name": name,
            "resourceVersion": draw(st.sampled_from(["5", BIG, "x"])),
            "labels": {"zone": draw(values)},
            "annotations": {"extres.dev/desired-capacity": draw(st.sampled_from([DEEP_JSON.decode(), BIG]))},
            "managedFields": [{"manager": draw(values), "time": draw(values), "fieldsV1": draw(values)}],
        },
        "spec": {"taints": [{"key": draw(values), "effect": draw(values)}], "unschedulable": draw(values)},
        "status": {
            "capacity": capacity,
            "allocatable": {**capacity, D: draw(values)},
            "conditions": draw(values),
        },
    }


def pod(name: str, bound: bool, draw: Any) -> dict[str, Any]:
    message = f"0/{BIG} nodes are available: {BIG} Insufficient {D}. preemption: {draw(values)}"
    return {
        "metadata": {
            "name": name,
            "namespace": "default",
            "resourceVersion": "7",
            "ownerReferences": draw(values),
        },
        "spec": {
            "nodeName": "n0" if bound else "",
            "priority": draw(values),
            "containers": [{"name": "a", "resources": {"requests": {D: draw(values), "cpu": draw(values)}}}],
            "initContainers": draw(values),
            "overhead": {"cpu": draw(values)},
            "resourceClaims": draw(values),
            "topologySpreadConstraints": [
                {"maxSkew": draw(values), "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
            ],
        },
        "status": {
            "phase": draw(st.sampled_from(["Running", "Pending", BIG])),
            "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}
            ],
        },
    }


def dra(draw: Any) -> list[tuple[str, dict[str, Any]]]:
    capacity = f'device.capacity["{DRIVER}"].memory'
    expression = draw(
        st.sampled_from(
            [
                f'{capacity}.compareTo(quantity("{"9" * 4298}")) > 0',
                f'{capacity}.isGreaterThan(quantity("1"))',
                "(" * 500 + "true" + ")" * 500,
                'device.attributes["x"].y == "' + "z" * 20_000 + '"',
                "[1,2,3].all(a, [1,2,3].all(b, [1,2,3].all(c, a+b+c > 0)))",
            ]
        )
    )
    device = {
        "name": "d0",
        "attributes": {
            "i": {"int": draw(values)},
            "s": {"string": draw(values)},
            "v": {"version": draw(values)},
        },
        "capacity": {"memory": {"value": draw(values)}},
    }
    return [
        (
            "deviceclasses",
            {
                "metadata": {"name": "c", "resourceVersion": "3"},
                "spec": {
                    "extendedResourceName": draw(values),
                    "selectors": [{"cel": {"expression": expression}}],
                },
            },
        ),
        (
            "resourceslices",
            {
                "metadata": {"name": "s", "resourceVersion": "4"},
                "spec": {
                    "driver": DRIVER,
                    "nodeName": "n0",
                    "pool": {"name": "p", "generation": draw(values), "resourceSliceCount": draw(values)},
                    "devices": [device, *draw(st.lists(st.just(device), max_size=2))],
                },
            },
        ),
        (
            "resourceclaims",
            {
                "metadata": {"name": "rc", "namespace": "default", "resourceVersion": "6"},
                "status": {"allocation": {"devices": {"results": draw(values)}}, "reservedFor": draw(values)},
            },
        ),
    ]


def fed(events: list[tuple[str, dict[str, Any]]]) -> ClusterCache:
    """A cache fed ``events`` through its own watch path (decode, read, store)."""
    cache = ClusterCache(client.ApiClient(client.Configuration()))
    cache._by_version = readers()  # no /version to ask: the newest rules
    for kind in ("deviceclasses", "resourceslices", "resourceclaims"):  # as when DRA is served
        cache.status.add(kind)
    for kind, obj in events:
        cache._events = lambda kind, rv, obj=obj: iter([EVENT.decode(line(obj))])
        cache._watch_once(kind, "1")
    return cache


def pages_answer(cache: ClusterCache) -> None:
    """Every page answers, and so does a scrape of the metrics."""
    app = create_app({"in_cluster": "false"}, cluster=FakeCluster(store=cache.store))
    web = browser(app)
    for page in PAGES:
        resp = web.get(page)
        assert resp.status_code < 500, (page, resp.status_code, resp.get_data(as_text=True)[:300])
    assert b"extres_pending_pods" in process_of(app).local.metrics.exposition()


def line(obj: dict[str, Any]) -> bytes:
    return json.dumps({"type": "ADDED", "object": obj}).encode().replace(f'"{DEEP}"'.encode(), DEEP_JSON)


@pytest.mark.thorough
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_hostile_objects_through_the_watch_path_crash_nothing(data):
    draw = data.draw
    events = [("nodes", node("n0", draw)), ("nodes", node("n1", draw))]
    events += [("pods", pod("bound", True, draw)), ("pods", pod("waiting", False, draw))]
    pages_answer(fed(events + dra(draw)))


def test_a_claim_with_device_data_nested_9000_deep_is_read():
    """A driver's free-form device data, as deep as the API server keeps (10,000): the claim is
    read (msgspec counts its depth against the recursion limit app.kube.wire.reading raises)."""
    deep = "[" * 9000 + "]" * 9000
    claim = {
        "metadata": {"name": "rc", "namespace": "default", "resourceVersion": "6"},
        "status": {"devices": [{"driver": DRIVER, "pool": "p", "device": "d0", "data": "__deep9000__"}]},
    }
    raw = line(claim).replace(b'"__deep9000__"', deep.encode())
    cache = fed([])
    cache._events = lambda kind, rv: iter([EVENT.decode(raw)])
    cache._watch_once("resourceclaims", "1")
    assert cache.store.devices.read(lambda dra: len(dra.claims)) == 1
    pages_answer(cache)
