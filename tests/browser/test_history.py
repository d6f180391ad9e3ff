"""Back, Forward and Reload after every action, in Chromium: set, add, add-existing (a notice),
a conflict, remove, cancel, a bulk preview refused and one accepted, a bulk apply, and a refused
sign-in. Each lands on a whole page with the right words; none sends a form again (no POST, so
no "Confirm Form Resubmission"), none meets a 405, and Back after a remove is the node page's
own URL with no flash that reads like a failure."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.pages import open_page
from tests.kube_helpers import create_node, kubelet_standin, own_resource


@pytest.fixture
def nodes(core, uid):
    r = own_resource(uid, "h")
    a, b = f"{uid}-a", f"{uid}-b"
    create_node(core, a, {r: "2"}, labels={"suite": uid})
    create_node(core, b, {r: "1"}, labels={"suite": uid})
    kubelet_standin(core, a, b)
    return r, a, b


class Steps:
    """A page whose every Back, Forward and Reload is checked and printed."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.sent: list[tuple[str, str, int]] = []
        self.lines: list[str] = []
        page.on("response", lambda r: self.sent.append((r.request.method, r.url, r.status)))

    def move(self, how: str, action: str, words: str | None = None) -> None:
        """Back, Forward or Reload; then a whole page, nothing re-sent, and ``words`` on it."""
        self.sent.clear()
        getattr(self.page, {"Back": "go_back", "Forward": "go_forward", "Reload": "reload"}[how])()
        self.page.wait_for_load_state("networkidle")
        expect(self.page.locator("main h1")).to_be_visible()
        if words is not None:  # htmx's restore may still be on its way
            expect(self.page.locator("main")).to_contain_text(words)
        text = self.page.locator("main").inner_text()
        assert "Method Not Allowed" not in text, (action, how)
        posts = [s for s in self.sent if s[0] == "POST"]
        refused = [s for s in self.sent if s[2] == 405]
        assert posts == [] and refused == [], (action, how, posts, refused)
        path = re.sub(r"^https?://[^/]+", "", self.page.url)
        self.lines.append(f"  {how:8s} after {action:18s} {path[:70]}")

    def around(self, action: str, here: str, before: str | None = None) -> None:
        """Back (to ``before``'s words), Forward and Reload (to ``here``'s), twice over."""
        self.move("Reload", action, here)
        self.move("Back", action, before)
        self.move("Reload", action, before)
        self.move("Forward", action, here)
        self.move("Reload", action, here)


def test_back_forward_and_reload_after_every_action(browser, server, nodes, core, uid):
    r, a, b = nodes
    w = open_page(browser)
    page = w.page
    steps = Steps(page)

    page.goto(server.url + f"/nodes/{a}")  # set, in its row
    row = page.locator(f'table.resources tr[data-resource="{r}"]')
    row.locator("input[name=quantity]").fill("5")
    row.locator("button").click()
    expect(page.locator(".flash.ok")).to_contain_text("→ 5")
    steps.around("set", a)

    added = own_resource(uid, "q")  # add
    form = page.locator("form.change").last
    form.locator("input[name=resource]").fill(added)
    form.locator("input[name=quantity]").fill("2")
    form.locator("input[name=quantity]").press("Enter")
    expect(page.locator(".flash.ok")).to_contain_text(added)
    steps.around("add", added)

    form = page.locator("form.change").last  # add a name it already has: a notice, nothing written
    form.locator("input[name=resource]").fill(r)
    form.locator("input[name=quantity]").fill("6")
    form.locator("input[name=quantity]").press("Enter")
    expect(page.locator("[data-notice]")).to_contain_text("already advertises")
    assert "/resources/new?" in page.url and "check=1" in page.url
    steps.around("add-existing", "already advertises")

    page.goto(server.url + f"/changes/nodes/{a}/resources/new?resource={r}")  # a conflict
    page.fill("input[name=quantity]", "8")
    path = f"/status/capacity/{r.replace('/', '~1')}"
    core.patch_node_status(a, [{"op": "replace", "path": path, "value": "7"}])  # a colleague's change
    page.locator("button.primary").click()
    expect(page.locator("#expected-error")).to_contain_text("you saw 5, it is now 7")
    steps.around("conflict", "it is now 7")

    page.goto(server.url + f"/nodes/{a}")  # cancel a remove
    page.locator(f'tr[data-resource="{added}"] a', has_text="Remove").click()
    expect(page.locator("h1")).to_contain_text(f"Remove {added}")
    page.locator("a", has_text="Cancel").click()
    expect(page.locator("main h1")).to_have_text(a)
    steps.around("cancel", a, f"Remove {added}")

    page.goto(server.url + f"/nodes/{a}")  # remove: Back is the node page's own URL
    page.locator(f'tr[data-resource="{added}"] a', has_text="Remove").click()
    page.locator("button.danger").click()
    expect(page.locator(".flash.ok")).to_contain_text(f"{added} 2 → absent")
    steps.move("Back", "remove", a)
    assert page.url.endswith(f"/nodes/{a}"), page.url
    assert page.locator("[data-flash]").count() == 0 and "nothing" not in page.locator("main").inner_text()
    steps.move("Forward", "remove", a)
    steps.move("Reload", "remove", a)

    page.goto(server.url + f"/changes/bulk?find={uid}&resource={r}")  # a bulk preview refused
    page.fill('input[name="quantity"]', "0.5")
    page.check(f'input[name="nodes"][value="{b}"]')
    page.click("text=Preview (dry run)")
    expect(page.locator(".flash.error")).to_contain_text("Nothing was changed")
    steps.around("bulk refused", "Nothing was changed")

    page.goto(server.url + f"/changes/bulk?find={uid}&resource={r}")  # a preview, then apply
    page.fill('input[name="quantity"]', "3")
    page.check(f'input[name="nodes"][value="{b}"]')
    page.click("text=Preview (dry run)")
    expect(page.locator(f'tr[data-node="{b}"] .result')).to_have_text("would change")
    expect(page.locator("#announce")).to_have_text("Preview done: 1 ok, 0 failed.")  # said, once done
    steps.around("bulk preview", "would change")
    page.click("text=Apply to 1 node")
    expect(page.locator("main h1")).to_have_text("Results")
    expect(page.locator("#job")).to_have_attribute("data-done", "true", timeout=30_000)
    expect(page.locator("#announce")).to_have_text("Change done: 1 ok, 0 failed.")
    steps.around("bulk apply", "Results", "would change")
    print("\n" + "\n".join(steps.lines))
    assert [p for p in w.problems if "status of 4" not in p] == []


def test_back_forward_and_reload_after_a_refused_sign_in(browser, token_server):
    w = open_page(browser)
    page = w.page
    steps = Steps(page)
    page.goto(token_server.url + "/login?next=/pending/")
    page.fill("input[name=token]", "no-such-token")
    page.click("button[type=submit]")
    expect(page.locator("input[name=token]")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#announce")).to_contain_text("Not signed in")
    assert page.evaluate("document.activeElement.name") == "token"  # focus on the field to fix
    steps.around("sign-in refused", "Sign in")
    print("\n" + "\n".join(steps.lines))


def test_typing_a_filter_adds_one_history_entry(browser, server, nodes, uid):
    """Typing a node name, then leaving the box: one request, one entry (the box's change on
    leaving it asked and pushed a second one)."""
    w = open_page(browser)
    page = w.page
    try:
        page.goto(server.url + "/")
        before = page.evaluate("history.length")
        asked: list[str] = []
        page.on("request", lambda r: asked.append(r.url) if "q=" in r.url and "since=" not in r.url else None)
        page.fill('form.filters input[name="q"]', uid)
        expect(page.locator("table.grid tbody tr[data-node]").first).to_have_attribute(
            "data-node", re.compile(uid)
        )
        page.keyboard.press("Tab")  # leave the box: its change event
        page.wait_for_timeout(800)
        assert page.evaluate("history.length") == before + 1
        assert len(asked) == 1, asked
        assert w.problems == []
    finally:
        w.page.context.close()


def test_back_onto_a_notice_after_saving_says_it_is_done(browser, server, nodes):
    """Add a name the node has (a notice: "Save to change it to 6"), Save, then Back onto the
    notice: it says the node is at 6 as asked, with no prompt to save what is saved."""
    r, a, _ = nodes
    w = open_page(browser)
    page = w.page
    steps = Steps(page)
    try:
        page.goto(server.url + f"/nodes/{a}")
        form = page.locator("form.change").last
        form.locator("input[name=resource]").fill(r)
        form.locator("input[name=quantity]").fill("6")
        form.locator("input[name=quantity]").press("Enter")
        expect(page.locator("[data-notice]")).to_contain_text("Save to change it to 6")
        page.locator("button.primary").click()
        expect(page.locator(".flash.ok")).to_contain_text("→ 6")
        steps.move("Back", "saving a notice", "nothing to change")
        expect(page.locator("[data-notice]")).to_have_text(
            f"{r} on {a} is 6 now, as this form asks: nothing to change."
        )
        assert "Save to change" not in page.locator("main").inner_text()
        steps.move("Forward", "saving a notice", a)
        assert w.problems == []
    finally:
        page.context.close()
