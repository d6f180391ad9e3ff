"""/workloads against the real kube-apiserver: who holds each extended resource, by workload
(resolved from ownerReferences) or namespace, sorted, filtered and exported."""

from __future__ import annotations

import csv
import io

import pytest
from bs4 import BeautifulSoup
from kubernetes import client

from tests.helpers import eventually
from tests.kube_helpers import api_calls, create_node, create_pod, kubelet_standin, own_resource, workload

pytestmark = pytest.mark.kube


def rows(html: str) -> dict[str, dict[str, str]]:
    soup = BeautifulSoup(html, "html.parser")
    out = {}
    for tr in soup.select("table.workloads tbody tr"):
        cells = {td["data-field"]: td.get_text(strip=True) for td in tr.select("td[data-field]")}
        out[tr["data-workload"] or tr["data-namespace"]] = cells
    return out


def test_who_holds_a_resource_by_workload_and_namespace(web, app, core, admin_api, uid):
    """Owners as the controllers make them: a Deployment's pods through its ReplicaSet (named
    with the pod-template-hash), a StatefulSet's, a Job's."""
    r = own_resource(uid, "w")
    a, b = f"{uid}-a", f"{uid}-b"
    create_node(core, a, {r: "8"}, labels={"kubernetes.io/hostname": a})
    create_node(core, b, {r: "8"}, labels={"kubernetes.io/hostname": b})
    kubelet_standin(core, a, b)
    workload(admin_api, "Deployment", f"{uid}-web", a, {r: "2"}, replicas=2)
    workload(admin_api, "StatefulSet", f"{uid}-db", b, {r: "1"})
    # a Job whose pod keeps running (kwok completes other Job pods), and one that completed
    workload(admin_api, "Job", f"{uid}-train", b, {r: "3"}, annotations={"extres.test/keep-running": "true"})
    workload(admin_api, "Job", f"{uid}-old", b, {r: "4"})  # finished: holds nothing
    create_pod(core, f"{uid}-bare", a, {r: "1"})
    workload(admin_api, "Deployment", f"{uid}-waiting", a, {r: "100"})  # never bound: not counted
    jobs = client.BatchV1Api(admin_api)
    eventually(lambda: jobs.read_namespaced_job(f"{uid}-old", "default").status.succeeded == 1, timeout=60)

    def shown():
        got = rows(web.get(f"/workloads/?resource={r}").get_data(as_text=True))
        assert len(got) == 4
        assert got[f"Deployment/{uid}-web"]["pods"] == "2"
        return got

    got = eventually(shown, timeout=60)
    assert got[f"Deployment/{uid}-web"] == {"pods": "2", "requested": "4", "share": "25.0%"}
    assert got[f"StatefulSet/{uid}-db"]["requested"] == "1"
    assert got[f"Job/{uid}-train"]["requested"] == "3"
    assert got[f"Pod/{uid}-bare"]["pods"] == "1"  # a bare pod: a row of its own
    html = web.get(f"/workloads/?resource={r}&sort=requested&order=asc").get_data(as_text=True)
    order = [
        tr["data-workload"] for tr in BeautifulSoup(html, "html.parser").select("table.workloads tbody tr")
    ]
    assert order[-2:] == [f"Job/{uid}-train", f"Deployment/{uid}-web"]
    assert order[:2] == sorted(order[:2])  # ties (1 each) by workload name
    soup = BeautifulSoup(html, "html.parser")
    assert {a["href"].rsplit("/", 1)[-1] for a in soup.select("table.workloads a[href*='/nodes/']")} == {a, b}
    dep = soup.select_one(f'tr[data-workload="Deployment/{uid}-web"] details.members')
    pods = {
        p.metadata.name
        for p in core.list_namespaced_pod("default").items
        if p.metadata.name.startswith(f"{uid}-web-")
    }
    bound = {p for p in pods if core.read_namespaced_pod(p, "default").spec.node_name}
    assert {li["data-member"] for li in dep.select("[data-member]")} == bound and len(bound) == 2
    by_ns = rows(web.get(f"/workloads/?resource={r}&by=namespace").get_data(as_text=True))
    assert by_ns == {"default": {"pods": "5", "requested": "9", "share": "56.2%"}}

    exported = web.get(f"/workloads/export.json?resource={r}").get_json()["rows"]
    assert {(x["kind"], x["name"], x["requested"]) for x in exported} == {
        ("Deployment", f"{uid}-web", 4),
        ("StatefulSet", f"{uid}-db", 1),
        ("Job", f"{uid}-train", 3),
        ("Pod", f"{uid}-bare", 1),
    }
    text = web.get(f"/workloads/export.csv?resource={r}&sort=requested").get_data(as_text=True)
    first = next(csv.DictReader(io.StringIO(text)))
    assert (first["kind"], first["requested"], first["nodes"]) == ("Deployment", "4", a)
    with api_calls(app) as calls:
        assert web.get(f"/workloads/?resource={r}").status_code == 200
    assert [c for c in calls if c[0] == "GET"] == []  # from the cache: no list call
    client.AppsV1Api(admin_api).delete_namespaced_deployment(f"{uid}-waiting", "default")


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ("sort=colour", "sort", "Sort by 'colour'"),
        ("order=sideways", "order", "Order: asc or desc"),
        ("by=planet", "by", "choose workload or namespace"),
        ("resource=dongle", "resource", "No such resource 'dongle'"),
        ("namespace=no-such-namespace", "namespace", "No pod in namespace 'no-such-namespace'"),
    ],
)
def test_bad_arguments_are_named_and_the_view_shown_without_them(web, query, field, message):
    resp = web.get(f"/workloads/?{query}")
    assert resp.status_code == 200
    soup = BeautifulSoup(resp.get_data(as_text=True), "html.parser")
    error = soup.select_one(f"#{field}-error")
    assert error is not None and message in error.get_text()
    assert "Showing the view without it" in error.get_text()
    assert message in web.get(f"/workloads/export.json?{query}").get_json()["errors"][field]
