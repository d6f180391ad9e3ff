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


def violations(browser, url: str, axe: str, width: int = 1440, dark: bool = False) -> list[str]:
    context = browser.new_context(
        viewport={"width": width, "height": 844 if width < 600 else 900},
        bypass_csp=True,
        color_scheme="dark" if dark else "light",
        has_touch=width < 600,
        is_mobile=width < 600,
    )
    try:
        page = context.new_page()
        page.goto(url)
        page.add_script_tag(path=axe)
        found = page.evaluate("async () => (await axe.run(document)).violations")
        return [f"{v['id']} ({v['impact']}): {v['nodes'][0]['target']} {v['help']}" for v in found]
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


def test_no_accessibility_violations_on_the_sign_in_page(browser, token_server, axe):
    assert violations(browser, token_server.url + "/login", axe) == []
    assert violations(browser, token_server.url + "/login", axe, width=390) == []
