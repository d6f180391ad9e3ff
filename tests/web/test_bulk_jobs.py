"""Bulk jobs are bounded: one running job per user, each on a write slot; a job is seen and
stopped only by who started it. The real writer talks to the web lane's API server stand-in
(tests/web/apiserver.py), here holding each PATCH until the test lets it through; the API
semantics of the writes are tested in tests/integration."""

from __future__ import annotations

import threading

import pytest

from app.domain.changes import DESIRED_ANNOTATION
from app.kube.api.writer import Outcome
from app.web.process import of as process_of
from tests.helpers import browser, eventually
from tests.web.apiserver import ApiServerStandIn

D = "example.com/dongle"


@pytest.fixture
def nodes(cluster):
    for i in range(5):
        cluster.node(f"n{i}", {D: "1"})
    cluster.apiserver = ApiServerStandIn(cluster.objects, gate=threading.Semaphore(0))
    return cluster.apiserver


def start(web, headers=None):
    form = {"action": "set", "resource": D, "quantity": "2", "selector": ""}
    form["nodes"] = [f"n{i}" for i in range(5)]
    return web.post("/changes/bulk/preview", data=form, headers=headers or {})


def test_one_running_job_per_user_and_only_its_starter_sees_or_stops_it(make_app, nodes):
    app = make_app(auth_mode="impersonate", trusted_proxies=("127.0.0.1/32",))
    ann, bob = {"X-Forwarded-User": "ann"}, {"X-Forwarded-User": "bob"}
    web = browser(app)
    first = start(web, ann)
    assert first.status_code == 303
    results = first.headers["Location"]
    again = start(web, ann)
    assert again.status_code == 429 and "You have a bulk change running" in again.get_data(as_text=True)
    assert web.get(results, headers=bob).status_code == 404  # not bob's
    assert web.post(results + "/cancel", headers=bob).status_code == 404
    nodes.gate.release()  # the first node goes through
    eventually(lambda: [n for n, _, _ in nodes.patches()] == ["n0"])
    assert web.post(results + "/cancel", headers=ann).status_code == 303
    for _ in range(5):
        nodes.gate.release()
    page = eventually(
        lambda: (r := web.get(results, headers=ann).get_data(as_text=True)) and 'data-done="true"' in r and r
    )
    assert "data-cancelled" in page
    assert len(nodes.patches()) <= 2  # stopped after the node it was on; the rest left alone
    assert start(web, ann).status_code == 303  # done: ann may start another


def test_jobs_take_write_slots_and_are_refused_at_once_when_none_is_left(make_app, nodes):
    # 3 write slots: two jobs hold one each; the third request holds the last and finds none for its job
    app = make_app(auth_mode="impersonate", trusted_proxies=("127.0.0.1/32",), threads=5)
    web = browser(app)
    assert start(web, {"X-Forwarded-User": "ann"}).status_code == 303
    assert start(web, {"X-Forwarded-User": "bob"}).status_code == 303
    busy = start(web, {"X-Forwarded-User": "cat"})
    assert busy.status_code in (429, 503) and "nothing was changed" in busy.get_data(as_text=True)
    for _ in range(10):
        nodes.gate.release()


def test_a_user_runs_one_job_whatever_the_token_and_signing_out_stops_it(make_app, nodes):
    """The limit is per user as the API server names them (the stub names every token's user
    token-user), not per token; signing out with any of their tokens stops the running job."""
    web = browser(make_app(auth_mode="token"))
    one, two = {"Authorization": "Bearer one"}, {"Authorization": "Bearer two"}
    first = start(web, one)
    assert first.status_code == 303
    assert start(web, two).status_code == 429  # the same user with another token
    results = first.headers["Location"]
    assert web.get(results, headers=two).status_code == 200  # theirs, whichever token
    assert web.post("/logout", headers=two).status_code == 303
    for _ in range(5):
        nodes.gate.release()
    page = eventually(
        lambda: (r := web.get(results, headers=one).get_data(as_text=True)) and 'data-done="true"' in r and r
    )
    assert "data-cancelled" in page
    assert len(nodes.patches()) <= 1  # stopped after the node it was on


def test_a_job_is_its_users_on_its_cluster_alone(make_app, nodes):
    """Token mode, token-user signed in on the local cluster and on member b: the job started on
    the local cluster is not b's, b's pages neither show nor stop it, and signing out of b stops
    nothing here (it cancelled a 300-node job before)."""
    from app.runtime.cluster import Runtime
    from tests.web.fake import FakeCluster

    app = make_app(auth_mode="token")
    fleet = process_of(app).fleet
    fleet.members["b"] = Runtime(fleet.local.settings.replaced(cluster_name="b"), FakeCluster())
    web = browser(app)
    assert web.post("/login", data={"token": "a-token", "next": "/"}).status_code == 303
    assert web.post("/c/b/login", data={"token": "b-token", "next": "/c/b/"}).status_code == 303
    first = start(web)
    assert first.status_code == 303
    results = first.headers["Location"]
    key = results.rstrip("/").rsplit("/", 1)[1]
    assert web.get(f"/c/b/changes/results/{key}").status_code == 404  # not b's
    assert web.post(f"/c/b/changes/results/{key}/cancel").status_code == 404
    assert web.post("/c/b/logout").status_code == 303  # signed out of b alone
    for _ in range(5):
        nodes.gate.release()
    page = eventually(
        lambda: (r := web.get(results).get_data(as_text=True)) and 'data-done="true"' in r and r
    )
    assert "data-cancelled" not in page and len(nodes.patches()) == 5
    fleet.members["b"].stop()


def test_the_reapply_preview_is_a_job_on_a_write_slot(make_app, cluster):
    """GET only lists the drifted nodes; the dry runs run as a job (one per user, on a slot), whose
    page then offers to re-apply on the nodes that passed, as a job too."""
    for i in range(3):
        cluster.node(f"d{i}", {D: "1"}, annotations={DESIRED_ANNOTATION: f'{{"{D}": 2}}'})
    app = make_app(auth_mode="impersonate", trusted_proxies=("127.0.0.1/32",))
    web, ann = browser(app), {"X-Forwarded-User": "ann"}
    listing = web.get("/changes/reapply", headers=ann).get_data(as_text=True)
    assert 'data-field="drifted">3<' in listing and cluster.apiserver is None  # nothing asked yet

    def finished(resp) -> str:
        return eventually(
            lambda: (
                (r := web.get(resp.headers["Location"], headers=ann).get_data(as_text=True))
                and 'data-done="true"' in r
                and r
            )
        )

    preview = finished(web.post("/changes/reapply/preview", headers=ann))
    assert [(n, dry) for n, dry, _ in cluster.apiserver.patches()] == [
        ("d0", True),
        ("d1", True),
        ("d2", True),
    ]
    assert "Re-apply on 3 nodes" in preview and 'action="/changes/reapply"' in preview
    done = finished(web.post("/changes/reapply", data={"nodes": ["d0", "d2"]}, headers=ann))
    assert cluster.apiserver.written() == ["d0", "d2"]
    assert cluster.objects["d0"]["status"]["capacity"][D] == "2"  # the stand-in holds the patched node
    assert cluster.store.objects.node("d2").capacity[D] == 2  # and the store read it back
    assert 'data-field="finished">2<' in done


class FailingOn:
    """A fault in the dashboard itself, not the API server (which the stand-in plays): raises
    for one node, writes the others."""

    def __init__(self, bad: str) -> None:
        self.bad = bad
        self.written: list[str] = []

    def set(self, name, resource, count, expected, actor, dry_run=False) -> Outcome:
        if name == self.bad:
            raise RuntimeError("boom")
        self.written.append(name)
        return Outcome(name, resource, "set", expected, count, True, "set", dry_run)


def test_a_node_the_job_could_not_do_is_reported_and_the_job_goes_on(make_app, cluster):
    for i in range(3):
        cluster.node(f"n{i}", {D: "1"})
    writer = FailingOn("n1")
    cluster.writer_for = lambda *_: writer  # type: ignore[method-assign]
    web = browser(make_app(auth_mode="impersonate", trusted_proxies=("127.0.0.1/32",)))
    ann = {"X-Forwarded-User": "ann"}
    results = start_on(web, ann, ["n0", "n1", "n2"]).headers["Location"]
    page = eventually(
        lambda: (r := web.get(results, headers=ann).get_data(as_text=True)) and 'data-done="true"' in r and r
    )
    assert writer.written == ["n0", "n2"]
    assert "could not be done" in page and "n1" in page


def start_on(web, headers, names):
    form = {"action": "set", "resource": D, "quantity": "2", "selector": "", "nodes": names}
    return web.post("/changes/bulk/preview", data=form, headers=headers)
