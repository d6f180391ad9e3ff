"""Advice never ends in a form that refuses: a device plugin's resource is never offered as a
change; instead, who holds it on the nodes the pod could use, and whether preemption helps."""

from __future__ import annotations

from bs4 import BeautifulSoup

GPU, D = "nvidia.com/gpu", "example.com/dongle"


def article(client, pod: str):
    soup = BeautifulSoup(client.get("/pending/").get_data(as_text=True), "html.parser")
    return soup.select_one(f'article[data-pod="default/{pod}"]')


def test_a_pod_short_of_gpus_is_told_who_holds_them_not_sent_to_a_form(client, cluster):
    cluster.node("gpu-1", {GPU: "4"})
    cluster.node("gpu-2", {GPU: "2"})
    cluster.pod("trainer-a", "gpu-1", {GPU: "3"}, priority=100)
    cluster.pod("notebook", "gpu-2", {GPU: "1"}, priority=0)
    message = f"0/2 nodes are available: 2 Insufficient {GPU}."
    cluster.pod("trainer-b", None, {GPU: "2"}, message=message, priority=50)
    card = article(client, "trainer-b")
    assert not card.select("a[data-suggestion]")  # no link to a form that would refuse
    assert card.select_one("[data-read-only]")["data-read-only"] == GPU
    held = {tr["data-node"]: tr for tr in card.select("table.held tr[data-node]")}
    assert set(held) == {"gpu-1", "gpu-2"}
    assert held["gpu-1"].select_one("[data-holder]")["data-holder"] == "default/trainer-a"
    assert held["gpu-2"].select_one("[data-preemptible]")["data-preemptible"] == "1"  # priority 0 < 50
    assert not held["gpu-1"].select("[data-preemptible]")  # 100 is not lower than 50
    lowering = card.select_one("[data-lowering]")["data-lowering"]
    assert lowering == f"{GPU} 1 gpu-1"  # gpu-1 and gpu-2 have 1 free each; the first by name


def test_a_resource_this_dashboard_manages_keeps_its_link(client, cluster):
    cluster.node("n1", {D: "1"})
    cluster.pod("waiting", None, {D: "2"}, message=f"0/1 nodes are available: 1 Insufficient {D}.")
    card = article(client, "waiting")
    link = card.select_one("a[data-suggestion]")
    assert link["data-suggestion"] == f"n1 {D} 1" and "/changes/nodes/n1/resources/new" in link["href"]
    assert not card.select("table.held") and not card.select("[data-read-only]")


def test_a_viewer_is_told_who_holds_a_resource_instead_of_a_link(client, cluster):
    cluster.access.denied.add(("patch", "nodes"))
    cluster.node("n1", {D: "1"})
    cluster.pod("reader", "n1", {D: "1"})
    cluster.pod("waiting", None, {D: "1"}, message=f"0/1 nodes are available: 1 Insufficient {D}.")
    card = article(client, "waiting")
    assert not card.select("a[data-suggestion]")
    assert card.select_one("table.held [data-holder]")["data-holder"] == "default/reader"
    assert card.select_one("[data-preemption=none]") is not None


def test_the_pods_of_one_workload_and_shape_share_one_card(client, cluster):
    cluster.node("n1", {D: "1"})
    message = f"0/1 nodes are available: 1 Insufficient {D}."
    for i in range(3):
        cluster.pod(f"db-{i}", None, {D: "2"}, message=message, owner=("StatefulSet", "db"))
    cluster.pod("db-odd", None, {D: "5"}, message=message, owner=("StatefulSet", "db"))  # another shape
    cluster.pod("loner", None, {D: "2"}, message=message)  # a bare pod: a card of its own
    soup = BeautifulSoup(client.get("/pending/").get_data(as_text=True), "html.parser")
    cards = {a["data-pod"]: a for a in soup.select("article[data-pod]")}
    assert set(cards) == {"default/db-0", "default/db-odd", "default/loner"}
    group = cards["default/db-0"]
    assert group.select_one("h2")["data-group"] == "3"
    assert (
        "StatefulSet" in group.select_one("h2").get_text()
        and "3 pending" in group.select_one("h2").get_text()
    )
    assert [m["data-member"] for m in group.select("[data-member]")] == [f"default/db-{i}" for i in range(3)]
    assert not cards["default/loner"].select("[data-member]")
    assert "5 pending pods" in soup.select_one("p.summary#pods").get_text()
    # the page opens with one line of counts, each a link to its section
    line = soup.select_one("[data-waiting-counts]")
    assert line["data-waiting-counts"] == "5" and line.select_one('a[data-count="pods"]')["href"] == "#pods"
    assert "5 pods unschedulable" in line.get_text() and "0 gated" in line.get_text()


def test_preemption_is_offered_only_where_it_would_free_enough(client, cluster):
    cluster.node("small", {GPU: "2"})  # allocatable 2: a request of 3 is unresolvable here (1.34+)
    cluster.node("busy", {GPU: "4"})
    cluster.pod("low-a", "small", {GPU: "2"}, priority=0)
    cluster.pod("low-b", "busy", {GPU: "1"}, priority=0)
    cluster.pod("high", "busy", {GPU: "3"}, priority=100)
    message = f"0/2 nodes are available: 2 Insufficient {GPU}."
    cluster.pod("wants-3", None, {GPU: "3"}, message=message, priority=50)
    held = {tr["data-node"]: tr for tr in article(client, "wants-3").select("table.held tr[data-node]")}
    assert held["small"].select("[data-unresolvable]") and not held["small"].select("[data-preemptible]")
    # busy: evicting low-b frees 1; with 0 free that is less than 3
    assert held["busy"].select_one("[data-preemptible-short]")["data-preemptible-short"] == "1"
    assert article(client, "wants-3").select_one('[data-preemption="none"]')


def test_the_form_behind_a_suggestion_names_the_pod_that_prompted_it(client, cluster):
    """Two pods of one shape share the advice; each card's link names its own pod, and the
    form says what that pod asks for and the change, "currently N → M"."""
    cluster.node("n1", {D: "1"})
    for name in ("first", "second"):
        cluster.pod(name, None, {D: "2"}, message=f"0/1 nodes are available: 1 Insufficient {D}.")
    links = {
        name: article(client, name).select_one("a[data-suggestion]")["href"] for name in ("first", "second")
    }
    assert "pod=default%2Ffirst" in links["first"] and "pod=default%2Fsecond" in links["second"]
    from bs4 import BeautifulSoup

    form = BeautifulSoup(client.get(links["second"]).get_data(as_text=True), "html.parser")
    said = form.select_one("[data-prompted]").get_text(" ", strip=True)
    assert said == f"Prompted by pod default/second , pending and asking for 2 {D} ."
    assert form.select_one("[data-change]").get_text(" ", strip=True) == f"{D} : currently 1 → 2 on n1."
    odd = client.get(links["second"].replace("default%2Fsecond", "%3Cb%3E%2Fx")).get_data(as_text=True)
    assert "data-prompted" not in odd  # not a pod's name: ignored


def suggestion(card):
    return card.select_one("[data-suggestion]")


def test_a_device_plugins_shortfall_is_said_in_its_owners_words_not_as_an_action(client, cluster):
    cluster.node("gpu-1", {GPU: "1"})
    message = f"0/1 nodes are available: 1 Insufficient {GPU}."
    cluster.pod("trainer", None, {GPU: "3"}, message=message)
    card = article(client, "trainer")
    said = suggestion(card)
    assert said.name == "strong" and said["data-owner"] == "device plugin"
    assert (
        said.get_text()
        == f"gpu-1 would need 2 more {GPU}; its device plugin advertises them (devices installed there)"
    )
    text = card.get_text(" ", strip=True)
    assert "someone with the right" not in text and "add 2" not in text


def test_a_dra_served_shortfall_names_its_device_class_and_no_reason_twice(client, cluster):
    from tests.web.test_dra_views import R, served

    served(cluster, "n1", n=2, held=2)
    message = "0/1 nodes are available: 1 cannot allocate all claims."
    cluster.pod("wants-gpu", None, {R: "1"}, message=message)
    card = article(client, "wants-gpu")
    said = suggestion(card)  # the shortfall, in the DRA driver's words
    assert said["data-owner"] == "DRA" and said.get_text() == (
        f"n1 would need 1 more {R}; DRA devices of DeviceClass gpus serve it, published by their driver "
        "in ResourceSlices"
    )
    assert not card.select("a[data-suggestion]")
    assert "device plugin" not in card.get_text()
    assert card.select_one("[data-dra-short]") is not None
    assert card.select_one("[data-other-reasons]") is None  # "cannot allocate all claims" is said once


def test_a_viewer_is_told_what_an_editor_could_do(client, cluster):
    cluster.access.denied.add(("patch", "nodes"))
    cluster.node("n1", {D: "1"})
    cluster.pod("waiting", None, {D: "2"}, message=f"0/1 nodes are available: 1 Insufficient {D}.")
    card = article(client, "waiting")
    said = suggestion(card)
    assert said.name == "strong" and said.get_text() == f"add 1 {D} to n1"
    assert "an editor can make this change here" in card.select_one("[data-viewer]").get_text()
    assert "if you add" not in card.get_text(" ", strip=True)
