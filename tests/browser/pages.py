"""What the browser tests share (not fixtures: those are in conftest.py): a watched page, a
context axe can run in, axe's violations, and where the README's pictures go."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import axe_playwright_python
from playwright.sync_api import Browser, Page

from tests.helpers import repo_root

# The README's screenshots are remade only when asked (EXTRES_SCREENSHOTS=1): a test run
# otherwise leaves the checkout as it found it.
DOCS = repo_root() / "docs" if os.environ.get("EXTRES_SCREENSHOTS") == "1" else Path(tempfile.mkdtemp())


class Watched:
    """A page whose console errors, page errors and CSP violations are collected."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.problems: list[str] = []
        page.on("console", lambda m: self.problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.problems.append(str(e)))


def open_page(browser: Browser, js: bool = True, headers: dict[str, str] | None = None) -> Watched:
    context = browser.new_context(
        java_script_enabled=js, viewport={"width": 1366, "height": 800}, extra_http_headers=headers or {}
    )
    return Watched(context.new_page())


AXE = Path(axe_playwright_python.__file__).parent / "axe.min.js"


def axe_context(browser, width: int = 1440, dark: bool = False):
    """A browser context as a phone (below 600 px: touch) or a desktop sees the pages, light or
    dark, that lets axe in past the app's CSP."""
    return browser.new_context(
        viewport={"width": width, "height": 844 if width < 600 else 900},
        bypass_csp=True,
        color_scheme="dark" if dark else "light",
        has_touch=width < 600,
        is_mobile=width < 600,
    )


def violations_here(page, axe: str) -> list[str]:
    """axe's violations on the page as it is now (its context from ``axe_context``)."""
    page.add_script_tag(path=axe)
    # target-size (WCAG 2.2, 2.5.8: 24 px or the spacing exception) is off by default in axe
    found = page.evaluate(
        "async () => (await axe.run(document, {rules: {'target-size': {enabled: true}}})).violations"
    )
    return [f"{v['id']} ({v['impact']}): {v['nodes'][0]['target']} {v['help']}" for v in found]
