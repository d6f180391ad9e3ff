"""The what-if planner on the real kube-apiserver, its headroom checked by the real kube-scheduler."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from tests.helpers import eventually
from tests.kube_helpers import api_calls, create_node, kubelet_standin, own_resource

pytestmark = pytest.mark.kube


@pytest.fixture
def cluster(core, uid):
    r = own_resource(uid, "p")
    a, b, c = f"{uid}-a", f"{uid}-b", f"{uid}-c"
    create_node(core, a, {r: "4"}, labels={"pool": uid})
    create_node(core, b, {r: "1"}, labels={"pool": uid})
    create_node(core, c, {r: "2"}, labels={"pool": "elsewhere"})
    kubelet_standin(core, a, b, c)
    core.patch_node(b, {"spec": {"taints": [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]}})
    return r, a, b, c


def plan(web, status=200, **args):
    resp = web.get("/plan/", query_string=args)
    assert resp.status_code == status, resp.get_data(as_text=True)[:2000]
    return BeautifulSoup(resp.get_data(as_text=True), "html.parser")


def room(soup):
    return {
        tr["data-node"]: int(tr.select_one('[data-field="fits"]').get_text())
        for tr in soup.select("table.room tr[data-node]")
    }


def test_headroom_per_node_with_selector_and_tolerations(web, core, uid, cluster):
    r, a, b, _c = cluster

    def planned():
        soup = plan(web, requests=f"{r}=1", selector=f"pool={uid}")
        assert room(soup) == {a: 4}  # b is tainted, c is elsewhere
        return soup

    soup = eventually(planned)
    assert soup.select_one("[data-headroom]")["data-headroom"] == "4"
    tolerant = plan(web, requests=f"{r}=1", selector=f"pool={uid}", tolerations="dedicated=ml:NoSchedule")
    assert room(tolerant) == {a: 4, b: 1}
    link = tolerant.select_one("a[data-share]")["href"]
    assert room(BeautifulSoup(web.get(link).get_data(as_text=True), "html.parser")) == {a: 4, b: 1}


def test_a_replica_count_beyond_the_headroom_gets_a_plan(web, core, uid, cluster):
    r, a, _b, _c = cluster

    def planned():
        # until the cache has seen b's taint, b would look like a candidate too
        soup = plan(web, requests=f"{r}=2", selector=f"pool={uid}", replicas="5")
        steps = {
            tr["data-node"]: tr.select_one('[data-field="add"]').get_text(" ", strip=True)
            for tr in soup.select(".plan-steps tr[data-node]")
        }
        assert steps == {a: f"6 {r}"}  # a takes all five: 10 wanted, 4 free
        return soup

    soup = eventually(planned)
    assert soup.select_one("[data-shortfall]")["data-shortfall"] == "3"
    link = soup.select_one(f'a[data-plan-link="{r} 10 {a}"]')  # a's capacity after: 4 + 6
    assert link is not None and "quantity=10" in link["href"] and f"nodes={a}" in link["href"]
    assert "would fit" in soup.get_text() or "For 5 pods" in soup.get_text()  # hypothetical pods


def test_a_pasted_deployment_and_its_replicas(web, uid, cluster):
    r, a, _b, _c = cluster
    manifest = f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: trainer}}
spec:
  replicas: 3
  selector: {{matchLabels: {{app: trainer}}}}
  template:
    metadata: {{labels: {{app: trainer}}}}
    spec:
      nodeSelector: {{pool: {uid}}}
      initContainers:
        - name: warm
          image: registry.example/warm:1
          resources: {{limits: {{{r}: "3"}}}}
      containers:
        - name: main
          image: registry.example/trainer:1
          resources: {{limits: {{{r}: "1"}}, requests: {{cpu: 100m}}}}
"""
    soup = eventually(lambda: plan(web, manifest=manifest))
    assert "Deployment trainer" in soup.select_one(".plan-result h2").get_text(" ", strip=True)
    assert room(soup) == {a: 1}  # the init container needs 3 of the 4
    assert soup.select_one("[data-shortfall]")["data-shortfall"] == "2"
    as_json = web.post("/plan/", data={"manifest": manifest.replace("replicas: 3", "replicas: 1")})
    assert as_json.status_code == 200 and "All" not in as_json.get_data(as_text=True)


BAD = [
    ({"manifest": "kind: Pod\nspec: [unclosed"}, "manifest", "Not valid YAML"),
    ({"manifest": "apiVersion: v1\nkind: Service\nspec: {}"}, "manifest", "Kind 'Service' is not one"),
    ({"manifest": "kind: Pod\nspec: {containers: [{name: a}]}\n---\nkind: Pod\n"}, "manifest", "exactly one"),
    (
        {"manifest": "kind: Pod\nspec: {containers: [{name: a, resorces: {limits: {a.io/b: 1}}}]}"},
        "manifest",
        "unknown field spec.containers[0].resorces",
    ),
    (
        {"manifest": "kind: Pod\nspec: {containers: [{name: a, resources: {limits: {a.io/b: 1500m}}}]}"},
        "manifest",
        "1500m",
    ),
    ({"manifest": "kind: Pod\nspec: {containerz: []}"}, "manifest", "unknown field spec.containerz"),
    ({"requests": "a.io/b=0.5"}, "requests", "whole"),
    ({"requests": "dongle=1"}, "requests", "'dongle'"),
    ({"requests": "a.io/b"}, "requests", "not name=quantity"),
    ({"requests": "a.io/b=1", "replicas": "-1"}, "replicas", "whole number"),
    ({"requests": "a.io/b=1", "tolerations": "k=v:Sometimes"}, "tolerations", "effect"),
]


@pytest.mark.parametrize(("args", "field", "message"), BAD)
def test_bad_input_is_refused_next_to_the_field_and_changes_nothing(app, web, args, field, message):
    with api_calls(app) as calls:
        soup = plan(web, 422, **args)
    assert message in soup.select_one(f"#{field}-error").get_text()
    # the planner reads the cache; the only call is the access review deciding which links to show
    assert all(u.endswith("/selfsubjectaccessreviews") for _, u in calls), calls


def test_a_huge_paste_is_refused_with_a_message(web):
    resp = web.post("/plan/", data={"manifest": "x" * (5 * 2**20)})
    assert resp.status_code == 422
    soup = BeautifulSoup(resp.get_data(as_text=True), "html.parser")
    assert "larger than 64 KiB" in soup.select_one("#manifest-error").get_text()


def test_the_headroom_is_what_the_real_scheduler_places(web, core, uid, cluster, scheduler):
    """Create one pod more than the planner says fit: the scheduler binds exactly the headroom."""
    r, a, b, _c = cluster
    args = {"requests": f"{r}=1", "selector": f"pool={uid}", "tolerations": "dedicated=ml:NoSchedule"}
    headroom = int(eventually(lambda: plan(web, **args)).select_one("[data-headroom]")["data-headroom"])
    assert headroom == 5
    names = [f"{uid}-w{i}" for i in range(headroom + 1)]
    for name in names:
        core.create_namespaced_pod(
            "default",
            {
                "metadata": {"name": name},
                "spec": {
                    "nodeSelector": {"pool": uid},
                    "tolerations": [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}],
                    "containers": [
                        {"name": "c", "image": "registry.example/x:1", "resources": {"limits": {r: "1"}}}
                    ],
                },
            },
        )

    def settled():
        pods = [core.read_namespaced_pod(n, "default") for n in names]
        bound = [p.spec.node_name for p in pods if p.spec.node_name]
        refused = [
            p
            for p in pods
            if any(
                c.type == "PodScheduled" and c.reason == "Unschedulable" for c in p.status.conditions or ()
            )
        ]
        assert len(bound) + len(refused) == len(names)
        return bound

    bound = eventually(settled, timeout=60)
    assert len(bound) == headroom
    assert sorted(bound).count(a) == 4 and bound.count(b) == 1
    assert eventually(lambda: plan(web, **args).select_one("[data-headroom]")["data-headroom"] == "0")


def test_an_alias_bomb_in_a_link_is_refused_at_its_field(web):
    """Seven levels of ten aliases in one GET (the planner is a GET form, so a link carries it):
    refused at the field, in a small page, before anything is expanded."""
    from tests.unit.test_manifest_hostile import bomb

    resp = web.get("/plan/", query_string={"manifest": bomb()})
    assert resp.status_code == 422
    assert len(resp.get_data()) < 64 * 1024
    error = BeautifulSoup(resp.get_data(as_text=True), "html.parser").select_one("#manifest-error")
    assert error is not None and "Anchors and aliases" in error.get_text()
