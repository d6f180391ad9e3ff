"""No input answers 500, and nothing malformed reaches a write: a property test (Hypothesis) over
every route of the app's own url_map, each method it takes, every form field and query
parameter a page reads, and pasted manifests, in all three auth modes. Values are hostile:
numbers of thousands of digits (past Python's 4,300-digit int limit), exponents, fullwidth and
superscript digits, NUL, markup, long strings, and YAML whose numbers are huge."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.domain.changes import validate_resource
from tests.helpers import browser

D = "example.com/dongle"
BIG = "9" * 5000
HOSTILE = [
    BIG, f"-{BIG}", f"1e{BIG}", f"1E-{BIG}", f"{BIG}Ki", f"0.{BIG}", "9" * 4301, "1e999", "1e-999",
    "\uff13", "\u00b2", "\u0663", "NaN", "inf", "-0", "0x10", "1_000", " 7 ", "", "\x00", "\ud7ff",
    "<script>alert(1)</script>", "{{7*7}}", "a" * 20_000, "../../etc/passwd", "[]", "{}", "%00",
    "example.com/" + "x" * 300, "kubernetes.io/x", "requests.example.com/x", D, "2Ki", "3",
]  # fmt: skip
FIELDS = [
    "q", "resource", "selector", "free", "min", "sort", "order", "page", "view", "of", "since",
    "until", "node", "namespace", "requests", "tolerations", "replicas", "per_node", "manifest",
    "action", "quantity", "nodes", "pod", "find", "next", "expected", "confirm", "expected-n1",
    "token", "kind", "labels", "owner", "window", "format", "csrf_token",
]  # fmt: skip
STATUSES: Counter[int] = Counter()  # every answer of the run, by status: printed at the end
MANIFESTS = [
    f"kind: Deployment\nspec:\n  replicas: {BIG}\n  template: {{spec: {{containers: [{{name: a}}]}}}}",
    f"kind: Job\nspec: {{parallelism: {BIG}}}",
    f"kind: Pod\nspec:\n  containers: [{{name: a, resources: {{requests: {{cpu: 1e{BIG}}}}}}}]",
    f"kind: Pod\nspec:\n  topologySpreadConstraints:\n  - {{maxSkew: {BIG}, topologyKey: z, "
    "whenUnsatisfiable: DoNotSchedule}\n  containers: [{name: a}]",
    f"kind: Pod\nspec: {{priority: !!int '{BIG}', containers: [{{name: a}}]}}",
    f"kind: Pod\nspec: {{containers: [{{name: a, resources: {{requests: {{{D}: 0x{'f' * 5000}}}}}}}]}}",
    "[" * 200 + "]" * 200,
    "kind: Pod\nspec: {containers: [{name: a, resources: {requests: {example.com/dongle: \uff13}}}]}",
]
MODES: dict[str, tuple[dict[str, Any], dict[str, str]]] = {
    "service-account": ({"auth_mode": "service-account", "read_only": False}, {}),
    "impersonate": (
        {"auth_mode": "impersonate", "trusted_proxies": ("127.0.0.1/32",)},
        {"X-Forwarded-User": "alice", "X-Forwarded-Groups": "extres-editors"},
    ),
    "token": ({"auth_mode": "token"}, {"Authorization": "Bearer hostile-test"}),
}


@pytest.fixture(scope="module")
def apps():
    """One app per auth mode over one fake cluster with a node and pods (built once: Hypothesis
    runs many examples against each)."""
    from app import create_app
    from tests.web.fake import FakeCluster

    cluster = FakeCluster()
    cluster.node("n1", {D: "2"})
    cluster.pod("p", "n1", {D: "1"})
    cluster.pod("w", None, {D: "3"}, message=f"0/{BIG} nodes are available: {BIG} Insufficient {D}.")
    out = {}
    for mode, (config, headers) in MODES.items():
        app = create_app({"in_cluster": "false", **config}, cluster=cluster)
        app.config["TESTING"] = True
        routes = sorted(
            {
                (method, rule.rule.replace("<name>", "n1").replace("<key>", "xyz").replace("<path:rest>", ""))
                for rule in app.url_map.iter_rules()
                if rule.endpoint != "static"
                for method in (rule.methods or ()) & {"GET", "POST"}
            }
        )
        out[mode] = (browser(app), headers, routes)
    yield out, cluster
    print(f"\n{sum(STATUSES.values())} requests, answers by status: {dict(sorted(STATUSES.items()))}")


@pytest.mark.thorough
@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_no_route_answers_500_and_nothing_malformed_is_written(apps, data):
    clients, cluster = apps
    mode = data.draw(st.sampled_from(sorted(clients)))
    web, headers, routes = clients[mode]
    method, route = data.draw(st.sampled_from(routes))
    value = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=40), st.integers().map(str))
    fields = data.draw(st.dictionaries(st.sampled_from(FIELDS), value, min_size=1, max_size=4))
    if data.draw(st.booleans()):
        fields["manifest"] = data.draw(st.sampled_from(MANIFESTS))
    if data.draw(st.booleans()):  # the header htmx sends, any character a header may carry
        latin1 = st.characters(max_codepoint=255, blacklist_categories=("Cc",))  # no control character
        headers = {**headers, "X-CSRF-Token": data.draw(st.text(latin1, max_size=60))}
    if method == "GET":
        resp = web.get(route, query_string=fields, headers=headers)
    else:
        resp = web.post(route, data={"resource": D, "quantity": "1", **fields}, headers=headers)
    STATUSES[resp.status_code] += 1
    assert resp.status_code < 500, (mode, method, route, fields, resp.status_code)
    for _node, _dry_run, ops in cluster.apiserver.patches() if cluster.apiserver else ():
        for op in ops:  # every capacity written is an extended resource's whole count
            if op["path"].startswith("/status/capacity/"):
                resource = op["path"].rsplit("/", 1)[1].replace("~1", "/").replace("~0", "~")
                assert validate_resource(resource, lambda _: None) is None, op
                if op["op"] in ("add", "replace"):
                    assert 0 < int(op["value"]) <= 1_000_000, op
