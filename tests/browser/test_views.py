"""The views for clusters at scale, in Chromium: who holds what, the change history, the overview
sorted and summarised, a bulk change's progress; screenshots for the README; page weight at
5,000 nodes."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.kube.api.client import ClusterConfig, api_client, load_configuration
from bench.load import seed
from extres_demo import testenv
from tests.browser.pages import DOCS, first_row_top, open_page
from tests.helpers import eventually
from tests.kube_helpers import create_node, kubelet_standin, own_resource, workload
from tests.serving import Server

pytestmark = pytest.mark.browser


@pytest.fixture
def held(core, admin_api, uid):
    """Two nodes whose dongles a Deployment's and a StatefulSet's pods hold."""
    r = own_resource(uid, "v")
    a, b = f"{uid}-a", f"{uid}-b"
    create_node(core, a, {r: "8"}, labels={"suite": uid, "kubernetes.io/hostname": a})
    create_node(core, b, {r: "4"}, labels={"suite": uid, "kubernetes.io/hostname": b})
    kubelet_standin(core, a, b)

    workload(admin_api, "Deployment", f"{uid}-train", a, {r: "2"}, replicas=3)
    workload(admin_api, "StatefulSet", f"{uid}-infer", b, {r: "1"})
    # the controllers make the pods and the scheduler binds them
    eventually(
        lambda: sum(p.spec.node_name in (a, b) for p in core.list_namespaced_pod("default").items) == 4,
        timeout=60,
    )
    return r, a, b


def test_workloads_sort_and_filter_in_place(browser, server, held, uid):
    r, _a, _b = held
    w = open_page(browser)
    page = w.page
    page.goto(server.url + f"/workloads/?resource={r}")
    row = page.locator(f'tr[data-workload="Deployment/{uid}-train"]')
    expect(row.locator('[data-field="requested"]')).to_have_text("6")
    expect(row.locator('[data-field="share"]')).to_have_text("50.0%")
    page.evaluate("window.__kept = 3")
    page.select_option('select[name="by"]', "namespace")  # htmx: swapped in place
    expect(page.locator("table.workloads thead th", has_text="Workload")).to_have_count(0)
    expect(page.locator('tr[data-namespace="default"] [data-field="requested"]')).to_have_text("7")
    assert page.evaluate("window.__kept") == 3 and "by=namespace" in page.url
    page.goto(server.url + f"/workloads/?resource={r}&sort=requested&order=asc")
    expect(page.locator("table.workloads tbody tr").first).to_have_attribute(
        "data-workload", f"StatefulSet/{uid}-infer"
    )
    page.screenshot(path=str(DOCS / "workloads.png"), full_page=True)
    assert w.problems == []


def test_overview_sorted_by_free_with_the_summary_strip(browser, server, held, uid):
    r, _a, b = held
    w = open_page(browser)
    page = w.page
    page.goto(server.url + f"/?q={uid}&resource={r}")
    expect(page.locator(f'ul.strip li[data-resource="{r}"] [data-field="requested"]')).to_have_text("7")
    page.locator("table.grid thead a", has_text="free").first.click()  # highest free first
    expect(page.locator("table.grid tbody tr").first).to_have_attribute("data-node", b)  # 3 free vs 2
    page.fill('input[name="min"]', "3")
    page.fill('input[name="free"]', r)
    page.press('input[name="min"]', "Enter")
    expect(page.locator("table.grid tbody tr")).to_have_count(1)
    page.screenshot(path=str(DOCS / "overview-sorted.png"), full_page=True)
    assert w.problems == []


def test_history_and_bulk_progress(browser, server, core, uid):
    names = [f"{uid}-{i:02d}" for i in range(30)]
    for n in names:
        create_node(core, n, {}, labels={"suite": uid})
    w = open_page(browser)
    page = w.page
    page.goto(server.url + "/changes/bulk")
    page.fill('input[name="resource"]', "acme.io/fpga")
    page.fill('input[name="quantity"]', "2")
    page.fill('input[name="selector"]', f"suite={uid}")
    page.click("text=Preview (dry run)")
    page.click("text=Apply to 30 nodes")
    expect(page.locator("h1")).to_have_text("Results")
    expect(page.locator("#job")).to_have_attribute("data-done", "true", timeout=30_000)  # polled
    expect(page.locator('[data-field="finished"]')).to_have_text("30")
    page.screenshot(path=str(DOCS / "bulk-results.png"), full_page=True)
    page.goto(server.url + f"/history/?node={uid}&resource=acme.io/fpga")
    capacity = page.locator('table.history tbody tr[data-field-name="capacity"]')
    # the history is written in the background and read every few seconds: load until all are in
    for _ in range(30):
        if capacity.count() == 30:
            break
        page.wait_for_timeout(1000)
        page.reload()
    expect(capacity).to_have_count(30)
    expect(capacity.first.locator('[data-field="change"]')).to_have_text("absent → 2")
    page.screenshot(path=str(DOCS / "history.png"), full_page=False)
    assert w.problems == []


def test_page_weight_at_5000_nodes(browser):
    """Every page and fragment at 5,000 nodes stays under 300 KB of HTML and 10,000 DOM nodes
    (fragments under 50 KB): lists are paged and the bulk page offers a search, never every node."""
    plane = testenv.start(Path(tempfile.mkdtemp(prefix="extres-weight-")), bare=True)
    api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
    api.configuration.connection_pool_maxsize = 32
    try:
        from kubernetes import client

        seed(client.CoreV1Api(api), 5000)
        server = Server(plane)
        try:
            w = open_page(browser)
            page = w.page
            pages = [
                "/",
                "/?sort=free:example.com/dongle&order=desc",
                "/changes/bulk",
                "/heat",
                "/workloads/",
                "/pending/",
                "/history/",
            ]
            report = []
            for path in pages:
                resp = page.goto(server.url + path)
                size = len(resp.body())
                dom = page.evaluate("document.getElementsByTagName('*').length")
                report.append((path, size, dom))
                assert size < 300 * 1024 and dom < 10_000, (path, size, dom)
            for path, target in (
                ("/", "grid"),
                ("/pending/", "pending-list"),
                ("/changes/bulk?find=n0", "node-choices"),
            ):
                resp = page.request.get(
                    server.url + path, headers={"HX-Request": "true", "HX-Target": target}
                )
                size = len(resp.body())
                report.append((path + " fragment", size, 0))
                assert size < 50 * 1024, (path, size)
            page.goto(server.url + "/heat?q=n0")
            page.screenshot(path=str(DOCS / "heat.png"), full_page=False)
            print("\n".join(f"{p:45s} {s / 1024:6.1f} KB  {d:5d} DOM nodes" for p, s, d in report))
            assert w.problems == []
        finally:
            server.stop()
    finally:
        api.close()
        plane.stop()


NARROW_PAGES = ["/", "/heat", "/pending/", "/plan/", "/workloads/", "/history/", "/devices/"]


def test_no_page_is_wider_than_a_phone_except_inside_its_table_boxes(browser, server, held, uid):
    """At 390 x 844 the nav wraps and nothing is wider than the screen: every table is cards there
    (a box that still scrolled sideways would have to be labelled, focusable and show it)."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        _, node, _ = held
        scrolling = 0
        for path in [*NARROW_PAGES, f"/nodes/{node}"]:
            page.goto(server.url + path)
            wide = page.evaluate(
                """() => [...document.querySelectorAll('body *')].filter(e => {
                       if (e.closest('.table-wrap, #grid, .grid-wrap')) return false;
                       const r = e.getBoundingClientRect();
                       return r.right > window.innerWidth + 1;
                   }).slice(0, 5).map(e => e.tagName + '.' + e.className)"""
            )
            assert wide == [], (path, wide)
            assert page.evaluate("document.documentElement.scrollWidth") <= 391, path
            # a box that scrolls sideways is named, takes the keyboard's focus and shows a cue
            boxes = page.evaluate(
                """() => [...document.querySelectorAll('.table-wrap')]
                       .filter(w => w.scrollWidth > w.clientWidth + 1)
                       .map(w => [w.getAttribute('aria-label'), w.tabIndex,
                                  getComputedStyle(w).backgroundImage.includes('gradient')])"""
            )
            assert all(label and focusable == 0 and cue for label, focusable, cue in boxes), (path, boxes)
            scrolling += len(boxes)
        assert scrolling == 0  # every table fits a phone (Workloads, History... scrolled before)
    finally:
        context.close()


def test_the_overview_opens_on_its_nodes_with_the_whole_test_cluster(browser, server, held):
    """Unfiltered, over every node and resource the test cluster holds by now (many more than the
    demo's): the first node row in the top 400 px of a desktop, the first node card inside a
    phone's first screen, no inner scroll box and no header cards on the phone."""
    desktop = first_row_top(browser, server.url + "/", 1440, 900)
    phone = first_row_top(browser, server.url + "/", 390, 844)
    print(f"\nfirst node row at y = {desktop:.0f} of 900 (desktop), {phone:.0f} of 844 (phone)")
    assert desktop < 400 and phone + 60 < 844, (desktop, phone)
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    try:
        page = context.new_page()
        page.goto(server.url + "/")
        box = page.locator(".grid-box")
        assert box.evaluate("e => getComputedStyle(e).overflowY") == "visible"
        assert page.locator("table.grid thead").evaluate("e => e.getBoundingClientRect().right") < 0
    finally:
        context.close()


def test_a_phone_opens_the_overview_on_its_nodes(browser, server, held, uid):
    """At 390 x 844 the filters past the node search are folded (open again where one is in use),
    the totals are one line, and each node is a card whose resources' free counts are in large
    type: the first node is on the first screen."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    page = context.new_page()
    try:
        r, _, _ = held
        page.goto(server.url + f"/?q={uid}")
        first = page.locator("#grid tbody tr[data-node]").first
        expect(first).to_be_visible()
        top = first.bounding_box()["y"]
        print(f"\nfirst node card at y = {top:.0f} px of 844")
        assert top + 60 < 844, top
        assert page.locator("details.more-filters").get_attribute("open") is None
        free = first.locator(f'td[data-field="free"][data-resource="{r}"]')
        assert float(free.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= 20
        assert first.locator('td[data-field="capacity"]').first.is_hidden()
        page.locator("details.more-filters > summary").click()
        expect(page.locator('input[name="selector"]')).to_be_visible()
        page.goto(server.url + f"/?q={uid}&selector=suite%3D{uid}")  # a filter in use: shown open
        assert page.locator("details.more-filters").get_attribute("open") is not None
        desktop = browser.new_page(viewport={"width": 1440, "height": 900})
        desktop.goto(server.url + f"/?q={uid}")
        expect(desktop.locator('input[name="selector"]')).to_be_visible()  # never folded on a desktop
        expect(desktop.locator('#grid td[data-field="capacity"]').first).to_be_visible()
        desktop.close()
    finally:
        context.close()


def test_a_phone_shows_the_node_page_as_cards(browser, server, held):
    """Below 600 px each resource is a card: its name, free in large type, the other numbers
    labelled, the bar and the forms, all within the screen (no scroll box to find them in)."""
    resource, node, _ = held
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    page = context.new_page()
    try:
        page.goto(f"{server.url}/nodes/{node}")
        card = page.locator(f'table.resources tr[data-resource="{resource}"]')
        expect(card).to_be_visible()
        box = card.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
        free = card.locator('[data-field="free"]')
        assert float(free.evaluate("e => getComputedStyle(e).fontSize").removesuffix("px")) >= 24
        assert "requested" in card.locator('[data-field="requested"]').evaluate(
            "e => getComputedStyle(e, '::before').content"
        )
        assert card_overflow(page) and max(card_overflow(page)) == 0
    finally:
        context.close()


def card_overflow(page) -> list[int]:
    """How far each table shown as cards reaches past its box (0: it fits the screen)."""
    return page.evaluate(
        "() => [...document.querySelectorAll('.table-wrap')]"
        ".filter(w => w.querySelector('table.cards'))"
        ".map(w => Math.max(0, w.scrollWidth - w.clientWidth - 1))"
    )


def test_a_phone_shows_shortfalls_and_plans_as_cards(browser, server, held, admin_api, core, uid):
    """A pending pod's shortfall and its plan, and What-if's plan: cards within the
    screen, each number under its label, nothing to scroll sideways."""
    resource, a, _ = held
    workload(admin_api, "Deployment", f"{uid}-short", a, {resource: "4"}, replicas=3)  # 2 free on a

    def unschedulable() -> int:
        pods = core.list_namespaced_pod("default", label_selector=f"app={uid}-short").items
        return sum(any(c.reason == "Unschedulable" for c in p.status.conditions or ()) for p in pods)

    eventually(lambda: unschedulable() == 3, timeout=60)
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    page = context.new_page()
    try:
        for path, tables in (
            (f"/pending/?resource={resource}", ("fits", "plan-steps")),
            (f"/plan/?requests={resource}%3D3&replicas=5", ("room", "plan-steps")),
        ):
            page.goto(server.url + path)
            for table in tables:
                row = page.locator(f"table.{table}.cards tbody tr").first
                expect(row).to_be_visible()
                box = row.bounding_box()
                assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, (
                    path,
                    table,
                    box,
                )
                assert (
                    row.locator("td[data-label]").first.evaluate(
                        "e => getComputedStyle(e, '::before').content"
                    )
                    != "none"
                )
            assert card_overflow(page) and max(card_overflow(page)) == 0, path
            assert page.evaluate("document.documentElement.scrollWidth") <= 391, path
    finally:
        context.close()
