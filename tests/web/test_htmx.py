"""The htmx plumbing every page shares (app/web/hx.py)."""

from __future__ import annotations

from bs4 import BeautifulSoup
from flask import Blueprint

from app.web.hx import POLL_MARK
from tests.helpers import browser

POLL = {"HX-Request": "true", "HX-Target": "grid"}


def test_a_poll_whose_session_ended_navigates_to_sign_in_instead_of_swapping_it_in(make_app):
    web = browser(make_app(auth_mode="token"))
    poll = web.get("/?page=2", headers=POLL)
    assert poll.status_code == 204 and poll.get_data() == b""
    assert poll.headers["HX-Redirect"].startswith("/login?next=")
    page = web.get("/?page=2")  # the same without htmx: an ordinary redirect
    assert page.status_code == 302 and page.headers["Location"].startswith("/login?next=")


def test_an_error_answering_a_fragment_request_replaces_the_body_not_the_fragment(client):
    resp = client.get("/nodes/nope", headers={"HX-Request": "true", "HX-Target": "grid"})
    assert resp.status_code == 404
    assert resp.headers["HX-Retarget"] == "body" and resp.headers["HX-Reswap"] == "innerHTML"
    plain = client.get("/nodes/nope")
    assert plain.status_code == 404 and "HX-Retarget" not in plain.headers


def test_a_page_without_declared_read_rights_is_not_served(app):
    plain = Blueprint("undeclared", __name__)
    plain.add_url_rule("/undeclared", "show", lambda: "secret")
    app.register_blueprint(plain)  # after start-up, where init_app cannot see it
    resp = browser(app).get("/undeclared")
    assert resp.status_code == 403 and b"secret" not in resp.get_data()


def test_every_route_belongs_to_a_page_that_declares_its_read_rights(app):
    from app.web.surface import Page

    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        blueprint = app.blueprints[rule.endpoint.split(".")[0]]
        assert isinstance(blueprint, Page), rule


def test_a_wrong_method_is_405_before_any_csrf_check(client):
    for method, url in (("PUT", "/"), ("DELETE", "/pending/"), ("POST", "/")):
        resp = client.open(url, method=method, csrf=False)
        assert resp.status_code == 405, (method, url, resp.status_code)
        assert "GET" in resp.headers["Allow"] and "POST" not in resp.headers["Allow"], resp.headers
        assert "camera=()" in resp.headers["Permissions-Policy"]
    assert client.get("/no/such/page").status_code == 404


def test_every_refused_write_is_audited_with_the_request_id_it_answers_with(client, caplog):
    import logging

    with caplog.at_level(logging.WARNING, logger="extres.audit"):
        resp = client.post("/changes/bulk/preview", data={"action": "set"}, csrf=False)
    assert resp.status_code == 400
    rid = resp.headers["X-Request-Id"]
    [line] = [r.audit for r in caplog.records if r.name == "extres.audit"]
    assert line["outcome"] == "refused" and line["reason"] == "no valid CSRF token"
    assert line["request_id"] == rid and line["path"] == "/changes/bulk/preview"
    assert line["status"] == 400 and line["client"] == "127.0.0.1"
    assert f'data-request-id="{rid}"' in resp.get_data(as_text=True)
    # a request id is taken only from a trusted proxy: the test client's address is none
    sent = client.get("/", headers={"X-Request-Id": "proxy-abc.123"})
    assert sent.headers["X-Request-Id"] != "proxy-abc.123" and len(sent.headers["X-Request-Id"]) == 16


def poll_url(html: str, region: str) -> str:
    from bs4 import BeautifulSoup

    return BeautifulSoup(html, "html.parser").select_one(f"#{region}")["hx-get"]


def test_a_poll_of_an_unchanged_region_answers_204_and_a_change_brings_it_again(client, cluster):
    cluster.node("n1", {"example.com/dongle": "2"})
    page = client.get("/").get_data(as_text=True)
    url = poll_url(page, "grid")  # the page carries its region's token: the first poll is a no-op
    assert "since=" in url and POLL_MARK not in url
    again = client.get(url, headers=POLL)
    assert again.status_code == 204 and again.get_data() == b""
    cluster.node("n1", {"example.com/dongle": "3"})  # a change a reader sees
    changed = client.get(url, headers=POLL)
    assert changed.status_code == 200 and poll_url(changed.get_data(as_text=True), "grid") != url


def test_the_pending_list_polls_with_its_own_token(client, cluster):
    cluster.node("n1", {"example.com/dongle": "1"})
    page = client.get("/pending/").get_data(as_text=True)
    head = {"HX-Request": "true", "HX-Target": "pending-list"}
    url = poll_url(page, "pending-list")
    assert client.get(url, headers=head).status_code == 204
    cluster.pod(
        "waiting",
        None,
        {"example.com/dongle": "2"},
        message="0/1 nodes are available: 1 Insufficient example.com/dongle.",
    )
    assert client.get(url, headers=head).status_code == 200


def test_what_a_poll_updates_beside_its_region_is_never_inside_it(client, cluster):
    """A morph matches the region's children in order; an out-of-band element taken out from
    inside would leave a gap that shifts every row after it (and rebuilds them)."""
    from bs4 import BeautifulSoup

    cluster.node("n1", {"example.com/dongle": "2"})
    for url, region in (("/", "grid"), ("/pending/", "pending-list"), ("/nodes/n1", "node")):
        html = client.get(url, headers={"HX-Request": "true", "HX-Target": region}).get_data(as_text=True)
        soup = BeautifulSoup(html, "html.parser")
        assert soup.select_one(f"#{region}") is not None
        assert soup.select(f"#{region} [hx-swap-oob]") == [], url


def test_a_node_whose_name_reads_like_the_poll_mark_keeps_its_name(client, cluster):
    cluster.node("poll-token", {"example.com/dongle": "2"})
    page = client.get("/").get_data(as_text=True)
    assert 'data-node="poll-token"' in page and "since=poll-token" not in page
    cluster.node("n2", {"example.com/dongle": "1"})  # a change: the poll brings the fragment
    fragment = client.get(poll_url(page, "grid"), headers=POLL).get_data(as_text=True)
    assert 'data-node="poll-token"' in fragment and "since=poll-token" not in fragment


def test_each_changed_fragment_brings_the_navs_pending_count_beside_it(client, cluster):
    from bs4 import BeautifulSoup

    cluster.node("n1", {"example.com/dongle": "1"})
    page = client.get("/").get_data(as_text=True)
    assert BeautifulSoup(page, "html.parser").select_one("#pending-badge").has_attr("hidden")
    message = "0/1 nodes are available: 1 Insufficient example.com/dongle."
    for n, (region, start) in enumerate(
        (("grid", "/"), ("node", "/nodes/n1"), ("pending-list", "/pending/"))
    ):
        url = poll_url(client.get(start).get_data(as_text=True), region)
        cluster.pod(f"p{n}", None, {"example.com/dongle": "2"}, message=message)  # one more waits
        cluster.node("n1", {"example.com/dongle": str(2 + n)})  # and the region changes
        html = client.get(url, headers={"HX-Request": "true", "HX-Target": region}).get_data(as_text=True)
        badge = BeautifulSoup(html, "html.parser").select_one("#pending-badge[hx-swap-oob]")
        assert badge is not None and badge.get_text() == str(n + 1) and not badge.has_attr("hidden"), region


RESTORE = {"HX-Request": "true", "HX-History-Restore-Request": "true", "HX-Current-URL": "https://localhost/"}


def test_back_to_a_page_htmx_no_longer_holds_gets_a_whole_page_never_an_empty_answer(client, cluster):
    """Back after a remove: htmx asks the confirmation's URL again as a history restore; the
    resource is gone, so it is redirected as a browser is (303 to the node page, whose flash says
    so once), never a 204 whose empty body htmx would swap in as a blank page."""
    cluster.node("n1", {"example.com/dongle": "2"})
    url = "/changes/nodes/n1/resources/remove?resource=example.com/other"
    restored = client.get(url, headers=RESTORE)
    assert restored.status_code == 303 and restored.headers["Location"] == "/nodes/n1"
    assert client.get(url).status_code == 303  # Reload while the restore is on its way: said again
    page = client.get("/nodes/n1", headers=RESTORE)
    assert page.status_code == 200 and b"<html" in page.get_data()  # the page, not a fragment
    assert page.get_data(as_text=True).count("nothing is left to remove") == 1  # the same words, once
    assert b"nothing is left to remove" not in client.get("/nodes/n1").get_data()  # shown once, then gone
    fragment = client.get(url, headers=POLL)  # a fragment request still navigates through htmx
    assert fragment.status_code == 204 and fragment.headers["HX-Redirect"] == "/nodes/n1"


def test_a_download_link_is_never_boosted(client, cluster):
    """Links and forms inside live regions are boosted (they swap the page); a CSV or JSON
    export among them would be swapped in as a page: each says hx-boost="false"."""
    cluster.node("n1", {"example.com/dongle": "2"})
    cluster.pod("a", "n1", {"example.com/dongle": "1"})
    for url in ("/", "/workloads/"):
        html = BeautifulSoup(client.get(url).get_data(as_text=True), "html.parser")
        exports = [
            a for a in html.select("main a[href]") if a["href"].split("?")[0].endswith((".csv", ".json"))
        ]
        assert exports and all(a.get("hx-boost") == "false" for a in exports), url
