"""/readyz answers anyone, so it names no object and repeats nothing the API server said; a 403
page says what right is missing in the app's own words."""

from __future__ import annotations

from app.kube.api.freshness import Freshness
from app.kube.wire.reading import Unreadable

SAID = "Get https://10.0.0.1:6443/api/v1/pods: dial tcp 10.0.0.1:6443: connect: connection refused"


def test_readyz_says_why_not_ready_without_the_api_servers_words(client, cluster):
    cluster.fresh = Freshness(synced=True, stale=True, age_seconds=12.0, error=SAID)
    resp = client.get("/readyz")
    assert resp.status_code == 503
    assert resp.get_data(as_text=True) == "not ready: the API server cannot be reached or is not ready\n"
    cluster.fresh = Freshness(synced=False, stale=True, age_seconds=None, error=SAID)
    assert client.get("/readyz").get_data(as_text=True) == "not ready: the cache has not synced\n"


def test_readyz_counts_unreadable_objects_without_naming_them(client, cluster):
    cluster.fresh = Freshness(
        synced=True, stale=False, age_seconds=0.0, error=None, unreadable=(("pods", 1),)
    )
    cluster.unreadable = [Unreadable("pods", "secret-team", "db-0", "7", "Expected `str`")]
    text = client.get("/readyz").get_data(as_text=True)
    assert text == "ok\n1 pod could not be read (left out; the log names them)\n"
    page = client.get("/").get_data(as_text=True)
    assert "secret-team/db-0: Expected `str`" in page  # a signed-in reader's page names it


def test_a_403_page_names_the_missing_right_in_the_apps_words(make_app, cluster):
    from tests.helpers import browser

    cluster.access.denied = {("list", "pods")}
    resp = browser(make_app(auth_mode="impersonate", trusted_proxies=("127.0.0.1",))).get(
        "/", headers={"X-Forwarded-User": "alice"}, environ_base={"REMOTE_ADDR": "127.0.0.1"}
    )
    assert resp.status_code == 403
    assert "alice may not list pods, which this page shows." in resp.get_data(as_text=True)
