"""The walk an operator takes, in Chromium on a desktop (1440 x 900) and a phone (390 x 844,
touch): every page and the states an operator meets, each printed with axe's violations, the
page's width against the screen, the Tab presses from load to the page's own content, and where
focus and the live region are after an action (What-if's answer, a refused form, a bulk
preview), and what the page's live regions said while it was read (nothing). Asserted: no
violation, nothing wider than the screen outside a table's own box, the
content within a few presses, What-if's answer on screen and focused, the bulk preview within a
desktop's width."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.pages import axe_context, record_live_regions, said_since_load, violations_here
from tests.browser.test_views import held  # noqa: F401 - two nodes whose dongles pods hold

VIEWPORTS = [pytest.param(1440, 900, id="desktop"), pytest.param(390, 844, id="phone")]


def tabs_to_content(page) -> int:
    """Tab presses from the top of the page until focus is inside <main> (the skip link first)."""
    page.evaluate("document.activeElement && document.activeElement.blur()")
    for presses in range(1, 40):
        page.keyboard.press("Tab")
        if page.evaluate("!!document.activeElement.closest('main')"):
            return presses
        if presses == 1 and page.evaluate("document.activeElement.classList.contains('skip')"):
            page.keyboard.press("Enter")
            if page.evaluate("!!document.activeElement.closest('main')"):
                return presses + 1
    return 40


def report(page, axe: str) -> tuple[list[str], int, int]:
    found = violations_here(page, axe)
    wide = page.evaluate("document.documentElement.scrollWidth")
    return found, wide, tabs_to_content(page)


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
def test_the_walk_an_operator_takes(browser, server, held, axe, width, height):  # noqa: F811
    resource, node, _ = held
    context = axe_context(browser, width)  # 390 x 844 with touch, or 1440 x 900
    page = context.new_page()
    record_live_regions(page)  # what a screen reader hears while a page is only read
    pages = [
        "/",
        "/heat",
        "/pending/",
        "/plan/",
        "/workloads/",
        "/history/",
        "/devices/",
        "/idle/",
        "/changes/bulk",
        f"/nodes/{node}",
        f"/?view=compact&resource={resource}",
    ]
    lines, problems = [], []
    try:
        for path in pages:
            page.goto(server.url + path)
            found, wide, tabs = report(page, axe)
            heard = said_since_load(page)
            lines.append(
                f"{path[:44]:45s} axe {len(found):2d}  width {wide:5d}/{width}  tabs to content {tabs:2d}"
                f"  announced {len(heard)}"
            )
            assert heard == [], (path, heard)  # Tab presses move focus, they say nothing
            problems += [f"{path}: {v}" for v in found]
            assert wide <= width + 1, (path, wide)
            assert tabs <= 8, (path, tabs)
        # What-if: the answer focused and on screen (below the form on every screen size)
        page.goto(server.url + f"/plan/?requests={resource}%3D1&replicas=3")
        answer = page.locator(".plan-result h2")
        expect(answer).to_be_focused()
        box = answer.bounding_box()
        # with room under it for what it heads (it landed at y 875 of 900, its answer off screen)
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height * 0.75, box
        lines.append(f"{'What-if answer':45s} focused, at y {box['y']:.0f} of {height}")
        # a refused form: focus on the field, the refusal said in the live region
        page.goto(server.url + f"/nodes/{node}")
        form = page.locator("form.change").last
        form.locator("input[name=resource]").fill(resource)
        form.locator("input[name=quantity]").fill("1.5")
        form.locator("button[type=submit]").click()
        expect(page.locator("#announce")).to_contain_text("Nothing was changed")
        focus = page.evaluate("document.activeElement.name || document.activeElement.tagName")
        said = page.locator("#announce").inner_text()
        lines.append(f"{'refused quantity':45s} focus on {focus}; said: {said[:60]}")
        assert focus == "quantity"
        # a bulk preview: within the screen's width on a desktop, its buttons apart and large enough
        page.goto(server.url + f"/changes/bulk?find={node[:-2]}&resource={resource}")
        page.fill('input[name="quantity"]', "8")
        page.check(f'input[name="nodes"][value="{node}"]')
        page.click("text=Preview (dry run)")
        expect(page.locator(f'table.outcomes tr[data-node="{node}"]')).to_be_visible()
        expect(page.locator("#announce")).to_contain_text("Preview done")  # its outcome, said
        said = page.locator("#announce").inner_text()
        found, wide, _ = report(page, axe)
        problems += [f"bulk preview: {v}" for v in found]
        cancel = page.locator("#job a", has_text="Cancel").bounding_box()
        lines.append(
            f"{'bulk preview':45s} axe {len(found):2d}  width {wide:5d}/{width}  "
            f"Cancel {cancel['height']:.0f} px high; said: {said}"
        )
        assert wide <= width + 1 and cancel["height"] >= 24
        if width >= 1440:
            table = page.locator("table.outcomes").bounding_box()
            assert table["x"] + table["width"] <= width, table
        print(f"\n{width} x {height}\n" + "\n".join(lines))
        assert problems == []
    finally:
        context.close()
