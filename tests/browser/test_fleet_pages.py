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
