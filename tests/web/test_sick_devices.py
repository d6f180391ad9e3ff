"""Every unhealthy device across the nodes in one list (/unhealthy/), with a count in the
navigation: in GPUs where shares are advertised, named where a pod holding one reports it
(``allocatedResourcesStatus``); an admin-advertised resource not yet allocatable is not listed."""

from __future__ import annotations

from tests.helpers import page
from tests.web.test_device_health import sick_pod

GPU = "nvidia.com/gpu"
SHARED = f"{GPU}.shared"


def test_the_unhealthy_devices_of_every_node_are_listed_in_devices_and_counted_in_the_nav(client, cluster):
    cluster.node("gpu-1", {GPU: "8"}, allocatable={GPU: "6"})  # two GPUs lost
    labels = {f"{GPU}.replicas": "4", f"{GPU}.sharing-strategy": "mps", f"{GPU}.count": "2"}
    cluster.node("gpu-8", {SHARED: "8", GPU: "0"}, allocatable={SHARED: "4", GPU: "0"}, labels=labels)
    cluster.node("healthy", {GPU: "8"})
    cluster.node("static", {"example.com/dongle": "4"}, allocatable={"example.com/dongle": "2"})
    sick_pod(cluster, "train", "gpu-1", 2, ["GPU-1"])
    listing = page(client, "/unhealthy/")
    rows = {(r["data-node"], r["data-resource"]): r for r in listing.select("table.sick tbody tr")}
    assert set(rows) == {("gpu-1", GPU), ("gpu-8", SHARED)}
    lost = rows[("gpu-1", GPU)]
    assert " ".join(lost.select_one('[data-field="devices"]').get_text().split()) == "2 of 8 GPUs"
    assert lost.select_one('[data-field="named"]').get_text() == "GPU-1"
    shared = rows[("gpu-8", SHARED)]
    assert (
        " ".join(shared.select_one('[data-field="devices"]').get_text().split()) == "1 of 2 GPUs (4 shares)"
    )
    assert "not named" in shared.select_one('[data-field="named"]').get_text()
    assert listing.select_one("[data-sick]")["data-sick"] == "3"
    badge = page(client, "/").select_one("#sick-badge")
    assert badge.get_text() == "3" and not badge.has_attr("hidden")


def test_with_nothing_unhealthy_the_page_says_so_and_the_badge_is_hidden(client, cluster):
    cluster.node("healthy", {GPU: "8"})
    listing = page(client, "/unhealthy/")
    assert listing.select_one("[data-sick]")["data-sick"] == "0"
    assert page(client, "/").select_one("#sick-badge").has_attr("hidden")
