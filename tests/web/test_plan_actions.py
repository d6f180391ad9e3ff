"""What-if plans offer only changes that can be made here, and check a name before planning."""

from __future__ import annotations

from urllib.parse import quote

from bs4 import BeautifulSoup

from tests.helpers import browser

D, GPU = "example.com/dongle", "nvidia.com/gpu"


def plan(client, query: str):
    resp = client.get(f"/plan/?{query}")
    return resp.status_code, BeautifulSoup(resp.get_data(as_text=True), "html.parser")


def test_a_misspelled_name_gets_did_you_mean_before_any_plan(client, cluster):
    cluster.node("n1", {D: "1"})
    status, page = plan(client, f"requests={quote('example.com/dongel=1')}")
    assert status == 422 and page.select_one(".plan-result") is None
    error = page.select_one("#requests-error").get_text()
    assert "No such resource 'example.com/dongel'; did you mean example.com/dongle?" in error
    status, page = plan(client, f"requests={quote('example.com/brand-new=1')}")  # nothing close: planned
    assert status == 200 and page.select_one(".plan-result") is not None


def test_a_device_plugins_plan_offers_no_form_and_says_who_advertises_it(client, cluster):
    cluster.node("gpu-1", {GPU: "1"})
    status, page = plan(client, f"requests={quote(GPU + '=2')}&replicas=3")
    assert status == 200
    assert not page.select("a[data-plan-link]")
    [notice] = page.select('[data-plan-owner="device plugin"]')  # once, however many steps
    assert "device plugin advertises" in notice.get_text()
    # the step speaks in devices: what is there, held and free, never "add" or a capacity to set
    step = page.select_one('table.plan-steps tr[data-node="gpu-1"]')
    assert step.select_one(f'[data-devices-needed="{GPU} 5"]').get_text(" ", strip=True) == (
        f"5 more devices of {GPU} (1 there, 0 held, 1 free)"
    )
    assert page.select_one("[data-hardware]") is None  # nothing here to set


def test_a_node_without_the_devices_would_need_new_hardware_and_is_asked_last(client, cluster):
    cluster.node("gpu-1", {GPU: "2"})
    cluster.node("bare", {})
    status, page = plan(client, f"requests={quote(GPU + '=2')}&replicas=3")
    assert status == 200
    steps = {tr["data-node"]: tr for tr in page.select("table.plan-steps tr[data-node]")}
    assert list(steps) == ["gpu-1"]  # the node with GPUs takes the pods: the bare one is not asked
    status, page = plan(client, f"requests={quote(GPU + '=2')}&replicas=3&per_node=2")
    assert status == 200
    bare = page.select_one('table.plan-steps tr[data-node="bare"]')
    assert bare.select_one(f'[data-new-hardware="{GPU}"]') is not None and "add" not in bare.get_text(" ")


def test_a_static_plan_links_to_exactly_its_table_and_warns_of_hardware(client, cluster):
    cluster.node("n1", {D: "1"})
    status, page = plan(client, f"requests={quote(D + '=1')}&replicas=3")
    assert status == 200
    [link] = page.select("a[data-plan-link]")
    table = {
        tr["data-node"]: tr.select_one('[data-field="capacity"]').get_text(strip=True)
        for tr in page.select("table.plan-steps tr[data-node]")
    }
    assert link["data-plan-link"] == f"{D} 3 n1" and table == {"n1": f"{D}: 3"}
    assert "helps only if the devices are there" in page.select_one("[data-hardware]").get_text()


def test_a_plan_spreads_by_default_and_can_be_capped_per_node(client, cluster):
    for name in ("n1", "n2", "n3"):
        cluster.node(name, {D: "0"})

    def steps(query: str) -> dict[str, str]:
        status, page = plan(client, query)
        assert status == 200
        return {
            tr["data-node"]: tr.select_one('[data-field="pods"]').get_text(strip=True)
            for tr in page.select("table.plan-steps tr[data-node]")
        }

    assert steps(f"requests={quote(D + '=1')}&replicas=6") == {"n1": "2", "n2": "2", "n3": "2"}
    assert steps(f"requests={quote(D + '=1')}&replicas=6&per_node=1") == {"n1": "1", "n2": "1", "n3": "1"}
    status, page = plan(client, f"requests={quote(D + '=1')}&replicas=6&per_node=%C2%B2")
    assert status == 422 and "At most per node" in page.select_one("#per_node-error").get_text()


def test_an_empty_submit_says_what_to_give_and_a_manifest_beside_requests_says_which_was_used(
    client, cluster
):
    cluster.node("n1", {D: "2"})
    status, page = plan(client, "requests=&selector=&replicas=")
    assert status == 422 and "Give the requests" in page.select_one("#requests-error").get_text()
    status, page = plan(client, "")  # the page itself, before any submit: no error
    assert status == 200 and not page.select_one("#requests-error").get_text().strip()
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        "  containers: [{name: a, image: x, resources: {limits: {example.com/dongle: 1}}}]\n"
    )
    status, page = plan(client, f"manifest={quote(pod)}&requests={quote(D + '=2')}")
    assert status == 200
    assert (
        "The manifest was planned; what was given beside it (requests) was not used."
        in page.select_one("[data-ignored]").get_text()
    )
    assert page.select_one(".plan-result h2").has_attr("data-autofocus")  # the answer is brought into view


def test_sort_controls_are_named_with_their_resource_and_direction_the_glyph_hidden(client, cluster):
    cluster.node("n1", {D: "2"})
    from bs4 import BeautifulSoup

    page = BeautifulSoup(client.get(f"/?sort=free:{D}&order=desc").get_data(as_text=True), "html.parser")
    links = {a["aria-label"]: a for a in page.select("table.grid thead a[aria-label]")}
    current = links[f"free of {D}, sorted descending: sort ascending"]
    assert current.select_one('[aria-hidden="true"]').get_text(strip=True) == "▼"
    assert f"capacity of {D}: sort descending" in links


def test_one_user_past_the_plans_a_minute_waits_and_others_still_plan(make_app, cluster):
    """Each plan weighs every node: past plans_per_minute a user is told to wait (429, nothing
    planned), while another user plans as usual; the empty form is never counted."""
    cluster.node("n1", {"example.com/dongle": "4"})
    web = browser(make_app(auth_mode="impersonate", trusted_proxies=("127.0.0.1/32",), plans_per_minute=3))
    ann, bob = ({"X-Forwarded-User": u, "X-Forwarded-Groups": "extres-editors"} for u in ("ann", "bob"))
    ask = {"requests": "example.com/dongle=1"}
    assert web.get("/plan/", headers=ann).status_code == 200
    assert [web.get("/plan/", query_string=ask, headers=ann).status_code for _ in range(4)] == [
        200,
        200,
        200,
        429,
    ]
    assert "plans in the last minute" in web.get("/plan/", query_string=ask, headers=ann).get_data(
        as_text=True
    )
    assert web.get("/plan/", query_string=ask, headers=bob).status_code == 200


def test_the_answer_says_the_largest_block_free_on_one_node_the_pod_may_use(client, cluster):
    cluster.node("gpu-1", {GPU: "8"})
    cluster.node("gpu-2", {GPU: "4"})
    cluster.node("tainted", {GPU: "16"}, taints=[{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}])
    cluster.pod("holder", "gpu-1", {GPU: "3"})
    status, page = plan(client, f"requests={quote(GPU + '=2')}")
    block = page.select_one(f'[data-largest="{GPU}"]')
    assert status == 200 and block["data-count"] == "5" and "on gpu-1" in block.get_text()  # not 16
