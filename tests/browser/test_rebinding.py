"""DNS rebinding, in Chromium: a page on another site whose name is re-pointed at 127.0.0.1 reaches
a dashboard on loopback under that site's name. The stand-in for the attacker's DNS is Chromium's
own resolver rule (``rebind.attacker.example`` -> 127.0.0.1), so the browser sends the attacker's
name as the Host and the Origin, as it would after the rebind: the dashboard (gunicorn, writes on)
answers 403 to the page, to its reads and to its write, and the node is unchanged; the same
dashboard under 127.0.0.1 answers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser

from tests.browser.conftest import CHROMIUM
from tests.kube_helpers import create_node

pytestmark = [pytest.mark.kube, pytest.mark.browser]
REBOUND = "rebind.attacker.example"


@pytest.fixture(scope="module")
def rebinding_browser(browser: Browser) -> Iterator[Browser]:
    """A second Chromium of the session's Playwright, resolving the attacker's name to loopback."""
    b = browser.browser_type.launch(
        executable_path=CHROMIUM,
        headless=True,
        args=["--no-sandbox", "--disable-gpu", f"--host-resolver-rules=MAP {REBOUND} 127.0.0.1"],
    )
    yield b
    b.close()


def test_a_rebound_page_can_neither_read_nor_change_a_dashboard_on_loopback(
    rebinding_browser, server, core, uid
):
    create_node(core, uid, {"example.com/dongle": "2"})
    page = rebinding_browser.new_page()
    try:
        answer = page.goto(f"http://{REBOUND}:{server.port}/")
        assert answer is not None and answer.status == 403
        assert "not served under that host name" in page.content()
        # the attacker's script, same-origin with what it rebound: reads and a write
        statuses = page.evaluate(
            """async ([node]) => {
                const read = await fetch('/export.json');
                const write = await fetch('/changes/nodes/' + node + '/resources', {method: 'POST',
                    headers: {'Content-Type': 'application/x-www-form-urlencoded'},
                    body: 'resource=example.com%2Frebound&quantity=3'});
                return [read.status, write.status];
            }""",
            [uid],
        )
        assert statuses == [403, 403]
        assert "example.com/rebound" not in (core.read_node(uid).status.capacity or {})
        answer = page.goto(f"{server.url}/nodes/{uid}")  # under its own name it answers
        assert answer is not None and answer.status == 200
    finally:
        page.close()
