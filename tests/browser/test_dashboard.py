"""The dashboard as people use it, in a real browser.

kwok plays the kubelets (nodes Ready, pods running); extres_demo.standin copies capacity to
allocatable where a test needs it, the one kubelet step kwok does not take.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.pages import open_page
from tests.helpers import eventually
from tests.kube_helpers import create_node, create_pod, kubelet_standin, own_resource

pytestmark = pytest.mark.browser


@pytest.fixture
def cluster(core, uid):
    r = own_resource(uid, "b")
    a, b = f"{uid}-a", f"{uid}-b"
    create_node(core, a, {r: "2"}, labels={"suite": uid, "pool": "x"})
    create_node(core, b, {r: "1"}, labels={"suite": uid, "pool": "y"})
    kubelet_standin(core, a, b)
    return r, a, b


def cell(page, node, resource, field):
    return page.locator(f'tr[data-node="{node}"] td[data-resource="{resource}"][data-field="{field}"]')


def test_overview_filter_and_search_update_in_place(browser, server, cluster, uid):
    r, a, b = cluster
    w = open_page(browser)
    page = w.page
    page.goto(server.url + f"/?q={uid}")  # the session's cluster has pages of other tests' nodes
    expect(cell(page, a, r, "capacity")).to_have_text("2")
    page.evaluate("window.__kept = 42")  # survives only if the page is not reloaded
    page.fill('input[name="q"]', f"{uid}-b")
    expect(page.locator(f'tr[data-node="{a}"]')).to_have_count(0)
    expect(cell(page, b, r, "capacity")).to_have_text("1")
    assert page.evaluate("window.__kept") == 42
    assert f"q={uid}-b" in page.url  # the URL follows, so the view can be shared
    page.fill('input[name="q"]', uid)
    page.fill('input[name="selector"]', "pool=x")
    page.press('input[name="selector"]', "Enter")
    expect(page.locator(f'tr[data-node="{b}"]')).to_have_count(0)
    expect(cell(page, a, r, "free")).to_have_text("2")
    page.fill('input[name="selector"]', "pool in x")
    page.press('input[name="selector"]', "Enter")
    expect(page.locator("#selector-error")).to_contain_text("Label selector")
    assert page.evaluate("window.__kept") == 42
    assert w.problems == []


def test_add_to_two_nodes_then_remove_one(browser, server, cluster, uid):
    _r, a, b = cluster
    w = open_page(browser)
    page = w.page
    page.goto(server.url + "/changes/bulk")
    page.evaluate("window.__kept = 1")
    page.fill('input[name="resource"]', "acme.io/fpga")
    page.fill('input[name="quantity"]', "3")
    page.fill('input[name="find"]', uid)  # active search: the list narrows in place
    expect(page.locator("#node-choices")).to_contain_text(f"2 nodes whose name contains {uid}")
    page.check(f'input[name="nodes"][value="{a}"]')
    page.fill('input[name="find"]', f"{uid}-b")  # a stays chosen while searching for b
    expect(page.locator("#node-choices")).to_contain_text(f"1 node whose name contains {uid}-b")
    expect(page.locator(f'input[name="nodes"][value="{a}"]')).to_be_checked()
    page.check(f'input[name="nodes"][value="{b}"]')
    page.click("text=Preview (dry run)")
    expect(page.locator(f'tr[data-node="{a}"] .result')).to_have_text("would change")
    page.click("text=Apply to 2 nodes")
    expect(page.locator("h1")).to_have_text("Results")
    expect(page.locator("tr.ok")).to_have_count(2)
    assert page.evaluate("window.__kept") == 1  # boosted: swapped in place
    page.goto(server.url + f"/?q={uid}")
    expect(cell(page, a, "acme.io/fpga", "capacity")).to_have_text("3")
    expect(cell(page, b, "acme.io/fpga", "capacity")).to_have_text("3")
    # remove from b, through the confirmation
    page.goto(server.url + f"/nodes/{b}")
    page.locator('tr[data-resource="acme.io/fpga"] >> text=Remove…').click()
    expect(page.locator("h1")).to_contain_text(f"Remove acme.io/fpga from {b}?")
    expect(page.locator("main")).to_contain_text("no new pod requesting acme.io/fpga fits on")
    page.click("button.danger")
    expect(page.locator(".flash.ok")).to_contain_text("acme.io/fpga 3 → absent")
    expect(page.locator('table.resources tr[data-resource="acme.io/fpga"]')).to_have_count(0)
    assert w.problems == []


def test_pending_pod_leaves_after_the_suggested_fix(browser, server, core, cluster, uid):
    r, a, _b = cluster
    pod = f"{uid}-wants3"
    create_pod(core, pod, None, {r: "3"})
    w = open_page(browser)
    page = w.page
    page.goto(server.url + f"/pending/?resource={r}")  # other tests' pending pods may fill page 1
    article = page.locator(f'article[data-pod="default/{pod}"]')
    for _ in range(60):
        if article.count():
            break
        page.wait_for_timeout(500)
        page.reload()
    expect(article).to_have_attribute("data-kind", "short")
    link = article.locator("a[data-suggestion]")
    expect(link).to_have_text(f"add 1 {r} to {a}")
    link.click()
    expect(page.locator('input[name="quantity"]')).to_have_value("3")
    page.click("text=Save")
    expect(page.locator(".flash.ok")).to_contain_text(f"{r} 2 → 3")
    kubelet_standin(core, a)  # the kubelet stand-in copies capacity to allocatable
    page.goto(server.url + f"/pending/?resource={r}")
    for _ in range(120):
        if not article.count():
            break
        page.wait_for_timeout(500)
        page.reload()
    expect(article).to_have_count(0)
    assert core.read_namespaced_pod(pod, "default").spec.node_name == a
    assert w.problems == []


def test_viewer_sees_no_form(browser, token_server, cluster):
    _r, a, _ = cluster
    w = open_page(browser, headers={"Authorization": "Bearer viewer-token"})
    page = w.page
    page.goto(token_server.url + f"/nodes/{a}")
    expect(page.locator("#viewer-badge")).to_be_visible()
    expect(page.locator('form[method="post"]')).to_have_count(0)
    expect(page.locator("text=Bulk change")).to_have_count(0)
    assert w.problems == []


def test_plain_forms_work_without_javascript(browser, server, cluster, uid):
    r, a, b = cluster
    w = open_page(browser, js=False)
    page = w.page
    page.goto(server.url + f"/?q={uid}-a")
    expect(page.locator(f'tr[data-node="{b}"]')).to_have_count(0)  # GET form, server-side filter
    page.goto(server.url + f"/nodes/{a}")
    row = page.locator(f'tr[data-resource="{r}"]')
    row.locator('input[name="quantity"]').fill("5")
    row.locator("text=Set").click()
    expect(page.locator(".flash.ok")).to_contain_text(f"{r} 2 → 5")  # post/redirect/get
    expect(page.locator(f'tr[data-resource="{r}"] td[data-field="capacity"]')).to_have_text("5")
    page.fill('form.change input[name="resource"]', "dongle")
    page.fill('form.change input[name="quantity"]', "1")
    page.click("form.change >> text=Save")
    expect(page.locator("#resource-error")).to_contain_text("qualified name")
    # remove, through the confirmation page
    page.goto(server.url + f"/nodes/{a}")
    page.locator(f'tr[data-resource="{r}"] >> text=Remove…').click()
    page.click("button.danger")
    expect(page.locator(".flash.ok")).to_contain_text(f"{r} 5 → absent")
    # bulk, with the dry-run preview
    page.goto(server.url + "/changes/bulk")
    page.fill('input[name="resource"]', r)
    page.fill('input[name="quantity"]', "2")
    page.fill('input[name="selector"]', f"suite={uid}")
    page.click("text=Preview (dry run)")
    expect(page.locator("tr.ok")).to_have_count(2)
    page.click("text=Apply to 2 nodes")
    expect(page.locator("tr.ok")).to_have_count(2)
    page.goto(server.url + f"/?q={uid}")
    expect(cell(page, a, r, "capacity")).to_have_text("2")
    expect(cell(page, b, r, "capacity")).to_have_text("2")


def test_keyboard_reaches_every_action(browser, server, cluster, uid):
    _r, a, _ = cluster
    w = open_page(browser)
    page = w.page
    page.goto(server.url + f"/nodes/{a}")
    seen = []
    for _ in range(40):
        page.keyboard.press("Tab")
        seen.append(
            page.evaluate("document.activeElement.textContent.trim() || document.activeElement.name || ''")
        )
    # the Pending link carries a badge when pods wait somewhere in the cluster ("Pending 3"); each
    # row's Set and Remove… name their resource ("Set example.com/dongle")
    assert any(text.startswith("Set ") and "/" in text for text in seen), seen
    seen = [text.split(" ")[0] if text.startswith(("Pending", "Set", "Remove…")) else text for text in seen]
    for wanted in ("Overview", "Pending", "Set", "Remove…", "Save", "resource", "quantity"):
        assert wanted in seen, (wanted, seen)
    # and acting by keyboard alone: focus the search, type, Enter
    page.goto(server.url + "/")
    page.focus('input[name="q"]')
    page.keyboard.type(f"{uid}-a")
    page.keyboard.press("Enter")
    expect(page.locator(f'tr[data-node="{a}"]')).to_have_count(1)
    assert w.problems == []


def test_overview_follows_the_cluster_live(browser, server, core, cluster, uid):
    r, a, _ = cluster
    w = open_page(browser)
    page = w.page
    page.goto(server.url + f"/?q={uid}")
    expect(cell(page, a, r, "capacity")).to_have_text("2")
    page.evaluate("window.__kept = 7")
    escaped = r.replace("/", "~1")
    core.patch_node_status(a, [{"op": "replace", "path": f"/status/capacity/{escaped}", "value": "9"}])
    expect(cell(page, a, r, "capacity")).to_have_text("9", timeout=15_000)  # polled fragment
    expect(page.locator(".age")).to_have_text("live")
    assert page.evaluate("window.__kept") == 7
    assert w.problems == []


def focused(page) -> str:
    """What has keyboard focus, as a selector-like description."""
    return page.evaluate(
        """() => { const e = document.activeElement; if (!e || e === document.body) return 'body';
        return e.tagName.toLowerCase() + (e.name ? '[name=' + e.name + ']' : '') +
          (e.classList.contains('flash') ? '.flash' : '') +
          (e.textContent.trim() === 'Cancel' ? ':cancel' : ''); }"""
    )


def focus_on(page, expected: str) -> None:
    """Focus reaches ``expected`` (the page's script moves it once the swap has settled, a few
    milliseconds after the new content is there): waited for, not sampled once."""
    try:
        eventually(lambda: focused(page) == expected, timeout=5, interval=0.05)
    except AssertionError:
        assert focused(page) == expected  # the failure says where focus is


def test_focus_lands_where_the_reader_goes_next_after_each_step(browser, server, cluster, uid):
    """Keyboard alone: a refused quantity puts focus on it, the refusal said in the live region; a
    saved change on its flash, said there too; a remove's confirmation on Cancel."""
    r, a, _ = cluster
    w = open_page(browser)
    page = w.page
    page.goto(server.url + f"/nodes/{a}")
    form = page.locator("form.change").last
    form.locator("input[name=resource]").fill(own_resource(uid, "k"))
    form.locator("input[name=quantity]").fill("2Ki")
    form.locator("input[name=quantity]").press("Enter")
    expect(page.locator("#quantity-error")).to_contain_text("2Ki means 2048")
    focus_on(page, "input[name=quantity]")
    # the refusal is said too, with what to fix (a screen reader stays in the field otherwise)
    expect(page.locator("#announce")).to_contain_text("Nothing was changed")
    expect(page.locator("#announce")).to_contain_text("2Ki means 2048")
    page.locator("input[name=quantity]").fill("2")
    page.locator("input[name=quantity]").press("Enter")
    expect(page.locator("main .flash")).to_contain_text("changed")
    # the flash said in the live region that was there before the navigation (announced)
    expect(page.locator("#announce")).to_contain_text("changed")
    focus_on(page, "p.flash")
    page.locator(f'tr[data-resource="{r}"] a', has_text="Remove").click()
    expect(page.locator("h1")).to_contain_text(f"Remove {r}")
    focus_on(page, "a:cancel")
    assert [p for p in w.problems if "status of 422" not in p] == []  # the refused form, as it should be


def test_the_first_node_is_a_few_tab_presses_away(browser, server, cluster, uid):
    """From load: the skip link, then the nodes region, the Node column's sort, one sort control
    per resource group, the first node: at most 15 presses, counted."""
    w = open_page(browser)
    page = w.page
    page.goto(server.url + f"/?q={uid}")
    presses = 0
    page.keyboard.press("Tab")
    presses += 1
    assert page.evaluate("document.activeElement.textContent") == "Skip to the nodes"
    page.keyboard.press("Enter")
    presses += 1
    first = "#nodes tbody tr th a"
    while not page.evaluate("(sel) => document.activeElement === document.querySelector(sel)", first):
        assert presses < 15, f"{presses} presses and the first node's link is not reached"
        page.keyboard.press("Tab")
        presses += 1
    print(f"\nfirst node link after {presses} key presses")
    assert w.problems == []


def test_an_add_then_a_remove_by_keyboard_alone_in_few_presses(browser, server, cluster, uid):
    """From the node page's load to a resource added and then removed, counting every key
    pressed (each character typed too): at most 40."""
    _, a, _ = cluster
    added = f"k{uid[-6:].strip('-')}.io/z"  # short and this test's own: each character is a press
    w = open_page(browser)
    page = w.page
    page.goto(server.url + f"/nodes/{a}")
    presses = 0

    def press(key: str) -> None:
        nonlocal presses
        page.keyboard.press(key)
        presses += 1

    def tab_to(selector: str, backwards: bool = False) -> None:
        while not page.evaluate("(s) => document.activeElement.matches(s)", selector):
            assert presses < 40, f"{presses} presses and {selector} is not reached"
            press("Shift+Tab" if backwards else "Tab")

    press("Tab")  # the skip link, to the add form for an editor
    assert page.evaluate("document.activeElement.textContent") == "Skip to the form to add a resource"
    press("Enter")
    tab_to("input[name=resource]")  # the add form's (the rows' forms carry theirs hidden)
    print(f"\nthe add form's first field after {presses} key presses")
    assert presses <= 8
    page.keyboard.type(added)
    presses += len(added)
    press("Tab")
    page.keyboard.type("3")
    presses += 1
    press("Enter")
    expect(page.locator(f'tr[data-resource="{added}"] [data-field="capacity"]')).to_have_text("3")
    tab_to(f'tr[data-resource="{added}"] a.button-link')
    press("Enter")  # Remove…: the confirmation, focus on Cancel
    expect(page.locator("h1")).to_contain_text(f"Remove {added}")
    tab_to("button.danger", backwards=True)
    press("Enter")
    expect(page.locator(".flash.ok")).to_contain_text(f"{added} 3 → absent")
    print(f"\nadd then remove by keyboard: {presses} key presses ({len(added)} + 1 typed)")
    assert presses <= 40
    assert w.problems == []


def test_back_and_reload_after_every_action_land_on_a_whole_page_with_each_flash_once(
    browser, server, cluster, uid
):
    """Set, add, remove, a bulk apply and a cancel, each followed by Back and by Reload: a whole
    page every time (never the blank page an empty answer to htmx's history restore gave), and no
    flash said twice on one page."""
    r, a, b = cluster
    w = open_page(browser)
    page = w.page

    def whole(after: str) -> None:
        expect(page.locator("main h1")).to_be_visible()
        assert page.locator("main").inner_text().strip(), after
        said = page.locator("[data-flash]").all_inner_texts()
        assert len(said) == len(set(said)) and len(said) <= 1, (after, said)

    def back_and_reload(after: str) -> None:
        whole(after)
        page.go_back()
        page.wait_for_load_state("networkidle")  # htmx's restore of the page, if it asked for one
        whole(f"Back after {after}")
        page.reload()
        whole(f"Reload after Back after {after}")
        page.go_forward()
        page.wait_for_load_state("networkidle")
        whole(f"Forward after {after}")
        page.reload()
        whole(f"Reload after {after}")

    page.goto(server.url + f"/nodes/{a}")
    row = page.locator(f'table.resources tr[data-resource="{r}"]')
    row.locator("input[name=quantity]").fill("5")
    row.locator("button").click()
    expect(page.locator(".flash.ok")).to_contain_text("→ 5")
    back_and_reload("set")

    page.goto(server.url + f"/nodes/{a}")
    added = own_resource(uid, "y")
    form = page.locator("form.change").last
    form.locator("input[name=resource]").fill(added)
    form.locator("input[name=quantity]").fill("2")
    form.locator("input[name=quantity]").press("Enter")
    expect(page.locator(".flash.ok")).to_contain_text(added)
    back_and_reload("add")

    page.goto(server.url + f"/nodes/{a}")
    page.locator(f'tr[data-resource="{added}"] a', has_text="Remove").click()
    expect(page.locator("h1")).to_contain_text(f"Remove {added}")
    page.locator("a", has_text="Cancel").click()
    expect(page.locator("main h1")).to_have_text(a)
    back_and_reload("cancel")

    page.goto(server.url + f"/nodes/{a}")
    page.locator(f'tr[data-resource="{added}"] a', has_text="Remove").click()
    page.locator("button.danger").click()
    expect(page.locator(".flash.ok")).to_contain_text(f"{added} 2 → absent")
    back_and_reload("remove")

    page.goto(server.url + f"/changes/bulk?find={uid}&resource={r}")
    page.fill('input[name="quantity"]', "3")
    page.check(f'input[name="nodes"][value="{b}"]')
    page.click("text=Preview (dry run)")
    expect(page.locator(f'tr[data-node="{b}"] .result')).to_have_text("would change")
    page.click("text=Apply to 1 node")
    expect(page.locator("#job")).to_have_attribute("data-done", "true", timeout=30_000)
    back_and_reload("bulk apply")
    assert [p for p in w.problems if "status of 4" not in p] == []
