"""Pending pods, with the real kube-scheduler deciding what does not fit.

kwok plays the kubelets (nodes Ready, bound pods Running); extres_demo.standin copies a
patched capacity to allocatable, the one kubelet step kwok does not take.
Each test uses a resource name of its own, so other tests' nodes never compete.
"""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from tests.helpers import eventually
from tests.kube_helpers import create_node, create_pod, kubelet_standin, own_resource

pytestmark = pytest.mark.scheduler


def scheduled_condition(core, name):
    pod = core.read_namespaced_pod(name, "default")
    for cond in pod.status.conditions or ():
        if cond.type == "PodScheduled":
            return pod.spec.node_name, cond.reason, cond.message
    return pod.spec.node_name, None, None


def article(web, pod, query=""):
    soup = BeautifulSoup(web.get(f"/pending/{query}").get_data(as_text=True), "html.parser")
    return soup.select_one(f'article[data-pod="default/{pod}"]')


def test_short_pod_is_explained_fixed_by_the_suggestion_and_leaves(web, core, scheduler, uid):
    r = own_resource(uid)
    a, b = f"{uid}-a", f"{uid}-b"
    create_node(core, a, {r: "3"})
    create_node(core, b, {r: "1"})
    kubelet_standin(core, a, b)
    create_pod(core, f"{uid}-holder", a, {r: "1"})  # a: 2 free, b: 1 free
    pod = f"{uid}-big"
    create_pod(core, pod, None, {r: "3"})

    # the scheduler's own verdict
    def unschedulable():
        node, reason, message = scheduled_condition(core, pod)
        assert node is None and reason == "Unschedulable", (node, reason)
        return message

    message = eventually(unschedulable, timeout=30)
    assert f"Insufficient {r}" in message

    def shown():
        art = article(web, pod, f"?resource={r}")
        assert art is not None
        return art

    art = eventually(shown)
    assert art["data-kind"] == "short"
    row = art.select_one(f'tr[data-resource="{r}"]')
    assert row.select_one('[data-field="max_free"]').get_text(" ", strip=True) == f"2 on {a}"
    assert row.select_one('[data-field="shortfall"]').get_text() == "1"
    assert row.select_one('[data-field="advertised"]').get_text() == "2"
    link = art.select_one("a[data-suggestion]")
    assert link.get_text(strip=True) == f"add 1 {r} to {a}"
    assert f"Insufficient {r}" in art.select_one(".scheduler").get_text()
    assert BeautifulSoup(web.get("/").get_data(as_text=True), "html.parser").select_one("#pending-badge")

    # follow the suggestion: the prefilled form, submitted as it is
    form_page = BeautifulSoup(web.get(link["href"]).get_data(as_text=True), "html.parser")
    form = form_page.select_one("form.change")
    data = {i["name"]: i.get("value", "") for i in form.select("input")}
    assert data["resource"] == r and data["quantity"] == "4" and data["expected"] == "3"
    assert web.post(form["action"], data=data).status_code == 303
    kubelet_standin(core, a)  # the kubelet copies the new capacity to allocatable

    def bound():
        node, _, _ = scheduled_condition(core, pod)
        assert node == a
        return True

    eventually(bound, timeout=90)  # the scheduler retries on the node update
    eventually(lambda: article(web, pod, f"?resource={r}") is None)


def test_resource_no_node_advertises_and_non_resource_reasons(web, core, scheduler, uid):
    r = own_resource(uid)
    n = f"{uid}-n"
    create_node(core, n, {r: "2"}, labels={"pool": uid})
    kubelet_standin(core, n)
    core.patch_node(n, {"spec": {"taints": [{"key": "maintenance", "value": "yes", "effect": "NoSchedule"}]}})
    typo = f"{uid}-typo"
    create_pod(core, typo, None, {f"{r}s": "1"})
    elsewhere = f"{uid}-selector"
    create_pod(core, elsewhere, None, {r: "1"}, nodeSelector={"pool": "nowhere"})
    fits = f"{uid}-fits-but-taint"
    create_pod(core, fits, None, {r: "1"}, nodeSelector={"pool": uid})

    art = eventually(lambda: article(web, typo, f"?resource={r}s"))
    assert art["data-kind"] == "unadvertised"
    assert "no node advertises" in art.get_text()
    art = eventually(lambda: article(web, elsewhere, f"?resource={r}"))
    assert art["data-kind"] == "other"  # no node matches its selector: not a resource problem
    assert "no node matches the pod's node selector and affinity" in art.select_one(".why").get_text()
    art = eventually(lambda: article(web, fits, f"?resource={r}"), timeout=30)
    assert art["data-kind"] == "other"
    why = art.select_one(".why").get_text()
    assert "have the taint maintenance=yes:NoSchedule, which the pod does not tolerate" in why
    assert not art.select("a[data-suggestion]")  # adding dongles to the tainted node would not help

    # filters
    assert article(web, typo, f"?resource={r}s") is not None
    assert article(web, fits, f"?resource={r}s") is None
    assert article(web, typo, "?namespace=kube-system") is None


def test_pending_pods_are_paged_and_diagnoses_follow_node_changes(web, core, scheduler, uid, monkeypatch):
    """Diagnoses are shared by pods of one shape and kept until a node's row changes."""
    from app.web import pending

    monkeypatch.setattr(pending, "PAGE_SIZE", 2)
    r = own_resource(uid)
    n = f"{uid}-n"
    create_node(core, n, {r: "1"})
    kubelet_standin(core, n)
    pods = [f"{uid}-p{i}" for i in range(3)]
    for pod in pods:
        create_pod(core, pod, None, {r: "3"})

    def page(number):
        soup = BeautifulSoup(
            web.get(f"/pending/?resource={r}&page={number}").get_data(as_text=True), "html.parser"
        )
        return soup, {a["data-pod"]: a for a in soup.select("article[data-pod]")}

    def max_free(articles):
        return {a.select_one('[data-field="max_free"]').get_text(" ", strip=True) for a in articles.values()}

    def both_pages(free):
        (first, one), (_, two) = page(1), page(2)
        assert sorted(one) + sorted(two) == [f"default/{p}" for p in pods]
        assert max_free(one) == max_free(two) == {f"{free} on {n}"}
        return first

    def all_pending():
        soup, _ = page(1)
        summary = soup.select_one(".summary#pods")
        assert summary is not None and "3 pending pods, 2 on this page" in summary.get_text()
        return soup

    eventually(all_pending, timeout=30)
    first = both_pages(1)
    link = first.select_one('nav.pages a[href*="page=2"]')
    assert f"resource={r}" in link["href"]
    # the list polls its own fragment (live updates), keeping its page and filter
    fragment = web.get(
        f"/pending/?resource={r}&page=2", headers={"HX-Request": "true", "HX-Target": "pending-list"}
    ).get_data(as_text=True)
    root = BeautifulSoup(fragment, "html.parser").select_one("#pending-list")
    assert "<html" not in fragment and root["id"] == "pending-list" and root["hx-trigger"] == "every 5s"
    assert "page=2" in root["hx-get"] and f"resource={r}" in root["hx-get"]
    assert len(root.select("article[data-pod]")) == 1
    # a page out of range, or not a number, is clamped to the pages there are
    assert sorted(page(99)[1]) == sorted(page(2)[1])
    assert sorted(page("x")[1]) == sorted(page(1)[1])

    # the node grows, still short of 3: every pod's diagnosis follows, on both pages
    core.patch_node_status(
        n, [{"op": "replace", "path": f"/status/capacity/{r.replace('/', '~1')}", "value": "2"}]
    )
    kubelet_standin(core, n)
    eventually(lambda: both_pages(2))


def test_quota_on_extended_resource_is_shown_with_the_quota_controllers_usage(web, core, uid):
    """The quota controller fills in status (hard, and used as pods come and go); the admission
    plugin refuses pods until it has."""
    r = own_resource(uid, "q")
    namespace = f"{uid}-quota"
    core.create_namespace({"metadata": {"name": namespace}})
    node = f"{uid}-n"
    create_node(core, node, {r: "8"})
    core.create_namespaced_resource_quota(
        namespace,
        {"metadata": {"name": "q"}, "spec": {"hard": {f"requests.{r}": "5", "cpu": "10"}}},
    )
    eventually(lambda: core.read_namespaced_resource_quota_status("q", namespace).status.hard)
    create_pod(core, "user", node, {r: "2", "cpu": "100m"}, namespace)

    def row(used: str) -> bool:
        soup = BeautifulSoup(web.get("/pending/").get_data(as_text=True), "html.parser")
        tr = soup.select_one(f'tr[data-quota="{namespace}/q"]')
        assert tr is not None and tr["data-resource"] == r
        assert tr.select_one('[data-field="hard"]').get_text() == "5"
        assert tr.select_one('[data-field="used"]').get_text() == used
        return True

    eventually(lambda: row("2"), timeout=30)
    core.delete_namespaced_pod("user", namespace, grace_period_seconds=0)
    eventually(lambda: row("0"), timeout=60)  # the controller's recount, after kwok removed the pod


def test_the_pod_panel_reads_the_schedulers_events_and_the_pods_conditions(web, core, scheduler, uid):
    """The panel of a pod no node can take: its PodScheduled condition and the scheduler's
    FailedScheduling Events, read from the API server for the panel alone."""
    r = own_resource(uid, "p")
    node = f"{uid}-p"
    create_node(core, node, {r: "1"})
    kubelet_standin(core, node)
    pod = f"{uid}-wants-2"
    create_pod(core, pod, None, {r: "2"})

    def panel():
        soup = BeautifulSoup(web.get(f"/pods/default/{pod}").get_data(as_text=True), "html.parser")
        history = soup.select("ol.pending-history li")
        assert history and f"Insufficient {r}" in history[0].get_text(), soup.get_text(" ", strip=True)[:400]
        assert soup.select_one('[data-field="node"]') is not None  # the cache's watch has it too
        # the scheduler's Event and its status write are two calls: the condition may come second
        assert soup.select_one('ul.conditions li[data-condition="PodScheduled"]') is not None
        return soup

    soup = eventually(panel, timeout=60, interval=0.5)
    scheduled = soup.select_one('ul.conditions li[data-condition="PodScheduled"]')
    assert scheduled["data-status"] == "False" and "Unschedulable" in scheduled.get_text()
    assert soup.select_one('#pod-events tr[data-reason="FailedScheduling"]') is not None
    assert soup.select_one('[data-field="node"]').get_text(strip=True).startswith("none yet")
    assert web.get(f"/pods/default/{uid}-never-made").status_code == 404
