"""No input gives a 500: every route, walked from the app's own url_map, with non-ASCII digits,
huge numbers, odd strings and wrong types in every argument it reads, answers 2xx, 3xx or 4xx
with a message."""

from __future__ import annotations

import pytest

D = "example.com/dongle"
ODD = [
    "\uff13",
    "\u00b2",
    "9" * 40,
    "-1",
    "1e999",
    "",
    " ",
    "a" * 300,
    "[]",
    "{}",
    "\x00",
    "<b>",
    "1.5",
    "NaN",
]
ARGS = ["q", "resource", "selector", "free", "min", "sort", "order", "page", "view", "of", "since", "until",
        "node", "namespace", "requests", "tolerations", "replicas", "per_node", "manifest", "action",
        "quantity", "nodes", "pod", "find", "next", "cluster"]  # fmt: skip
MANIFESTS = [
    "[1, 2]",
    "- a\n- b",
    "kind: Deployment\nspec: {replicas: '\uff13'}",
    "kind: Deployment\nspec: {replicas: []}",
    "kind: Pod\nspec: {containers: {}}",
    "kind: Pod\nspec: {containers: [{resources: {requests: []}}]}",
    "kind: Job\nspec: {parallelism: 1e999}",
    "kind: StatefulSet\nspec: {replicas: 99999999999999999999}",
]


@pytest.fixture
def routes(app, cluster):
    cluster.node("n1", {D: "2"})
    cluster.pod("p", "n1", {D: "1"})
    out = []
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static" or "GET" not in (rule.methods or ()):
            continue
        out.append(rule.rule.replace("<name>", "n1").replace("<key>", "xyz").replace("<path:rest>", "x"))
    return sorted(set(out))


@pytest.mark.thorough
def test_no_get_route_answers_500_to_odd_arguments(client, routes):
    for route in routes:
        for arg in ARGS:
            for value in ODD:
                resp = client.get(route, query_string={arg: value})
                assert resp.status_code < 500, (route, arg, value, resp.status_code)


def test_no_pasted_manifest_answers_500(client, cluster):
    cluster.node("n1", {D: "2"})
    for manifest in MANIFESTS:
        for replicas in ("", "\uff13", "9" * 30):
            resp = client.post("/plan/", data={"manifest": manifest, "replicas": replicas})
            assert resp.status_code in (200, 422), (manifest, replicas, resp.status_code)


def test_no_form_answers_500_to_odd_values(client, cluster):
    cluster.node("n1", {D: "2"})
    posts = ["/changes/nodes/n1/resources", "/changes/nodes/n1/resources/remove", "/changes/bulk/preview"]
    for url in posts:
        for field in ("resource", "quantity", "expected", "action", "nodes", "selector", "confirm"):
            for value in ODD:
                resp = client.post(url, data={"resource": D, "quantity": "1", "action": "set", field: value})
                assert resp.status_code < 500, (url, field, value, resp.status_code)


RICH = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "d", "namespace": "default", "labels": {"app": "d"}},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "d"}},
        "template": {
            "metadata": {"labels": {"app": "d"}},
            "spec": {
                "nodeName": "n1",
                "nodeSelector": {"zone": "a"},
                "priorityClassName": "high",
                "overhead": {"cpu": "100m"},
                "resources": {"requests": {"cpu": "1"}},
                "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}],
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                            ]
                        }
                    },
                    "podAntiAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {"labelSelector": {"matchLabels": {"app": "d"}},
                             "topologyKey": "kubernetes.io/hostname"}
                        ]
                    },
                },
                "topologySpreadConstraints": [
                    {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                     "labelSelector": {"matchLabels": {"app": "d"}}}
                ],
                "initContainers": [
                    {"name": "i", "restartPolicy": "Always", "resources": {"limits": {D: "1"}}}
                ],
                "containers": [
                    {"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}],
                     "resources": {"requests": {D: "1", "cpu": "1"}, "limits": {D: "1"}}}
                ],
            },
        },
    },
}  # fmt: skip
JSON_TYPES = [None, True, 0, -1, 1.5, 10**30, "", "x", "\uff13", [], [None], ["x"], [{}], {}, {"a": 1},
              {"a": [1]}]  # fmt: skip


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, (*path, i))


def _with(value, path, new):
    if not path:
        return new
    copy = list(value) if isinstance(value, list) else dict(value)
    copy[path[0]] = _with(value[path[0]], path[1:], new)
    return copy


@pytest.mark.thorough
def test_no_pasted_manifest_answers_500_whatever_type_any_key_holds_at_any_depth(make_app, cluster):
    import collections
    import json

    from tests.helpers import browser

    client = browser(make_app(plans_per_minute=1_000_000))
    cluster.node("n1", {D: "2"}, labels={"zone": "a"})
    statuses: collections.Counter[int] = collections.Counter()
    for path in _paths(RICH):
        for new in JSON_TYPES:
            manifest = json.dumps(_with(RICH, path, new))
            resp = client.post("/plan/", data={"manifest": manifest})
            statuses[resp.status_code] += 1
            assert resp.status_code in (200, 422), (path, new, resp.status_code)
    print(f"\n{sum(statuses.values())} manifests, answers by status: {dict(sorted(statuses.items()))}")
