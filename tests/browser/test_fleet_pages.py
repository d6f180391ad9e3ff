"""The Fleet page served by gunicorn with members read from EXTRES_CLUSTERS_DIR, as the chart
mounts them: one that answers (the test plane again, under another name, with inline
credentials), one whose server does not answer, one refused (the plane's own kubeconfig names a
CA file). In Chromium: every state on the page, a member's pages under /c/<name>/, and axe at
three viewports on both."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from extres_demo import testenv
from tests.browser.pages import axe_context, violations_here
from tests.serving import Server


def inline(plane: testenv.ControlPlane, server: str) -> str:
    ca = base64.b64encode((plane.state_dir / "certs" / "apiserver.crt").read_bytes()).decode()
    return json.dumps(
        {
            "clusters": [{"name": "x", "cluster": {"server": server, "certificate-authority-data": ca}}],
            "users": [{"name": "x", "user": {"token": "admin-token"}}],
            "contexts": [{"name": "x", "context": {"cluster": "x", "user": "x"}}],
            "current-context": "x",
        }
    )


@pytest.fixture(scope="module")
def fleet_server(control_plane: testenv.ControlPlane, tmp_path_factory) -> Iterator[Server]:
    members: Path = tmp_path_factory.mktemp("members")
    (members / "twin").write_text(inline(control_plane, control_plane.server))
    (members / "gone").write_text(inline(control_plane, f"https://127.0.0.1:{testenv.free_port()}"))
    (members / "filed").write_text(Path(control_plane.kubeconfig).read_text())  # a CA file path
    s = Server(
        control_plane,
        EXTRES_CLUSTERS_DIR=str(members),
        EXTRES_CLUSTERS_LOOPBACK="true",
        EXTRES_CLUSTER_NAME="home",
    )
    yield s
    s.stop()


@pytest.mark.parametrize(
    ("width", "dark"), [(1440, False), (390, False), (1440, True)], ids=["desktop", "phone", "dark"]
)
def test_the_fleet_page_names_every_state_and_passes_axe(browser, fleet_server, axe, width, dark):
    context = axe_context(browser, width, dark)
    try:
        page = context.new_page()
        page.goto(fleet_server.url + "/fleet/")
        page.wait_for_function(
            "() => document.querySelector('tr[data-cluster=\"gone\"]')?.dataset.state === 'unreachable'"
            " && document.querySelector('tr[data-cluster=\"twin\"]')?.dataset.state === 'live'",
            timeout=60_000,
        )
        page.reload()
        states = page.eval_on_selector_all(
            "table.clusters tbody tr", "rows => rows.map(r => [r.dataset.cluster, r.dataset.state])"
        )
        assert states == [["home", "live"], ["gone", "unreachable"], ["twin", "live"], ["filed", "refused"]]
        assert "file path" in page.inner_text('tr[data-cluster="filed"]')
        assert violations_here(page, axe) == []
        page.goto(fleet_server.url + "/c/twin/")
        assert page.inner_text("[data-cluster-shown]").strip().endswith("twin")
        assert violations_here(page, axe) == []
    finally:
        context.close()


@pytest.fixture(scope="module")
def fleet_token_server(
    control_plane: testenv.ControlPlane, chart_roles: None, tmp_path_factory
) -> Iterator[Server]:
    """Token mode, the chart's roles bound to the test tokens' groups (reads need them)."""
    members: Path = tmp_path_factory.mktemp("token-members")
    (members / "twin").write_text(inline(control_plane, control_plane.server))
    s = Server(
        control_plane,
        EXTRES_CLUSTERS_DIR=str(members),
        EXTRES_CLUSTERS_LOOPBACK="true",
        EXTRES_CLUSTER_NAME="home",
        EXTRES_AUTH_MODE="token",
    )
    yield s
    s.stop()


def sign_in(page, token: str) -> None:
    """As a person would: the boosted form, then a whole-page navigation to where it leads."""
    page.fill('input[name="token"]', token)
    with page.expect_navigation(wait_until="load"):
        page.click('form.change button[type="submit"]')


def test_token_mode_signs_in_per_cluster_each_cookie_sent_under_its_own_path(
    browser, fleet_token_server, axe, core, uid
):
    """Chromium keeps a member's session in a cookie of its own whose Path is /c/twin/: signed in
    at home, the member still asks for its own sign-in; signed in there too, each cluster's pages
    open, the Fleet page links the member's sign-in, and each sign-in form passes axe."""
    from tests.kube_helpers import create_node

    create_node(core, f"{uid}-n", {"example.com/dongle": "3"})  # a figure to add up
    context = axe_context(browser, 1440, False)
    try:
        page = context.new_page()
        page.goto(fleet_token_server.url + "/")
        assert "/login" in page.url
        sign_in(page, "viewer-token")
        assert page.url == fleet_token_server.url + "/", page.inner_text("main")[:600]
        page.goto(fleet_token_server.url + "/fleet/")  # twin asked from its path, not yet signed in there
        page.wait_for_timeout(1500)
        assert page.url == fleet_token_server.url + "/fleet/"  # its sign-in not followed: the page stays
        assert page.locator("#apart-twin a[data-sign-in]").get_attribute("href") == "/c/twin/login"
        page.goto(fleet_token_server.url + "/c/twin/")
        assert page.url == fleet_token_server.url + "/c/twin/login?next=/c/twin/"
        assert "of cluster twin" in page.inner_text("h1")
        assert violations_here(page, axe) == []
        sign_in(page, "viewer-token")
        assert page.url == fleet_token_server.url + "/c/twin/"
        assert page.inner_text("[data-cluster-shown]").strip().endswith("twin")
        cookies = {(c["name"], c["path"], c["httpOnly"], c["sameSite"]) for c in context.cookies()}
        assert cookies == {
            ("extres_session", "/", True, "Strict"),
            ("extres_member", "/c/twin/", True, "Strict"),
        }
        page.goto(fleet_token_server.url + "/fleet/")
        page.wait_for_selector('#apart-twin [data-apart-state="live"]', timeout=15_000)  # with twin's cookie
        assert page.locator("#apart-twin a[data-sign-in]").count() == 0
        # the clusters signed in to, added up in the page: home's and twin's figures together
        page.wait_for_function(
            "document.querySelector('[data-signed-in-clusters]').textContent === 'home, twin'", timeout=15_000
        )
        assert page.locator("#signed-in-totals").is_visible()
        capacity = (
            "rs => rs.map(r => [r.dataset.resource, +r.querySelector('[data-field=capacity]').textContent])"
        )
        home = dict(page.eval_on_selector_all('#fleet tr[data-cluster="home"][data-resource]', capacity))
        twin = dict(page.eval_on_selector_all('#apart-twin tr[data-cluster="twin"][data-resource]', capacity))
        added = dict(
            page.eval_on_selector_all(
                "#signed-in-totals tr[data-signed-in-total]",
                capacity.replace("dataset.resource", "dataset.signedInTotal"),
            )
        )
        assert home and added == {r: home.get(r, 0) + twin.get(r, 0) for r in {*home, *twin}}
        row = page.locator('table.clusters tr[data-cluster="twin"]')
        assert row.get_attribute("data-state") == "not shown"
        assert row.locator("a[data-sign-in]").get_attribute("href") == "/c/twin/login"
        assert violations_here(page, axe) == []
        page.goto(fleet_token_server.url + "/c/twin/fleet/")
        assert page.locator('table.clusters tr[data-cluster="twin"]').get_attribute("data-state") == "live"
    finally:
        context.close()
        core.delete_node(f"{uid}-n")


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (390, 844)])
def test_the_fleets_free_gpus_are_a_click_from_the_overview_on_the_first_screen(
    browser, fleet_server, core, uid, width, height
):
    """The fifth of an admin's questions (tests/browser/test_demo_story.py has the others): the
    fleet's free GPUs, one click from the overview, on the Fleet page's first screen."""
    from playwright.sync_api import expect

    from tests.kube_helpers import create_node

    create_node(core, f"{uid}-gpu", {"nvidia.com/gpu": "8"})
    context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=width < 600)
    try:
        page = context.new_page()
        page.goto(fleet_server.url + "/")
        page.locator('nav a[href="/fleet/"]').click()
        page.wait_for_load_state("load")
        free = page.locator('[data-fleet-free-resource="nvidia.com/gpu"] [data-field="free"]')
        expect(free).to_be_visible(timeout=30_000)
        box = free.bounding_box()
        print(f"\n{width}x{height}: the fleet's free GPUs ({free.inner_text()}) at y = {box['y']:.0f}")
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height
    finally:
        context.close()
        core.delete_node(f"{uid}-gpu")
