"""axe-core (the copy axe-playwright-python bundles, a locked test dependency) runs on every page
in Chromium, injected under the test's own CSP exception (the app's policy allows no injected
script): no violations, target sizes included."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.pages import axe_context, violations_here
from tests.browser.test_views import held  # noqa: F401 - the pages show a workload's pods

PAGES = [
    "/",
    "/heat",
    "/pending/",
    "/plan/",
    "/workloads/",
    "/history/",
    "/devices/",
    "/changes/bulk",
    "/fleet/",
    "/unhealthy/",
    "/gpu-hours/",
]


def violations(browser, url: str, axe: str, width: int = 1440, dark: bool = False) -> list[str]:
    context = axe_context(browser, width, dark)
    try:
        page = context.new_page()
        page.goto(url)
        return violations_here(page, axe)
    finally:
        context.close()


VIEWPORTS = [
    pytest.param(1440, False, id="desktop"),
    pytest.param(390, False, id="phone"),
    pytest.param(1440, True, id="dark"),
]


@pytest.mark.parametrize(("width", "dark"), VIEWPORTS)
@pytest.mark.parametrize("path", PAGES)
def test_no_accessibility_violations(browser, server, held, axe, path, width, dark):  # noqa: F811
    assert violations(browser, server.url + path, axe, width, dark) == []


@pytest.mark.parametrize(("width", "dark"), VIEWPORTS)
def test_no_accessibility_violations_in_the_states_an_operator_meets(browser, server, held, axe, width, dark):  # noqa: F811
    """A node page with pods on it, a compact and a sorted grid, a filtered pending page, a
    What-if answer with its plan, a bulk form that found nodes."""
    resource, node, _ = held
    for path in (
        f"/nodes/{node}",
        "/?view=compact",
        f"/?sort=free:{resource}&order=desc",
        f"/pending/?resource={resource}",
        f"/plan/?requests={resource}%3D3&replicas=5",
        f"/changes/bulk?find={node[:-2]}&resource={resource}",
    ):
        assert violations(browser, server.url + path, axe, width, dark) == [], path


@pytest.mark.parametrize(("width", "dark"), VIEWPORTS)
def test_no_accessibility_violations_through_a_bulk_change(browser, server, held, axe, width, dark):  # noqa: F811
    """The bulk form filled, its preview (per node, who holds it) and the results of the run."""
    resource, node, _ = held
    context = axe_context(browser, width, dark)
    try:
        page = context.new_page()
        page.goto(f"{server.url}/changes/bulk?find={node[:-2]}&resource={resource}")
        page.fill('input[name="quantity"]', "8")  # what node a has: nothing changes there
        page.check(f'input[name="nodes"][value="{node}"]')
        page.click("text=Preview (dry run)")
        expect(page.locator(f'tr[data-node="{node}"]')).to_be_visible()
        assert violations_here(page, axe) == [], "preview"
        page.click("text=Apply to 1 node")
        expect(page.locator("#job")).to_have_attribute("data-done", "true", timeout=30_000)
        assert violations_here(page, axe) == [], "results"
    finally:
        context.close()


def test_no_accessibility_violations_on_the_sign_in_page(browser, token_server, axe):
    assert violations(browser, token_server.url + "/login", axe) == []
    assert violations(browser, token_server.url + "/login", axe, width=390) == []
