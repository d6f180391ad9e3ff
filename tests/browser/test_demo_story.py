"""The README's demo, step by step, in Chromium against the demo itself (``extres serve --or-demo``,
as ``scripts/dev run`` starts it): each step checks what the README says the screen shows, and the
README's pictures are taken here, from this one run (EXTRES_SCREENSHOTS=1 writes them to docs/).

The demo's cluster is the real kube-apiserver, kube-scheduler and kube-controller-manager, with
kwok as every kubelet; the demo's stand-in copies capacity to allocatable, the one kubelet step kwok
does not take. Step 3 runs kubectl, built with the control plane, exactly as the README prints it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from extres_demo import testenv
from tests.browser.pages import (
    DOCS,
    axe_context,
    first_row_top,
    open_page,
    record_live_regions,
    said_since_load,
    violations_here,
)
from tests.browser.test_walk import tabs_to_content
from tests.helpers import wait_until_serving

pytestmark = pytest.mark.browser

W = "wgh/extended-cpu"
D = "example.com/dongle"
ALIAS = "deviceclass.resource.kubernetes.io/example-gpu"
SLOW = 90_000  # ms: controllers, scheduler and kwok at work, the page following by polling


class Demo:
    def __init__(self, tmp: Path) -> None:
        self.port = testenv.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.out = tmp / "demo.out"
        (tmp / "tmp").mkdir()
        env = {
            **os.environ,
            "EXTRES_PORT": str(self.port),
            "TMPDIR": str(tmp / "tmp"),  # where the demo makes its state folder
            "KUBECONFIG": str(tmp / "none"),  # no cluster configured (not ~/.kube/config either)
        }
        env.pop("EXTRES_DEMO_STATE_DIR", None)
        with self.out.open("wb") as sink:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "app.cli", "serve", "--or-demo"],
                env=env,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        wait_until_serving(self.proc, self.url + "/readyz", timeout=240, interval=0.5)

    def kubectl(self, *args: str) -> None:
        """kubectl as the README says: with the KUBECONFIG line the demo printed."""
        [line] = [x for x in self.out.read_text().splitlines() if x.startswith("export KUBECONFIG=")]
        kubeconfig = Path(line.removeprefix("export KUBECONFIG=").split()[0])
        kubectl = testenv.ControlPlane(kubeconfig.parent, 0).kubectl
        env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
        subprocess.run([str(kubectl), *args], env=env, check=True, capture_output=True, timeout=60)

    def stop(self) -> float:
        """As Ctrl-C in its terminal; how long it took."""
        if self.proc.poll() is not None:
            return 0.0
        t0 = time.monotonic()
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        return time.monotonic() - t0


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    d = Demo(tmp_path_factory.mktemp("demo"))
    yield d
    d.stop()


def shot(page: Page, name: str, full: bool = True) -> None:
    page.screenshot(path=str(DOCS / f"{name}.png"), full_page=full)


def row_cell(page: Page, node: str, resource: str, field: str):
    return page.locator(f'#grid tr[data-node="{node}"] td[data-resource="{resource}"][data-field="{field}"]')


def said(page: Page, walk: list[str], action: str) -> None:
    """After an action: where focus is and what the live region says, for the walk's print."""
    page.wait_for_timeout(250)  # the script fills the live region 100 ms after the swap settles
    focus = page.evaluate(
        """() => { const e = document.activeElement; if (!e || e === document.body) return 'body';
        return e.tagName.toLowerCase() + (e.name ? '[name=' + e.name + ']' : '') +
          (e.id ? '#' + e.id : '') + (e.classList.length ? '.' + [...e.classList].join('.') : ''); }"""
    )
    announced = page.locator("#announce").inner_text().strip()
    walk.append(f"{action:38s} focus {focus[:40]:40s} said: {announced[:70] or '-'}")


def nginx_card(page: Page):
    return page.locator('article[data-pod^="default/nginx-deployment-"]')


UNTOUCHED = (
    "/",
    "/heat",
    "/pending/",
    "/workloads/",
    "/devices/",
    "/idle/",
    "/history/",
    "/plan/",
    "/changes/bulk",
    "/nodes/demo-node-3",  # GPUs, their usage
    "/nodes/demo-node-1",  # no GPU
)


def test_the_overview_opens_on_its_nodes_and_an_untouched_page_says_nothing(browser, demo):
    """The demo unfiltered, as the README shows it: the first node row in the top 400 px of a
    desktop and the first node card on a phone's first screen (no inner scroll box, no header
    cards). Then every page left open for 30 s, each in its own tab, with what its live regions
    say recorded as a screen reader would hear them: nothing (ages tick, polls swap, no state
    changes)."""
    desktop = first_row_top(browser, demo.url + "/", 1440, 900)
    phone = first_row_top(browser, demo.url + "/", 390, 844)
    print(f"\nfirst node row at y = {desktop:.0f} of 900 (desktop), {phone:.0f} of 844 (phone)")
    assert desktop < 400 and phone + 60 < 844, (desktop, phone)

    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        tabs = []
        for path in UNTOUCHED:
            page = context.new_page()
            record_live_regions(page)
            page.goto(demo.url + path)
            tabs.append((path, page))
        assert all(page.evaluate("document.visibilityState") == "visible" for _, page in tabs)
        tabs[0][1].wait_for_timeout(30_000)
        heard = {path: said_since_load(page) for path, page in tabs}
        polled = tabs[0][1].evaluate("document.querySelector('#grid[data-poll]') !== null")
        print("\nlive regions of untouched pages over 30 s:")
        for path, said in heard.items():
            print(f"  {path:28s} {len(said)} announcement(s) {said[:3]}")
        assert polled and heard == {path: [] for path in UNTOUCHED}
        probe = tabs[0][1]  # the recorder hears what a region says: a word put in #announce
        probe.evaluate("document.getElementById('announce').textContent = 'heard'")
        assert said_since_load(probe) == ["heard"]
    finally:
        context.close()


def test_a_phone_shows_the_figures_of_every_table_first(browser, demo):
    """At 390 x 844, the tables whose figures matter (Idle GPUs, a node's GPUs and its pods, a
    pod's extended resources, Queues when Kueue runs) are cards: the row's name, then its
    figures, every one on screen; nothing scrolls sideways."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    try:
        page = context.new_page()
        page.goto(demo.url + "/idle/")
        expect(page.locator("table.idle tbody tr").first).to_be_visible(timeout=SLOW)  # once usage is read
        checked = []
        for path in ("/idle/", "/nodes/demo-node-7", "/pods/default/notebook-0"):
            page.goto(demo.url + path)
            for table in page.locator("table.figures-first").all():
                row = table.locator("tbody tr").first
                figures = row.locator("td.num").all()
                boxes = [f.bounding_box() for f in figures]
                name = row.locator('th[scope="row"]').bounding_box()
                assert figures and name is not None, path
                assert all(b is not None and b["x"] >= 0 and b["x"] + b["width"] <= 390 for b in boxes), path
                assert all(b["y"] > name["y"] for b in boxes if b), path  # under the row's name
                others = [c.bounding_box() for c in row.locator("td:not(.num)").all()]
                assert all(o["y"] >= max(b["y"] for b in boxes) for o in others if o), path  # figures first
                checked.append(f"{path} {table.get_attribute('id') or table.get_attribute('class')}")
            assert page.evaluate("document.documentElement.scrollWidth") <= 391, path
        print("\nfigures first on a phone:\n  " + "\n  ".join(checked))
        assert len(checked) >= 4
        # the other tables are cards too: no page scrolls sideways (1,016-1,859 px before)
        for path in ("/workloads/", "/devices/", "/history/", "/nodes/demo-node-5", "/unhealthy/"):
            page.goto(demo.url + path)
            assert page.evaluate("document.documentElement.scrollWidth") <= 391, path
    finally:
        context.close()


GPU = "nvidia.com/gpu"
# A GPU admin's questions, each: the link taken from the overview (None: on the overview itself)
# and the answer, which must be on the first screen of the page it leads to.
QUESTIONS = {
    # the strip on a desktop; on a phone, where the totals follow the nodes, its line for GPUs
    "how many GPUs can a 4-GPU job get now": (
        None,
        f'[data-room="{GPU}"] [data-fits="4"], [data-gpu-now-resource="{GPU}"] [data-fits="4"]',
    ),
    "why is this job waiting": ('nav a[href="/pending/"]', "[data-waiting-counts]"),
    "which GPUs are sick": ('nav a[href="/unhealthy/"]', "[data-sick], main p.empty"),
    "which allocations sit idle": ('nav a[href="/idle/"]', "table.idle tbody tr, [data-idle-none]"),
}


def answered_on_first_screen(page: Page, selector: str, height: int) -> float:
    """The top of the answer's first element, checked to lie wholly within the first screen."""
    answer = page.locator(selector).filter(visible=True).first
    expect(answer).to_be_visible(timeout=SLOW)
    box = answer.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + min(box["height"], 60) <= height, (selector, box)
    return box["y"]


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (390, 844)])
def test_an_admins_questions_are_each_answered_within_a_click_on_the_first_screen(
    browser, demo, width, height
):
    """From the overview, each question takes at most one click, and its answer is on the first
    screen of the page it opens, at a desktop's and a phone's size (the fleet's free GPUs: in
    tests/browser/test_fleet_pages.py, which has member clusters)."""
    context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=width < 600)
    try:
        page = context.new_page()
        measured = []
        for question, (link, answer) in QUESTIONS.items():
            page.goto(demo.url + "/")
            clicks = 0
            if link is not None:
                page.locator(link).first.click()
                clicks += 1
                page.wait_for_load_state("load")
            y = answered_on_first_screen(page, answer, height)
            measured.append(f"{question:40s} {clicks} click(s), answer at y = {y:.0f} of {height}")
        print(f"\n{width}x{height}:\n  " + "\n  ".join(measured))
    finally:
        context.close()


def test_the_readme_demo_step_by_step(browser, demo, axe):
    """The README's steps on the demo, its pictures taken on the way; the walk printed: after each
    action where focus is and what is said, then per page on a desktop and a phone axe's count,
    the width against the screen and the Tab presses to the page's own content."""
    w = open_page(browser)
    page = w.page
    walk: list[str] = []

    # 1. Overview: per node and in total; a device plugin's and DRA's resources marked, the DRA
    #    DeviceClass's implicit name an alias of the same devices, never a second pool
    page.goto(demo.url + "/")
    expect(row_cell(page, "demo-node-1", D, "requested")).to_have_text("3", timeout=SLOW)
    expect(
        page.locator('#grid tfoot td[data-resource="example.com/gpu"][data-field="capacity"]')
    ).to_contain_text("8", timeout=SLOW)
    expect(page.locator('#grid thead th[data-resource="nvidia.com/gpu"] .badge.plugin')).to_have_text(
        "device plugin"
    )
    expect(
        page.locator(f'#grid thead th[data-resource="example.com/gpu"] [data-alias="{ALIAS}"]')
    ).to_have_count(1)
    expect(page.locator(f'#grid thead th[data-resource="{ALIAS}"]')).to_have_count(0)
    shot(page, "demo-1-overview")

    # 2. Pending: nginx-deployment's pod asks for 3 of demo-node-4's 2; the advice is a link to
    #    the form; a pod short of a device plugin's GPUs reads in its owner's words, no link
    page.goto(demo.url + "/pending/")
    expect(nginx_card(page)).to_contain_text(f"Insufficient {W}", timeout=SLOW)
    expect(nginx_card(page).locator("a[data-suggestion]")).to_have_text(f"add 1 {W} to demo-node-4")
    gpu = page.locator("article.pending", has_text="Insufficient nvidia.com/gpu")  # trainer or gpu-eval
    expect(gpu.locator('[data-owner="device plugin"]')).to_contain_text(
        "demo-node-3 would need 2 more nvidia.com/gpu; its device plugin advertises them"
    )
    expect(gpu.locator("a[data-suggestion]")).to_have_count(0)
    shot(page, "demo-2-pending")

    # 3. Lower the request, with the README's kubectl line: the card goes, the pod runs on demo-node-4
    demo.kubectl("set", "resources", "deployment", "nginx-deployment", f"--requests={W}=2", f"--limits={W}=2")
    page.goto(demo.url + "/?q=demo-node-4")
    expect(row_cell(page, "demo-node-4", W, "requested")).to_have_text("2", timeout=SLOW)
    expect(row_cell(page, "demo-node-4", W, "free")).to_have_text("0")
    page.goto(demo.url + "/pending/")
    expect(nginx_card(page)).to_have_count(0, timeout=SLOW)

    # 4. Node page: Remove… names the pod and the over-commitment; after it, "over-committed by 2"
    page.goto(demo.url + "/nodes/demo-node-4")
    page.locator(f'tr[data-resource="{W}"] a', has_text="Remove…").click()
    expect(page.locator("h1")).to_contain_text(f"Remove {W} from demo-node-4?")
    expect(page.locator('[data-over-committed="2"]')).to_contain_text("over-committed by 2")
    expect(page.locator("main")).to_contain_text("nginx-deployment-")
    shot(page, "demo-4-remove")
    page.locator("button.danger").click()
    expect(page.locator(".flash.ok")).to_contain_text(f"{W} 2 → absent")
    said(page, walk, "remove confirmed")
    assert W in page.locator("#announce").inner_text()
    page.reload()  # Reload lands on the node page, never on a dead form
    expect(page.locator("h1")).to_contain_text("demo-node-4")
    expect(page.locator(f'tr[data-resource="{W}"] td.bar')).to_contain_text(
        "over-committed by 2", timeout=SLOW
    )  # once the stand-in has cleared allocatable, as the kubelet would
    expect(page.locator(f'tr[data-resource="{W}"] td.bar')).not_to_contain_text("%")
    over_bar = page.locator(f'tr[data-resource="{W}"] td.bar .meter.over')  # hatched, not a full bar
    assert "repeating-linear-gradient" in over_bar.evaluate("e => getComputedStyle(e).backgroundImage")
    shot(page, "demo-4-node")
    page.goto(demo.url + "/")
    expect(page.locator(f'.strip li[data-resource="{W}"] [data-field="over"]')).to_contain_text(
        "over-committed by 2 on 1 node"
    )

    # 5. Add a name the node already has: a change from the current value, never a false conflict;
    #    2Ki is refused with the number it stands for
    page.goto(demo.url + "/nodes/demo-node-2")
    add = page.locator("form.change").last
    add.locator("input[name=resource]").fill(D)
    add.locator("input[name=quantity]").fill("3")
    add.locator("input[name=quantity]").press("Enter")
    expect(page.locator(".change-summary")).to_have_attribute("data-change", f"{D} 2 3")
    expect(page.locator(".change-summary")).to_contain_text("currently 2 → 3")
    expect(page.locator("main")).not_to_contain_text("changed since")
    said(page, walk, "add a name it has (a notice)")
    assert "already" in page.locator("#announce").inner_text()
    page.locator("form.change input[name=quantity]").fill("2Ki")
    page.locator("form.change input[name=quantity]").press("Enter")
    expect(page.locator("#quantity-error")).to_contain_text("2Ki means 2048: type 2048 if you mean it")
    said(page, walk, "2Ki refused")
    assert "2Ki means 2048" in page.locator("#announce").inner_text()
    shot(page, "demo-5-add-existing")
    page.locator("form.change input[name=quantity]").fill("3")
    page.locator("form.change input[name=quantity]").press("Enter")
    expect(page.locator(".flash.ok")).to_contain_text(f"{D} 2 → 3")
    said(page, walk, "saved")

    # 6. What if: six pods of one dongle each, spread over the nodes with room; the hardware
    #    caveat; a misspelled name gets "did you mean" before anything is planned
    page.goto(demo.url + "/plan/")
    page.fill("textarea[name=requests]", f"{D}=1")
    page.fill("input[name=replicas]", "6")
    page.locator("form.plan-form button", has_text="Plan").first.click()
    expect(page.locator(".plan-result h2")).to_contain_text("Fits")
    said(page, walk, "What-if answered")
    expect(page.locator(".plan-result h2")).to_be_focused()
    steps = page.locator(".plan-steps tbody tr")
    expect(steps).not_to_have_count(0)
    assert steps.count() >= 2, "the plan spreads over more than one node"
    expect(page.locator("[data-hardware]").first).to_be_visible()
    expect(page.locator("a[data-plan-link]").first).to_contain_text(f"Set {D} to")
    shot(page, "demo-6-what-if")
    page.fill("textarea[name=requests]", "example.com/dongel=1")
    page.locator("form.plan-form button", has_text="Plan").first.click()
    expect(page.locator("#requests-error")).to_contain_text(f"did you mean {D}?")
    expect(page.locator(".plan-result")).to_have_count(0)

    # 7. Bulk remove preview: per node, the pods that request it and the over-commitment; Apply
    #    is the filled (primary) button
    page.goto(demo.url + "/changes/bulk")
    page.check('input[name="action"][value="remove"]')
    page.fill('input[name="resource"]', D)
    page.fill('input[name="find"]', "demo-node")
    for node in ("demo-node-1", "demo-node-2"):
        page.check(f'input[name="nodes"][value="{node}"]')
    page.click("text=Preview (dry run)")
    impact = page.locator('tr[data-node="demo-node-1"] [data-field="impact"]')
    expect(impact.locator("[data-holder]").first).to_contain_text("dongle-reader")
    expect(impact.locator("[data-over-committed]")).to_contain_text("over-committed by 3")
    expect(page.locator("button.primary", has_text="Apply to 2 nodes")).to_be_visible()
    said(page, walk, "bulk preview")
    shot(page, "demo-7-bulk-preview")

    # 8. History: the changes of this run, with who made them; one JSON audit line each
    page.goto(demo.url + "/history/")
    expect(page.locator("main")).to_contain_text("demo-node-4", timeout=SLOW)
    expect(page.locator("main")).to_contain_text("demo-node-2")
    shot(page, "demo-8-history", full=False)
    assert [p for p in w.problems if "status of 422" not in p] == []  # the refused 2Ki, as it should be

    # 9. Idle GPUs: the notebook on demo-node-7 holds two GPUs idle (the dcgm-exporter stand-in
    #    and Debian's Prometheus, which the demo runs when prometheus is installed); the three on
    #    demo-node-3 are busy
    #    The list follows each usage read (every 10 s in the demo) by its own poll, so the open
    #    page shows the notebook once a read has seen its GPUs scraped
    page.goto(demo.url + "/idle/")
    notebook = page.locator('table.idle tr[data-pod="default/notebook-0"]')
    expect(notebook).to_be_visible(timeout=SLOW)
    expect(notebook.locator('[data-field="devices"]')).to_have_text("2")
    expect(page.locator("table.idle tbody tr")).to_have_count(1)  # the busy GPUs are not idle
    shot(page, "demo-10-idle", full=False)
    page.goto(demo.url + "/nodes/demo-node-3")
    expect(page.locator("#node-gpus tbody tr")).to_have_count(4)
    # the trainer or gpu-eval (whichever the scheduler placed first) holds three of them
    held = page.locator('#node-gpus [data-field="pod"] a.pod')
    expect(held).to_have_count(3)
    assert {t.split("/")[1].split("-")[0] for t in held.all_inner_texts()} <= {"trainer", "gpu"}

    # 10. On a phone: the node page's resources as cards, free in large type
    phone = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    try:
        small = phone.new_page()
        small.goto(demo.url + "/nodes/demo-node-1")
        expect(small.locator(f'table.resources tr[data-resource="{D}"] [data-field="free"]')).to_be_visible()
        shot(small, "demo-9-phone-node", full=False)
    finally:
        phone.close()

    # 11. The walk's pages, on a desktop, a phone and (axe only) in the dark, target sizes
    #     included: every page, and the states only the demo carries (a DRA node, the
    #     over-committed node, a GPU plan each way, pending filtered, Idle GPUs, a GPU node, a pod)
    page.goto(demo.url + "/nodes/demo-node-7")
    pod_path = page.locator("#node-gpus a.pod").first.get_attribute("href") or "/pods/default/notebook-0"
    paths = (
        "/",
        "/heat",
        "/pending/",
        "/workloads/",
        "/devices/",
        "/history/",
        "/changes/bulk",
        "/nodes/demo-node-5",
        "/nodes/demo-node-4",
        "/plan/?requests=example.com%2Fgpu%3D1&replicas=6",
        "/plan/?requests=nvidia.com%2Fgpu%3D2&replicas=3",
        "/pending/?resource=nvidia.com%2Fgpu",
        "/idle/",
        "/nodes/demo-node-7",
        pod_path,
    )
    for width, dark in ((1440, False), (390, False), (1440, True)):
        context = axe_context(browser, width, dark)
        try:
            checked = context.new_page()
            walk.append(f"{width} px{' dark' if dark else ''}:")
            for path in paths:
                checked.goto(demo.url + path)
                found = violations_here(checked, axe)
                wide = checked.evaluate("document.documentElement.scrollWidth")
                tabs = "" if dark else f"  tabs to content {tabs_to_content(checked)}"
                walk.append(f"  {path[:50]:52s} axe {len(found)}  width {wide}/{width}{tabs}")
                assert found == [], (width, dark, path, found)
                assert wide <= width + 1, (width, path, wide)
        finally:
            context.close()
    print("\nthe walk:\n" + "\n".join(walk))

    took = demo.stop()
    print(f"\nthe demo stopped in {took:.1f} s")
    log = demo.out.read_text()
    audit = [line for line in log.splitlines() if '"outcome": "changed"' in line]
    assert len(audit) == 2, audit  # the remove and the dongle change
    assert "Traceback" not in log
