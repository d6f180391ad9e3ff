"""What the browser tests share (not fixtures: those are in conftest.py): a watched page, a
context axe can run in, axe's violations, and where the README's pictures go."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import axe_playwright_python
from playwright.sync_api import Browser, Page, expect

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


# What a screen reader would hear of a page's live regions (role status, alert or log, output,
# aria-live other than off): each change of a region's text, recorded as it happens. A region
# that arrives with text in it counts as said too.
LIVE_RECORDER = """
(() => {
  const LIVE = '[role=status], [role=alert], [role=log], output, [aria-live]:not([aria-live=off])';
  window.__said = [];
  const last = new Map();
  const words = (region) => (region.textContent || '').replace(/\\s+/g, ' ').trim();
  const note = (region) => {
    const text = words(region);
    if (last.get(region) === text) return;
    last.set(region, text);
    if (text) window.__said.push(text);
  };
  const start = () => {
    document.querySelectorAll(LIVE).forEach((r) => last.set(r, words(r)));
    new MutationObserver((changes) => {
      for (const c of changes) {
        const node = c.target.nodeType === 1 ? c.target : c.target.parentElement;
        const regions = new Set();
        const inside = node && node.closest(LIVE);
        if (inside) regions.add(inside);
        for (const added of c.addedNodes) {
          if (added.nodeType !== 1) continue;
          if (added.matches(LIVE)) regions.add(added);
          added.querySelectorAll(LIVE).forEach((r) => regions.add(r));
        }
        regions.forEach(note);
      }
    }).observe(document.documentElement, {subtree: true, childList: true, characterData: true});
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
"""


def record_live_regions(page: Page) -> None:
    """From the page's next load on, record what its live regions say (``said``)."""
    page.add_init_script(LIVE_RECORDER)


def said_since_load(page: Page) -> list[str]:
    return list(page.evaluate("window.__said || []"))


def first_row_top(browser, url: str, width: int, height: int) -> float:
    """Where the overview's first node row (a card on a phone) starts, in px from the top."""
    context = browser.new_context(
        viewport={"width": width, "height": height}, has_touch=width < 600, is_mobile=width < 600
    )
    try:
        page = context.new_page()
        page.goto(url)
        first = page.locator("#grid tbody tr[data-node]").first
        expect(first).to_be_visible()
        box = first.bounding_box()
        assert box is not None
        parts = page.evaluate(
            """() => ['header.top', 'main h1', 'form.filters', '#grid > .strip', '.strip-more',
                      'p.summary', '#grid thead'].map(s => {
                const e = document.querySelector(s); if (!e) return s + ' -';
                const r = e.getBoundingClientRect(); return s + ' ' + Math.round(r.height); })"""
        )
        print(f"\n{width} px: first row at {box['y']:.0f}; heights: {', '.join(parts)}")
        return box["y"]
    finally:
        context.close()
