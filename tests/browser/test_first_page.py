"""The first useful page while pods arrive, in Chromium, over the real API server: the pods'
list is held after its first page (one pod a page; the test holds the app's request for the
second page, as a slow API server would), so the dashboard shows what nodes offer with
requested and free still counting and no form; let go, the same open page turns complete by
itself (its live region's poll) and offers the forms again."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from werkzeug.serving import make_server

from app import create_app
from app.kube.api.listing import Requests
from app.web.process import of as process_of
from extres_demo import testenv
from tests.browser.pages import axe_context, open_page, violations_here
from tests.helpers import eventually, started
from tests.kube_helpers import create_node, create_pod, ready

D = "example.com/dongle"


class HeldPods:
    """The app's requests for the pods' list past its first page wait until ``release``."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.held = threading.Event()  # a request is waiting
        self._get = Requests.get

    def get(self, requests: Requests, kind: str, query: dict[str, Any], timeout: Any) -> Any:
        if kind == "pods" and "continue" in query:
            self.held.set()
            self.released.wait(120)
        return self._get(requests, kind, query, timeout)


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeldPods]:
    pods = HeldPods()
    monkeypatch.setattr(Requests, "get", lambda self, *a: pods.get(self, *a))
    yield pods
    pods.released.set()


@pytest.fixture
def fresh_app(control_plane: testenv.ControlPlane, held: HeldPods) -> Iterator[tuple[str, Any]]:
    """A fresh dashboard, served in this process, listing in pages of one object; its address and
    the app, whose clusters the test starts once its pods are there (as a worker would start)."""
    app = create_app(
        {
            "kubeconfig": str(control_plane.kubeconfig),
            "in_cluster": "false",
            "read_only": False,
            "cookie_secure": False,
            "history_store": "off",
            "list_page_size": 1,
            "stream_lists": False,
        }
    )
    server = make_server("127.0.0.1", testenv.free_port(), app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", app
    held.released.set()  # a failed test lets the list go before the app is closed
    server.shutdown()
    process_of(app).local.stop()


def test_the_first_page_shows_what_nodes_offer_while_pods_count_then_turns_complete(
    browser: Any, control_plane: Any, core: Any, uid: str, held: HeldPods, fresh_app: Any, axe: str
) -> None:
    fresh_app, app = fresh_app
    node = f"{uid}-n"
    create_node(core, node, {D: "4"})
    ready(core, node)
    for i in range(3):
        create_pod(core, f"{uid}-p{i}", node, {D: "1"})
    w = open_page(browser)
    page = w.page
    started(app)  # the worker's start: the pods' list is held after its first page
    assert page.request.get(f"{fresh_app}/readyz").status == 503
    assert held.held.wait(60), "the pods' list never asked for its second page"
    page.goto(f"{fresh_app}/nodes/{node}")
    row = page.locator(f'tr[data-resource="{D}"]')
    assert row.locator('[data-field="capacity"]').inner_text() == "4"
    assert row.locator('[data-field="requested"]').inner_text().startswith("≥")
    assert "counted so far" in page.locator("[data-counting]").inner_text()
    assert page.locator("form[method=post]").count() == 0 and page.locator("#add").count() == 0
    assert page.request.get(f"{fresh_app}/readyz").status == 503  # ready means complete

    page.goto(f"{fresh_app}/?q={node}")  # the cluster may hold more than a page of nodes
    cell = page.locator(f'tr[data-node="{node}"] [data-field="free"]')
    assert cell.inner_text().startswith("≤")
    for width in (1440, 390):  # the counting state, on a desktop and a phone: axe finds nothing
        context = axe_context(browser, width)
        try:
            seen = context.new_page()
            for path in (f"/?q={node}", f"/nodes/{node}", "/pending/", "/idle/"):
                seen.goto(fresh_app + path)
                assert seen.locator("[data-counting], [data-until-counted]").count(), path
                assert violations_here(seen, axe) == [], (width, path)
        finally:
            context.close()
    held.released.set()
    # the open page's poll (every 5 s) brings the complete numbers and takes the banner away
    page.locator("[data-counting]").wait_for(state="detached", timeout=30_000)
    assert cell.inner_text() == "1"
    assert page.locator(f'tr[data-node="{node}"] [data-field="requested"]').inner_text() == "3"
    assert eventually(lambda: page.request.get(f"{fresh_app}/readyz").status == 200)
    page.goto(f"{fresh_app}/nodes/{node}")
    assert page.locator("#add").count() == 1
    assert not w.problems, w.problems
