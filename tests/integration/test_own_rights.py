"""The dashboard started with an account that may not list nodes says which right is missing and
which of the chart's roles grants it, and invites no one to "advertise one" meanwhile."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from tests.helpers import browser, eventually

pytestmark = pytest.mark.kube


def test_an_account_without_the_right_to_list_nodes_is_told_what_grants_it(
    core, control_plane, make_app, uid, tmp_path
):
    account = f"{uid}-norights"[:63]
    core.create_namespaced_service_account("default", {"metadata": {"name": account}})
    request = {"spec": {"expirationSeconds": 3600}}
    token = core.create_namespaced_service_account_token(account, "default", request).status.token
    kubeconfig = tmp_path / "kubeconfig"
    text = control_plane.kubeconfig.read_text()
    kubeconfig.write_text(text.replace("token: admin-token", f"token: {token}"))
    assert f"token: {token}" in kubeconfig.read_text()
    web = browser(make_app(kubeconfig=str(kubeconfig)))

    def refused() -> str:
        page = BeautifulSoup(web.get("/").get_data(as_text=True), "html.parser").get_text(" ", strip=True)
        assert "may not list and watch nodes" in page
        return page

    page = eventually(refused, timeout=30)
    assert "ClusterRole extres-viewer grants it" in page
    assert "refuses the dashboard's reads" in page and "has not answered yet" not in page
    assert "Advertise one" not in page and "No extended resources" not in page
