"""DRA-served extended resources in the overview: devices counted per node with their source
marked, a name advertised both ways flagged (the scheduler uses the node's status there), a
selector that cannot be evaluated shown as unknown with the expression, and a note, not an
error, when the app may not read DRA objects."""

from __future__ import annotations

from app.domain.device_cel import Device
from app.domain.devices import ClassFacts, DeviceFacts, SliceFacts
from app.kube.dra import ClaimView, ClassView, SliceView
from tests.kube_helpers import grid_cells

GPU, R = "gpu.example.com", "example.com/gpu"


def devices(node: str, n: int) -> SliceView:
    made = tuple(DeviceFacts(f"g{i}", Device(GPU, (("model", "a100"),), ())) for i in range(n))
    return SliceView(SliceFacts(f"{node}-s", GPU, node, 1, 1, node, made))


def test_dra_devices_are_columns_with_their_source_and_what_claims_hold(client, cluster):
    cluster.node("n1", {})
    cluster.node("n2", {R: "2"})  # a device plugin advertises it here: status wins
    cluster.pod("user", "n1", {R: "1"})
    store = cluster.store
    store.put_dra(
        "deviceclasses",
        ClassView(ClassFacts("gpus", "2026-01-01T00:00:00Z", R, ('device.driver == "gpu.example.com"',))),
    )
    store.put_dra("resourceslices", devices("n1", 4))
    store.put_dra("resourceslices", devices("n2", 3))
    store.put_dra("resourceclaims", ClaimView("default", "user-gpu", ((GPU, "n1", "g0"),), ("user",), True))
    html = client.get("/").get_data(as_text=True)
    cells = grid_cells(html)
    assert cells[("n1", R, "capacity")] == "4DRA"
    assert (cells[("n1", R, "requested")], cells[("n1", R, "free")]) == ("1", "3")
    assert cells[("n2", R, "capacity")] == "2"  # the status's numbers, not the devices'
    assert 'data-both="example.com/gpu"' in html


def test_a_selector_that_cannot_be_evaluated_is_shown_as_unknown(client, cluster):
    cluster.node("n1", {})
    cluster.store.put_dra(
        "deviceclasses", ClassView(ClassFacts("odd", "t", R, ('device.attributes["x.io"].y == 1',)))
    )
    cluster.store.put_dra("resourceslices", devices("n1", 2))
    html = client.get("/").get_data(as_text=True)
    assert "data-unknown" in html and "x.io" in html


def test_no_right_to_read_dra_objects_is_a_note(client, cluster):
    cluster.dra = "forbidden"
    html = client.get("/").get_data(as_text=True)
    assert 'data-dra="forbidden"' in html
