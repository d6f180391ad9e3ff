"""axe-core (the copy axe-playwright-python bundles, a locked test dependency) runs on every page
in Chromium, injected under the test's own CSP exception (the app's policy allows no injected
script): no violations."""

from __future__ import annotations

from pathlib import Path

import axe_playwright_python
import pytest

from tests.browser.test_views import held  # noqa: F401 - the pages show a workload's pods

AXE = Path(axe_playwright_python.__file__).parent / "axe.min.js"
PAGES = ["/", "/heat", "/pending/", "/plan/", "/workloads/", "/history/", "/devices/", "/changes/bulk"]


@pytest.fixture(scope="module")
def axe() -> str:
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: axe-playwright-python is in requirements-dev.lock")
    return str(AXE)


def violations(browser, url: str, axe: str, width: int = 1440) -> list[str]:
    context = browser.new_context(viewport={"width": width, "height": 900}, bypass_csp=True)
    try:
        page = context.new_page()
        page.goto(url)
        page.add_script_tag(path=axe)
        found = page.evaluate("async () => (await axe.run(document)).violations")
        return [f"{v['id']} ({v['impact']}): {v['nodes'][0]['target']} {v['help']}" for v in found]
    finally:
        context.close()


@pytest.mark.parametrize("path", PAGES)
def test_no_accessibility_violations(browser, server, held, axe, path):  # noqa: F811
    assert violations(browser, server.url + path, axe) == []


def test_no_accessibility_violations_on_a_node_page_and_a_phone(browser, server, held, axe):  # noqa: F811
    _, node, _ = held
    assert violations(browser, f"{server.url}/nodes/{node}", axe) == []
    assert violations(browser, server.url + "/", axe, width=390) == []


def test_no_accessibility_violations_on_the_sign_in_page(browser, token_server, axe):
    assert violations(browser, token_server.url + "/login", axe) == []
