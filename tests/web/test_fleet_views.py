"""The fleet page and per-cluster pages over stand-in clusters (tests/web/fake.py), one runtime
each: figures side by side with totals over the current ones, an unreachable cluster's last
figures said to be from then and left out of the totals, "no access" never 0, ``/c/<name>/``
pages that stay within their cluster, and in token mode a sign-in per cluster (a token is
never sent to another cluster)."""

from __future__ import annotations

import json
import logging
import re

import pytest
from bs4 import BeautifulSoup
from werkzeug.exceptions import NotFound

from app.kube.api.freshness import Freshness
from app.runtime.cluster import Runtime
from app.web.process import of as process_of
from tests.helpers import browser
from tests.web.fake import FakeCluster

D = "example.com/dongle"


def soup(resp) -> BeautifulSoup:
    assert resp.status_code == 200, resp.get_data(as_text=True)[:500]
    return BeautifulSoup(resp.get_data(as_text=True), "html.parser")


@pytest.fixture
def two(make_app, cluster):
    """This cluster ("local": 4 dongles, 1 requested) and a member ("b": 2 nodes of 8)."""
    cluster.node("n1", {D: "4"})
    cluster.pod("p", "n1", {D: "1"})
    app = make_app(read_only=False)
    member = FakeCluster()
    member.node("b1", {D: "8"})
    member.node("b2", {D: "8"})
    member.pod("q", "b2", {D: "3"})
    fleet = process_of(app).fleet
    settings = fleet.local.settings.replaced(cluster_name="b")
    fleet.members["b"] = Runtime(settings, member)
    yield app, member
    fleet.members["b"].stop()


def figures(page: BeautifulSoup, selector: str) -> dict[str, str]:
    row = page.select_one(selector)
    assert row is not None, selector
    return {td["data-field"]: td.get_text(strip=True) for td in row.select("td[data-field]")}


def test_the_fleet_shows_each_clusters_figures_and_their_totals(two):
    app, _ = two
    page = soup(browser(app).get("/fleet/"))
    assert [tr["data-cluster"] for tr in page.select("table.clusters tbody tr")] == ["local", "b"]
    assert figures(page, f'tr[data-cluster="local"][data-resource="{D}"]')["free"] == "3"
    b = figures(page, f'tr[data-cluster="b"][data-resource="{D}"]')
    assert (b["allocatable"], b["requested"], b["free"], b["largest"]) == ("16", "3", "13", "8")
    total = figures(page, f'tr[data-total="{D}"]')
    assert (total["allocatable"], total["requested"], total["free"], total["largest"]) == (
        "20",
        "4",
        "16",
        "8",
    )
    assert page.select_one('nav a[href="/fleet/"]') is not None  # in the nav once members exist
    assert page.select_one("[data-cluster-shown]")["data-cluster-shown"] == "local"


def test_an_unreachable_cluster_keeps_its_last_figures_out_of_the_totals_and_says_since_when(two):
    app, member = two
    member.fresh = Freshness(synced=True, stale=True, age_seconds=300.0, error="connection refused")
    page = soup(browser(app).get("/fleet/"))
    state = page.select_one('table.clusters tr[data-cluster="b"]')
    assert state["data-state"] == "unreachable"
    assert "unreachable since" in state.get_text() and "figures from then" in state.get_text()
    cell = state.select_one('[data-label="State"]')  # short, the rest on demand: the table fits
    short = cell.find(string=True, recursive=False).strip()
    assert re.fullmatch(r"unreachable since \d\d:\d\d UTC", short), short
    assert "connection refused" in cell.select_one("details.why").get_text()
    assert page.select_one(f'tr[data-cluster="b"][data-resource="{D}"]').has_attr("data-left-out")
    assert figures(page, f'tr[data-total="{D}"]')["allocatable"] == "4"  # local's alone
    assert "Left out of the totals: b" in page.select_one("[data-left-out]").get_text()


def test_a_cluster_whose_account_may_not_read_says_no_access_never_zero(two):
    app, member = two
    member.fresh = Freshness(
        synced=False, stale=True, age_seconds=None, error="may not list pods", forbidden=True
    )
    page = soup(browser(app).get("/fleet/"))
    state = page.select_one('table.clusters tr[data-cluster="b"]')
    assert state["data-state"] == "no access" and "may not list pods" in state.get_text()
    assert page.select_one('tr[data-cluster="b"][data-resource]') is None  # no row of zeros
    assert "not known" in state.get_text()


def test_a_member_whose_answers_are_refused_for_their_size_says_so_keeping_its_last_figures(two):
    app, member = two
    error = "Refused: answer too large (an answer compressed unasked, inflating more than 100 to 1)."
    member.fresh = Freshness(synced=True, stale=True, age_seconds=40.0, error=error, too_large=True)
    page = soup(browser(app).get("/fleet/"))
    state = page.select_one('table.clusters tr[data-cluster="b"]')
    assert state["data-state"] == "refused"
    cell = state.select_one('[data-label="State"]')
    assert cell.find(string=True, recursive=False).strip() == "refused: answer too large"
    assert "inflating more than 100 to 1" in cell.select_one("details.why").get_text()
    assert page.select_one(f'tr[data-cluster="b"][data-resource="{D}"]').has_attr("data-left-out")
    assert "Left out of the totals: b" in page.select_one("[data-left-out]").get_text()


def test_a_member_removed_while_its_request_was_routed_is_a_404_naming_it(two):
    from app.web.viewer import viewer

    app, _ = two
    fleet = process_of(app).fleet
    with pytest.raises(LookupError, match="No cluster named 'gone'"):
        fleet.get("gone")
    routed = app.test_request_context("/c/gone/", environ_base={"extres.cluster": "gone"})
    with routed, pytest.raises(NotFound, match="No cluster named 'gone'"):
        viewer()


def test_a_members_pages_live_under_its_prefix_and_their_links_stay_there(two):
    app, _ = two
    web = browser(app)
    page = soup(web.get("/c/b/"))
    assert [tr["data-node"] for tr in page.select("#grid tbody tr[data-node]")] == ["b1", "b2"]
    assert page.select_one("[data-cluster-shown]")["data-cluster-shown"] == "b"
    links = [a["href"] for a in page.select("main a[href^='/']")]
    assert links and all(h.startswith("/c/b/") for h in links), links
    assert soup(web.get("/c/b/nodes/b1")).select_one("h1").get_text().strip().startswith("b1")
    assert web.get("/c/b/nodes/n1").status_code == 404  # local's node is not b's
    assert web.get("/c/nowhere/").status_code == 404
    assert [tr["data-node"] for tr in soup(web.get("/")).select("#grid tbody tr[data-node]")] == ["n1"]


def test_exports_name_the_cluster_of_each_row(two):
    app, _ = two
    web = browser(app)
    lines = web.get("/fleet/export.csv").get_data(as_text=True).splitlines()
    assert lines[0].startswith("cluster,state,figures_from,resource,capacity")
    assert {line.split(",")[0] for line in lines[1:]} == {"local", "b"}
    body = json.loads(web.get("/fleet/export.json").get_data(as_text=True))
    assert [c["cluster"] for c in body["clusters"]] == ["local", "b"]
    assert {(r["cluster"], r["free"]) for r in body["rows"]} == {("local", 3), ("b", 13)}


def test_in_token_mode_each_cluster_has_its_own_sign_in_and_its_token_goes_to_it_alone(
    make_app, cluster, caplog
):
    """Token mode: the local sign-in opens nothing on member b; b's own sign-in is checked by b
    alone, kept in a cookie sent under /c/b/ only, and a copy of it under another cluster's name
    opens nothing there (no token reaches a cluster that did not issue it)."""
    cluster.node("n1", {D: "4"})
    app = make_app(auth_mode="token")
    member = FakeCluster()
    member.node("b1", {D: "8"})
    fleet = process_of(app).fleet
    fleet.members["b"] = Runtime(fleet.local.settings.replaced(cluster_name="b"), member)
    web = browser(app)
    assert web.post("/login", data={"token": "a-token", "next": "/"}).status_code == 303
    unsigned = web.get("/c/b/fleet/apart", headers={"HX-Request": "true", "HX-Target": "apart-b"})
    assert unsigned.status_code == 204 and unsigned.headers["HX-Redirect"].startswith(
        "/c/b/login"
    )  # not followed
    to_sign_in = web.get("/c/b/")
    assert to_sign_in.status_code == 302 and to_sign_in.location == "/c/b/login?next=/c/b/"
    bearer = web.get("/c/b/", headers={"Authorization": "Bearer a-token"})  # not sent to b either
    assert bearer.status_code == 302 and member.access.accepted == set()
    login = soup(web.get("/c/b/login"))
    assert "of cluster b" in login.h1.get_text() and login.form["action"] == "/c/b/login"
    assert login.select_one('input[name="next"]')["value"] == "/c/b/"  # asked for nowhere: b's overview
    with caplog.at_level(logging.INFO, logger="extres.audit"):
        signed = web.post("/c/b/login", data={"token": "b-token", "next": "/c/b/"})
    hx = web.post(
        "/c/b/login", data={"token": "b-token", "next": "/c/b/pending/"}, headers={"HX-Request": "true"}
    )
    assert hx.status_code == 204 and hx.headers["HX-Redirect"] == "/c/b/pending/"  # the whole page, anew
    assert signed.status_code == 303 and signed.location == "/c/b/"
    [line] = [r.audit for r in caplog.records if r.name == "extres.audit"]
    assert (line["outcome"], line["cluster"], line["user"]) == ("signed_in", "b", "token-user")
    [cookie] = [c for c in signed.headers.getlist("Set-Cookie") if c.startswith("__Secure-extres_member=")]
    assert "Path=/c/b/" in cookie and "HttpOnly" in cookie and "Secure" in cookie
    assert member.access.accepted == {"b-token"} and "b-token" not in cluster.access.accepted
    assert soup(web.get("/c/b/")).select_one('[data-cluster-shown="b"]') is not None
    assert soup(web.get("/")).select_one('[data-cluster-shown="local"]') is not None  # both signed in
    page = soup(web.get("/fleet/"))
    row = page.select_one('table.clusters tr[data-cluster="b"]')
    assert row["data-state"] == "not shown" and row.select_one("a[data-sign-in]")["href"] == "/c/b/login"
    assert page.select_one('tr[data-cluster="b"][data-resource]') is None
    # b's figures asked from b's own path (its cookie goes with that request alone)
    assert page.select_one("section#apart-b[data-apart]")["hx-get"] == "/c/b/fleet/apart"
    hx = {"HX-Request": "true", "HX-Target": "apart-b"}
    apart = soup(web.get("/c/b/fleet/apart", headers=hx))
    assert apart.select_one("[data-apart-state]")["data-apart-state"] == "live" and apart.h1 is None
    assert figures(apart, f'tr[data-cluster="b"][data-resource="{D}"]')["free"] == "8"
    assert soup(web.get("/c/b/fleet/apart")).h1.get_text() == "b in the fleet"  # a page when asked as one
    from_b = soup(web.get("/c/b/fleet/"))  # the fleet as b's sign-in sees it: b's figures alone
    row = from_b.select_one('table.clusters tr[data-cluster="local"]')
    assert row["data-state"] == "not shown" and row.select_one("a[data-sign-in]")["href"] == "/login"
    assert from_b.select_one('tr[data-cluster="local"][data-resource]') is None
    assert figures(from_b, f'tr[data-cluster="b"][data-resource="{D}"]')["free"] == "8"
    # b's session copied into the local cluster's cookie: it names b, so it opens nothing here
    sealed = cookie.split(";")[0].split("=", 1)[1]
    thief = browser(app)
    thief.set_cookie("__Host-extres_session", sealed, domain="localhost")
    refused = thief.get("/")
    assert refused.status_code == 302 and refused.location.startswith("/login")
    assert "b-token" not in cluster.access.accepted
    # signing out of b leaves the local session signed in
    assert web.post("/c/b/logout").status_code == 303
    assert web.get("/c/b/").status_code == 302 and web.get("/").status_code == 200
    fleet.members["b"].stop()


def test_a_single_cluster_install_shows_no_fleet(client, cluster):
    cluster.node("n1", {D: "4"})
    page = soup(client.get("/"))
    assert (
        page.select_one('nav a[href="/fleet/"]') is None and page.select_one("[data-cluster-shown]") is None
    )


def test_with_members_every_clusters_metrics_are_labelled_and_each_family_is_declared_once(two):
    from prometheus_client.parser import text_string_to_metric_families

    from app.sandbox import bounded_child
    from app.web import metrics_exposition

    app, _ = two
    web = browser(app)
    for _ in range(3):
        assert web.get("/c/b/").status_code == 200  # b's own page, asked three times
    assert web.get("/").status_code == 200
    bounded_child.EXITS.record(
        "a fleet test child", "crashed"
    )  # one child's exit, whichever cluster it served
    text = metrics_exposition(app)().decode()
    families = list(text_string_to_metric_families(text))  # the text format, parsed: one header each
    names = [f.name for f in families]
    assert len(names) == len(set(names))
    allocatable = {
        (s.labels["cluster"], s.labels["node"]): s.value
        for f in families
        if f.name == "extres_node_extended_resource_allocatable"
        for s in f.samples
        if s.labels["resource"] == D
    }
    assert allocatable == {("local", "n1"): 4, ("b", "b1"): 8, ("b", "b2"): 8}
    synced = {
        s.labels["cluster"]: s.value for f in families if f.name == "extres_cache_synced" for s in f.samples
    }
    assert synced == {"local": 1, "b": 1}
    requests = {
        (s.labels["cluster"], s.labels["endpoint"]): s.value
        for f in families
        if f.name == "extres_request_duration_seconds"
        for s in f.samples
        if s.name.endswith("_count")
    }
    assert requests[("b", "overview.index")] == 3 and requests[("local", "overview.index")] == 1
    [exits] = [f for f in families if f.name == "extres_child_exits"]  # the process's own: once
    crashed = [
        s
        for s in exits.samples
        if s.labels.get("child") == "a fleet test child" and s.name.endswith("_total")
    ]
    assert len(crashed) == 1 and "cluster" not in crashed[0].labels and crashed[0].value >= 1


def test_a_single_cluster_scrape_is_as_it_always_was(app, cluster):
    from app.web import metrics_exposition

    cluster.node("n1", {D: "4"})
    text = metrics_exposition(app)().decode()
    assert 'cluster="' not in text and 'extres_node_extended_resource_allocatable{node="n1"' in text


def test_with_a_shared_prometheus_each_cluster_asks_for_its_own_series_alone(make_app, cluster, tmp_path):
    """EXTRES_PROMETHEUS_CLUSTER_LABEL: every usage query of a cluster selects its series by that
    label (members read usage there too); without it a member reads none."""
    from app.runtime.fleet import Fleet
    from app.settings.config import Settings
    from tests.web.test_gpu_usage_views import StandInSource

    shared = Settings.from_env(
        in_cluster="false",
        prometheus_url="http://thanos:9090",
        prometheus_cluster_label="cluster",
        cluster_name="hub",
    )
    source = StandInSource()
    hub = Runtime(shared, FakeCluster(), usage_source=source)
    hub.usage.poll()
    assert source.asked and all('{cluster="hub"}' in q for q in source.asked)
    assert [m.selector for m in shared.replaced(cluster_name="b").mappings] == ['cluster="b"']
    member = kubeconfig_file(tmp_path)
    b = Fleet(hub).runtime_of("b", member)
    assert b is not None and b.usage is not None and b.settings.mappings[0].selector == 'cluster="b"'
    alone = Fleet(Runtime(shared.replaced(prometheus_cluster_label=""), FakeCluster()))
    b_alone = alone.runtime_of("b", member)
    assert b_alone is not None and b_alone.usage is None  # a Prometheus of this cluster alone: no usage for b
    for runtime in (hub, b, b_alone, alone.local):
        runtime.stop()
    with pytest.raises(ValueError, match="PROMETHEUS_CLUSTER_LABEL"):
        Settings.from_env(prometheus_cluster_label='cluster"} or vector(1) #')


def kubeconfig_file(tmp_path) -> str:
    import yaml

    return yaml.safe_dump(
        {
            "clusters": [{"name": "x", "cluster": {"server": "https://10.0.0.5:6443"}}],
            "users": [{"name": "x", "user": {"token": "t"}}],
            "contexts": [{"name": "x", "context": {"cluster": "x", "user": "x"}}],
            "current-context": "x",
        }
    )


def test_the_filters_choose_clusters_and_resources_and_name_what_they_do_not_know(two):
    app, member = two
    member.node("b3", {"example.com/other": "2"})
    web = browser(app)
    page = soup(web.get("/fleet/?cluster=b&resource=example.com/other&cluster=nowhere"))
    assert [tr["data-cluster"] for tr in page.select("table.clusters tbody tr")] == ["b"]
    assert [a["href"] for a in page.select("table.clusters th a")] == ["/c/b/"]  # its own home
    assert {
        (tr["data-cluster"], tr["data-resource"]) for tr in page.select("tr[data-resource][data-cluster]")
    } == {("b", "example.com/other")}
    assert "'nowhere' is not one of the fleet's" in page.select_one("#cluster-error").get_text()
    lines = web.get("/fleet/export.csv?cluster=local").get_data(as_text=True).splitlines()
    assert {line.split(",")[0] for line in lines[1:]} == {"local"}
    assert web.get("/c/b/export.csv").headers["Content-Disposition"].endswith("extres-overview-b.csv")
    assert web.get("/c/b/export.json").get_json()["cluster"] == "b"  # a file of it says where from
    assert web.get("/c/b/workloads/export.json").get_json()["cluster"] == "b"
    assert "cluster" not in web.get("/export.json").get_json()  # the own cluster's, as it always was


def test_impersonated_users_see_a_member_only_where_its_account_lets_them_be_read_as_themselves(
    make_app, cluster
):
    """Impersonate mode: the user is impersonated on a member with the member's credentials; where
    that yields no right to list pods, the Fleet page says "no access" and the member's pages refuse."""
    cluster.node("n1", {D: "4"})
    app = make_app(auth_mode="impersonate", trusted_proxies="127.0.0.1/32")
    member = FakeCluster()
    member.node("b1", {D: "8"})
    member.access.denied.add(("list", "pods"))
    fleet = process_of(app).fleet
    fleet.members["b"] = Runtime(fleet.local.settings.replaced(cluster_name="b"), member)
    web = browser(app)
    ann = {"X-Forwarded-User": "ann"}
    page = BeautifulSoup(web.get("/fleet/", headers=ann).get_data(as_text=True), "html.parser")
    row = page.select_one('table.clusters tr[data-cluster="b"]')
    assert row["data-state"] == "no access" and "ann may not list nodes and pods" in row.get_text()
    assert page.select_one('tr[data-cluster="b"][data-resource]') is None
    assert page.select_one('tr[data-cluster="local"][data-resource]') is not None
    refused = web.get("/c/b/", headers=ann)
    assert refused.status_code == 403 and "ann may not list pods" in refused.get_data(as_text=True)
    assert ("list", "pods", "") in member.access.asked  # asked of the member, as ann
    fleet.members["b"].stop()


def test_a_member_that_refuses_to_check_the_user_reads_no_access_and_one_that_does_not_answer_unreachable(
    make_app, cluster
):
    """Impersonate mode: a member whose account may not impersonate the user answers 403 to the
    check; it is up, the user has no access there. One that does not answer is unreachable."""
    from app.kube.api.errors import Forbidden, Unavailable

    app = make_app(auth_mode="impersonate", trusted_proxies="127.0.0.1/32")
    fleet = process_of(app).fleet
    for name, fails in (("b", Forbidden("users \"ann\" is forbidden: cannot impersonate", 403)),
                        ("c", Unavailable("the API server does not answer", 503))):  # fmt: skip
        member = FakeCluster()
        member.access.fails = fails
        fleet.members[name] = Runtime(fleet.local.settings.replaced(cluster_name=name), member)
    page = soup(browser(app).get("/fleet/", headers={"X-Forwarded-User": "ann"}))
    b, c = (page.select_one(f'table.clusters tr[data-cluster="{n}"]') for n in ("b", "c"))
    assert b["data-state"] == "no access" and "refused to check ann" in b.get_text()
    assert c["data-state"] == "unreachable"
    for name in ("b", "c"):
        fleet.members[name].stop()


def test_a_member_whose_account_may_not_impersonate_is_not_asked_about_the_viewer(make_app, cluster):
    """Impersonate mode: where the dashboard's account may not impersonate users, the member is
    "no access" without a review made in the viewer's name there (each would be a 403)."""
    app = make_app(auth_mode="impersonate", trusted_proxies="127.0.0.1/32")
    fleet = process_of(app).fleet
    member = FakeCluster()
    member.access.denied.add(("impersonate", "users"))
    fleet.members["b"] = Runtime(fleet.local.settings.replaced(cluster_name="b"), member)
    page = soup(browser(app).get("/fleet/", headers={"X-Forwarded-User": "ann"}))
    row = page.select_one('table.clusters tr[data-cluster="b"]')
    assert row["data-state"] == "no access" and "may not impersonate users" in row.get_text()
    assert member.access.asked == [("impersonate", "users", "")]  # asked as itself, never as ann
    fleet.members["b"].stop()


def test_a_members_fleet_page_shows_another_cluster_only_where_the_user_may_read_it_there(make_app, cluster):
    """Impersonate mode, from b's path: ann may read b (where the page was checked) but not the
    local cluster, whose row then reads "no access", never its figures; each name links home."""
    cluster.node("n1", {D: "4"})
    cluster.access.denied.add(("list", "pods"))
    app = make_app(auth_mode="impersonate", trusted_proxies="127.0.0.1/32")
    member = FakeCluster()
    member.node("b1", {D: "8"})
    fleet = process_of(app).fleet
    fleet.members["b"] = Runtime(fleet.local.settings.replaced(cluster_name="b"), member)
    page = soup(browser(app).get("/c/b/fleet/", headers={"X-Forwarded-User": "ann"}))
    assert page.select_one('table.clusters tr[data-cluster="local"]')["data-state"] == "no access"
    assert page.select_one('tr[data-cluster="local"][data-resource]') is None
    assert page.select_one(f'tr[data-cluster="b"][data-resource="{D}"]') is not None
    links = {a.get_text(): a["href"] for a in page.select("table.clusters th a")}
    assert links == {"local": "/", "b": "/c/b/"}
    fleet.members["b"].stop()


def test_a_cluster_whose_watches_reconnect_for_a_moment_is_stale_and_still_counted(two):
    app, member = two
    member.fresh = Freshness(synced=True, stale=True, age_seconds=3.0, error="watch of pods failed")
    page = soup(browser(app).get("/fleet/"))
    assert page.select_one('table.clusters tr[data-cluster="b"]')["data-state"] == "stale"
    assert figures(page, f'tr[data-total="{D}"]')["allocatable"] == "20"  # b still counted


def test_the_header_switches_to_this_page_on_any_cluster(two):
    app, _ = two
    web = browser(app)
    page = soup(web.get("/pending/?resource=example.com/dongle"))
    links = {
        a["data-cluster-link"]: a["href"] for a in page.select("header details.cluster a[data-cluster-link]")
    }
    assert links == {"b": "/c/b/pending/?resource=example.com/dongle"}
    here = soup(web.get(links["b"]))
    back = {
        a["data-cluster-link"]: a["href"] for a in here.select("header details.cluster a[data-cluster-link]")
    }
    assert back == {"local": "/pending/?resource=example.com/dongle"}  # home, in one click
    assert here.select_one('header details.cluster [aria-current="true"]').get_text() == "b"


def test_every_figure_of_the_fleet_page_carries_its_label_for_the_phones_cards(two):
    app, _ = two
    page = soup(browser(app).get("/fleet/"))
    cells = page.select("table.clusters td, table.fleet td")
    assert cells and [c for c in cells if not c.get("data-label") and c.get_text(strip=True)] == []


def test_each_cluster_keeps_its_own_render_caches_and_a_gone_ones_are_dropped(two):
    from app.web.render_cache import RenderCaches

    app, _ = two
    web = browser(app)
    assert web.get("/").status_code == 200
    process = process_of(app)
    local = process.render("local")
    process._render["gone"] = RenderCaches()  # a member removed since its pages were drawn
    assert web.get("/c/b/").status_code == 200 and web.get("/").status_code == 200
    assert process.render("local") is local  # not reset by a look at b
    assert process.render("b") is not local
    assert sorted(process._render) == ["b", "local"]  # made for b, the gone one's dropped


def test_a_members_empty_history_says_whose_changes_are_kept_here(two):
    app, _ = two
    web = browser(app)
    empty = soup(web.get("/c/b/history/")).select_one("[data-history-empty]").get_text(" ", strip=True)
    assert "records member cluster b 's changes while it watches it" in empty
    assert "b 's" not in soup(web.get("/history/")).select_one("[data-history-empty]").get_text(
        " ", strip=True
    )


def test_the_fleet_page_opens_on_the_fleets_free_count_gpus_first(two):
    app, member = two
    member.node("g1", {"nvidia.com/gpu": "8"})
    page = soup(browser(app).get("/fleet/"))
    shown = [
        s["data-fleet-free-resource"] for s in page.select("[data-fleet-free] [data-fleet-free-resource]")
    ]
    assert shown == ["nvidia.com/gpu", D]  # GPUs first
    free = page.select_one(f'[data-fleet-free-resource="{D}"] [data-field="free"]').get_text()
    assert free == page.select_one(f'tr[data-total="{D}"] [data-field="free"]').get_text() == "16"
