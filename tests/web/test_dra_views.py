"""DRA-served extended resources in the overview: devices counted per node with their source
marked, a name advertised both ways flagged (the scheduler uses the node's status there), a
selector that cannot be evaluated shown as unknown with the expression, and a note, not an
error, when the app may not read DRA objects."""

from __future__ import annotations

from app.domain.device_cel import Device
from app.domain.devices import ClassFacts, DeviceFacts, Reach, SliceFacts
from app.domain.fit import Requirement, Term
from app.kube.wire.dra import ClaimView, ClassView, SliceView
from app.web.process import of as process_of
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
    store.devices.put(
        "deviceclasses",
        ClassView(ClassFacts("gpus", "2026-01-01T00:00:00Z", R, ('device.driver == "gpu.example.com"',))),
    )
    store.devices.put("resourceslices", devices("n1", 4))
    store.devices.put("resourceslices", devices("n2", 3))
    store.devices.put(
        "resourceclaims", ClaimView("default", "user-gpu", ((GPU, "n1", "g0"),), ("user",), True)
    )
    html = client.get("/").get_data(as_text=True)
    cells = grid_cells(html)
    assert cells[("n1", R, "capacity")] == "4DRA"
    assert (cells[("n1", R, "requested")], cells[("n1", R, "free")]) == ("1", "3")
    assert cells[("n2", R, "capacity")] == "2"  # the status's numbers, not the devices'
    assert 'data-both="example.com/gpu"' in html


def test_a_selector_that_cannot_be_evaluated_is_shown_as_unknown(client, cluster):
    cluster.node("n1", {})
    cluster.store.devices.put(
        "deviceclasses", ClassView(ClassFacts("odd", "t", R, ('device.attributes["x.io"].y == 1',)))
    )
    cluster.store.devices.put("resourceslices", devices("n1", 2))
    html = client.get("/").get_data(as_text=True)
    assert "data-unknown" in html and "x.io" in html


def test_no_right_to_read_dra_objects_is_a_note(client, cluster):
    cluster.dra = "forbidden"
    html = client.get("/").get_data(as_text=True)
    assert 'data-dra="forbidden"' in html


def served(cluster, node: str = "n1", n: int = 2, held: int = 0) -> None:
    cluster.node(node, {})
    store = cluster.store
    store.devices.put("deviceclasses", ClassView(ClassFacts("gpus", "2026-01-01T00:00:00Z", R)))
    store.devices.put("resourceslices", devices(node, n))
    for i in range(held):
        store.devices.put(
            "resourceclaims", ClaimView("default", f"c{i}", ((GPU, node, f"g{i}"),), (f"user{i}",), True)
        )


def test_a_dra_served_resource_cannot_be_changed_here_and_says_why(client, cluster):
    served(cluster)
    resp = client.post("/changes/nodes/n1/resources", data={"resource": R, "quantity": "5"})
    text = resp.get_data(as_text=True)
    assert resp.status_code == 422
    said = "served by DRA devices (DeviceClass gpus); their driver publishes them in ResourceSlices"
    assert f"{said}, so it is read-only here" in text, text[-2000:]
    implicit = client.post(
        "/changes/nodes/n1/resources",
        data={"resource": "deviceclass.resource.kubernetes.io/gpus", "quantity": "1"},
    )
    assert implicit.status_code == 422  # a kubernetes.io name: never one to set here
    bulk = client.post(
        "/changes/bulk/preview", data={"action": "set", "resource": R, "quantity": "1", "nodes": "n1"}
    )
    assert bulk.status_code == 422 and "read-only here" in bulk.get_data(as_text=True)


def test_a_pod_short_of_a_dra_served_resource_is_never_told_to_add_capacity(client, cluster):
    served(cluster, held=2)
    for i in range(2):
        cluster.pod(f"user{i}", "n1", {R: "1"}, priority=0)
    cluster.pod(
        "waiting", None, {R: "1"}, message=f"0/1 nodes are available: 1 Insufficient {R}.", priority=10
    )
    html = client.get("/pending/").get_data(as_text=True)
    assert "/changes/nodes/" not in html  # no form that would refuse
    assert 'data-kind="short"' in html
    assert 'data-holder="default/user0"' in html and 'data-preemptible="2"' in html


def test_the_devices_page_lists_classes_what_they_serve_and_match(client, cluster):
    served(cluster, n=3, held=1)
    store = cluster.store
    store.devices.put(
        "deviceclasses", ClassView(ClassFacts("old", "2025-01-01T00:00:00Z", R))
    )  # shadowed by gpus
    store.devices.put("deviceclasses", ClassView(ClassFacts("broken", "t", "", ("device.driver ==",))))
    cluster.dra = "served"
    html = client.get("/devices/").get_data(as_text=True)
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    gpus = soup.select_one('tr[data-class="gpus"]')
    assert [c["data-serves"] for c in gpus.select("[data-serves]")] == [
        R,
        "deviceclass.resource.kubernetes.io/gpus",
    ]
    fields = {td["data-field"]: td.get_text(strip=True) for td in gpus.select("td[data-field]")}
    assert fields == {"devices": "3", "allocated": "1", "free": "2"}
    old = soup.select_one('tr[data-class="old"]')
    assert (
        old.select_one(f'[data-shadowed="{R}"]').get_text(strip=True) == f"{R}: served by gpus, created later"
    )
    assert "does not compile" in soup.select_one('tr[data-class="broken"]').get_text()


def test_the_devices_page_on_a_cluster_without_dra_says_so(client, cluster):
    cluster.dra = "absent"
    html = client.get("/devices/").get_data(as_text=True)
    assert 'data-dra="absent"' in html


def test_the_node_page_lists_its_devices_who_holds_them_and_the_classes_matching(client, cluster):
    served(cluster, n=2, held=1)
    cluster.pod("user0", "n1", {R: "1"})
    html = client.get("/nodes/n1").get_data(as_text=True)
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    rows = {tr["data-device"]: tr for tr in soup.select("#node-devices tr[data-device]")}
    assert set(rows) == {"g0", "g1"}
    assert rows["g0"].select_one('[data-field="claim"]').get_text(" ", strip=True) == "default/c0 for user0"
    assert rows["g1"].select_one('[data-field="claim"]').get_text(strip=True) == "free"
    assert "gpus" in rows["g1"].get_text()
    extended = soup.select_one(f'table.resources tr[data-resource="{R}"]')
    assert "DRA: 1 held by claims" in extended.get_text()
    assert extended.select_one('[data-field="free"]').get_text(strip=True) == "1"
    assert "/changes/" not in str(extended)  # read-only: no Set or Remove


def test_exports_and_metrics_carry_dra_served_resources(client, cluster, app):
    served(cluster, n=4, held=1)
    data = client.get("/export.json").get_json()
    [record] = [r for r in data["nodes"] if r["resource"] == R]
    assert (record["source"], record["capacity"], record["allocated"], record["free"]) == ("dra", 4, 1, 3)
    text = process_of(app).local.metrics.exposition().decode()
    assert f'extres_node_extended_resource_allocated{{node="n1",resource="{R}"}} 1.0' in text


def test_a_user_who_may_not_read_dra_objects_gets_a_note_not_an_error(make_app, cluster):
    from tests.helpers import browser

    served(cluster, n=2)
    cluster.node("n2", {R: "3"})  # a device plugin's, on another node: alice sees this one
    cluster.dra = "served"
    web = browser(make_app(auth_mode="impersonate", trusted_proxies=("127.0.0.1",)))
    where = {"REMOTE_ADDR": "127.0.0.1"}
    # a user who may read them sees the heat map of the DRA-served resource first (and fills
    # the page memos); what follows must not be served from them
    seen = web.get(f"/heat?of={R}", headers={"X-Forwarded-User": "bob"}, environ_base=where)
    assert 'title="n1 0/2"' in seen.get_data(as_text=True)
    cluster.access.denied = {("list", "resource.k8s.io/resourceslices")}
    headers = {"X-Forwarded-User": "alice"}
    heat = web.get(f"/heat?of={R}", headers=headers, environ_base=where).get_data(as_text=True)
    assert 'title="n1 0/2"' not in heat and 'title="n2 0/3"' in heat
    resp = web.get("/devices/", headers=headers, environ_base=where)
    assert resp.status_code == 200 and 'data-dra="not-yours"' in resp.get_data(as_text=True)
    node = web.get("/nodes/n1", headers=headers, environ_base=where).get_data(as_text=True)
    assert "node-devices" not in node
    overview = web.get("/", headers=headers, environ_base=where).get_data(as_text=True)
    cells = grid_cells(overview)  # the DRA-served cells are left out for this user
    assert ("n1", R, "capacity") not in cells and cells[("n2", R, "capacity")] == "3"
    export = web.get("/export.json", headers=headers, environ_base=where).get_json()
    assert [(r["node"], r["source"]) for r in export["nodes"] if r["resource"] == R] == [("n2", "status")]


def test_devices_several_nodes_reach_count_on_each_node_they_reach(client, cluster):
    """A slice for the nodes a selector picks (and one device of a per-device slice for every
    node): counted on each node it reaches, held on each once a claim holds it."""
    served(cluster, n=2)  # n1: 2 devices of its own
    cluster.node("n2", {}, labels={"rack": "r1"})
    cluster.node("n3", {}, labels={"rack": "r2"})
    made = tuple(DeviceFacts(f"net{i}", Device(GPU, (("model", "a100"),), ())) for i in range(3))
    rack = Reach(terms=(Term((Requirement("rack", "In", ("r1",)),)),))
    store = cluster.store
    store.devices.put("resourceslices", SliceView(SliceFacts("fabric", GPU, "fabric", 1, 1, "", made, rack)))
    every = DeviceFacts("shared0", Device(GPU, (("model", "a100"),), ()), reach=Reach(all_nodes=True))
    store.devices.put("resourceslices", SliceView(SliceFacts("wide", GPU, "wide", 1, 1, "", (every,))))
    cluster.dra = "served"
    cells = grid_cells(client.get("/").get_data(as_text=True))
    assert [cells[(n, R, "capacity")] for n in ("n1", "n2", "n3")] == ["3DRA", "4DRA", "1DRA"]
    store.devices.put("resourceclaims", ClaimView("default", "c", ((GPU, "wide", "shared0"),), ("u",), True))
    cells = grid_cells(client.get("/").get_data(as_text=True))
    assert [cells[(n, R, "free")] for n in ("n1", "n2", "n3")] == ["2", "3", "0"]
    # n3 moves to rack r1: the fabric reaches it now
    cluster.node("n3", {}, labels={"rack": "r1"})
    assert grid_cells(client.get("/").get_data(as_text=True))[("n3", R, "capacity")] == "4DRA"
    html = client.get("/devices/").get_data(as_text=True)
    assert "data-unbound-pools" in html and f"{GPU}/fabric" in html


def test_a_class_and_its_implicit_name_are_one_resource_never_two_pools(client, cluster):
    """4 devices of DeviceClass gpus, extendedResourceName example.com/gpu: one column of 4 (never
    4 + 4), its implicit name shown as an alias, a pod asking by that name counted under it."""
    served(cluster, "n1", n=4, held=1)
    implicit = "deviceclass.resource.kubernetes.io/gpus"
    cluster.pod("by-name", "n1", {R: "1"})
    cluster.pod("by-class", "n1", {implicit: "1"})
    cluster.pod(
        "waiting", None, {implicit: "9"}, message="0/1 nodes are available: 1 cannot allocate all claims."
    )
    html = client.get("/").get_data(as_text=True)
    cells = grid_cells(html)
    assert not [k for k in cells if k[1] == implicit]
    assert (cells[("n1", R, "capacity")], cells[("n1", R, "requested")]) == ("4DRA", "2")
    assert cells[("*", R, "capacity")].startswith("4")
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    assert soup.select_one(f'th.res [data-alias="{implicit}"]') is not None
    assert soup.select_one(f'ul.strip li[data-resource="{implicit}"]') is None
    strip = soup.select_one(f'ul.strip li[data-resource="{R}"] [data-field="waiting"]')
    assert strip.get_text(strip=True) == "1 pending"
    bar = soup.select_one('#grid tbody tr[data-node="n1"] td.bar .pct').get_text(strip=True)
    assert bar.endswith("held by claims")
    page = BeautifulSoup(client.get("/nodes/n1").get_data(as_text=True), "html.parser")
    rows = [tr["data-resource"] for tr in page.select("table.resources tr[data-resource]")]
    assert implicit not in rows and R in rows
    assert page.select_one(f'tr[data-resource="{R}"] [data-alias="{implicit}"]') is not None


def test_a_gpu_several_claims_share_is_one_row_with_its_shares_and_counts_shares(client, cluster):
    """DRA consumable capacity: two GPUs of 40 GiB whose shares take 10 GiB unless they ask; pods'
    extended resource claims hold shares (one asked 20 GiB through its own claim). The overview
    counts shares; the node page shows each GPU once, with every claim holding a share of it and
    what they took."""
    from decimal import Decimal

    from app.domain.shares import Capacity

    memory = (Capacity("memory", Decimal(40 << 30), Decimal(10 << 30)),)
    made = tuple(
        DeviceFacts(
            f"g{i}",
            Device(GPU, (("uuid", f"GPU-{i}"),), (("memory", "40Gi"),)),
            shared=True,
            capacities=memory,
        )
        for i in range(2)
    )
    cluster.node("n1", {})
    for name, device, took in (("a", "g0", 10), ("b", "g0", 20), ("c", "g1", 10)):
        cluster.pod(name, "n1", {R: "1"})
        cluster.store.devices.put(
            "resourceclaims",
            ClaimView(
                "default",
                f"{name}-gpu",
                ((GPU, "n1", device),),
                (name,),
                True,
                "",
                (((GPU, "n1", device), (("memory", Decimal(took << 30)),)),),
            ),
        )
    cluster.store.devices.put(
        "deviceclasses",
        ClassView(ClassFacts("gpus", "2026-01-01T00:00:00Z", R, ('device.driver == "gpu.example.com"',))),
    )
    cluster.store.devices.put("resourceslices", SliceView(SliceFacts("n1-s", GPU, "n1", 1, 1, "n1", made)))
    cells = grid_cells(client.get("/").get_data(as_text=True))
    # 8 shares fit the two; 3 pods hold one each; g0 has 10 GiB left (1 share), g1 30 GiB (3)
    assert (cells[("n1", R, "capacity")], cells[("n1", R, "requested")], cells[("n1", R, "free")]) == (
        "8DRA",
        "3",
        "4",
    )
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(client.get("/nodes/n1").get_data(as_text=True), "html.parser")
    rows = {tr["data-device"]: tr for tr in soup.select("#node-devices tr[data-device]")}
    assert set(rows) == {"g0", "g1"}  # one row per GPU, whatever shares it
    held = rows["g0"].select_one('[data-field="claim"]').get_text(" ", strip=True)
    assert (
        held == "2 shares held of 4, 1 left; memory 30Gi of 40Gi : default/a-gpu for a ; default/b-gpu for b"
    )
    assert (
        rows["g1"]
        .select_one("[data-shares]")
        .get_text(" ", strip=True)
        .startswith("1 share held of 4, 3 left")
    )


def shared_gpus(cluster, node: str = "n1") -> None:
    """``node`` with two GPUs several claims may share, 40 units of memory each, a share taking
    10 unless it asks (4 shares a GPU), and the class serving them as R."""
    from decimal import Decimal

    from app.domain.shares import Capacity

    memory = (Capacity("memory", Decimal(40), Decimal(10)),)
    made = tuple(
        DeviceFacts(f"gpu-{i}", Device(GPU, (), ()), shared=True, capacities=memory) for i in range(2)
    )
    cluster.node(node, {})
    cluster.store.devices.put("deviceclasses", ClassView(ClassFacts("gpus", "2026-01-01T00:00:00Z", R)))
    cluster.store.devices.put(
        "resourceslices", SliceView(SliceFacts(f"{node}-s", GPU, node, 1, 1, node, made))
    )


def test_a_pod_waiting_for_two_shared_gpus_is_told_which_have_shares_left(client, cluster):
    """Four shares free, all on one GPU: a pod asking for 2 waits (one share on each of 2 devices);
    its card says so in the sharing's words, device by device, and offers no form."""
    from decimal import Decimal

    from bs4 import BeautifulSoup

    shared_gpus(cluster)
    for i in range(4):  # gpu-0's four shares, one pod each
        cluster.pod(f"user{i}", "n1", {R: "1"})
        share = (((GPU, "n1", "gpu-0"), (("memory", Decimal(10)),)),)
        cluster.store.devices.put(
            "resourceclaims",
            ClaimView("default", f"c{i}", ((GPU, "n1", "gpu-0"),), (f"user{i}",), True, "", share),
        )
    cluster.pod("wide", None, {R: "2"}, message="0/1 nodes are available: 1 cannot allocate all claims.")
    soup = BeautifulSoup(client.get("/pending/").get_data(as_text=True), "html.parser")
    note = soup.select_one("[data-sharing-fit]").get_text(" ", strip=True)
    assert note == (
        "Shared devices on n1: a pod takes one share on each of the 2 devices it asks for, and 1 of 2 have a "
        "share left: no shares left on gpu-0 (4 of 4 held by 4 claims); gpu-1 has 4 left (0 of 4 held)."
    )
    assert soup.select_one('[data-field="max_free"]').get_text(" ", strip=True).startswith("1 on n1")
    assert soup.select_one('a[href*="/changes/nodes/"]') is None


def test_the_devices_page_lists_shared_devices_cluster_wide_fewest_shares_left_first(client, cluster):
    from decimal import Decimal

    from bs4 import BeautifulSoup

    for node in ("n1", "n2"):
        shared_gpus(cluster, node)
    for i, took in enumerate((10, 10, 20)):  # n2's gpu-1: three shares, 40 taken: none left
        share = (((GPU, "n2", "gpu-1"), (("memory", Decimal(took)),)),)
        cluster.store.devices.put(
            "resourceclaims", ClaimView("default", f"c{i}", ((GPU, "n2", "gpu-1"),), (), True, "", share)
        )
    soup = BeautifulSoup(client.get("/devices/").get_data(as_text=True), "html.parser")
    rows = soup.select("#shared-dra-devices tbody tr")
    assert (rows[0]["data-node"], rows[0]["data-device"]) == ("n2", "gpu-1")  # the fullest first
    first = rows[0].select_one('[data-field="shares"]').get_text(" ", strip=True)
    assert first == "3 shares held of 4, 0 left; memory 40 of 40"
    assert rows[0].select_one('[data-field="claims"]').get_text(strip=True) == "3" and len(rows) == 4


def test_gpus_dra_shares_alike_are_counted_as_physical_gpus_behind_their_shares(client, cluster):
    """Two GPUs of 4 shares each: the row's badge and the exports say 2 GPUs x 4 shares = 8 slots,
    as for a device plugin's shares; the class's implicit name is no second pool of GPUs."""

    from bs4 import BeautifulSoup

    shared_gpus(cluster)
    page = BeautifulSoup(client.get("/nodes/n1").get_data(as_text=True), "html.parser")
    badge = page.select_one(f'[data-shares="{R}"]')
    assert badge.get_text(" ", strip=True) == "2 GPUs \u00d7 4 shares = 8 slots (DRA shares)"
    [record] = [r for r in client.get("/export.json").get_json()["nodes"] if r["resource"] == R]
    assert (record["shares_per_device"], record["physical_devices"]) == (4, 2)
    assert not [
        r for r in client.get("/export.json").get_json()["nodes"] if r["resource"].startswith("deviceclass.")
    ]
