"""Where the members come from and how they follow their sources, over a stand-in local cluster
(tests/web/fake.py): a folder of kubeconfigs and the labelled Secrets of a namespace, read again
on each ``sync``: a new member added, a changed one read again and replaced, an unchanged one
kept as it runs, a gone one stopped; a source that cannot be read keeps what it gave; a name
given twice refused; a refusal logged once for the same kubeconfig."""

from __future__ import annotations

import logging

import yaml

from app.kube.api.errors import Unavailable
from app.runtime.fleet import Fleet
from app.web.process import of as process_of


def kubeconfig(server: str = "https://10.0.0.5:6443", **user: str) -> bytes:
    return yaml.safe_dump(
        {
            "clusters": [{"name": "x", "cluster": {"server": server}}],
            "users": [{"name": "x", "user": user or {"token": "t"}}],
            "contexts": [{"name": "x", "context": {"cluster": "x", "user": "x"}}],
            "current-context": "x",
        }
    ).encode()


def test_a_folders_members_follow_its_files(make_app, tmp_path, caplog):
    (tmp_path / "b").write_bytes(kubeconfig())
    (tmp_path / "c.yaml").write_bytes(kubeconfig("https://10.0.0.6:6443"))
    (tmp_path / "bad").write_bytes(kubeconfig(exec="x"))
    fleet: Fleet = process_of(make_app(clusters_dir=str(tmp_path))).fleet
    assert sorted(fleet.members) == ["b", "c"] and [r.cluster for r in fleet.refused] == ["bad"]
    c = fleet.members["c"]
    (tmp_path / "c.yaml").write_bytes(kubeconfig("https://10.0.0.7:6443"))  # changed
    (tmp_path / "b").unlink()  # gone
    (tmp_path / "d").write_bytes(kubeconfig("https://10.0.0.8:6443"))  # new
    assert "cluster bad: refused (exec)" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="app.runtime.fleet"):
        fleet.sync()
        fleet.sync()
    assert sorted(fleet.members) == ["c", "d"]
    assert fleet.members["c"] is not c and fleet.members["c"].member.server == "https://10.0.0.7:6443"
    assert [r.message for r in caplog.records if "bad" in r.message] == []  # refused once, at the start
    assert [r.cluster for r in fleet.refused] == ["bad"]
    before = fleet.members["d"]
    fleet.sync()
    assert fleet.members["d"] is before  # unchanged: kept as it runs
    fleet.stop()


def test_labelled_secrets_are_members_read_again_and_kept_when_the_list_fails(make_app, cluster, caplog):
    cluster.member_secrets = [("b", kubeconfig()), ("twin", kubeconfig()), ("twin", kubeconfig())]
    app = make_app(clusters_namespace="extres-clusters")
    fleet: Fleet = process_of(app).fleet
    assert fleet.members == {} and cluster.secrets_asked == []  # nothing asked before the fleet starts
    fleet.sync()
    assert cluster.secrets_asked == [("extres-clusters", "extres.dev/secret-type=cluster", 200)]
    assert sorted(fleet.members) == ["b", "twin"]
    assert [(r.cluster, r.rule) for r in fleet.refused] == [("twin", "name")]
    cluster.member_secrets = Unavailable("the API server did not answer")
    with caplog.at_level(logging.WARNING, logger="app.runtime.fleet"):
        fleet.sync()
    assert sorted(fleet.members) == ["b", "twin"]  # kept
    assert "member clusters not read again: the API server did not answer" in caplog.text
    cluster.member_secrets = [("local", kubeconfig())]  # the local cluster's own name
    fleet.sync()
    assert fleet.members == {} and [(r.cluster, r.rule) for r in fleet.refused] == [("local", "name")]
    fleet.stop()


def test_refused_secrets_fill_no_member_place_and_are_counted_on_the_fleet_page(make_app, cluster):
    """120 labelled Secrets refused (an exec plugin), read before a valid one: the valid one is a
    member (refusals never fill the 50 places), and the page lists 20 refusals and counts the rest."""
    from bs4 import BeautifulSoup

    from tests.helpers import browser

    bad = [(f"a{i:03d}", kubeconfig(exec="x")) for i in range(120)]
    cluster.member_secrets = [*bad, ("zz", kubeconfig())]
    app = make_app(clusters_namespace="extres-clusters")
    fleet: Fleet = process_of(app).fleet
    fleet.sync()
    assert sorted(fleet.members) == ["zz"] and len(fleet.refused) == 120
    fleet.stop()
    fleet.members = {}  # the page, without connecting to zz's (made-up) server
    page = BeautifulSoup(browser(app).get("/fleet/").get_data(as_text=True), "html.parser")
    assert len(page.select('tr[data-state="refused"]')) == 20
    assert page.select_one("[data-refused-more]")["data-refused-more"] == "100"


def test_the_members_stop_before_the_local_cluster_whose_connection_keeps_their_history(make_app):
    fleet: Fleet = process_of(make_app()).fleet
    member = fleet.runtime_of("b", kubeconfig())
    fleet.members = {"b": member}
    stopped: list[str] = []
    for runtime in (fleet.local, member):
        runtime.stop = lambda name=runtime.name: stopped.append(name)  # type: ignore[method-assign]
    fleet.stop()
    assert stopped == ["b", "local"]
