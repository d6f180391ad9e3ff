"""The overview at scale: sort by any column, "free at least N of R", the per-resource summary strip;
bad arguments named, and the view shown without them."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from app.web.process import of as process_of

D = "example.com/dongle"

R = "example.com/dongle"


def order(client, query: str) -> list[str]:
    soup = BeautifulSoup(client.get(f"/?{query}").get_data(as_text=True), "html.parser")
    return [tr["data-node"] for tr in soup.select("table.grid tbody tr")]


@pytest.fixture
def three(cluster):
    a, b, c = "n-a", "n-b", "n-c"
    cluster.node(a, {R: "8"})
    cluster.node(b, {R: "4"})
    cluster.node(c, {})
    cluster.pod("user", a, {R: "6"})
    cluster.pod("waiting", None, {R: "9"}, message=f"0/2 nodes are available: 2 Insufficient {R}.")
    return R, a, b, c


def test_sorting_by_any_column_keeps_unadvertising_nodes_last(client, three):
    r, a, b, c = three
    assert order(client, f"sort=free:{r}&order=desc") == [b, a, c]  # 4 free, 2 free, none
    assert order(client, f"sort=free:{r}&order=asc") == [a, b, c]
    assert order(client, f"sort=requested:{r}&order=desc") == [a, b, c]
    assert order(client, f"sort=capacity:{r}&order=asc") == [b, a, c]
    assert order(client, "sort=name") == [a, b, c]
    html = client.get(f"/?sort=free:{r}&order=desc").get_data(as_text=True)
    th = BeautifulSoup(html, "html.parser").select_one("th[aria-sort]")
    assert th["aria-sort"] == "descending" and "order=asc" in th.a["href"]  # click again: ascending


def test_free_at_least_n_of_a_resource(client, three):
    r, a, b, _ = three
    assert order(client, f"free={r}&min=3") == [b]
    assert order(client, f"free={r}&min=2") == [a, b]
    assert order(client, f"free={r}&min=0&sort=free:{r}&order=desc") == [b, a]


def test_the_summary_strip_totals_each_resource(client, three):
    r, *_ = three
    soup = BeautifulSoup(client.get("/").get_data(as_text=True), "html.parser")
    item = soup.select_one(f'ul.strip li[data-resource="{r}"]')
    fields = {
        s["data-field"]: s.get_text(strip=True)
        for s in item.select("[data-field]")
        if not s.find_parent(class_="room")
    }
    assert fields == {"requested": "6", "allocatable": "12", "nodes": "2", "waiting": "1 pending"}
    room = {s["data-field"]: s.get_text(strip=True) for s in item.select(".room [data-field]")}
    assert room == {
        "free": "6",
        "schedulable": "6",
        "largest": "4",
    }  # what a job can use (test_room_strip.py)


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ("min=-1&free={r}", "min", "'-1' is not a whole number"),
        ("min=many&free={r}", "min", "'many' is not a whole number"),
        ("min=2", "min", "choose the resource"),
        ("min=2&free=dongle", "min", "qualified name"),
        ("sort=colour", "sort", "Sort by 'colour'"),
        ("sort=free:cpu", "sort", "Sort by 'free:cpu'"),
    ],
)
def test_bad_arguments_are_named_and_the_view_unfiltered(client, three, query, field, message):
    r, a, b, c = three
    resp = client.get("/?" + query.format(r=r))
    assert resp.status_code == 200
    soup = BeautifulSoup(resp.get_data(as_text=True), "html.parser")
    assert message in soup.select_one(f"#{field}-error").get_text()
    assert [tr["data-node"] for tr in soup.select("table.grid tbody tr")] == [a, b, c]


def test_the_heat_map_colours_each_node_by_its_share(client, three):
    r, a, b, _c = three
    soup = BeautifulSoup(client.get(f"/heat?of={r}").get_data(as_text=True), "html.parser")
    cells = {i["title"].split()[0]: (i["class"][0], i["title"].split()[1]) for i in soup.select(".heat a")}
    assert cells == {a: ("h3", "6/8"), b: ("h0", "0/4")}  # 75% and 0% requested; c advertises none
    # each square is a link to its node (reached by Tab), named by its title
    assert {x["href"] for x in soup.select(".heat a")} == {f"/nodes/{a}", f"/nodes/{b}"}
    counts = {s["data-band"]: s.get_text() for s in soup.select("#heat-counts [data-band]")}
    assert counts["0-19%"] == "1" and counts["60-79%"] == "1" and counts["full"] == "0"
    bad = BeautifulSoup(client.get("/heat?of=nope.example/x").get_data(as_text=True), "html.parser")
    assert "No such resource 'nope.example/x'. Showing the first" in bad.select_one("#of-error").get_text()
    near = BeautifulSoup(client.get("/heat?of=dongle").get_data(as_text=True), "html.parser")
    assert f"did you mean {R}?" in near.select_one("#of-error").get_text()


def test_one_requesters_spelling_of_a_filter_never_reaches_anothers_links(client, three):
    """The rendered table is kept between requests: its links must carry each request's own
    arguments, even when two spellings parse to the same filters (" n-" and "n-")."""

    def header_links(query: str) -> list[str]:
        soup = BeautifulSoup(client.get(f"/?{query}").get_data(as_text=True), "html.parser")
        return [a["href"] for a in soup.select("table.grid thead a[href]")]

    spaced = header_links("q=%20n-")
    assert spaced and all("q=+n-" in h or "q=%20n-" in h for h in spaced)
    plain = header_links("q=n-")
    assert plain and all("q=n-" in h for h in plain)


def test_the_compact_view_shows_free_and_a_bar_per_resource_and_its_links_keep_it(client, three):
    _, a, _, c = three
    full = BeautifulSoup(client.get("/").get_data(as_text=True), "html.parser")
    soup = BeautifulSoup(client.get("/?view=compact").get_data(as_text=True), "html.parser")
    row = soup.select_one(f'tr[data-node="{a}"]')
    assert [td.get("data-field") for td in row.select("td")] == ["free", None]  # free, the bar
    assert row.select_one('[data-field="free"]').get_text(strip=True) == "2"
    assert "6 of 8 requested" in row.select_one('[data-field="free"]')["title"]
    assert len(full.select_one(f'tr[data-node="{a}"]').select("td")) == 5  # the full view: unchanged
    assert soup.select_one(f'tr[data-node="{c}"] td.none')["colspan"] == "2"
    sort_link = soup.select_one("table.grid thead a[aria-label^='free of']")["href"]
    assert "view=compact" in sort_link
    assert soup.select_one('select[name="view"] option[selected]')["value"] == "compact"


def test_pending_pods_coming_and_going_leave_the_grid_memo_alone(app, client, cluster, three):
    """Each page asks for the known resource names (the picker), which change with the pending
    pods: their memo is apart from the grids', so the grid stays memoised through that churn."""
    client.get("/")
    grids = process_of(app).local.memos["grid"]  # the read model's (app.runtime.reads.grid)
    version = (id(cluster.store), cluster.store.rows_version)
    kept = dict(grids.at(version))
    assert kept, "the overview memoised its grid"
    for i in range(80):  # more than the grid memo holds
        cluster.pod(f"w{i}", None, {R: "99"}, message=f"0/2 nodes are available: 2 Insufficient {R}.")
        client.get("/pending/")
    assert cluster.store.rows_version == version[1]
    memo = grids.at(version)
    assert all(memo.get(k) is v for k, v in kept.items())


def test_over_commitment_is_named_on_the_row_the_strip_the_totals_and_the_node_page(client, cluster):
    """The README's story: a resource taken away while a pod still asks for it. A node over by 2
    beside one with 2 free: the sums alone would say "0 free"."""
    cluster.node("over", {D: "2"})
    cluster.node("roomy", {D: "4"})
    cluster.node("none", {D: "0"})
    cluster.pod("hog", "over", {D: "4"})
    cluster.pod("small", "roomy", {D: "2"})
    soup = BeautifulSoup(client.get("/").get_data(as_text=True), "html.parser")
    over = soup.select_one('#grid tbody tr[data-node="over"]')
    assert "over" in over.select_one(f'td[data-resource="{D}"][data-field="free"]')["class"]
    assert over.select_one("td.bar.over .pct").get_text(strip=True) == "over-committed by 2"
    assert soup.select_one('#grid tbody tr[data-node="roomy"] td.bar .pct').get_text(strip=True) == "50%"
    empty = soup.select_one('#grid tbody tr[data-node="none"] td.bar')
    assert empty.select_one(".pct .visually-hidden").get_text() == "nothing allocatable"
    assert "%" not in empty.get_text()
    totals = soup.select_one("#grid tfoot tr.totals td.bar.over .pct")
    assert totals is not None and totals.get_text(strip=True) == "over-committed by 2"
    strip = soup.select_one(f'ul.strip li[data-resource="{D}"] [data-field="over"]')
    assert strip is not None and strip.get_text(" ", strip=True) == "over-committed by 2 on 1 node"
    page = BeautifulSoup(client.get("/nodes/over").get_data(as_text=True), "html.parser")
    row = page.select_one(f'table.resources tr[data-resource="{D}"]')
    assert row.select_one('td[data-field="free"]').get_text(strip=True) == "-2"
    assert row.select_one("td.bar.over .pct").get_text(strip=True) == "over-committed by 2"
    assert "100%" not in row.get_text()
    pod = page.select_one('#node-pods tr[data-pod="default/hog"] [data-over]')
    assert pod is not None and pod.get_text(strip=True) == "over-committed here by 2"


def test_over_commitment_is_a_state_of_its_own_in_bar_strip_and_heat_map(client, cluster):
    """A node whose pods request more than it advertises (a capacity lowered under running pods):
    its bar is a state of its own (never a full normal bar), the strip says "requested of" and by
    how much it is over, and the heat map counts it apart from the full nodes."""
    cluster.node("over", {R: "0"})
    cluster.node("full", {R: "2"})
    cluster.node("fine", {R: "4"})
    cluster.pod("kept", "over", {R: "2"})
    cluster.pod("fills", "full", {R: "2"})
    soup = BeautifulSoup(client.get("/").get_data(as_text=True), "html.parser")
    bars = {
        tr["data-node"]: tr.select_one("td.bar meter, td.bar .meter")
        for tr in soup.select("table.grid tbody tr")
    }
    # over: a hatched bar of its own (static/extres.css), not a meter drawn like any full one
    assert bars["over"].name == "span" and bars["over"].get("data-state") == "over"
    assert "over" in bars["over"]["class"] and bars["over"]["aria-hidden"] == "true"
    assert bars["full"].name == "meter" and bars["full"]["value"] == bars["full"]["max"]
    assert bars["full"].get("data-state") is None and bars["fine"].get("data-state") is None
    strip = soup.select_one(f'ul.strip li[data-resource="{R}"]')
    assert "4 requested of 6" in strip.get_text(" ", strip=True)
    assert strip.select_one('[data-field="over"]').get_text(strip=True) == "over-committed by 2 on 1 node"
    heat = BeautifulSoup(client.get(f"/heat?of={R}").get_data(as_text=True), "html.parser")
    classes = {a["title"].split()[0]: a["class"][0] for a in heat.select(".heat a")}
    assert classes == {"over": "h6", "full": "h5", "fine": "h0"}
    counts = {s["data-band"]: s.get_text() for s in heat.select("#heat-counts [data-band]")}
    assert (counts["full"], counts["over-committed"]) == ("1", "1")


def test_a_node_over_committed_by_a_remove_is_on_the_heat_map(client, cluster):
    """The resource removed from a node whose pods still request it: not advertised there any more,
    and over-committed, a square of its own (it was left out)."""
    cluster.node("removed", {"example.com/other": "1"})  # no longer advertises R
    cluster.node("kept", {R: "4"})
    cluster.pod("still-asks", "removed", {R: "2"})
    heat = BeautifulSoup(client.get(f"/heat?of={R}").get_data(as_text=True), "html.parser")
    classes = {a["title"].split()[0]: a["class"][0] for a in heat.select(".heat a")}
    assert classes == {"removed": "h6", "kept": "h0"}
